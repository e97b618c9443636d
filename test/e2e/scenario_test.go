package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/datadir"
	"github.com/corral-dev/corral/internal/testkit/fakeapi"
	"github.com/corral-dev/corral/internal/testkit/testio"
)

// TestFixtureScenario replays the scenario the fixtures were recorded from
// (testdata/claude-code-2.1.197/README.md) with the real Claude Code inside
// a corral session, and checks `corral ls --json` after each step.
func TestFixtureScenario(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})

	// 1-started
	id := h.newSession()
	s := h.lsOne(id)
	if s.Status != api.StatusIdle || s.ClaudeSessionID == "" || s.Kind != api.KindClaude || s.Dir != h.proj {
		t.Fatalf("after start: %+v", s)
	}
	claudeID := s.ClaudeSessionID

	// 2-replied: a finished turn is review until someone looks.
	h.send(id, "say hello")
	s = h.waitStatus(id, api.StatusReview, 30*time.Second)
	if s.LastMessage != "Hello from mock. Done." {
		t.Errorf("last message %q", s.LastMessage)
	}
	if s.Usage.OutputTokens == 0 {
		// The transcript is read as Claude writes it.
		h.rec.waitFor(5*time.Second, "token usage", func(s api.Session) bool { return s.ID == id && s.Usage.OutputTokens > 0 })
	}

	// 3-permission: needs-input from PermissionRequest, long before the
	// Notification that comes about 6 s after the dialog opens.
	h.send(id, "RUNTOOL one")
	s = h.waitStatus(id, api.StatusNeedsInput, 30*time.Second)
	if s.WaitingFor == nil || s.WaitingFor.Kind != "permission" {
		t.Fatalf("waiting for %+v", s.WaitingFor)
	}
	if strings.Contains(s.WaitingFor.Message, "Claude needs your permission") {
		t.Errorf("needs-input was first shown only with the late Notification (message %q)", s.WaitingFor.Message)
	}
	s = h.rec.waitFor(5*time.Second, "the permission's tool and input", func(s api.Session) bool {
		return s.ID == id && s.WaitingFor != nil && s.WaitingFor.Tool == "Bash"
	})
	if !strings.Contains(string(s.WaitingFor.Input), "created_by_tool") {
		t.Errorf("waiting input %s", s.WaitingFor.Input)
	}
	h.waitScreen(id, "Do you want to proceed?", 10*time.Second)

	// 4-approved
	h.corral("keys", id, "Enter")
	h.waitStatus(id, api.StatusReview, 30*time.Second)
	if _, err := os.Stat(filepath.Join(h.proj, "created_by_tool")); err != nil {
		t.Errorf("the approved tool did not run: %v", err)
	}
	if s := h.lsOne(id); s.WaitingFor != nil || s.CurrentTool != "" {
		t.Errorf("after approval: waiting %+v tool %q", s.WaitingFor, s.CurrentTool)
	}

	// 5-rejected: Escape at the dialog; no Stop fires.
	h.send(id, "RUNTOOL two")
	h.waitStatus(id, api.StatusNeedsInput, 30*time.Second)
	h.waitScreen(id, "Do you want to proceed?", 10*time.Second)
	h.corral("keys", id, "Escape")
	h.waitStatus(id, api.StatusIdle, 15*time.Second)

	// 6-interrupted-early: Escape while the answer streams.
	h.send(id, "SLOW answer")
	h.waitStatus(id, api.StatusBusy, 15*time.Second)
	h.api.AwaitPrompt(t, "SLOW answer", 15*time.Second)
	time.Sleep(1500 * time.Millisecond) // the recording pressed Escape after 1.5 s
	h.corral("keys", id, "Escape")
	h.waitStatus(id, api.StatusIdle, 15*time.Second)

	// 7-busy, 8-done
	h.send(id, "SLOW with text")
	s = h.waitStatus(id, api.StatusBusy, 15*time.Second)
	if s.BusySince.IsZero() {
		t.Error("busy without busy_since")
	}
	h.waitStatus(id, api.StatusReview, 30*time.Second)

	// 9-failed: StopFailure is review with the error kind.
	h.corral("send", id, "FAIL please")
	s = h.waitStatus(id, api.StatusReview, 30*time.Second)
	s = h.rec.waitFor(5*time.Second, "error kind", func(s api.Session) bool { return s.ID == id && s.Error != "" })
	if s.Error != "unknown" || !strings.Contains(s.ErrorMessage, "mock failure") {
		t.Errorf("error %q %q", s.Error, s.ErrorMessage)
	}

	// 10-compacted: typing /compact is input (review -> idle); compaction
	// itself keeps the session alive and ends idle, not compacting. An API
	// error that came before any answer byte may put the failed prompt
	// back into the input box (docs/claude-observations.md §6), and
	// "/compact" typed after it would be "FAIL please/compact".
	h.clearInput(id)
	h.send(id, "/compact")
	h.rec.waitFor(30*time.Second, "compaction done", func(s api.Session) bool {
		return s.ID == id && s.Status == api.StatusIdle && !s.Compacting && s.Error == ""
	})
	if s := h.lsOne(id); s.ClaudeSessionID != claudeID {
		t.Errorf("claude session id changed by /compact: %q -> %q", claudeID, s.ClaudeSessionID)
	}

	// 11-exited
	h.send(id, "/exit")
	h.waitStatus(id, api.StatusExited, 15*time.Second)
	// SessionEnd comes while claude is still exiting; the process's exit
	// follows within moments.
	h.rec.waitFor(5*time.Second, "claude's pid cleared", func(s api.Session) bool { return s.ID == id && s.ClaudePID == 0 })
	// The pane lives on as a shell, with the resume hint on screen.
	h.waitScreen(id, "claude --resume", 10*time.Second)

	// Every status seen was one of the contract's words.
	for _, st := range h.rec.statuses(id) {
		if !st.Valid() {
			t.Errorf("invalid status %q", st)
		}
	}
}

// TestTwoSessions runs two sessions at once: their states are independent.
func TestTwoSessions(t *testing.T) {
	t.Parallel()
	// Alpha's answer is held until beta's turn is over.
	gate := fakeapi.NewGate()
	h := newHarness(t, harnessOptions{fake: fakeapi.Options{Rules: []fakeapi.Rule{
		{Name: "held", Contains: "HELD one", Reply: fakeapi.Stalled(gate, fakeapi.Text("Alpha done."))},
	}}})
	a := h.newSession("--name", "alpha")
	b := h.newSession("--name", "beta")
	if a == b {
		t.Fatal("same id twice")
	}
	h.send(a, "HELD one")
	h.waitStatus(a, api.StatusBusy, 15*time.Second)
	h.api.AwaitPrompt(t, "HELD one", 15*time.Second)
	h.send(b, "say hello")
	h.waitStatus(b, api.StatusReview, 30*time.Second)
	if s := h.lsOne(a); s.Status != api.StatusBusy {
		t.Errorf("a finished turn in beta changed alpha: %s", s.Status)
	}
	gate.Release()
	h.waitStatus(a, api.StatusReview, 30*time.Second)
	list := h.ls()
	names := map[string]string{}
	for _, s := range list {
		names[s.ID] = s.Name
	}
	if names[a] != "alpha" || names[b] != "beta" || len(list) != 2 {
		t.Errorf("sessions %v", names)
	}
	// Looking at one clears only its review.
	h.corral("rename", a, "alpha-2")
	if err := h.c.Viewed(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	h.waitStatus(a, api.StatusIdle, 5*time.Second)
	if s := h.lsOne(b); s.Status != api.StatusReview {
		t.Errorf("viewing alpha changed beta: %s", s.Status)
	}
	if s := h.lsOne(a); s.Name != "alpha-2" {
		t.Errorf("rename: %q", s.Name)
	}
	h.corral("kill", b)
	h.rec.waitFor(10*time.Second, "beta gone", func(s api.Session) bool { return true })
	waitFor(t, 10*time.Second, "beta removed", func() bool { return len(h.ls()) == 1 })
}

// TestTmuxServerKilled kills the tmux server under corral: the sessions come
// back in their directories, resuming the same Claude conversation.
func TestTmuxServerKilled(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	id := h.newSession()
	h.send(id, "say hello")
	h.waitStatus(id, api.StatusReview, 30*time.Second)
	before := h.lsOne(id)
	// Claude writes its transcript a moment after the turn: a server killed
	// before that leaves nothing to resume (corral then starts afresh).
	waitFor(t, 10*time.Second, "the answer in Claude's transcript", func() bool {
		b, err := os.ReadFile(before.TranscriptPath)
		return err == nil && strings.Contains(string(b), "Hello from mock")
	})

	out, err := h.corralErr("run", id, "--", "sh", "-c", "echo $CORRAL_SESSION")
	if err != nil || strings.TrimSpace(out) != id {
		t.Fatalf("run: %q %v", out, err)
	}
	t0 := time.Now()
	killTmux(t, h)
	h.rec.waitFor(30*time.Second, "session back and idle", func(s api.Session) bool {
		return s.ID == id && s.Status == api.StatusIdle && s.ClaudePID != 0 && s.ClaudePID != before.ClaudePID
	})
	t.Logf("session back %v after the tmux server was killed", time.Since(t0).Round(time.Millisecond))
	after := h.lsOne(id)
	if after.ClaudeSessionID != before.ClaudeSessionID {
		t.Errorf("resumed another conversation: %q -> %q", before.ClaudeSessionID, after.ClaudeSessionID)
	}
	if after.Dir != before.Dir || after.Name != before.Name {
		t.Errorf("session changed: %+v", after)
	}
	// It is live: a new turn works.
	h.send(id, "say hello again")
	h.waitStatus(id, api.StatusReview, 30*time.Second)
}

func killTmux(t *testing.T, h *harness) {
	t.Helper()
	out, err := exec.Command("tmux", "-S", datadir.Socket(h.dataDir, datadir.TmuxSocket), "display-message", "-p", "#{pid}").Output()
	if err != nil {
		t.Fatalf("find tmux server: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil || pid <= 1 {
		t.Fatalf("tmux server pid from %q", out)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
}

// TestCrashMidTurn kills corral with SIGKILL while a session is busy, then
// restarts it: the session is still there, shows unknown until verified,
// then the right state within 3 s, and nothing is lost.
func TestCrashMidTurn(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	id := h.newSession("--name", "crashy")
	other := h.newSession("--name", "calm")
	h.send(other, "say hello")
	h.waitStatus(other, api.StatusReview, 30*time.Second)

	h.send(id, "SLOW while corral dies")
	h.waitStatus(id, api.StatusBusy, 15*time.Second)
	h.api.AwaitPrompt(t, "SLOW while corral dies", 15*time.Second)
	h.stopServe(syscall.SIGKILL)

	t0 := time.Now()
	h.startServe()
	list := h.ls()
	if len(list) != 2 {
		t.Fatalf("after restart: %d sessions", len(list))
	}
	for _, s := range list {
		switch s.ID {
		case id:
			// Never a guess: unknown until verified, then the truth.
			if s.Status != api.StatusUnknown && s.Status != api.StatusBusy {
				t.Errorf("busy session restarted as %s", s.Status)
			}
		case other:
			if s.Status != api.StatusReview {
				t.Errorf("unseen review lost in the restart: %s", s.Status)
			}
		}
	}
	s := h.rec.waitFor(3*time.Second, "the busy session re-verified", func(s api.Session) bool {
		return s.ID == id && s.Status != api.StatusUnknown
	})
	if s.Status != api.StatusBusy {
		t.Errorf("re-verified as %s, want busy (the slow answer is still streaming)", s.Status)
	}
	t.Logf("re-verified as %s %v after the restart", s.Status, time.Since(t0).Round(time.Millisecond))
	h.waitStatus(id, api.StatusReview, 30*time.Second)
	if s := h.lsOne(id); s.Name != "crashy" || s.ClaudeSessionID == "" {
		t.Errorf("after restart: %+v", s)
	}
}

// TestBadInput: garbage to the hook, a missing directory, a missing claude,
// a corrupt transcript: clear errors, and the daemon keeps working.
func TestBadInput(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	id := h.newSession()

	for _, in := range []string{"", "not json", `{"hook_event_name":`, strings.Repeat("[", 100000), `{"hook_event_name":5}`, `{"session_id":"x"}`} {
		cmd := execCorral(h, "hook")
		cmd.Stdin = strings.NewReader(in)
		env := append([]string{}, h.env...)
		cmd.Env = append(env, "CORRAL_SESSION="+id)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("corral hook with %.20q: %v", in, err)
		}
		if len(out) != 0 {
			t.Errorf("corral hook printed %q (Claude would feed it to the model)", out)
		}
	}
	if s := h.lsOne(id); s.Status != api.StatusIdle {
		t.Errorf("garbage hooks changed the status to %s", s.Status)
	}

	if out, err := h.corralErr("new", "--dir", filepath.Join(h.proj, "does-not-exist")); err == nil || !strings.Contains(out, "does not exist") {
		t.Errorf("missing dir: %v %q", err, out)
	}
	if out, err := h.corralErr("send", "nope", "hi"); err == nil || !strings.Contains(out, "no session") {
		t.Errorf("unknown session: %v %q", err, out)
	}
	if out, err := h.corralErr("keys", id, "Enter;kill-server"); err == nil || !strings.Contains(out, "key") {
		t.Errorf("bad key: %v %q", err, out)
	}

	// A transcript with garbage appended: skipped, counted, not fatal.
	s := h.lsOne(id)
	h.send(id, "say hello")
	h.waitStatus(id, api.StatusReview, 30*time.Second)
	s = h.lsOne(id)
	if s.TranscriptPath == "" {
		t.Fatal("no transcript path")
	}
	// Claude writes its transcript a moment after the Stop hook, at times.
	waitFor(t, 10*time.Second, "the transcript on disk", func() bool { _, err := os.Stat(s.TranscriptPath); return err == nil })
	f, err := os.OpenFile(s.TranscriptPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("{this is not json\n\x00\x01\x02\n")
	f.Close()
	h.send(id, "say hello once more")
	h.waitStatus(id, api.StatusReview, 30*time.Second)

	// A daemon whose PATH has no claude refuses to start Claude sessions,
	// clearly, and still serves shells.
	h.stopServe(syscall.SIGTERM)
	// A PATH with tmux but no claude (/bin is /usr/bin on merged-usr systems).
	bin := testio.TempDir(t, "corral-bin-")
	tmuxPath, _ := exec.LookPath("tmux")
	os.Symlink(tmuxPath, filepath.Join(bin, "tmux"))
	h.env = append(h.env, "PATH="+bin)
	h.startServe()
	out, err := h.corralErr("new", "--dir", h.proj)
	if err == nil || !strings.Contains(out, "claude not found") || !strings.Contains(out, "npm install -g @anthropic-ai/claude-code") {
		t.Errorf("missing claude: %v %q", err, out)
	}
	if out, err := h.corralErr("new", "--shell", "--dir", h.proj); err != nil {
		t.Errorf("a shell session without claude: %v %q", err, out)
	}
}

// TestClaudeConfigDir runs Claude with CLAUDE_CONFIG_DIR, which moves its
// session files and transcripts out of ~/.claude. The signals only those
// files carry must still arrive: an Escape before any answer shows only in
// the session file, and resumable sessions come from the transcripts.
func TestClaudeConfigDir(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{claudeConfigDir: "claude-config"})
	cfgDir := filepath.Join(h.claude.Home, "claude-config")

	id := h.newSession()
	h.send(id, "SLOW answer")
	h.waitStatus(id, api.StatusBusy, 15*time.Second)
	h.api.AwaitPrompt(t, "SLOW answer", 15*time.Second)
	// The session file must say busy before the Escape, or its idle
	// afterwards means nothing.
	h.rec.waitFor(10*time.Second, "the session file's pid", func(s api.Session) bool { return s.ID == id && s.ClaudePID != 0 })
	waitFor(t, 10*time.Second, "claude's session file in CLAUDE_CONFIG_DIR", func() bool {
		b, err := os.ReadFile(filepath.Join(cfgDir, "sessions", strconv.Itoa(h.lsOne(id).ClaudePID)+".json"))
		return err == nil && strings.Contains(string(b), `"busy"`)
	})
	h.corral("keys", id, "Escape")
	h.waitStatus(id, api.StatusIdle, 15*time.Second)

	if _, err := os.Stat(filepath.Join(h.claude.Home, ".claude", "sessions")); !os.IsNotExist(err) {
		t.Errorf("claude wrote ~/.claude/sessions despite CLAUDE_CONFIG_DIR (stat: %v); the test does not test what it says", err)
	}
	claudeID := h.lsOne(id).ClaudeSessionID
	// Claude writes the transcript moments after the prompt.
	waitFor(t, 10*time.Second, "the conversation among the resumable sessions", func() bool {
		return strings.Contains(h.corral("resumable", "--json", h.proj), claudeID)
	})
}
