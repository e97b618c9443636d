package hookwire

import (
	"bytes"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func shortTemp(t testing.TB) string {
	d, err := os.MkdirTemp("", "corral-hook")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func TestSendRead(t *testing.T) {
	sock := filepath.Join(shortTemp(t), "hook.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	type got struct {
		h   Header
		p   []byte
		err error
	}
	ch := make(chan got, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			ch <- got{err: err}
			return
		}
		defer c.Close()
		h, p, err := Read(c, MaxPayload)
		ch <- got{h, p, err}
	}()
	payload := []byte(`{"hook_event_name":"Stop","x":"` + strings.Repeat("é", 50000) + `"}`)
	start := time.Unix(0, 123456789)
	h := HeaderFromEnv(KindHook, start, func(k string) string {
		return map[string]string{"CORRAL_SESSION": "s1", "TMUX_PANE": "%3"}[k]
	})
	if err := Send(sock, h, payload, time.Second); err != nil {
		t.Fatal(err)
	}
	g := <-ch
	if g.err != nil {
		t.Fatal(g.err)
	}
	if g.h.Session != "s1" || g.h.Pane != "%3" || g.h.At != 123456789 || g.h.PID != os.Getpid() || g.h.Kind != KindHook {
		t.Fatalf("header %+v", g.h)
	}
	if !bytes.Equal(g.p, payload) {
		t.Fatalf("payload differs: %d vs %d bytes", len(g.p), len(payload))
	}
}

func TestSendWithoutAgentFailsFast(t *testing.T) {
	sock := filepath.Join(shortTemp(t), "none.sock")
	start := time.Now()
	err := Send(sock, Header{Kind: KindHook}, []byte("{}"), time.Second)
	if err == nil {
		t.Fatal("no error without an agent")
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Fatalf("took %v without an agent", d)
	}
}

func TestSendToStuckAgentTimesOut(t *testing.T) {
	// A listener that never accepts: connects queue in the backlog, then
	// block. Send must give up by its deadline.
	sock := filepath.Join(shortTemp(t), "stuck.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	big := bytes.Repeat([]byte("x"), 8<<20) // more than the socket buffer
	start := time.Now()
	err = Send(sock, Header{Kind: KindHook}, big, 300*time.Millisecond)
	if err == nil {
		t.Fatal("no error from an agent that never reads")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("took %v", d)
	}
}

func TestReadRejects(t *testing.T) {
	cases := map[string]string{
		"no newline":      `{"kind":"hook"`,
		"bad json":        "{nope\n{}",
		"unknown kind":    `{"kind":"rm -rf"}` + "\n{}",
		"giant header":    strings.Repeat("a", MaxHeader+10) + "\n",
		"empty":           "",
		"payload too big": `{"kind":"hook"}` + "\n" + strings.Repeat("x", 101),
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			_, _, err := Read(strings.NewReader(in), 100)
			if err == nil {
				t.Fatal("accepted")
			}
			if name == "payload too big" && !errors.Is(err, ErrTooLarge) {
				t.Fatalf("err %v, want ErrTooLarge", err)
			}
		})
	}
}

func TestReadStdinLimit(t *testing.T) {
	// A cut payload arrives as its first MaxPayload bytes (the agent reads
	// the fields before the cut).
	p, trunc, err := ReadStdin(bytes.NewReader(make([]byte, 3*MaxPayload)))
	if err != nil || !trunc || len(p) != MaxPayload {
		t.Fatalf("got %d bytes trunc=%v err=%v", len(p), trunc, err)
	}
	p, trunc, err = ReadStdin(strings.NewReader(`{}`))
	if err != nil || trunc || string(p) != "{}" {
		t.Fatalf("got %q trunc=%v err=%v", p, trunc, err)
	}
}

func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"kind":"hook","at":1,"pid":2}` + "\n" + `{"hook_event_name":"Stop"}`))
	f.Add([]byte(`{"kind":"statusline"}` + "\n"))
	f.Add([]byte("\n\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, p, err := Read(bytes.NewReader(b), 1<<16)
		if err != nil {
			return
		}
		if h.Kind != KindHook && h.Kind != KindStatusLine {
			t.Fatalf("accepted kind %q", h.Kind)
		}
		if len(p) > 1<<16 {
			t.Fatal("payload over the limit")
		}
	})
}

func BenchmarkSend(b *testing.B) {
	sock := filepath.Join(shortTemp(b), "hook.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); Read(c, MaxPayload) }()
		}
	}()
	payload := []byte(`{"session_id":"bcc27dbc","hook_event_name":"PreToolUse","tool_name":"Bash"}`)
	for b.Loop() {
		if err := Send(sock, Header{Kind: KindHook}, payload, time.Second); err != nil {
			b.Fatal(err)
		}
	}
}
