package agent_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/agent"
	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/datadir"
	"github.com/corral-dev/corral/internal/tmux"
)

// TestAdoptSessionsTheDatabaseLost: the database is lost while tmux runs
// corral's sessions on. The agent that starts next takes back every pane
// of its server that carries a session id, with the pane's directory, the
// kind of what runs in it, and claude's state verified; a tmux session
// corral did not make stays out.
func TestAdoptSessionsTheDatabaseLost(t *testing.T) {
	t.Parallel()
	r := newRig(t, func(c *agent.Config) {
		c.ClaudeBin = standInClaude(t, true)
		c.SafetyPoll = 200 * time.Millisecond
	})
	ctx := ctxT(t)
	w := r.watch()
	sub := filepath.Join(r.proj, "sub dir")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	sh, err := r.a.Create(ctx, api.CreateRequest{Dir: sub, Name: "my shell", Shell: true})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := r.a.Create(ctx, api.CreateRequest{Dir: r.proj, Name: "my claude"})
	if err != nil {
		t.Fatal(err)
	}
	w.status(cl.ID, api.StatusIdle)
	before := panePIDs(t, r.a)
	if _, err := r.a.Tmux().NewSession(ctx, tmux.NewSessionOptions{Name: "stranger", Dir: r.proj, Argv: []string{"sleep", "1000"}}); err != nil {
		t.Fatal(err)
	}

	// The database goes; tmux runs on. tmux knows creation times to the
	// second: the next agent starts in a later one.
	if err := r.a.Close(); err != nil {
		t.Fatal(err)
	}
	r.st.Close()
	r.a, r.st = nil, nil
	db := filepath.Join(r.dataDir, datadir.Database)
	for _, f := range []string{db, db + "-wal", db + "-shm"} {
		os.Remove(f)
	}
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
	r.start()

	var got map[string]api.Session
	waitUntil(t, 15*time.Second, "both sessions to be adopted and claude verified", func() bool {
		list, _ := r.a.Sessions(ctx)
		got = map[string]api.Session{}
		for _, s := range list {
			got[s.ID] = s
		}
		return len(got) >= 2 && got[cl.ID].Status == api.StatusIdle
	})
	if len(got) != 2 {
		t.Errorf("adopted %d sessions, want 2 (not the stranger): %+v", len(got), got)
	}
	if s := got[sh.ID]; s.Kind != api.KindShell || s.Dir != sub || s.Name != "sub dir" || s.Status != api.StatusIdle {
		t.Errorf("adopted shell: %+v", s)
	}
	if s := got[cl.ID]; s.Kind != api.KindClaude || s.Dir != r.proj || s.ClaudePID == 0 || s.ClaudeSessionID == "" {
		t.Errorf("adopted claude: %+v", s)
	}
	if after := panePIDs(t, r.a); after[sh.ID] != before[sh.ID] || after[cl.ID] != before[cl.ID] {
		t.Errorf("panes %v, before %v: adopted sessions must keep their panes", after, before)
	}
	// They are corral's again: input works, and the database has them.
	if err := r.a.SendText(ctx, api.InputRequest{SessionRef: api.SessionRef{ID: sh.ID}, Text: "echo adopted-$((6*7))", Enter: true}); err != nil {
		t.Fatal(err)
	}
	r.waitScreen(sh.ID, "adopted-42")
	waitUntil(t, 10*time.Second, "the adopted sessions to be saved", func() bool {
		recs, _ := r.st.Sessions(ctx)
		return len(recs) == 2
	})
	r.restart()
	if list, _ := r.a.Sessions(ctxT(t)); len(list) != 2 {
		t.Errorf("after another restart: %d sessions", len(list))
	}
}
