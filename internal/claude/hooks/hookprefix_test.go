package hooks

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// TestParseHookPrefix: every real payload of the fixture, cut anywhere
// after its tool name, still gives its event and tool; cut before its
// event name it is refused.
func TestParseHookPrefix(t *testing.T) {
	f, err := os.Open("../../../testdata/claude-code-2.1.197/hooks.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		line := sc.Text()
		full, err := Parse([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		// Whole, the prefix parser agrees with Parse on the small fields.
		p, err := ParsePrefix([]byte(line))
		if err != nil || p.HookEventName != full.HookEventName || p.SessionID != full.SessionID || p.ToolName != full.ToolName {
			t.Fatalf("whole payload: %+v %v", p, err)
		}
		after := strings.Index(line, `"hook_event_name"`) + len(`"hook_event_name":"`+full.HookEventName+`"`)
		if full.ToolName != "" {
			after = strings.Index(line, `"tool_name"`) + len(`"tool_name":"`+full.ToolName+`"`)
		}
		for cut := after; cut < len(line); cut += 7 {
			p, err := ParsePrefix([]byte(line[:cut]))
			if err != nil || p.HookEventName != full.HookEventName || p.ToolName != full.ToolName || p.SessionID != full.SessionID {
				t.Fatalf("%s cut at %d: %+v %v", full.HookEventName, cut, p, err)
			}
		}
		before := strings.Index(line, `"hook_event_name"`) + 5
		if _, err := ParsePrefix([]byte(line[:before])); err == nil {
			t.Fatalf("%s cut before its event name was accepted", full.HookEventName)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no payloads")
	}
}

func FuzzParseHookPrefix(f *testing.F) {
	f.Add([]byte(`{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"content":"abc`))
	f.Add([]byte(`{"hook_event_name":`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParsePrefix(b)
		if err == nil && p.HookEventName == "" {
			t.Fatal("accepted without an event name")
		}
	})
}
