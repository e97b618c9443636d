// Package e2e runs the real corral binary against the real Claude Code CLI in
// real tmux, with only the model faked (internal/testkit/fakeapi).
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/client"
	"github.com/corral-dev/corral/internal/datadir"
	"github.com/corral-dev/corral/internal/testkit/claudeenv"
	"github.com/corral-dev/corral/internal/testkit/fakeapi"
	"github.com/corral-dev/corral/internal/testkit/testio"
)

// corralBin is the binary under test, built once by TestMain, and
// fakeMCPBin the fake MCP server (internal/testkit/fakemcp) beside it.
var corralBin, fakeMCPBin string

func TestMain(m *testing.M) {
	code := func() int {
		defer pg.Stop() // if a test started it
		dir, err := os.MkdirTemp("", "corral-e2e-bin-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		corralBin = filepath.Join(dir, "corral")
		// corral and, next to it, the corral-hook that Claude runs.
		for _, pkg := range []string{"corral", "corral-hook"} {
			args := []string{"build", "-o", filepath.Join(dir, pkg)}
			if raceEnabled {
				// The daemon runs with the race detector too when the tests do.
				args = append(args, "-race")
			}
			args = append(args, "github.com/corral-dev/corral/cmd/"+pkg)
			cmd := exec.Command("go", args...)
			cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
			if err := cmd.Run(); err != nil {
				fmt.Fprintln(os.Stderr, "build", pkg+":", err)
				return 1
			}
		}
		fakeMCPBin = filepath.Join(dir, "fakemcp")
		cmd := exec.Command("go", "build", "-o", fakeMCPBin, "github.com/corral-dev/corral/internal/testkit/fakemcp/cmd/fakemcp")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "build fakemcp:", err)
			return 1
		}
		return m.Run()
	}()
	os.Exit(code)
}

// harness is one isolated corral installation: its own HOME for Claude, its
// own data directory (and so its own tmux server), a fake model.
type harness struct {
	t       *testing.T
	api     *fakeapi.Server
	claude  *claudeenv.Env
	dataDir string
	proj    string
	env     []string
	c       *client.Client

	serve     *exec.Cmd
	serveLog  *testio.SyncBuffer
	serveArgs []string
	rec       *recorder
}

type harnessOptions struct {
	fake fakeapi.Options
	// extraEnv is added to corral serve's environment.
	extraEnv []string
	// serveArgs are extra flags of corral serve.
	serveArgs []string
	// claudeConfigDir, when set, moves Claude's configuration directory
	// there (relative to HOME) with CLAUDE_CONFIG_DIR.
	claudeConfigDir string
}

func newHarness(t *testing.T, opts harnessOptions) *harness {
	t.Helper()
	claudeenv.RequireTmux(t)
	claudeenv.RequireClaude(t)
	h := &harness{t: t, serveArgs: opts.serveArgs}
	h.proj = testio.TempDir(t, "corral-proj-")
	if opts.fake.ToolDir == "" {
		opts.fake.ToolDir = h.proj
	}
	h.api = fakeapi.New(opts.fake)
	h.api.Start(t)
	h.claude = claudeenv.New(t, claudeenv.Options{BaseURL: h.api.URL(), Trust: []string{h.proj}, ConfigDir: opts.claudeConfigDir})
	// A short path: unix socket names must fit in 108 bytes.
	h.dataDir = testio.TempDir(t, "corral-data-")
	// A -race binary sleeps 1 s at exit unless told not to, and Claude
	// waits for every hook.
	h.env = append(h.claude.Environ(), "CORRAL_HOME="+h.dataDir, "GORACE=atexit_sleep_ms=0")
	h.env = append(h.env, opts.extraEnv...)
	h.c = client.Unix(datadir.Socket(h.dataDir, datadir.APISocket))
	t.Cleanup(func() {
		h.stopServe(syscall.SIGTERM)
		// The tmux server holds the sessions; end it with the test.
		exec.Command("tmux", "-S", datadir.Socket(h.dataDir, datadir.TmuxSocket), "kill-server").Run()
		if t.Failed() && h.serveLog != nil {
			t.Logf("corral serve log:\n%s", h.serveLog.String())
		}
	})
	h.startServe()
	return h
}

// startServe starts `corral serve` and waits until its API answers.
func (h *harness) startServe() {
	h.t.Helper()
	// The dashboard on a port of its own: tests run side by side.
	h.startDaemon("corral serve", append([]string{"serve", "--log-level", "debug", "--listen", "127.0.0.1:0"}, h.serveArgs...))
}

// startDaemon runs corral with args (serve, or agent), its output in
// serveLog, and waits until its local API answers.
func (h *harness) startDaemon(what string, args []string) {
	h.t.Helper()
	cmd := exec.Command(corralBin, args...)
	cmd.Env = h.env
	cmd.Dir = h.proj
	if h.serveLog == nil {
		h.serveLog = &testio.SyncBuffer{}
	}
	cmd.Stdout = h.serveLog
	cmd.Stderr = h.serveLog
	if err := cmd.Start(); err != nil {
		h.t.Fatal(err)
	}
	h.serve = cmd
	waitFor(h.t, 15*time.Second, what+" to answer on its socket", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := h.c.Version(ctx)
		return err == nil
	})
	h.rec = newRecorder(h.t, h.c)
}

// stopServe stops the daemon with a signal (SIGKILL for a crash).
func (h *harness) stopServe(sig syscall.Signal) {
	if h.rec != nil {
		h.rec.stop()
		h.rec = nil
	}
	if h.serve == nil || h.serve.Process == nil {
		return
	}
	h.serve.Process.Signal(sig)
	done := make(chan struct{})
	go func() { h.serve.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		h.serve.Process.Kill()
		<-done
	}
	h.serve = nil
}

// corral runs the CLI and returns its stdout; it fails the test on a
// non-zero exit unless allowFail.
func (h *harness) corral(args ...string) string {
	h.t.Helper()
	out, err := h.corralErr(args...)
	if err != nil {
		h.t.Fatalf("corral %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (h *harness) corralErr(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, corralBin, args...)
	cmd.Env = h.env
	cmd.Dir = h.proj
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		return stdout.String() + stderr.String(), err
	}
	return stdout.String(), nil
}

// ls is `corral ls --json`: the scripting contract.
func (h *harness) ls() []api.Session {
	h.t.Helper()
	var list []api.Session
	out := h.corral("ls", "--json")
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		h.t.Fatalf("corral ls --json: %v\n%s", err, out)
	}
	return list
}

func (h *harness) lsOne(id string) api.Session {
	h.t.Helper()
	for _, s := range h.ls() {
		if s.ID == id {
			return s
		}
	}
	h.t.Fatalf("session %s not in corral ls --json", id)
	return api.Session{}
}

// newSession starts a claude session and waits until it is idle.
func (h *harness) newSession(args ...string) string {
	h.t.Helper()
	id := strings.TrimSpace(h.corral(append([]string{"new", "--dir", h.proj}, args...)...))
	if id == "" {
		h.t.Fatal("corral new printed no id")
	}
	h.waitStatus(id, api.StatusIdle, 60*time.Second)
	return id
}

// send types a prompt and presses Enter.
func (h *harness) send(id, text string) {
	h.t.Helper()
	h.corral("send", id, text)
}

// waitStatus waits until the event stream shows the session in status st,
// then checks that `corral ls --json` agrees.
func (h *harness) waitStatus(id string, st api.Status, timeout time.Duration) api.Session {
	h.t.Helper()
	h.rec.onTimeout = func() string {
		out, _ := h.corralErr("capture", id)
		return "screen of " + id + ":\n" + out
	}
	s := h.rec.waitFor(timeout, fmt.Sprintf("session %s to be %s", id, st), func(s api.Session) bool {
		return s.ID == id && s.Status == st
	})
	if got := h.lsOne(id); got.Status != st {
		// The state may have moved on already; only a contradiction from an
		// older state is a failure, and that is for the caller to judge.
		h.t.Logf("note: corral ls shows %s after the stream showed %s", got.Status, st)
	}
	return s
}

// screen returns the session's screen.
func (h *harness) screen(id string) string {
	h.t.Helper()
	return h.corral("capture", id)
}

// waitScreen waits until the session's screen contains substr.
func (h *harness) waitScreen(id, substr string, timeout time.Duration) {
	h.t.Helper()
	waitFor(h.t, timeout, fmt.Sprintf("screen of %s to show %q", id, substr), func() bool {
		out, err := h.corralErr("capture", id)
		return err == nil && strings.Contains(out, substr)
	})
}

// clearInput empties Claude's input box: C-u until the prompt line has
// been empty twice in a row, 200 ms apart, since Claude may put a prompt
// back a moment after its turn ended.
func (h *harness) clearInput(id string) {
	h.t.Helper()
	empty := 0
	waitFor(h.t, 10*time.Second, "an empty input box", func() bool {
		line := inputLine(h.screen(id))
		if line != "" {
			h.corral("keys", id, "C-u")
			empty = 0
		} else {
			empty++
		}
		if empty < 2 {
			time.Sleep(200 * time.Millisecond)
			return false
		}
		return true
	})
}

// inputLine is the text in Claude's input box: the last line starting
// with the prompt sign, without it.
func inputLine(screen string) string {
	lines := strings.Split(screen, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(lines[i]), "❯"); ok {
			return strings.TrimSpace(rest)
		}
	}
	return ""
}

func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if !eventually(timeout, cond) {
		t.Fatalf("timed out after %v waiting for %s", timeout, what)
	}
}

// eventually polls cond until it holds or timeout passes, and says which:
// for a caller that reports what it saw last.
func eventually(timeout time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(timeout); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

// recorder follows the event stream and keeps every session's latest state
// and the history of status changes.
type recorder struct {
	t      *testing.T
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	cond     *sync.Cond
	sessions map[string]api.Session
	history  []change
	err      error
	// onTimeout adds context to a timeout's failure message.
	onTimeout func() string
}

type change struct {
	at     time.Time
	id     string
	status api.Status
	s      api.Session
}

func newRecorder(t *testing.T, c *client.Client) *recorder {
	ctx, cancel := context.WithCancel(context.Background())
	r := &recorder{t: t, cancel: cancel, done: make(chan struct{}), sessions: map[string]api.Session{}}
	r.cond = sync.NewCond(&r.mu)
	ready := make(chan struct{})
	go func() {
		defer close(r.done)
		var once sync.Once
		err := c.StreamEvents(ctx, 0, func(ev api.Event) error {
			r.mu.Lock()
			now := time.Now()
			switch ev.Type {
			case api.EventSnapshot:
				r.sessions = map[string]api.Session{}
				for _, s := range ev.Sessions {
					r.sessions[s.ID] = s
					r.history = append(r.history, change{now, s.ID, s.Status, s})
				}
			case api.EventSession:
				old, had := r.sessions[ev.Session.ID]
				r.sessions[ev.Session.ID] = *ev.Session
				if !had || old.Status != ev.Session.Status {
					r.history = append(r.history, change{now, ev.Session.ID, ev.Session.Status, *ev.Session})
				}
			case api.EventRemoved:
				delete(r.sessions, ev.ID)
				r.history = append(r.history, change{now, ev.ID, "removed", api.Session{}})
			}
			r.cond.Broadcast()
			r.mu.Unlock()
			once.Do(func() { close(ready) })
			return nil
		})
		r.mu.Lock()
		r.err = err
		r.cond.Broadcast()
		r.mu.Unlock()
		once.Do(func() { close(ready) })
	}()
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		t.Fatal("event stream did not start")
	}
	return r
}

func (r *recorder) stop() {
	r.cancel()
	<-r.done
}

// waitFor waits until some session satisfies cond and returns it.
func (r *recorder) waitFor(timeout time.Duration, what string, cond func(api.Session) bool) api.Session {
	r.t.Helper()
	deadline := time.Now().Add(timeout)
	timer := time.AfterFunc(timeout, func() {
		r.mu.Lock()
		r.cond.Broadcast()
		r.mu.Unlock()
	})
	defer timer.Stop()
	r.mu.Lock()
	defer r.mu.Unlock()
	for {
		for _, s := range r.sessions {
			if cond(s) {
				return s
			}
		}
		if time.Now().After(deadline) {
			extra := ""
			if r.onTimeout != nil {
				f := r.onTimeout
				r.mu.Unlock()
				extra = f()
				r.mu.Lock()
			}
			r.t.Fatalf("timed out after %v waiting for %s; sessions: %s; history: %s\n%s", timeout, what, r.summaryLocked(), r.historyLocked(), extra)
		}
		r.cond.Wait()
	}
}

// statuses returns the status history of one session.
func (r *recorder) statuses(id string) []api.Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []api.Status
	for _, c := range r.history {
		if c.id == id {
			out = append(out, c.status)
		}
	}
	return out
}

// firstSince returns when a session first entered a status after t0.
func (r *recorder) firstSince(id string, st api.Status, t0 time.Time) (change, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.history {
		if c.id == id && c.status == st && !c.at.Before(t0) {
			return c, true
		}
	}
	return change{}, false
}

func (r *recorder) summaryLocked() string {
	var b strings.Builder
	for id, s := range r.sessions {
		fmt.Fprintf(&b, "%s=%s ", id, s.Status)
	}
	return b.String()
}

func (r *recorder) historyLocked() string {
	var b strings.Builder
	for _, c := range r.history {
		fmt.Fprintf(&b, "%s:%s ", c.id[:min(4, len(c.id))], c.status)
	}
	return b.String()
}

func execCorral(h *harness, args ...string) *exec.Cmd {
	cmd := exec.Command(corralBin, args...)
	cmd.Env = h.env
	cmd.Dir = h.proj
	return cmd
}

// webURL is the login URL corral serve printed.
func (h *harness) webURL() string {
	h.t.Helper()
	var u string
	waitFor(h.t, 10*time.Second, "the dashboard's URL", func() bool {
		// The last one: the daemon may have been restarted.
		all := regexp.MustCompile(`corral: open (http://\S+)`).FindAllStringSubmatch(h.serveLog.String(), -1)
		if len(all) > 0 {
			u = all[len(all)-1][1]
		}
		return len(all) > 0
	})
	return u
}
