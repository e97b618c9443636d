package attach

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/corral-dev/corral/internal/tmux"
)

func TestParseKey(t *testing.T) {
	good := map[string]byte{
		`ctrl-\`: 0x1c, `C-\`: 0x1c, `^\`: 0x1c, "ctrl-]": 0x1d, "ctrl+a": 0x01,
		"Ctrl-Q": 0x11, "ctrl-_": 0x1f, "none": 0, "": 0,
	}
	for in, want := range good {
		got, err := ParseKey(in)
		if err != nil || got != want {
			t.Errorf("ParseKey(%q) = %#x, %v; want %#x", in, got, err, want)
		}
	}
	for _, in := range []string{"x", "ctrl-", "ctrl-ab", "ctrl-1", "ctrl-@", "alt-x", "^?", "ctrl-é"} {
		if _, err := ParseKey(in); err == nil {
			t.Errorf("ParseKey(%q) accepted", in)
		}
	}
	for _, k := range []byte{0x1c, 0x1d, 0x01, 0x11, 0x1f} {
		if got, err := ParseKey(KeyName(k)); err != nil || got != k {
			t.Errorf("ParseKey(KeyName(%#x)=%q) = %#x, %v", k, KeyName(k), got, err)
		}
	}
}

func TestCopyInputStopsAtKey(t *testing.T) {
	var w bytes.Buffer
	hits := 0
	r := &chunks{parts: []string{"abc", "de\x1cfg", "hi"}}
	if err := copyInput(&w, r, 0x1c, func() { hits++ }); err == nil {
		t.Fatal("copyInput returned nil at EOF")
	}
	if w.String() != "abcdehi" || hits != 1 {
		t.Fatalf("copied %q with %d detaches; want \"abcdehi\" and 1", w.String(), hits)
	}
	w.Reset()
	r = &chunks{parts: []string{"a\x1cb"}}
	_ = copyInput(&w, r, 0, func() { t.Error("detached with no key") })
	if w.String() != "a\x1cb" {
		t.Fatalf("with no key copied %q", w.String())
	}
}

type chunks struct{ parts []string }

func (c *chunks) Read(p []byte) (int, error) {
	if len(c.parts) == 0 {
		return 0, errors.New("EOF")
	}
	n := copy(p, c.parts[0])
	c.parts = c.parts[1:]
	return n, nil
}

func TestRunNeedsTerminal(t *testing.T) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	err = Run(t.Context(), Options{Argv: []string{"true"}, In: f, Out: f})
	if err == nil || !strings.Contains(err.Error(), "needs a terminal") {
		t.Fatalf("Run on /dev/null: %v", err)
	}
}

// rig is a real tmux server with a shell session, and a terminal (a PTY
// pair) standing in for the user's.
type rig struct {
	srv   *tmux.Server
	user  *os.File // what the user types into and reads from
	tty   *os.File // the terminal attach runs in
	mu    sync.Mutex
	shown bytes.Buffer
}

func newRig(t *testing.T) *rig {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	dir := t.TempDir()
	srv := tmux.New(filepath.Join(dir, "tmux.sock"), filepath.Join(dir, "tmux.conf"),
		tmux.WithEnv("HOME="+dir, "TMUX_TMPDIR="+dir, "PS1=$ "))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.KillServer(ctx)
	})
	if _, err := srv.NewSession(t.Context(), tmux.NewSessionOptions{Name: "s1", Dir: dir, Argv: []string{"sh"}}); err != nil {
		t.Fatal(err)
	}
	user, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	if err := pty.Setsize(user, &pty.Winsize{Cols: 80, Rows: 24}); err != nil {
		t.Fatal(err)
	}
	r := &rig{srv: srv, user: user, tty: tty}
	t.Cleanup(func() { tty.Close(); user.Close() })
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := user.Read(buf)
			r.mu.Lock()
			r.shown.Write(buf[:n])
			r.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return r
}

func (r *rig) start(t *testing.T) <-chan error {
	done := make(chan error, 1)
	go func() {
		done <- Run(t.Context(), Options{
			Argv: r.srv.AttachCommand("s1"), Env: append(r.srv.Env(), "TERM=xterm-256color"),
			In: r.tty, Out: r.tty, Key: DefaultKey, Detach: r.srv.DetachClient,
		})
	}()
	return done
}

func (r *rig) waitShown(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		ok := strings.Contains(r.shown.String(), want)
		r.mu.Unlock()
		if ok {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	t.Fatalf("terminal never showed %q; it showed %q", want, r.shown.String())
}

func waitDone(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(15 * time.Second):
		t.Fatal("attach did not return")
		return nil
	}
}

func TestDetachKeyLeavesSessionRunning(t *testing.T) {
	r := newRig(t)
	done := r.start(t)
	// Typing reaches the session and its output comes back.
	r.waitShown(t, "$ ")
	if _, err := r.user.Write([]byte("echo typed-$((6*7))\r")); err != nil {
		t.Fatal(err)
	}
	r.waitShown(t, "typed-42")
	if _, err := r.user.Write([]byte{DefaultKey}); err != nil {
		t.Fatal(err)
	}
	if err := waitDone(t, done); err != nil {
		t.Fatalf("attach after the detach key: %v", err)
	}
	r.waitShown(t, "[detached")
	if ok, err := r.srv.HasSession(t.Context(), "s1"); err != nil || !ok {
		t.Fatalf("session gone after detaching: %v, %v", ok, err)
	}
}

func TestSessionEndEndsAttach(t *testing.T) {
	r := newRig(t)
	done := r.start(t)
	r.waitShown(t, "$ ")
	if _, err := r.user.Write([]byte("exit\r")); err != nil {
		t.Fatal(err)
	}
	if err := waitDone(t, done); err != nil {
		t.Fatalf("attach after the session ended: %v", err)
	}
	r.waitShown(t, "[exited]")
}
