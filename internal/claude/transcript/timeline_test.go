package transcript

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/corral-dev/corral/internal/claude"
)

func TestTimelineFixture(t *testing.T) {
	items := Timeline(fixtureEntries(t))
	var got []string
	for _, it := range items {
		s := string(it.Kind) + ":" + it.Text
		if it.Tool != nil {
			s = fmt.Sprintf("tool:%s done=%v err=%v result=%q", it.Tool.Name, it.Tool.Done, it.Tool.IsError, claude.Clip(it.Tool.Result, 20))
		}
		got = append(got, s)
	}
	want := []string{
		"prompt:say hello",
		"text:Hello from mock. Done.",
		"prompt:RUNTOOL one",
		`tool:Bash done=true err=false result="(Bash completed with…"`,
		"text:Hello from mock. Done.",
		"prompt:RUNTOOL two",
		`tool:Bash done=true err=true result="The user doesn't wan…"`,
		"interrupt:[Request interrupted by user for tool use]",
		"prompt:SLOW answer",
		"text:Hello from mock. ",
		"interrupt:[Request interrupted by user]",
		"prompt:SLOW with text",
		"text:Hello from mock. Done.",
		"prompt:FAIL please",
		"api_error:API Error: 400 mock failure",
		"compaction:manual",
		"command:/compact",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("timeline:\n%q\nwant\n%q", got, want)
	}
	ids := map[string]bool{}
	for _, it := range items {
		if it.ID == "" || ids[it.ID] || it.Time.IsZero() {
			t.Errorf("item id %q time %v", it.ID, it.Time)
		}
		ids[it.ID] = true
	}
	if items[14].Status != 400 {
		t.Errorf("api error status %d", items[14].Status)
	}
	// Items are plain JSON.
	b, err := json.Marshal(items[3])
	if err != nil || !strings.Contains(string(b), `"kind":"tool"`) || !strings.Contains(string(b), `"name":"Bash"`) {
		t.Fatalf("json %s %v", b, err)
	}
}

func TestTimelineIncrementalAndEdits(t *testing.T) {
	var b TimelineBuilder
	use := Entry{Type: EntryAssistant, UUID: "a1", Message: &Message{Content: Content{Blocks: []Block{
		{Type: BlockThinking, Thinking: "plan"},
		{Type: BlockText, Text: "Editing."},
		{Type: BlockToolUse, ID: "t1", Name: "Edit", Input: json.RawMessage(`{"file_path":"/p/a.go","old_string":"x := 1","new_string":"x := 2"}`)},
		{Type: BlockToolUse, ID: "t2", Name: "MultiEdit", Input: json.RawMessage(`{"file_path":"/p/b.go","edits":[{"old_string":"a","new_string":"b"},{"old_string":"c","new_string":"d","replace_all":true}]}`)},
		{Type: BlockToolUse, ID: "t3", Name: "Write", Input: json.RawMessage(`{"file_path":"/p/c.go","content":"package c\n"}`)},
		{Type: BlockToolUse, ID: "t4", Name: "Read", Input: json.RawMessage(`{"file_path":"/p/d.go"}`)},
	}}}}
	added := b.Add(use)
	if len(added) != 6 || added[0].Kind != KindThinking || added[1].ID != "a1/1" || added[2].Tool.Done {
		t.Fatalf("added %+v", added)
	}
	if e := added[2].Tool.Edits; len(e) != 1 || e[0] != (FileEdit{Path: "/p/a.go", Old: "x := 1", New: "x := 2"}) {
		t.Fatalf("Edit: %+v", e)
	}
	if e := added[3].Tool.Edits; len(e) != 2 || e[1] != (FileEdit{Path: "/p/b.go", Old: "c", New: "d", ReplaceAll: true}) {
		t.Fatalf("MultiEdit: %+v", e)
	}
	if e := added[4].Tool.Edits; len(e) != 1 || e[0] != (FileEdit{Path: "/p/c.go", New: "package c\n"}) {
		t.Fatalf("Write: %+v", e)
	}
	if added[5].Tool.Edits != nil {
		t.Fatalf("Read has edits: %+v", added[5].Tool.Edits)
	}

	long := strings.Repeat("é", maxToolResultText) // 2 bytes each: must be cut on a rune boundary
	res := Entry{Type: EntryUser, UUID: "u1", Message: &Message{Content: Content{Blocks: []Block{
		{Type: BlockToolResult, ToolUseID: "t1", Content: &Content{IsString: true, String: "ok"}},
		{Type: BlockToolResult, ToolUseID: "t3", IsError: true, Content: &Content{IsString: true, String: long}},
		{Type: BlockToolResult, ToolUseID: "unknown"},
	}}}}
	changed := b.Add(res)
	if len(changed) != 2 || changed[0].ID != "a1/2" || !changed[0].Tool.Done || changed[0].Tool.Result != "ok" {
		t.Fatalf("changed %+v", changed)
	}
	if c := changed[1].Tool; !c.IsError || !c.Truncated || len(c.Result) > maxToolResultText || !strings.HasPrefix(long, c.Result) || !utf8Valid(c.Result) {
		t.Fatalf("truncated result: len %d truncated %v", len(c.Result), c.Truncated)
	}
	// The snapshot taken before the result is unchanged (items are values).
	if added[2].Tool.Done {
		t.Fatal("earlier snapshot mutated")
	}
	if all := b.Items(); len(all) != 6 || !all[2].Tool.Done || all[3].Tool.Done {
		t.Fatalf("items %+v", all)
	}
	b.Reset()
	if len(b.Items()) != 0 {
		t.Fatal("Reset kept items")
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }
