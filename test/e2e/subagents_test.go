package e2e

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/claude/transcript"
	"github.com/corral-dev/corral/internal/testkit/fakeapi"
)

// statusesSince are the statuses a session went through after its n-th
// recorded change.
func (h *harness) statusesSince(id string, n int) []api.Status {
	all := h.rec.statuses(id)
	if n > len(all) {
		return nil
	}
	return all[n:]
}

// TestSubagentTurn: a turn that runs a subagent is busy from the prompt to
// the main Stop; the subagent's permission prompt is the session's
// needs-input, and answering it works.
func TestSubagentTurn(t *testing.T) {
	t.Parallel()
	var h *harness
	made := ""
	h = newHarness(t, harnessOptions{fake: fakeapi.Options{Rules: []fakeapi.Rule{
		{Name: "main asks a subagent", Contains: "SUBAGENT", Reply: fakeapi.ToolUse("Agent", map[string]any{
			"description": "look around", "prompt": "SUBTASK make the file", "subagent_type": "general-purpose"})},
		{Name: "the subagent runs a command", Contains: "SUBTASK", ReplyFunc: func(*fakeapi.Request) fakeapi.Reply {
			return fakeapi.Bash("touch "+made, "make the file")
		}},
	}}})
	made = filepath.Join(h.proj, "made_by_subagent")
	id := h.newSession()
	n := len(h.rec.statuses(id))
	h.send(id, "SUBAGENT please")
	s := h.waitDialog(id, api.DialogPermission, 60*time.Second)
	if s.WaitingFor.Tool != "Bash" {
		t.Errorf("the subagent's dialog: %+v", s.WaitingFor)
	}
	if len(s.Subagents) != 1 || s.Subagents[0].Description != "look around" {
		t.Errorf("subagents %+v", s.Subagents)
	}
	if _, err := h.answer(id, api.AnswerRequest{Dialog: s.WaitingFor.DialogID, Choice: "yes"}); err != nil {
		t.Fatal(err)
	}
	h.waitStatus(id, api.StatusReview, 60*time.Second)
	if _, err := os.Stat(made); err != nil {
		t.Errorf("the subagent's approved command did not run: %v", err)
	}
	seen := h.statusesSince(id, n)
	for i, st := range seen[:len(seen)-1] {
		if st != api.StatusBusy && st != api.StatusNeedsInput {
			t.Fatalf("status %d of the turn was %s: %v", i, st, seen)
		}
	}
	if !slices.Contains(seen, api.StatusNeedsInput) {
		t.Errorf("the subagent's permission was never needs-input: %v", seen)
	}
	got := h.lsOne(id)
	if len(got.Subagents) != 0 {
		t.Errorf("subagents left after the turn: %+v", got.Subagents)
	}
	checkSubagentCost(t, h, got)
}

// checkSubagentCost: the turn's tokens and cost are its own responses' and
// its subagent's (in <session id>/subagents/ beside the transcript), and
// the session's cost today is theirs too (its only turn).
func checkSubagentCost(t *testing.T, h *harness, s api.Session) {
	t.Helper()
	sum := func(paths ...string) (transcript.UsageTotals, int) {
		t.Helper()
		var u transcript.UsageTotals
		for _, p := range paths {
			entries, _, err := transcript.ReadTailAt(p, 16<<20)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				u.Add(e)
			}
		}
		return u, transcript.TurnTokensOf(&u).Responses
	}
	subs, _ := filepath.Glob(filepath.Join(transcript.SubagentDir(s.TranscriptPath), "agent-*.jsonl"))
	if len(subs) != 1 {
		t.Fatalf("subagent transcripts %q", subs)
	}
	// What the files say, read again each time: Claude may still be
	// writing the last lines.
	var want, st, got api.TurnTokens
	expect := func() {
		own, _ := sum(s.TranscriptPath)
		sub, _ := sum(subs[0])
		want, st = transcript.TurnTokensOf(&own), transcript.TurnTokensOf(&sub)
		want.Input += st.Input
		want.Output += st.Output
		want.CacheRead += st.CacheRead
		want.CacheCreation += st.CacheCreation
		want.Responses += st.Responses
		want.CostUSD += st.CostUSD
	}
	match := func() bool {
		expect()
		var tl api.Timeline
		if err := json.Unmarshal([]byte(h.corral("timeline", "--json", s.ID)), &tl); err != nil {
			t.Fatalf("corral timeline --json: %v", err)
		}
		for _, it := range tl.Items {
			if tk := it.Tokens; it.Kind == api.TimelinePrompt && tk != nil {
				got = *tk
				return tk.Input == want.Input && tk.Output == want.Output && tk.Responses == want.Responses && math.Abs(tk.CostUSD-want.CostUSD) < 1e-9
			}
		}
		return false
	}
	if !eventually(10*time.Second, match) || st.Responses < 2 || st.CostUSD <= 0 {
		t.Fatalf("the turn's tokens %+v, want its own and its subagent's %+v: %+v", got, st, want)
	}
	var u api.Usage
	if !eventually(10*time.Second, func() bool {
		u = h.lsOne(s.ID).Usage
		return math.Abs(u.CostToday-want.CostUSD) < 1e-9 && u.InputTokens == want.Input
	}) {
		t.Fatalf("the cost today $%v and %d tokens in, want the turn's with the subagent's: %+v", u.CostToday, u.InputTokens, want)
	}
}

// TestBackgroundAgent: a background agent keeps the session busy after the
// main Stop, until it and the turn Claude starts by itself are done.
func TestBackgroundAgent(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{fake: fakeapi.Options{Rules: []fakeapi.Rule{
		{Name: "main starts a background agent", Contains: "BACKGROUND", Reply: fakeapi.ToolUse("Agent", map[string]any{
			"description": "slow survey", "prompt": "BGTASK survey slowly", "subagent_type": "general-purpose", "run_in_background": true})},
		{Name: "the background agent takes a while", Contains: "BGTASK", Reply: fakeapi.Slow(6*time.Second, fakeapi.Text("Survey done."))},
	}}})
	id := h.newSession()
	n := len(h.rec.statuses(id))
	h.send(id, "BACKGROUND please")
	h.waitStatus(id, api.StatusBusy, 30*time.Second)
	h.api.AwaitPrompt(t, "BGTASK survey slowly", 30*time.Second)
	h.waitStatus(id, api.StatusReview, 90*time.Second)
	seen := h.statusesSince(id, n)
	for i, st := range seen[:len(seen)-1] {
		if st != api.StatusBusy {
			t.Fatalf("status %d before the end was %s: %v", i, st, seen)
		}
	}
	// The turn that ended it is the one Claude started by itself.
	var followUp bool
	for _, r := range h.api.Requests() {
		if r.Kind == fakeapi.KindPrompt && containsAny(r.Texts, "task-notification") {
			followUp = true
		}
	}
	if !followUp {
		t.Log("no <task-notification> turn seen in the requests; the review came from the main turn's end")
	}
}

func containsAny(texts []string, sub string) bool {
	for _, t := range texts {
		if strings.Contains(t, sub) {
			return true
		}
	}
	return false
}

// TestEscapeWhileToolRuns: Escape during a long tool call is idle within a
// second, not busy or review.
func TestEscapeWhileToolRuns(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{fake: fakeapi.Options{RunToolCommand: "sleep 30 && echo slept"}})
	id := h.newSession()
	// Claude runs sleep and echo without asking.
	h.send(id, "RUNTOOL long")
	h.waitStatus(id, api.StatusBusy, 20*time.Second)
	h.rec.waitFor(20*time.Second, "the tool to run", func(s api.Session) bool { return s.ID == id && s.CurrentTool == "Bash" })
	h.waitScreen(id, "sleep 30", 10*time.Second)
	t0 := time.Now()
	h.corral("keys", id, "Escape")
	h.waitStatus(id, api.StatusIdle, 10*time.Second)
	if ch, ok := h.rec.firstSince(id, api.StatusIdle, t0); !ok || ch.at.Sub(t0) > time.Second {
		t.Errorf("idle %v after Escape, want within 1 s", ch.at.Sub(t0))
	}
}
