package cli

import (
	"context"
	"errors"
	"io"
	"net"
	"regexp"
	"testing"
	"time"
)

// TestDaemonConnectionCap: another local user who opens idle connections to
// the dashboard's port beyond --max-connections has them closed at once,
// and the daemon goes on serving its owner, on its socket and on TCP.
func TestDaemonConnectionCap(t *testing.T) {
	in := newInstall(t)
	in.serveArgs = []string{"--listen", "127.0.0.1:0", "--max-connections", "8"}
	in.startDaemon()
	m := regexp.MustCompile(`open http://(127\.0\.0\.1:\d+)/`).FindStringSubmatch(in.log.String())
	if m == nil {
		t.Fatalf("no dashboard address in the log:\n%s", in.log.String())
	}
	addr := m[1]
	for range 8 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	for i := range 40 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			continue // refused: as good
		}
		// Closed well before the 10 s an idle connection may wait for its
		// request's headers.
		c.SetReadDeadline(time.Now().Add(3 * time.Second))
		_, err = io.Copy(io.Discard, c)
		c.Close()
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("connection %d beyond the cap of 8 stayed open", 8+i)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := in.c.Version(ctx); err != nil {
		t.Fatalf("the owner's socket: %v", err)
	}
	in.must("ls")
}

func TestPushSubjectDefault(t *testing.T) {
	cases := []struct {
		nf   notifyFlags
		wf   webFlags
		want string
	}{
		{notifyFlags{pushSubject: "mailto:me@example.org"}, webFlags{allowHosts: []string{"hub.example.com"}}, "mailto:me@example.org"},
		{notifyFlags{}, webFlags{allowHosts: []string{"localhost", "hub.example.com:443"}}, "https://hub.example.com"},
		{notifyFlags{}, webFlags{listen: "corral.example.net:443", tlsCert: "c", tlsKey: "k"}, "https://corral.example.net"},
		{notifyFlags{}, webFlags{listen: "0.0.0.0:443", tlsCert: "c", tlsKey: "k"}, ""},
		{notifyFlags{}, webFlags{listen: "127.0.0.1:7777"}, ""},
		{notifyFlags{}, webFlags{allowHosts: []string{"box.local"}}, ""},
	}
	for _, c := range cases {
		if got := c.nf.subject(c.wf); got != c.want {
			t.Errorf("%+v %+v: %q, want %q", c.nf, c.wf, got, c.want)
		}
	}
}
