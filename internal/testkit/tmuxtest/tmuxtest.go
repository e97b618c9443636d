// Package tmuxtest is a small helper for tests that need a real tmux server:
// a private server on its own socket (tmux -S <tempdir>/sock -f <tempdir>/conf),
// never the user's, with a minimal config (focus-events and mouse on, so
// Claude Code shows no tmux hints; no status bar). It is for test code only;
// corral's tmux package is internal/tmux.
package tmuxtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Server is a private tmux server. It starts with the first NewSession.
type Server struct {
	// Socket is the server's socket path.
	Socket string
	conf   string
	env    []string
	t      testing.TB
}

// config is the private server's configuration.
const config = `set -g focus-events on
set -g mouse on
set -g status off
set -g history-limit 50000
set -g escape-time 0
`

// New returns a server on a socket in a fresh temporary directory, whose
// commands run with env (nil means the current environment); TMUX and
// TMUX_PANE are always removed so tmux never talks to an outer server. The
// server is killed when the test ends.
func New(t testing.TB, env []string) *Server {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("skipping: tmux not found on PATH (apt-get install tmux)")
	}
	// A short path: unix socket paths are limited to ~108 bytes.
	dir, err := os.MkdirTemp("", "tmx")
	if err != nil {
		t.Fatal(err)
	}
	if env == nil {
		env = os.Environ()
	}
	var clean []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "TMUX=") && !strings.HasPrefix(kv, "TMUX_PANE=") {
			clean = append(clean, kv)
		}
	}
	s := &Server{Socket: filepath.Join(dir, "sock"), conf: filepath.Join(dir, "tmux.conf"), env: clean, t: t}
	if err := os.WriteFile(s.conf, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Kill()
		_ = os.RemoveAll(dir)
	})
	return s
}

// Kill kills the server and waits (up to 10 s) until every process that ran
// in its panes, and their descendants, has exited, so that a test's cleanup
// can remove directories those processes write to (claude writes its
// transcript and removes its session file while exiting on SIGHUP).
func (s *Server) Kill() {
	var pids []int
	if out, err := s.Cmd("list-panes", "-a", "-F", "#{pane_pid}"); err == nil {
		for _, f := range strings.Fields(out) {
			if pid, err := strconv.Atoi(f); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	pids = append(pids, descendants(pids)...)
	_, _ = s.Cmd("kill-server")
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i < 0 || !strings.HasPrefix(string(b[i+1:]), " Z")
}

// descendants returns the pids of every descendant of roots (Linux /proc).
func descendants(roots []int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 2 {
			continue
		}
		if pp, err := strconv.Atoi(f[1]); err == nil {
			children[pp] = append(children[pp], pid)
		}
	}
	var out []int
	queue := append([]int(nil), roots...)
	for len(queue) > 0 && len(out) < 10000 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// Cmd runs one tmux command against the server and returns its stdout.
func (s *Server) Cmd(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	full := append([]string{"-S", s.Socket, "-f", s.conf}, args...)
	cmd := exec.CommandContext(ctx, "tmux", full...)
	cmd.Env = s.env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("tmux %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// Must runs a tmux command and fails the test on error.
func (s *Server) Must(args ...string) string {
	s.t.Helper()
	out, err := s.Cmd(args...)
	if err != nil {
		s.t.Fatal(err)
	}
	return out
}

// NewSession starts a detached session of the given size running argv in dir
// (argv empty means the default shell). extraEnv entries (KEY=VALUE) are set
// in the session environment with -e. It returns the pane id (e.g. "%0").
// A multi-word argv is run by tmux directly (execvp, no shell); a one-word
// argv is run through "sh -c" by tmux.
func (s *Server) NewSession(name, dir string, width, height int, extraEnv []string, argv ...string) string {
	s.t.Helper()
	args := []string{"new-session", "-d", "-P", "-F", "#{pane_id}", "-s", name, "-x", strconv.Itoa(width), "-y", strconv.Itoa(height), "-c", dir}
	for _, kv := range extraEnv {
		args = append(args, "-e", kv)
	}
	args = append(args, argv...)
	pane := strings.TrimSpace(s.Must(args...))
	// Keep the pane (and its last screen) when the program exits.
	s.Must("set-option", "-t", name, "remain-on-exit", "on")
	return pane
}

// SendKeys sends tmux key names (e.g. "Enter", "Escape", "C-c") to target.
func (s *Server) SendKeys(target string, keys ...string) {
	s.t.Helper()
	s.Must(append([]string{"send-keys", "-t", target}, keys...)...)
}

// SendText types text literally (no key-name lookup) into target.
func (s *Server) SendText(target, text string) {
	s.t.Helper()
	s.Must("send-keys", "-t", target, "-l", text)
}

// Capture returns the visible screen of target as plain text.
func (s *Server) Capture(target string) string {
	s.t.Helper()
	out, err := s.Cmd("capture-pane", "-p", "-t", target)
	if err != nil {
		return "(capture failed: " + err.Error() + ")"
	}
	return out
}

// Display formats a tmux format string for target (display-message -p).
func (s *Server) Display(target, format string) string {
	s.t.Helper()
	return strings.TrimSpace(s.Must("display-message", "-p", "-t", target, format))
}

// PanePID is the pid of the process tmux started in the pane.
func (s *Server) PanePID(target string) int {
	s.t.Helper()
	pid, err := strconv.Atoi(s.Display(target, "#{pane_pid}"))
	if err != nil {
		s.t.Fatalf("pane pid of %s: %v", target, err)
	}
	return pid
}

// WaitScreen polls the screen of target every 50 ms until cond holds, and
// returns that screen; it fails the test after timeout, showing the screen.
func (s *Server) WaitScreen(target string, timeout time.Duration, what string, cond func(screen string) bool) string {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		scr := s.Capture(target)
		if cond(scr) {
			return scr
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("timed out after %v waiting for %s on %s; screen:\n%s", timeout, what, target, scr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// WaitText waits until the screen of target contains substr.
func (s *Server) WaitText(target, substr string, timeout time.Duration) string {
	s.t.Helper()
	return s.WaitScreen(target, timeout, fmt.Sprintf("%q", substr), func(scr string) bool { return strings.Contains(scr, substr) })
}
