//go:build linux

package proc

import (
	"errors"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestListeningTCPPortsHelper(t *testing.T) {
	_, line := startReadLine(t, helperCmd(t, "listen", ""))
	var want []int
	for f := range strings.FieldsSeq(line) {
		p, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("helper said %q", line)
		}
		want = append(want, p)
	}
	slices.Sort(want)
	// The helper printed its ports after listening, so no polling is needed;
	// but find its pid through our children, as the agent would.
	kids, err := Children(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, k := range kids {
		ports, err := ListeningTCPPorts(k)
		if err != nil {
			continue
		}
		if len(ports) > 0 {
			got = append(got, ports...)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("listening ports of our children = %v, want %v", got, want)
	}
}

func TestListeningTCPPortsSelf(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	// An established connection in both directions must not count.
	conn, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	srv, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	// Nor a UDP socket.
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()

	ports, err := ListeningTCPPorts(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ports, []int{port}) {
		t.Errorf("ports = %v, want [%d] (client port %d)", ports, port, conn.LocalAddr().(*net.TCPAddr).Port)
	}
	l.Close()
	if has, err := HasListeningTCP(os.Getpid()); err != nil || has {
		t.Errorf("after close: HasListeningTCP = %v, %v", has, err)
	}
}

func TestListeningTCPPortsNone(t *testing.T) {
	c := startSleep(t)
	if has, err := HasListeningTCP(c.Process.Pid); err != nil || has {
		t.Errorf("sleep: HasListeningTCP = %v, %v", has, err)
	}
	if _, err := ListeningTCPPorts(deadPID(t)); !errors.Is(err, ErrNoProcess) {
		t.Errorf("dead pid: %v", err)
	}
}

func TestParseTCPTable(t *testing.T) {
	const table = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 111 1 0000000000000000 100 0 0 10 0
   1: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 222 1 0000000000000000 100 0 0 10 0
   2: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000  1000        0 333 1 0000000000000000 20 4 30 10 -1
   3: 0100007F:ZZZZ 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 444 1
   4: garbage
`
	const table6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:0050 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 555 1 0000000000000000 100 0 0 10 0
`
	inodes := map[uint64]bool{111: true, 333: true, 444: true, 555: true}
	if got := listeningPorts([]byte(table), inodes); !slices.Equal(got, []int{8080}) {
		t.Errorf("tcp: %v, want [8080]", got)
	}
	if got := listeningPorts([]byte(table6), inodes); !slices.Equal(got, []int{80}) {
		t.Errorf("tcp6: %v, want [80]", got)
	}
	if got := listeningPorts([]byte(table), map[uint64]bool{}); len(got) != 0 {
		t.Errorf("no inodes: %v", got)
	}
}

func FuzzParseTCPTable(f *testing.F) {
	f.Add([]byte("   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 111 1\n"))
	f.Add([]byte("x\n\n 0 : : 0A a b c d e 1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, p := range listeningPorts(data, map[uint64]bool{111: true, 1: true}) {
			if p < 0 || p > 65535 {
				t.Fatalf("port %d", p)
			}
		}
	})
}
