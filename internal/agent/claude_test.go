package agent_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/corral-dev/corral/internal/agent"
	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/cli"
	"github.com/corral-dev/corral/internal/testkit/claudeenv"
	"github.com/corral-dev/corral/internal/testkit/fakeapi"
)

// TestMain lets the test binary stand in for corral: the Claude settings
// the agent writes run its own binary (CorralBin) as `corral hook` and
// `corral statusline`.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && (os.Args[1] == "hook" || os.Args[1] == "statusline") {
		os.Exit(cli.Main(os.Args[1:]))
	}
	// Every agent a test starts is closed by its cleanup, and Close
	// returns only once the agent's goroutines have: none may be left.
	goleak.VerifyTestMain(m)
}

// TestClaudeSession runs the real Claude Code against the fake model once:
// the hooks it fires through `corral hook` (this binary) reach the agent,
// and the session goes starting -> idle -> busy -> review -> idle -> exited
// while its pane stays.
func TestClaudeSession(t *testing.T) {
	t.Parallel()
	claudeenv.RequireTmux(t)
	claudeBin := claudeenv.RequireClaude(t)
	model := fakeapi.New(fakeapi.Options{})
	model.Start(t)
	ce := claudeenv.New(t, claudeenv.Options{BaseURL: model.URL()})
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, func(c *agent.Config) {
		c.Home = ce.Home
		// GORACE: a -race binary sleeps a second at exit, and Claude waits
		// for every hook.
		c.Env = append(ce.Environ(), "SHELL=/bin/sh", "PS1=$ ", "GORACE=atexit_sleep_ms=0")
		c.ClaudeBin = claudeBin
		c.CorralBin = exe
		c.SafetyPoll = time.Second
	})
	if err := ce.Trust(r.proj); err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	w := r.watch()
	s, err := r.a.Create(ctx, api.CreateRequest{Dir: r.proj})
	if err != nil {
		t.Fatal(err)
	}
	if s.Status != api.StatusStarting || s.Kind != api.KindClaude {
		t.Errorf("new claude session: %+v", s)
	}
	idle := w.waitFor(60*time.Second, "claude to come up", func(ev api.Event) bool {
		return ev.Type == api.EventSession && ev.Session.ID == s.ID && ev.Session.Status == api.StatusIdle
	})
	if idle.Session.ClaudeSessionID == "" || idle.Session.ClaudePID == 0 {
		t.Errorf("idle session lacks Claude's ids: %+v", idle.Session)
	}
	if idle.Notify {
		t.Error("coming up notified")
	}

	if err := r.a.SendText(ctx, api.InputRequest{SessionRef: api.SessionRef{ID: s.ID}, Text: "say hello", Enter: true}); err != nil {
		t.Fatal(err)
	}
	w.waitFor(30*time.Second, "busy", func(ev api.Event) bool {
		return ev.Type == api.EventSession && ev.Session.ID == s.ID && ev.Session.Status == api.StatusBusy
	})
	rev := w.waitFor(30*time.Second, "review", func(ev api.Event) bool {
		return ev.Type == api.EventSession && ev.Session.ID == s.ID && ev.Session.Status == api.StatusReview
	})
	if !rev.Notify || rev.Session.LastMessage == "" {
		t.Errorf("review event: notify %v, last message %q", rev.Notify, rev.Session.LastMessage)
	}
	tp := rev.Session.TranscriptPath
	if tp == "" || filepath.Dir(filepath.Dir(tp)) != filepath.Join(ce.Home, ".claude", "projects") {
		t.Errorf("transcript path %q not under the isolated home", tp)
	}
	if err := r.a.Viewed(ctx, api.SessionRef{ID: s.ID}); err != nil {
		t.Fatal(err)
	}
	w.status(s.ID, api.StatusIdle)

	// Leaving claude drops the pane to a shell: the session stays, exited.
	if err := r.a.SendText(ctx, api.InputRequest{SessionRef: api.SessionRef{ID: s.ID}, Text: "/exit", Enter: true}); err != nil {
		t.Fatal(err)
	}
	ex := w.waitFor(30*time.Second, "exited", func(ev api.Event) bool {
		return ev.Type == api.EventRemoved || ev.Type == api.EventSession && ev.Session.ID == s.ID && ev.Session.Status == api.StatusExited
	})
	if ex.Type == api.EventRemoved {
		t.Fatal("the session was removed when claude exited; its pane should stay with a shell")
	}
	if ok, _ := r.a.Tmux().HasSession(ctx, s.ID); !ok {
		t.Error("the pane went away with claude")
	}
}
