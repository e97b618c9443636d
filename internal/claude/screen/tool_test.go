package screen

import (
	"reflect"
	"strings"
	"testing"
)

// TestRunningToolRecorded reads the recorded screen of a Bash loop that
// prints a line every 0.5 s, taken while it ran (flows/live_tool), and
// the screens of the other flows, where no tool output runs.
func TestRunningToolRecorded(t *testing.T) {
	_, texts := splitScreens(readFixture(t, "flows/live_tool/screens.txt"))
	got, ok := RunningTool(texts["2-running"])
	if !ok {
		t.Fatalf("no running tool on:\n%s", texts["2-running"])
	}
	want := ToolOutput{
		Header: "Bash(for i in $(seq 1 20); do echo line$i; sleep 0.5; done)",
		Tool:   "Bash",
		Lines:  []string{"line11", "line12", "line13", "line14"},
		Hidden: 10,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("RunningTool = %+v, want %+v", got, want)
	}
	for _, step := range []string{"1-permission", "3-done"} {
		if got, ok := RunningTool(texts[step]); ok {
			t.Errorf("%s: RunningTool = %+v, want none", step, got)
		}
	}

	// Escape while `sleep 30` runs: the call shows "Running…", no output yet.
	_, texts = splitScreens(readFixture(t, "flows/escape_tool/screens.txt"))
	got, ok = RunningTool(texts["2-running"])
	if !ok || got.Tool != "Bash" || got.Header != "Bash(sleep 30)" || len(got.Lines) != 0 {
		t.Errorf("escape_tool/2-running: RunningTool = %+v, %v; want Bash(sleep 30) with no lines", got, ok)
	}
	for _, step := range []string{"3-escaped", "4-idle"} {
		if got, ok := RunningTool(texts[step]); ok {
			t.Errorf("escape_tool/%s: RunningTool = %+v, want none", step, got)
		}
	}
}

// TestRunningToolCorpus: no screen of the corpus other than the two above
// shows a running tool's output where none runs.
func TestRunningToolCorpus(t *testing.T) {
	running := map[string]bool{"live_tool/2-running": true, "escape_tool/2-running": true}
	for _, c := range corpus(t) {
		if _, ok := RunningTool(c.text); ok != running[c.name()] {
			t.Errorf("%s: RunningTool found=%v, want %v", c.name(), ok, running[c.name()])
		}
	}
}

// TestRunningToolWrapped: a call wrapped at a phone's width, with a time
// instead of the background hint and an output line carrying escapes.
func TestRunningToolWrapped(t *testing.T) {
	scr := strings.Join([]string{
		"❯ LIVELINES please",
		"",
		"● Bash(for i in $(seq 1 20); do echo line$i; sleep",
		"      0.5; done)",
		"  ⎿ \u00a0line3",
		"     \x1b[1mline4\x1b[0m <b>",
		"     … +2 lines (2s)",
		"",
		"✽ Moonwalking… (2s · ↓ 27 tokens)",
		"",
		strings.Repeat("─", 50),
		"❯\u00a0",
		strings.Repeat("─", 50),
	}, "\n")
	got, ok := RunningTool(scr)
	want := ToolOutput{Header: "Bash(for i in $(seq 1 20); do echo line$i; sleep 0.5; done)", Tool: "Bash",
		Lines: []string{"line3", "line4 <b>"}, Hidden: 2}
	if !ok || !reflect.DeepEqual(got, want) {
		t.Errorf("RunningTool = %+v, %v; want %+v", got, ok, want)
	}
}
