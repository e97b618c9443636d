package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/agent"
	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/datadir"
	"github.com/corral-dev/corral/internal/events"
	"github.com/corral-dev/corral/internal/hookwire"
	"github.com/corral-dev/corral/internal/store"
	"github.com/corral-dev/corral/internal/testkit/testio"
)

// rig is one isolated agent: its own data directory (so its own tmux
// server and hook socket), HOME, project directory and database.
type rig struct {
	t       *testing.T
	dataDir string
	home    string
	proj    string
	cfg     agent.Config
	st      *store.SQLite
	a       *agent.Agent
	log     *testio.SyncBuffer
}

type rigOption func(*agent.Config)

func requireTmux(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
}

func newRig(t *testing.T, opts ...rigOption) *rig {
	t.Helper()
	requireTmux(t)
	r := &rig{t: t, log: &testio.SyncBuffer{}}
	r.dataDir = testio.TempDir(t, "corral-")
	r.home = testio.TempDir(t, "corral-home-")
	r.proj = filepath.Join(testio.TempDir(t, "corral-proj-"), "proj")
	if err := os.Mkdir(r.proj, 0o755); err != nil {
		t.Fatal(err)
	}
	r.cfg = agent.Config{
		DataDir: r.dataDir,
		Home:    r.home,
		// A known, small environment: a plain sh with a fixed prompt, the
		// test's PATH, an isolated HOME.
		Env: []string{
			"PATH=" + os.Getenv("PATH"),
			"HOME=" + r.home,
			"SHELL=/bin/sh",
			"PS1=$ ",
			"LANG=C.UTF-8",
		},
		ClaudeBin: "/nonexistent/claude",
		Logger:    slog.New(slog.NewTextHandler(r.log, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	for _, o := range opts {
		o(&r.cfg)
	}
	t.Cleanup(func() {
		if r.a != nil {
			r.a.Close()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if r.a != nil {
			r.a.Tmux().KillServer(ctx)
		}
		if r.st != nil {
			r.st.Close()
		}
		if t.Failed() {
			t.Logf("agent log:\n%s", r.log.String())
		}
	})
	r.start()
	return r
}

// start opens the database (if closed) and starts a new agent on the rig's
// data directory.
func (r *rig) start() {
	r.t.Helper()
	if r.st == nil {
		st, err := store.Open(filepath.Join(r.dataDir, datadir.Database))
		if err != nil {
			r.t.Fatal(err)
		}
		r.st = st
	}
	cfg := r.cfg
	cfg.Store = r.st
	if cfg.Bus == nil {
		cfg.Bus = events.New(events.Options{})
	}
	a, err := agent.New(cfg)
	if err != nil {
		r.t.Fatal(err)
	}
	if err := a.Start(context.Background()); err != nil {
		r.t.Fatal(err)
	}
	r.a = a
}

// restart closes the agent and the database, then opens both again, as a
// restarted daemon does. tmux keeps running.
func (r *rig) restart() {
	r.t.Helper()
	if err := r.a.Close(); err != nil {
		r.t.Fatalf("close agent: %v", err)
	}
	if err := r.st.Close(); err != nil {
		r.t.Fatal(err)
	}
	r.a, r.st = nil, nil
	r.start()
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func (r *rig) shell(name string) api.Session {
	r.t.Helper()
	s, err := r.a.Create(ctxT(r.t), api.CreateRequest{Dir: r.proj, Name: name, Shell: true})
	if err != nil {
		r.t.Fatalf("create shell session: %v", err)
	}
	return s
}

// waitScreen polls the session's screen until it contains substr.
func (r *rig) waitScreen(id, substr string) string {
	r.t.Helper()
	var last string
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		scr, err := r.a.Capture(ctxT(r.t), api.CaptureRequest{SessionRef: api.SessionRef{ID: id}, History: 200})
		if err == nil {
			last = scr.Text
			if strings.Contains(scr.Text, substr) {
				return scr.Text
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.t.Fatalf("screen of %s never showed %q; last screen:\n%s", id, substr, last)
	return ""
}

// watcher reads the agent's bus.
type watcher struct {
	t    *testing.T
	sub  *events.Sub
	seen []api.Event
}

// watch subscribes from now on: no snapshot, only the changes that follow.
func (r *rig) watch() *watcher {
	b := r.a.Bus()
	w := &watcher{t: r.t, sub: b.Subscribe(b.Seq())}
	r.t.Cleanup(w.sub.Close)
	return w
}

// waitFor reads events until one satisfies cond.
func (w *watcher) waitFor(timeout time.Duration, what string, cond func(api.Event) bool) api.Event {
	w.t.Helper()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		select {
		case ev, ok := <-w.sub.C():
			if !ok {
				w.t.Fatalf("event subscription ended (%v) while waiting for %s", w.sub.Err(), what)
			}
			w.seen = append(w.seen, *ev)
			if cond(*ev) {
				return *ev
			}
		case <-timer.C:
			w.t.Fatalf("no event for %s within %v; saw:\n%s", what, timeout, describe(w.seen))
		}
	}
}

// status waits for a session event that puts id in status st.
func (w *watcher) status(id string, st api.Status) api.Event {
	w.t.Helper()
	return w.waitFor(10*time.Second, fmt.Sprintf("%s to become %s", id, st), func(ev api.Event) bool {
		return ev.Type == api.EventSession && ev.Session.ID == id && ev.Session.Status == st
	})
}

// removed waits for id's removal.
func (w *watcher) removed(id string) api.Event {
	w.t.Helper()
	return w.waitFor(10*time.Second, id+" to be removed", func(ev api.Event) bool {
		return ev.Type == api.EventRemoved && ev.ID == id
	})
}

// drain returns the events already queued, without waiting.
func (w *watcher) drain() []api.Event {
	var out []api.Event
	for {
		select {
		case ev, ok := <-w.sub.C():
			if !ok {
				return out
			}
			w.seen = append(w.seen, *ev)
			out = append(out, *ev)
		default:
			return out
		}
	}
}

func describe(evs []api.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		fmt.Fprintf(&b, "  seq %d %s", ev.Seq, ev.Type)
		if ev.Session != nil {
			fmt.Fprintf(&b, " %s %s->%s", ev.Session.ID, ev.Prev, ev.Session.Status)
		}
		if ev.ID != "" {
			fmt.Fprintf(&b, " %s", ev.ID)
		}
		b.WriteByte('\n')
	}
	if b.Len() == 0 {
		return "  (nothing)\n"
	}
	return b.String()
}

// hookSocket is where `corral hook` delivers for this rig.
func (r *rig) hookSocket() string { return datadir.Socket(r.dataDir, datadir.HookSocket) }

// header is a hook header for a delivery from session id.
func header(id string) hookwire.Header {
	return hookwire.Header{Kind: hookwire.KindHook, At: time.Now().UnixNano(), PID: os.Getpid(), PPID: os.Getppid(), Session: id}
}

// sendHook delivers a payload the way `corral hook` does.
func (r *rig) sendHook(h hookwire.Header, payload any) {
	r.t.Helper()
	b, ok := payload.([]byte)
	if !ok {
		var err error
		if b, err = json.Marshal(payload); err != nil {
			r.t.Fatal(err)
		}
	}
	if err := hookwire.Send(r.hookSocket(), h, b, 2*time.Second); err != nil {
		r.t.Fatalf("hookwire.Send: %v", err)
	}
}

// deliverAndWait delivers raw bytes on the hook socket (hookwire.Send's wire
// format: a header line, then the payload) and returns once the agent has
// handled them and closed the connection. It lets a test check that a
// delivery changed nothing without sleeping.
func (r *rig) deliverAndWait(raw []byte) {
	r.t.Helper()
	c, err := net.DialTimeout("unix", r.hookSocket(), 2*time.Second)
	if err != nil {
		r.t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(raw); err != nil {
		r.t.Fatal(err)
	}
	c.(*net.UnixConn).CloseWrite()
	// The agent closes the connection once it has handled the delivery
	// (with unread bytes left when it refused the header: a reset).
	if _, err := io.Copy(io.Discard, c); err != nil && !errors.Is(err, syscall.ECONNRESET) {
		r.t.Fatalf("waiting for the agent to finish the delivery: %v", err)
	}
}

func rawDelivery(t *testing.T, h hookwire.Header, payload []byte) []byte {
	t.Helper()
	hb, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	return append(append(hb, '\n'), payload...)
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || !bytes.HasPrefix(b[i+1:], []byte(" Z"))
}

// waitUntil polls cond every 20 ms until it holds or timeout passes.
func waitUntil(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
