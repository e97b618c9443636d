//go:build linux

package proc

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestStatSelf(t *testing.T) {
	p, err := Stat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if p.PID != os.Getpid() || p.PPID != os.Getppid() {
		t.Errorf("pid/ppid = %d/%d, want %d/%d", p.PID, p.PPID, os.Getpid(), os.Getppid())
	}
	if want := filepath.Base(exe); !strings.HasPrefix(want, p.Comm) || len(p.Comm) == 0 {
		t.Errorf("comm = %q, want a prefix of %q", p.Comm, want)
	}
	if p.Exe != exe {
		t.Errorf("exe = %q, want %q", p.Exe, exe)
	}
	if !slices.Equal(p.Cmdline, os.Args) {
		t.Errorf("cmdline = %q, want %q", p.Cmdline, os.Args)
	}
	if p.State != "R" && p.State != "S" {
		t.Errorf("state = %q", p.State)
	}
	if p.StartTime == 0 {
		t.Error("start time 0")
	}
}

func TestStatChild(t *testing.T) {
	c := startSleep(t)
	p, err := Stat(c.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if p.PPID != os.Getpid() || p.Comm != "sleep" || filepath.Base(p.Exe) != "sleep" {
		t.Errorf("got %+v", p)
	}
	if !slices.Equal(p.Cmdline, []string{"sleep", "1000"}) {
		t.Errorf("cmdline = %q", p.Cmdline)
	}
	self, err := Stat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if p.StartTime < self.StartTime {
		t.Errorf("child started (%d) before us (%d)", p.StartTime, self.StartTime)
	}
}

// A real comm with spaces and parentheses, as a program can choose.
func TestStatOddComm(t *testing.T) {
	const name = "a) (b c) d"
	cmd := helperCmd(t, "block", name)
	c := startBlockingHelper(t, cmd)
	p := settled(t, c.Process.Pid, func(p Proc) bool { return len(p.Cmdline) > 0 })
	if p.Comm != name || filepath.Base(p.Exe) != name || p.PPID != os.Getpid() {
		t.Errorf("got comm %q exe %q ppid %d", p.Comm, p.Exe, p.PPID)
	}
}

func TestStatMissing(t *testing.T) {
	for _, pid := range []int{deadPID(t)} {
		if _, err := Stat(pid); !errors.Is(err, ErrNoProcess) {
			t.Errorf("Stat(%d) = %v, want ErrNoProcess", pid, err)
		}
	}
	for _, pid := range []int{0, -1} {
		if _, err := Stat(pid); err == nil {
			t.Errorf("Stat(%d) succeeded", pid)
		}
	}
}

func TestStatZombie(t *testing.T) {
	c := exec.Command("true")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer c.Wait()
	waitFor(t, 5*time.Second, func() (bool, string) {
		p, err := Stat(c.Process.Pid)
		return err == nil && p.State == "Z" && len(p.Cmdline) == 0, spew(p, err)
	})
}

func spew(p Proc, err error) string {
	if err != nil {
		return err.Error()
	}
	return strings.ReplaceAll(strings.Join([]string{p.Comm, p.State, p.Exe, strings.Join(p.Cmdline, " ")}, "|"), "\n", " ")
}

func TestParseStat(t *testing.T) {
	// The real line of a claude 2.1.197 process (see claude_test.go).
	const claude = "8529 (claude) S 7885 8529 8529 34817 8529 4194304 44185 4557 2 13 48 6 2 1 20 0 9 0 27829 75073236992 54905 18446744073709551615 28544512 86024592 140720766020656 0 0 0 0 3149824 2072145151 0 0 0 17 0 0 0 0 0 0 86028688 247566336 798248960 140720766028182 140720766028189 140720766028189 140720766029800 0\n"
	tail := " 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 123456789 19 20\n"
	tests := []struct {
		in    string
		want  statFields
		wrong bool
	}{
		{in: claude, want: statFields{pid: 8529, comm: "claude", state: "S", ppid: 7885, startTime: 27829}},
		{in: "42 (a) (b)) R 7" + tail, want: statFields{pid: 42, comm: "a) (b)", state: "R", ppid: 7, startTime: 123456789}},
		{in: "42 (x y\nz) Z 0" + tail, want: statFields{pid: 42, comm: "x y\nz", state: "Z", ppid: 0, startTime: 123456789}},
		{in: "42 () S 1" + tail, want: statFields{pid: 42, comm: "", state: "S", ppid: 1, startTime: 123456789}},
		{in: "42 ((( S 1" + tail, wrong: true},  // no closing parenthesis
		{in: "42 (a) S 1 2 3\n", wrong: true},   // truncated
		{in: "(a) S 1" + tail, wrong: true},     // no pid
		{in: "x (a) S 1" + tail, wrong: true},   // bad pid
		{in: "42 (a) SS 1" + tail, wrong: true}, // bad state
		{in: "42 (a) S x" + tail, wrong: true},  // bad ppid
		{in: "42 (a) S 1 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 -5 19 20", wrong: true},
		{in: "", wrong: true},
	}
	for _, tt := range tests {
		got, err := parseStat([]byte(tt.in))
		if tt.wrong {
			if err == nil {
				t.Errorf("parseStat(%q) = %+v, want error", tt.in, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("parseStat(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseCmdline(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"\x00", []string{""}},
		{"claude\x00", []string{"claude"}},
		{"node\x00--x\x00cli.js\x00", []string{"node", "--x", "cli.js"}},
		{"a b\x00\x00c", []string{"a b", "", "c"}}, // rewritten argv, no trailing NUL
	}
	for _, tt := range tests {
		if got := parseCmdline([]byte(tt.in)); !slices.Equal(got, tt.want) {
			t.Errorf("parseCmdline(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestReadChars(t *testing.T) {
	before, err := ReadChars(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.ReadFile("/proc/self/stat"); err != nil {
		t.Fatal(err)
	}
	if after, err := ReadChars(os.Getpid()); err != nil || after <= before {
		t.Errorf("rchar %d after reading a file, %d before (%v)", after, before, err)
	}
	if _, err := ReadChars(0); err == nil {
		t.Error("pid 0: no error")
	}
	for in, want := range map[string]string{
		"rchar: 42\nwchar: 1\n": "42",
		"wchar: 1\nrchar: 7":    "7",
		"wchar: 1\n":            "error",
		"rchar: x\n":            "error",
		"":                      "error",
	} {
		n, err := parseReadChars([]byte(in))
		got := strconv.FormatUint(n, 10)
		if err != nil {
			got = "error"
		}
		if got != want {
			t.Errorf("parseReadChars(%q) = %s, want %s", in, got, want)
		}
	}
}
