package tmux

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// newServer returns a Server on a private socket in a fresh temp dir. HOME
// and TMUX_TMPDIR point there too, and TMUX is dropped by Env, so nothing
// can reach the user's tmux server. The server is killed at the end.
func newServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	dir := t.TempDir()
	base := []Option{WithEnv("TMUX_TMPDIR="+dir, "HOME="+dir)}
	s := New(filepath.Join(dir, "tmux.sock"), filepath.Join(dir, "tmux.conf"), append(base, opts...)...)
	t.Cleanup(func() {
		// t.Context is already cancelled when cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.KillServer(ctx); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	return s
}

// startedServer is newServer with the server running.
func startedServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s := newServer(t, opts...)
	if err := s.EnsureRunning(t.Context()); err != nil {
		t.Fatal(err)
	}
	return s
}

func newSession(t testing.TB, s *Server, o NewSessionOptions) PaneInfo {
	t.Helper()
	p, err := s.NewSession(t.Context(), o)
	if err != nil {
		t.Fatalf("NewSession(%+v): %v", o, err)
	}
	return p
}

// waitFor polls cond every 10 ms until it holds or timeout passes, then
// fails with the last description cond gave.
func waitFor(t testing.TB, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v: %s", timeout, why)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitFile waits until file exists and holds at least n bytes, and
// returns its content.
func waitFile(t testing.TB, file string, n int) string {
	t.Helper()
	var data []byte
	waitFor(t, 10*time.Second, func() (bool, string) {
		var err error
		data, err = os.ReadFile(file)
		if err != nil {
			return false, err.Error()
		}
		return len(data) >= n, "file holds " + string(data)
	})
	return string(data)
}

// rawCat starts a session whose pane copies its terminal input byte for
// byte into a file (raw mode, no echo), and returns the pane and the file.
func rawCat(t testing.TB, s *Server, name string) (PaneInfo, string) {
	t.Helper()
	dir := t.TempDir()
	out, ready := filepath.Join(dir, "out"), filepath.Join(dir, "ready")
	p := newSession(t, s, NewSessionOptions{
		Name: name,
		Argv: []string{"/bin/sh", "-c", `stty raw -echo && : > "$1" && exec cat > "$0"`, out, ready},
	})
	waitFile(t, ready, 0)
	return p, out
}

// running is Running for tests: any failure other than "no server" fails t.
func running(t *testing.T, s *Server, ctx context.Context) bool {
	t.Helper()
	up, err := s.Running(ctx)
	if err != nil {
		t.Fatalf("Running: %v", err)
	}
	return up
}
