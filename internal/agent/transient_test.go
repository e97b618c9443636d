package agent_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/agent"
	"github.com/corral-dev/corral/internal/api"
)

// standInClaude makes a program that the agent takes for claude (its
// executable is named claude) and that sleeps, firing no hook. With
// sessionFile it first writes Claude's session file for its own pid with
// status idle, as Claude does once it is up.
func standInClaude(t *testing.T, sessionFile bool) string {
	t.Helper()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep")
	}
	binDir := t.TempDir()
	real := filepath.Join(binDir, "claude")
	b, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(real, b, 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\n"
	if sessionFile {
		// exec keeps the pid and its start time (field 22 of stat).
		script += `d="${CLAUDE_CONFIG_DIR:-$HOME/.claude}/sessions"
mkdir -p "$d"
st=$(cut -d' ' -f22 /proc/$$/stat)
ms=$(date +%s%3N)
printf '{"pid":%d,"sessionId":"0f8fad5b-d9cb-469f-a165-70867728950e","cwd":"%s","startedAt":%s,"procStart":"%s","kind":"interactive","status":"idle","updatedAt":%s,"statusUpdatedAt":%s}' $$ "$PWD" "$ms" "$st" "$ms" "$ms" > "$d/.$$.tmp"
mv "$d/.$$.tmp" "$d/$$.json"
`
	}
	script += "exec " + real + " 1000\n"
	bin := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// starvableTmux is a tmux that runs out of file descriptors while the
// returned file exists: every tmux command of the agent then fails with
// EMFILE ("error connecting to ... (Too many open files)"), as when the
// machine or the user's limit is exhausted, and adds a line to the file.
// The server itself, started before, keeps running.
func starvableTmux(t *testing.T) (bin, flag string) {
	t.Helper()
	tmuxBin, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux not installed")
	}
	dir := t.TempDir()
	flag = filepath.Join(dir, "starve")
	bin = filepath.Join(dir, "tmux")
	script := fmt.Sprintf("#!/bin/sh\nif [ -e %[1]s ]; then echo \"$*\" >> %[1]s; ulimit -n 5; fi\nexec %[2]s \"$@\"\n", flag, tmuxBin)
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, flag
}

// TestTmuxEMFILELeavesSessionsAlone: while tmux fails with EMFILE, the
// agent recreates nothing and every session keeps its state and pane;
// input fails with "unavailable", not "gone". Once the limit lifts all
// works as before, in the same panes.
func TestTmuxEMFILELeavesSessionsAlone(t *testing.T) {
	t.Parallel()
	tmuxBin, flag := starvableTmux(t)
	r := newRig(t, func(c *agent.Config) {
		c.TmuxBin = tmuxBin
		c.ClaudeBin = standInClaude(t, true)
		c.SafetyPoll = 100 * time.Millisecond
	})
	ctx := ctxT(t)
	w := r.watch()
	sh := r.shell("sh")
	cl, err := r.a.Create(ctx, api.CreateRequest{Dir: r.proj, Name: "cl"})
	if err != nil {
		t.Fatal(err)
	}
	w.status(cl.ID, api.StatusIdle)
	before := panePIDs(t, r.a)
	states := func() map[string]api.Session {
		list, _ := r.a.Sessions(ctx)
		m := map[string]api.Session{}
		for _, s := range list {
			m[s.ID] = s
		}
		return m
	}
	was := states()
	if len(was) != 2 || was[cl.ID].ClaudePID == 0 {
		t.Fatalf("before: %+v", was)
	}
	w.drain()

	if err := os.WriteFile(flag, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// Several rounds of reconciliation meet the failure.
	waitUntil(t, 15*time.Second, "five failed tmux calls", func() bool {
		b, _ := os.ReadFile(flag)
		return strings.Count(string(b), "\n") >= 5
	})
	err = r.a.SendText(ctx, api.InputRequest{SessionRef: api.SessionRef{ID: sh.ID}, Text: "echo x", Enter: true})
	if !errors.Is(err, api.ErrUnavailable) {
		t.Errorf("SendText while tmux fails: %v, want unavailable", err)
	}
	for _, ev := range w.drain() {
		if ev.Session != nil {
			t.Errorf("while tmux failed: %s became %s (was %s)", ev.Session.Name, ev.Session.Status, ev.Prev)
		} else {
			t.Errorf("while tmux failed: event %s %s", ev.Type, ev.ID)
		}
	}
	if now := states(); now[sh.ID].Status != was[sh.ID].Status || now[cl.ID].Status != was[cl.ID].Status || now[cl.ID].ClaudePID != was[cl.ID].ClaudePID {
		t.Errorf("states changed while tmux failed: shell %s, claude %s (pid %d); were %s, %s (pid %d)",
			now[sh.ID].Status, now[cl.ID].Status, now[cl.ID].ClaudePID, was[sh.ID].Status, was[cl.ID].Status, was[cl.ID].ClaudePID)
	}

	if err := os.Remove(flag); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 15*time.Second, "SendText to work again", func() bool {
		return r.a.SendText(ctx, api.InputRequest{SessionRef: api.SessionRef{ID: sh.ID}, Text: "echo back-$((20+22))", Enter: true}) == nil
	})
	r.waitScreen(sh.ID, "back-42")
	if after := panePIDs(t, r.a); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("panes after the failure %v, before %v: sessions were recreated", after, before)
	}
	if strings.Contains(r.log.String(), "recreating sessions") {
		t.Error("the agent recreated sessions of a live tmux server")
	}
	now := states()
	if now[cl.ID].Status != api.StatusIdle || now[cl.ID].ClaudePID != was[cl.ID].ClaudePID {
		t.Errorf("claude session after: %s (pid %d), want idle (pid %d)", now[cl.ID].Status, now[cl.ID].ClaudePID, was[cl.ID].ClaudePID)
	}
}

// TestClaudeFoundRunningLeavesStarting: a claude whose coming up nobody
// reported (no hook, no session file) is not shown starting for ever:
// once the start grace is over and claude runs, the session is verified.
func TestClaudeFoundRunningLeavesStarting(t *testing.T) {
	t.Parallel()
	r := newRig(t, func(c *agent.Config) {
		c.ClaudeBin = standInClaude(t, false)
		c.SafetyPoll = 200 * time.Millisecond
	})
	w := r.watch()
	s, err := r.a.Create(ctxT(t), api.CreateRequest{Dir: r.proj})
	if err != nil {
		t.Fatal(err)
	}
	if s.Status != api.StatusStarting {
		t.Fatalf("new session %s", s.Status)
	}
	// The grace is 15 s.
	ev := w.waitFor(30*time.Second, "the session to leave starting", func(ev api.Event) bool {
		return ev.Type == api.EventSession && ev.Session.ID == s.ID && ev.Session.Status != api.StatusStarting
	})
	if ev.Session.Status != api.StatusIdle || ev.Session.ClaudePID == 0 {
		t.Errorf("after the grace: %s, claude pid %d; want idle with claude's pid", ev.Session.Status, ev.Session.ClaudePID)
	}
}
