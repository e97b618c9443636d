package transcript

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/corral-dev/corral/internal/api"
)

func toolUse(uuid, id, name, input string) Entry {
	return Entry{Type: EntryAssistant, UUID: uuid, Message: &Message{Content: Content{Blocks: []Block{
		{Type: BlockToolUse, ID: id, Name: name, Input: json.RawMessage(input)},
	}}}}
}

func toolResult(uuid, id string, isErr bool, result string) Entry {
	e := Entry{Type: EntryUser, UUID: uuid, Message: &Message{Content: Content{Blocks: []Block{
		{Type: BlockToolResult, ToolUseID: id, IsError: isErr, Content: &Content{IsString: true, String: "ok"}},
	}}}}
	if result != "" {
		e.ToolUseResult = json.RawMessage(result)
	}
	return e
}

func prompt(uuid, text string) Entry {
	return Entry{Type: EntryUser, UUID: uuid, PromptSource: "typed", Message: &Message{Content: Content{IsString: true, String: text}}}
}

// Each turn's prompt lists the files its successful edits changed, with
// exact counts from Claude's patch where it wrote one.
func TestTurnFiles(t *testing.T) {
	var b TimelineBuilder
	add := func(e Entry) []TimelineItem { return b.Add(e) }
	// Before any prompt (a tail cut in the middle): nowhere to list it.
	add(toolUse("a0", "t0", "Write", `{"file_path":"/p/early.go","content":"x\n"}`))
	if ch := add(toolResult("r0", "t0", false, "")); len(ch) != 1 {
		t.Fatalf("before a prompt: %+v", ch)
	}

	add(prompt("p1", "fix it"))
	add(toolUse("a1", "t1", "Edit", `{"file_path":"/p/a.go","old_string":"one\ntwo\nthree","new_string":"one\nTWO\nthree"}`))
	ch := add(toolResult("r1", "t1", false, `{"filePath":"/p/a.go","structuredPatch":[{"oldStart":4,"oldLines":3,"newStart":4,"newLines":4,"lines":[" one","-two","+TWO","+2b"," three"]}]}`))
	if len(ch) != 2 || ch[1].ID != "p1" || len(ch[1].Files) != 1 {
		t.Fatalf("the prompt is not patched: %+v", ch)
	}
	if f := ch[1].Files[0]; f != (api.TurnFile{Path: "/p/a.go", Added: 2, Removed: 1, Edits: 1}) {
		t.Errorf("exact counts: %+v", f)
	}
	// Without Claude's patch: estimated, the shared lines left out.
	add(toolUse("a2", "t2", "Edit", `{"file_path":"/p/a.go","old_string":"x\ny\nz","new_string":"x\nY\nY2\nz"}`))
	add(toolResult("r2", "t2", false, ""))
	// A new file.
	add(toolUse("a3", "t3", "Write", `{"file_path":"/p/new.go","content":"package p\n\nfunc F() {}\n"}`))
	add(toolResult("r3", "t3", false, `{"type":"create","filePath":"/p/new.go","content":"package p\n\nfunc F() {}\n","structuredPatch":[]}`))
	// A failed edit changed nothing; a Read is no change.
	add(toolUse("a4", "t4", "Edit", `{"file_path":"/p/fail.go","old_string":"a","new_string":"b"}`))
	add(toolResult("r4", "t4", true, ""))
	add(toolUse("a5", "t5", "Read", `{"file_path":"/p/read.go"}`))
	add(toolResult("r5", "t5", false, ""))
	// A Write that left the file as it was: Claude's empty patch says so.
	add(toolUse("a6", "t6", "Write", `{"file_path":"/p/same.go","content":"a\nb\n"}`))
	add(toolResult("r6", "t6", false, `{"type":"update","filePath":"/p/same.go","structuredPatch":[]}`))
	add(toolUse("a7", "t7", "NotebookEdit", `{"notebook_path":"/p/n.ipynb","new_source":"print(1)\nprint(2)"}`))
	add(toolResult("r7", "t7", false, ""))

	items := b.Items()
	got := items[slices.IndexFunc(items, func(it TimelineItem) bool { return it.ID == "p1" })].Files
	want := []api.TurnFile{
		{Path: "/p/a.go", Added: 4, Removed: 2, Edits: 2},
		{Path: "/p/new.go", Added: 3, Edits: 1, Created: true},
		{Path: "/p/same.go", Edits: 1},
		{Path: "/p/n.ipynb", Added: 2, Edits: 1},
	}
	if !slices.Equal(got, want) {
		t.Errorf("files\n%+v\nwant\n%+v", got, want)
	}

	// The next turn starts its own list.
	add(prompt("p2", "again"))
	add(toolUse("a8", "t8", "Write", `{"file_path":"/p/b.go","content":"b\n"}`))
	add(toolResult("r8", "t8", false, ""))
	items = b.Items()
	if p2 := items[len(items)-2]; p2.ID != "p2" || len(p2.Files) != 1 || p2.Files[0].Path != "/p/b.go" {
		t.Errorf("second turn: %+v", p2)
	}
}

func TestEstimate(t *testing.T) {
	for _, c := range []struct {
		old, new string
		add, del int
	}{
		{"", "a\nb\n", 2, 0},
		{"a\nb\n", "", 0, 2},
		{"a\nb\nc", "a\nB\nc", 1, 1},
		{"a", "a\nb", 1, 0},
		{"same", "same", 0, 0},
	} {
		if a, d := estimate(c.old, c.new); a != c.add || d != c.del {
			t.Errorf("%q -> %q: +%d -%d, want +%d -%d", c.old, c.new, a, d, c.add, c.del)
		}
	}
}
