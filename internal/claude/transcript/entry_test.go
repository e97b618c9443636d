package transcript

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestParseEntryFixture(t *testing.T) {
	es := fixtureEntries(t)
	types := map[string]int{}
	for _, e := range es {
		types[e.Type]++
	}
	want := map[string]int{"user": 14, "assistant": 7, "system": 8, "attachment": 3, "file-history-snapshot": 7,
		"mode": 2, "permission-mode": 2, "last-prompt": 2}
	for k, v := range want {
		if types[k] != v {
			t.Errorf("%d entries of type %s, want %d (all: %v)", types[k], k, v, types)
		}
	}

	first := es[3]
	if first.Type != EntryUser || !first.Message.Content.IsString || first.Message.Content.String != "say hello" ||
		first.PromptSource != "typed" || first.OriginKind != "human" || first.ParentUUID != "" ||
		first.Timestamp != time.Date(2026, 11, 29, 22, 23, 8, 673e6, time.UTC) {
		t.Errorf("first prompt = %+v", first)
	}

	var sawErr, sawInterrupt, sawCompact, sawSummary, sawResult, sawLast bool
	for _, e := range es {
		switch {
		case e.IsAPIErrorMessage:
			sawErr = true
			if e.APIErrorStatus != 400 || e.Error != "unknown" || e.Message.Model != SyntheticModel ||
				e.Message.Content.Text() != "API Error: 400 mock failure" {
				t.Errorf("api error entry = %+v", e)
			}
		case e.InterruptedMessageID != "":
			sawInterrupt = true
			if e.InterruptedMessageID != "msg_1" || e.Message.Content.Text() != "[Request interrupted by user]" {
				t.Errorf("interrupt entry = %+v", e)
			}
		case e.Subtype == SubtypeCompactBoundary:
			sawCompact = true
			if m := e.CompactMetadata; m == nil || m.Trigger != "manual" || m.PreTokens != 176 || m.PostTokens != 724 ||
				e.Content != "Conversation compacted" || e.LogicalParentUUID == "" {
				t.Errorf("compact entry = %+v", e)
			}
		case e.IsCompactSummary:
			sawSummary = true
			if !e.IsVisibleInTranscriptOnly {
				t.Errorf("summary = %+v", e)
			}
		case e.Type == EntryLastPrompt:
			sawLast = true
			if e.LastPrompt != "FAIL please" || e.LeafUUID == "" {
				t.Errorf("last-prompt = %+v", e)
			}
		case e.Type == EntryUser && len(e.Message.Content.Blocks) == 1 && e.Message.Content.Blocks[0].Type == BlockToolResult:
			b := e.Message.Content.Blocks[0]
			if b.ToolUseID != "toolu_01" || b.Content == nil || !b.Content.IsString {
				t.Errorf("tool result = %+v", b)
			}
			if b.IsError {
				sawResult = true
				if string(e.ToolUseResult) != `"User rejected tool use"` {
					t.Errorf("toolUseResult = %s", e.ToolUseResult)
				}
			}
		}
	}
	if !sawErr || !sawInterrupt || !sawCompact || !sawSummary || !sawResult || !sawLast {
		t.Fatalf("missing kinds: err %v interrupt %v compact %v summary %v rejected %v last %v",
			sawErr, sawInterrupt, sawCompact, sawSummary, sawResult, sawLast)
	}
	for _, e := range es {
		if e.Subtype == SubtypeTurnDuration && e.DurationMS == 0 {
			t.Errorf("turn_duration without duration: %+v", e)
		}
	}
}

func TestParseEntryContentShapes(t *testing.T) {
	e, err := ParseEntry([]byte(`{"type":"user","message":{"role":"user","content":[
		{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"a"},{"type":"image","source":{}},7,"x"],"is_error":true},
		{"type":"text","text":"b"}, null, {"type":"thinking","thinking":"hm"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	bs := e.Message.Content.Blocks
	if len(bs) != 3 || bs[0].Content == nil || len(bs[0].Content.Blocks) != 2 || !bs[0].IsError {
		t.Fatalf("blocks = %+v", bs)
	}
	if got := e.Message.Content.Text(); got != "a\n[image]\nb" {
		t.Fatalf("Text = %q", got)
	}
	// Content round-trips in both shapes.
	for _, in := range []string{`"plain"`, `[{"type":"text","text":"x"}]`} {
		var c Content
		if err := json.Unmarshal([]byte(in), &c); err != nil {
			t.Fatal(err)
		}
		out, _ := json.Marshal(c)
		if string(out) != in {
			t.Errorf("round trip %s -> %s", in, out)
		}
	}
	// Odd content types degrade to empty content, not an error.
	e, err = ParseEntry([]byte(`{"type":"assistant","message":{"content":42,"usage":"x"},"timestamp":"yesterday","error":{"k":1}}`))
	if err != nil || e.Message == nil || e.Message.Content.Text() != "" || !e.Timestamp.IsZero() || e.Error != `{"k":1}` {
		t.Fatalf("got %+v, %v", e, err)
	}
}

func TestParseEntryRejects(t *testing.T) {
	for _, in := range []string{"", "[]", "null", `"x"`, `{}`, `{"type":""}`, `{"type":3}`, `{"type":"user"`, "{\"type\":\"user\"}\n{}"} {
		if _, err := ParseEntry([]byte(in)); err == nil {
			t.Errorf("ParseEntry(%q) succeeded", in)
		}
	}
	big := `{"type":"user","x":"` + strings.Repeat("a", MaxEntryLine) + `"}`
	if _, err := ParseEntry([]byte(big)); err == nil {
		t.Error("oversize line accepted")
	}
}
