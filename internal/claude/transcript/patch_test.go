package transcript

import (
	"strings"
	"testing"
)

// An edit's result carries Claude's patch, with the file's real line
// numbers; a patch of another file, or of a failed call, is not taken.
func TestTimelinePatch(t *testing.T) {
	var b TimelineBuilder
	b.Add(prompt("p1", "fix it"))
	b.Add(toolUse("a1", "t1", "Edit", `{"file_path":"/p/a.go","old_string":"two","new_string":"TWO\n2b"}`))
	ch := b.Add(toolResult("r1", "t1", false, `{"filePath":"/p/a.go","structuredPatch":[{"oldStart":4,"oldLines":3,"newStart":4,"newLines":4,"lines":[" one","-two","+TWO","+2b"," three"]}]}`))
	if len(ch) == 0 || ch[0].Tool == nil {
		t.Fatalf("changed: %+v", ch)
	}
	p := ch[0].Tool.Patch
	if len(p) != 1 || p[0].OldStart != 4 || p[0].NewStart != 4 || p[0].NewLines != 4 || len(p[0].Lines) != 5 || p[0].Lines[2] != "+TWO" {
		t.Errorf("patch %+v", p)
	}

	b.Add(toolUse("a2", "t2", "Edit", `{"file_path":"/p/b.go","old_string":"x","new_string":"y"}`))
	ch = b.Add(toolResult("r2", "t2", false, `{"filePath":"/p/other.go","structuredPatch":[{"oldStart":1,"oldLines":1,"newStart":1,"newLines":1,"lines":["-x","+y"]}]}`))
	if ch[0].Tool.Patch != nil {
		t.Errorf("another file's patch taken: %+v", ch[0].Tool.Patch)
	}
	b.Add(toolUse("a3", "t3", "Edit", `{"file_path":"/p/c.go","old_string":"x","new_string":"y"}`))
	ch = b.Add(toolResult("r3", "t3", true, `{"filePath":"/p/c.go","structuredPatch":[{"oldStart":1,"oldLines":1,"newStart":1,"newLines":1,"lines":["-x","+y"]}]}`))
	if ch[0].Tool.Patch != nil {
		t.Errorf("a failed call's patch taken")
	}

	// A huge patch is cut, and says so.
	lines := make([]string, maxPatchLines+10)
	for i := range lines {
		lines[i] = `"+l"`
	}
	b.Add(toolUse("a4", "t4", "Write", `{"file_path":"/p/d.go","content":"l"}`))
	ch = b.Add(toolResult("r4", "t4", false, `{"filePath":"/p/d.go","structuredPatch":[{"oldStart":1,"oldLines":0,"newStart":1,"newLines":5,"lines":["+a"]},{"oldStart":9,"oldLines":0,"newStart":9,"newLines":1,"lines":[`+strings.Join(lines, ",")+`]}]}`))
	if tc := ch[0].Tool; !tc.PatchCut || len(tc.Patch) != 1 {
		t.Errorf("huge patch: cut %v, %d hunks", tc.PatchCut, len(tc.Patch))
	}
}

// A turn's prompt sums the tokens of its API responses, each once (Claude
// writes an entry per content block, every one with the response's usage).
func TestTurnTokens(t *testing.T) {
	var b TimelineBuilder
	b.Add(prompt("p1", "go"))
	resp := func(uuid, id string, in, out int64) Entry {
		return Entry{Type: EntryAssistant, UUID: uuid, Message: &Message{ID: id, Model: "m", Content: Content{Blocks: []Block{{Type: BlockText, Text: "x"}}},
			Usage: &MessageUsage{InputTokens: in, OutputTokens: out, CacheReadInputTokens: 5}}}
	}
	b.Add(resp("a1", "msg1", 10, 20))
	b.Add(resp("a2", "msg1", 10, 20)) // the same response's next block
	ch := b.Add(resp("a3", "msg2", 1, 2))
	var p *TimelineItem
	for i := range ch {
		if ch[i].ID == "p1" {
			p = &ch[i]
		}
	}
	if p == nil || p.Tokens == nil {
		t.Fatalf("the prompt did not change: %+v", ch)
	}
	if tk := *p.Tokens; tk.Input != 11 || tk.Output != 22 || tk.CacheRead != 10 || tk.Responses != 2 {
		t.Errorf("tokens %+v", tk)
	}
	b.Add(prompt("p2", "again"))
	items := b.Items()
	if last := items[len(items)-1]; last.ID != "p2" || last.Tokens != nil {
		t.Errorf("the next turn starts at nothing: %+v", last)
	}
}
