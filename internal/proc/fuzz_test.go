//go:build linux

package proc

import (
	"fmt"
	"strings"
	"testing"
)

// FuzzParseStat feeds arbitrary bytes: the parser must never panic, and
// what it accepts must be sane.
func FuzzParseStat(f *testing.F) {
	f.Add([]byte("8529 (claude) S 7885 8529 8529 34817 8529 4194304 44185 4557 2 13 48 6 2 1 20 0 9 0 27829 75073236992 54905\n"))
	f.Add([]byte("1 (a) (b)) R 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20"))
	f.Add([]byte("2 (\n) Z 1 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20"))
	f.Add([]byte("3 ((((( S 1"))
	f.Add([]byte(")("))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := parseStat(data)
		if err != nil {
			return
		}
		if st.pid <= 0 || st.ppid < 0 || len(st.state) != 1 {
			t.Fatalf("accepted insane %+v from %q", st, data)
		}
		if !strings.Contains(string(data), "("+st.comm+")") {
			t.Fatalf("comm %q not in %q", st.comm, data)
		}
	})
}

// FuzzParseStatRoundTrip builds stat lines the way the kernel does, with
// any comm at all, and checks that every field comes back.
func FuzzParseStatRoundTrip(f *testing.F) {
	f.Add(uint32(1), "claude", uint32(0), uint64(27829))
	f.Add(uint32(99), ") (", uint32(1), uint64(0))
	f.Add(uint32(7), "x) S 1 2 3 (y", uint32(3), uint64(1<<63))
	f.Add(uint32(8), "", uint32(9), uint64(5))
	f.Fuzz(func(t *testing.T, pid uint32, comm string, ppid uint32, start uint64) {
		if pid == 0 {
			pid = 1
		}
		line := fmt.Sprintf("%d (%s) S %d 1 1 0 -1 4194304 1 0 0 0 0 0 0 0 20 0 1 0 %d 1000 100 18446744073709551615\n",
			pid, comm, ppid, start)
		st, err := parseStat([]byte(line))
		if err != nil {
			t.Fatalf("parseStat(%q): %v", line, err)
		}
		want := statFields{pid: int(pid), comm: comm, state: "S", ppid: int(ppid), startTime: start}
		if st != want {
			t.Fatalf("parseStat(%q) = %+v, want %+v", line, st, want)
		}
	})
}
