package transcript

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/testkit/testio"
)

// The subagent flow's session and its two subagents (Agent tool), as
// Claude 2.1.197 wrote them (testdata/.../flows/subagent).
const (
	subFlow    = "flows/subagent"
	subSession = "a8e6ab63-6d14-4276-b256-f7a5cbd05310"
	subFirst   = "ae99939fd63b470df" // launched by the turn "SUBAGENT please"
	subSecond  = "ac4ba31a1cbd0d6fd" // by "SUBDENY please"
)

// subagentLayout lays the flow out as Claude does, <project
// dir>/<session id>.jsonl and <project dir>/<session id>/subagents/, and
// returns the transcript's path (written only when main).
func subagentLayout(t *testing.T, main bool) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, subSession+".jsonl")
	if main {
		writeFile(t, path, string(readFixture(t, subFlow+"/transcript.jsonl")))
	}
	sub := filepath.Join(dir, subSession, "subagents")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{subFirst, subSecond} {
		name := "agent-" + id + ".jsonl"
		writeFile(t, filepath.Join(sub, name), string(readFixture(t, subFlow+"/subagents/"+name)))
	}
	return path
}

// subUsage is what a subagent's recorded transcript adds up to.
func subUsage(t *testing.T, flow, id string) api.TurnTokens {
	t.Helper()
	var u UsageTotals
	for _, l := range testio.Lines(t, filepath.Join(fixtureDir, flow, "subagents", "agent-"+id+".jsonl")) {
		e, err := ParseEntry(l)
		if err != nil {
			t.Fatal(err)
		}
		u.Add(e)
	}
	return TurnTokensOf(&u)
}

func prompts(items []TimelineItem) map[string]api.TurnTokens {
	out := map[string]api.TurnTokens{}
	for _, it := range items {
		if it.Kind == KindPrompt && it.Tokens != nil {
			out[strings.TrimSpace(it.Text)] = *it.Tokens
		}
	}
	return out
}

func plus(a, b api.TurnTokens) api.TurnTokens {
	return api.TurnTokens{
		Input: a.Input + b.Input, Output: a.Output + b.Output, CacheRead: a.CacheRead + b.CacheRead,
		CacheCreation: a.CacheCreation + b.CacheCreation, Responses: a.Responses + b.Responses,
		CostUSD: a.CostUSD + b.CostUSD, Unpriced: a.Unpriced + b.Unpriced,
	}
}

func sameTokens(a, b api.TurnTokens) bool {
	c := b
	c.CostUSD = a.CostUSD
	return a == c && nearUSD(a.CostUSD, b.CostUSD)
}

// The recorded subagent's responses count in the turn that launched it:
// its tokens, responses and cost, at Opus's list prices like the turn's own.
func TestTimelineViewCountsSubagents(t *testing.T) {
	path := subagentLayout(t, true)
	var entries []Entry
	for _, l := range testio.Lines(t, path) {
		e, err := ParseEntry(l)
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, e)
	}
	own := prompts(Timeline(entries)) // the main transcript's responses only
	d, err := NewTimelineView(path, 4<<20, 1000).Since("")
	if err != nil {
		t.Fatal(err)
	}
	got := prompts(d.Items)
	for prompt, id := range map[string]string{"SUBAGENT please": subFirst, "SUBDENY please": subSecond} {
		sub := subUsage(t, subFlow, id)
		if sub.Responses != 2 || sub.CostUSD <= 0 {
			t.Fatalf("subagent %s: %+v", id, sub)
		}
		want := plus(own[prompt], sub)
		if tk := got[prompt]; !sameTokens(tk, want) {
			t.Errorf("turn %q: %+v, want %+v (own %+v + subagent %+v)", prompt, tk, want, own[prompt], sub)
		}
		tk := got[prompt]
		opus := (float64(tk.Input)*5 + float64(tk.Output)*25 + float64(tk.CacheCreation)*6.25 + float64(tk.CacheRead)*0.5) / 1e6
		if !nearUSD(tk.CostUSD, opus) {
			t.Errorf("turn %q: $%v, want Opus rates $%v", prompt, tk.CostUSD, opus)
		}
	}
}

// A reader that applies each delta, while Claude writes the transcript
// line by line (each subagent's file is complete before its result line),
// ends with what a fresh view shows; the subagent's cost arrives with the
// line that reports it.
func TestTimelineViewSubagentDeltas(t *testing.T) {
	path := subagentLayout(t, false)
	writeFile(t, path, "")
	v := NewTimelineView(path, 4<<20, 1000)
	d, err := v.Since("")
	if err != nil {
		t.Fatal(err)
	}
	held, cursor := d.Items, d.Cursor
	for _, l := range fixtureLines(t, subFlow+"/transcript.jsonl") {
		appendFile(t, path, string(l)+"\n")
		d, err := v.Since(cursor)
		if err != nil || d.Reset {
			t.Fatalf("delta: %+v %v", d, err)
		}
		held, cursor = apply(held, d), d.Cursor
	}
	fresh, err := NewTimelineView(path, 4<<20, 1000).Since("")
	if err != nil {
		t.Fatal(err)
	}
	same(t, "after deltas", held, fresh.Items)
	if tk := prompts(held)["SUBAGENT please"]; tk.Responses != 4 {
		t.Fatalf("SUBAGENT turn: %+v, want its 2 responses and the subagent's 2", tk)
	}
}

// A background subagent goes on writing after its launch was reported:
// the view reads its new responses with no new line in the main
// transcript, and a reader whose cursor is current gets the turn again.
func TestTimelineViewBackgroundSubagent(t *testing.T) {
	const flow = "flows/background_agent"
	lines := fixtureLines(t, flow+"/transcript.jsonl")
	var sid, agent string
	for _, l := range lines {
		e, _ := ParseEntry(l)
		if run, ok := SubagentOf(e); ok {
			if run.Done {
				t.Fatalf("background run reported done: %+v", run)
			}
			sid, agent = e.SessionID, run.AgentID
			break
		}
	}
	if agent == "" {
		t.Fatal("no background subagent in the flow")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, sid+".jsonl")
	sub := filepath.Join(dir, sid, "subagents", "agent-"+agent+".jsonl")
	if err := os.MkdirAll(filepath.Dir(sub), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, sub, "")
	var main strings.Builder
	for _, l := range lines {
		main.WriteString(string(l) + "\n")
	}
	writeFile(t, path, main.String())
	v := NewTimelineView(path, 4<<20, 1000)
	d, err := v.Since("")
	if err != nil {
		t.Fatal(err)
	}
	before := prompts(d.Items)["BGAGENT please"]
	for _, l := range fixtureLines(t, flow+"/subagents/agent-"+agent+".jsonl") {
		appendFile(t, sub, string(l)+"\n")
	}
	d, err = v.Since(d.Cursor)
	if err != nil || d.Reset {
		t.Fatalf("delta: %+v %v", d, err)
	}
	want := plus(before, subUsage(t, flow, agent))
	if got := prompts(d.Items)["BGAGENT please"]; !sameTokens(got, want) || got.Responses <= before.Responses {
		t.Fatalf("turn after the subagent wrote: %+v, want %+v", got, want)
	}
}

// A subagent's responses count in the day's cost by their own time, and
// apart from the session's even when a fake API reuses their ids.
func TestUsageTotalsSubagent(t *testing.T) {
	var main, sub, both UsageTotals
	main.Loc, sub.Loc, both.Loc = time.UTC, time.UTC, time.UTC
	for _, l := range fixtureLines(t, subFlow+"/transcript.jsonl") {
		e, _ := ParseEntry(l)
		main.Add(e)
		both.Add(e)
	}
	for _, l := range fixtureLines(t, subFlow+"/subagents/agent-"+subFirst+".jsonl") {
		e, _ := ParseEntry(l)
		sub.Add(e)
		both.AddSubagent(subFirst, e)
		both.AddSubagent(subFirst, e) // read again: counted once
	}
	day := "2026-12-01"
	if m, s, b := main.CostOn(day).USD, sub.CostOn(day).USD, both.CostOn(day).USD; s <= 0 || !nearUSD(b, m+s) {
		t.Fatalf("day cost: session $%v + subagent $%v, got $%v", m, s, b)
	}
	if both.Input != main.Input+sub.Input || both.Output != main.Output+sub.Output {
		t.Fatalf("tokens: %+v", both)
	}
}

// SubagentDir stays inside the transcript's directory; ids that could
// leave it are refused.
func TestSubagentPaths(t *testing.T) {
	if got := SubagentDir("/p/-home-dev-proj/abc-1.jsonl"); got != "/p/-home-dev-proj/abc-1/subagents" {
		t.Fatalf("dir: %q", got)
	}
	for _, p := range []string{"/p/x.txt", "/p/.jsonl", "/p/a b.jsonl"} {
		if got := SubagentDir(p); got != "" {
			t.Errorf("SubagentDir(%q) = %q", p, got)
		}
	}
	for _, id := range []string{"", "../x", "a/b", "a.b", strings.Repeat("a", 65)} {
		if validAgentID(id) {
			t.Errorf("agent id %q accepted", id)
		}
	}
	e := Entry{Type: EntryUser, Message: &Message{Content: Content{Blocks: []Block{{Type: BlockToolResult, ToolUseID: "t1"}}}},
		ToolUseResult: []byte(`{"status":"completed","agentId":"../../etc"}`)}
	if _, ok := SubagentOf(e); ok {
		t.Fatal("a bad agent id was taken")
	}
}

// Claude writes the Agent tool's result before the subagent's last lines
// reach its file: those still count, in the next answer.
func TestTimelineViewSubagentLateLines(t *testing.T) {
	path := subagentLayout(t, true)
	file := filepath.Join(SubagentDir(path), "agent-"+subFirst+".jsonl")
	lines := fixtureLines(t, subFlow+"/subagents/agent-"+subFirst+".jsonl")
	var early strings.Builder
	for _, l := range lines[:len(lines)-1] {
		early.WriteString(string(l) + "\n")
	}
	writeFile(t, file, early.String())
	v := NewTimelineView(path, 4<<20, 1000)
	d, err := v.Since("")
	if err != nil {
		t.Fatal(err)
	}
	if tk := prompts(d.Items)["SUBAGENT please"]; tk.Responses != 3 {
		t.Fatalf("before the last line: %+v", tk)
	}
	appendFile(t, file, string(lines[len(lines)-1])+"\n")
	d, err = v.Since(d.Cursor)
	if err != nil || d.Reset {
		t.Fatalf("delta: %+v %v", d, err)
	}
	if tk := prompts(d.Items)["SUBAGENT please"]; tk.Responses != 4 {
		t.Fatalf("after the last line: %+v in %+v", tk, d.Items)
	}
}
