package agent_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/agent"
	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/claude"
	"github.com/corral-dev/corral/internal/events"
)

func TestPaneClosedRemovesSession(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	s := r.shell("closing")
	other := r.shell("staying")
	w := r.watch()
	if err := r.a.SendText(ctxT(t), api.InputRequest{SessionRef: api.SessionRef{ID: s.ID}, Text: "exit", Enter: true}); err != nil {
		t.Fatal(err)
	}
	w.removed(s.ID)
	if up, err := r.a.Tmux().Running(ctxT(t)); !up || err != nil {
		t.Fatal("the tmux server died with the pane")
	}
	if _, err := r.a.Session(ctxT(t), api.SessionRef{ID: s.ID}); !errors.Is(err, api.ErrNotFound) {
		t.Errorf("closed session still answers: %v", err)
	}
	recs, _ := r.st.Sessions(ctxT(t))
	if len(recs) != 1 || recs[0].ID != other.ID {
		t.Errorf("database after the pane closed: %+v", recs)
	}
	if _, err := r.a.Session(ctxT(t), api.SessionRef{ID: other.ID}); err != nil {
		t.Errorf("the other session: %v", err)
	}
}

func TestTmuxSessionKilledOutsideCorral(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	s := r.shell("")
	w := r.watch()
	if err := r.a.Tmux().KillSession(ctxT(t), s.ID); err != nil {
		t.Fatal(err)
	}
	w.removed(s.ID)
	if err := r.a.SendText(ctxT(t), api.InputRequest{SessionRef: api.SessionRef{ID: s.ID}, Text: "x"}); !errors.Is(err, api.ErrNotFound) {
		t.Errorf("SendText after the session went away: %v, want not found", err)
	}
}

func TestRestartKeepsSessions(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	a := r.shell("one")
	b := r.shell("two")
	ctx := ctxT(t)
	if err := r.a.SendText(ctx, api.InputRequest{SessionRef: api.SessionRef{ID: a.ID}, Text: "echo before-$((1+1))", Enter: true}); err != nil {
		t.Fatal(err)
	}
	r.waitScreen(a.ID, "before-2")
	panes := panePIDs(t, r.a)

	r.restart()
	ctx = ctxT(t)

	list, err := r.a.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != a.ID || list[1].ID != b.ID {
		t.Fatalf("after restart: %+v, want %s and %s in creation order", list, a.ID, b.ID)
	}
	for i, want := range []api.Session{a, b} {
		got := list[i]
		if got.Name != want.Name || got.Dir != want.Dir || got.Kind != api.KindShell || got.Status != api.StatusIdle || !got.CreatedAt.Equal(want.CreatedAt) {
			t.Errorf("restored %+v, want like %+v", got, want)
		}
	}
	// The same panes: tmux kept them, nothing was relaunched.
	if after := panePIDs(t, r.a); after[a.ID] != panes[a.ID] || after[b.ID] != panes[b.ID] {
		t.Errorf("pane pids changed across the restart: %v -> %v", panes, after)
	}
	r.waitScreen(a.ID, "before-2")
	// The new agent drives them.
	if err := r.a.SendText(ctx, api.InputRequest{SessionRef: api.SessionRef{ID: a.ID}, Text: "echo after-$((2+2))", Enter: true}); err != nil {
		t.Fatal(err)
	}
	r.waitScreen(a.ID, "after-4")
	// And notices when one closes.
	w := r.watch()
	if err := r.a.SendText(ctx, api.InputRequest{SessionRef: api.SessionRef{ID: b.ID}, Text: "exit", Enter: true}); err != nil {
		t.Fatal(err)
	}
	w.removed(b.ID)
}

func TestRestartWithoutTmuxRecreates(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	a := r.shell("survivor")
	// corral is down while the machine reboots: tmux and its panes go.
	if err := r.a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.a.Tmux().KillServer(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	r.st.Close()
	r.a, r.st = nil, nil
	r.start()
	waitUntil(t, 10*time.Second, "the session to be recreated in tmux", func() bool {
		ok, err := r.a.Tmux().HasSession(ctxT(t), a.ID)
		return err == nil && ok
	})
	res, err := r.a.Run(ctxT(t), api.RunRequest{SessionRef: api.SessionRef{ID: a.ID}, Argv: []string{"sh", "-c", "echo $CORRAL_SESSION; pwd"}})
	if err != nil || res.Output != a.ID+"\n"+r.proj+"\n" {
		t.Errorf("recreated session: %+v, %v", res, err)
	}
}

func panePIDs(t *testing.T, a *agent.Agent) map[string]int {
	t.Helper()
	list, err := a.Tmux().ListSessions(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, s := range list {
		out[s.Name] = s.Pane.PID
	}
	return out
}

func TestTmuxServerKilled(t *testing.T) {
	for _, how := range []string{"kill-server", "SIGKILL"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			r := newRig(t)
			a := r.shell("a")
			b := r.shell("b")
			ctx := ctxT(t)
			before := panePIDs(t, r.a)
			oldServer, err := r.a.Tmux().ServerPID(ctx)
			if err != nil {
				t.Fatal(err)
			}
			w := r.watch()
			switch how {
			case "kill-server":
				if err := r.a.Tmux().KillServer(ctx); err != nil {
					t.Fatal(err)
				}
			case "SIGKILL":
				if err := syscall.Kill(oldServer, syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
			}
			// Shell sessions publish nothing when recreated (their state does
			// not change), so watch tmux itself.
			waitUntil(t, 15*time.Second, "both sessions to be back in a new tmux server", func() bool {
				pid, err := r.a.Tmux().ServerPID(ctx)
				if err != nil || pid == oldServer {
					return false
				}
				now, err := r.a.Tmux().ListSessions(ctx)
				if err != nil {
					return false
				}
				got := map[string]int{}
				for _, s := range now {
					got[s.Name] = s.Pane.PID
				}
				return got[a.ID] != 0 && got[b.ID] != 0 && got[a.ID] != before[a.ID] && got[b.ID] != before[b.ID]
			})
			for _, ev := range w.drain() {
				if ev.Type == api.EventRemoved {
					t.Errorf("a session was removed instead of recreated: %+v", ev)
				}
			}
			list, _ := r.a.Sessions(ctx)
			if len(list) != 2 {
				t.Fatalf("sessions after the tmux server died: %+v", list)
			}
			recs, _ := r.st.Sessions(ctx)
			if len(recs) != 2 {
				t.Errorf("database rows after the tmux server died: %d, want 2", len(recs))
			}
			// The new panes are in the session's directory, with its id.
			for _, s := range []api.Session{a, b} {
				res, err := r.a.Run(ctx, api.RunRequest{SessionRef: api.SessionRef{ID: s.ID}, Argv: []string{"sh", "-c", "echo $CORRAL_SESSION"}})
				if err != nil || strings.TrimSpace(res.Output) != s.ID {
					t.Errorf("recreated %s: %+v, %v", s.ID, res, err)
				}
			}
			if err := r.a.SendText(ctx, api.InputRequest{SessionRef: api.SessionRef{ID: a.ID}, Text: "echo back-$((3*3))", Enter: true}); err != nil {
				t.Fatal(err)
			}
			r.waitScreen(a.ID, "back-9")
			// The new server is watched: closing a pane is still noticed.
			if err := r.a.SendText(ctx, api.InputRequest{SessionRef: api.SessionRef{ID: b.ID}, Text: "exit", Enter: true}); err != nil {
				t.Fatal(err)
			}
			w.removed(b.ID)
		})
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	v := r.a.Version(ctxT(t))
	if v.DataDir != r.dataDir || v.PID == 0 || v.Version == "" || v.StartedAt.IsZero() {
		t.Errorf("Version = %+v", v)
	}
	out, err := exec.Command("tmux", "-V").Output()
	if err == nil && !strings.Contains(string(out), v.Tmux) {
		t.Errorf("Version.Tmux = %q, tmux -V says %q", v.Tmux, out)
	}
}

func TestRestartDropsSessionsClosedWhileDown(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	gone := r.shell("gone")
	kept := r.shell("kept")
	if err := r.a.Close(); err != nil {
		t.Fatal(err)
	}
	// While corral is down, one pane ends; tmux lives on.
	if err := r.a.Tmux().KillSession(ctxT(t), gone.ID); err != nil {
		t.Fatal(err)
	}
	r.st.Close()
	r.a, r.st = nil, nil
	// A bus whose numbering starts at 1, so that everything the new agent
	// publishes from its start can be replayed.
	r.cfg.Bus = events.New(events.Options{FirstSeq: 1})
	r.start()
	sub := r.a.Bus().Subscribe(1)
	defer sub.Close()
	w := &watcher{t: t, sub: sub}
	w.removed(gone.ID)
	if _, err := r.a.Session(ctxT(t), api.SessionRef{ID: kept.ID}); err != nil {
		t.Errorf("the other session: %v", err)
	}
	recs, _ := r.st.Sessions(ctxT(t))
	if len(recs) != 1 || recs[0].ID != kept.ID {
		t.Errorf("database: %+v", recs)
	}
}

// TestRecreateResumesOnlySavedConversations: when the tmux server dies,
// Claude sessions come back resuming their conversation, but only one
// Claude saved: a conversation cut off before its transcript was written
// starts afresh (an empty transcript too), rather than ending at "No
// conversation found".
func TestRecreateResumesOnlySavedConversations(t *testing.T) {
	for _, c := range []struct {
		name       string
		transcript *string // nil: no file
		saved      bool
	}{
		{"saved", ptr(`{"type":"user"}` + "\n"), true},
		{"unsaved", nil, false},
		{"created but empty", ptr(""), false},
	} {
		saved := c.saved
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			argsLog := filepath.Join(t.TempDir(), "args")
			fake := filepath.Join(t.TempDir(), "claude")
			script := "#!/bin/sh\necho \"$*\" >> " + argsLog + "\nexec sleep 1000\n"
			if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			r := newRig(t, func(c *agent.Config) { c.ClaudeBin = fake })
			const conv = "0f8fad5b-d9cb-469f-a165-70867728950e"
			if c.transcript != nil {
				tp := claude.TranscriptPath(filepath.Join(r.home, ".claude"), r.proj, conv)
				if err := os.MkdirAll(filepath.Dir(tp), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(tp, []byte(*c.transcript), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			ctx := ctxT(t)
			s, err := r.a.Create(ctx, api.CreateRequest{Dir: r.proj, Resume: conv})
			if err != nil {
				t.Fatal(err)
			}
			launches := func() []string {
				b, _ := os.ReadFile(argsLog)
				return strings.Split(strings.TrimSpace(string(b)), "\n")
			}
			waitUntil(t, 10*time.Second, "claude to be launched", func() bool { return len(launches()) == 1 && launches()[0] != "" })
			if err := r.a.Tmux().KillServer(ctx); err != nil {
				t.Fatal(err)
			}
			waitUntil(t, 15*time.Second, "claude to be launched again", func() bool { return len(launches()) == 2 })
			again := launches()[1]
			if resumed := strings.Contains(again, "--resume "+conv); resumed != saved {
				t.Errorf("saved %v: relaunched with %q", saved, again)
			}
			got, err := r.a.Session(ctx, api.SessionRef{ID: s.ID})
			if err != nil {
				t.Fatal(err)
			}
			if want := map[bool]string{true: conv, false: ""}[saved]; got.ClaudeSessionID != want {
				t.Errorf("claude session id after the relaunch %q, want %q", got.ClaudeSessionID, want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
