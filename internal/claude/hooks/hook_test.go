package hooks

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/corral-dev/corral/internal/claude"
)

func TestParseHookFixture(t *testing.T) {
	var events []string
	var got []Payload
	for i, l := range fixtureLines(t, "hooks.jsonl") {
		p, err := Parse(l)
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if p.SessionID != "bcc27dbc-b3d2-457e-9e21-34e69eba33f2" {
			t.Errorf("line %d: session_id = %q", i+1, p.SessionID)
		}
		events = append(events, p.HookEventName)
		got = append(got, p)
	}
	// The order of the scenario in the fixture README.
	want := []string{
		"SessionStart",
		"UserPromptSubmit", "Stop",
		"UserPromptSubmit", "PreToolUse", "PermissionRequest", "Notification",
		"PostToolUse", "Stop",
		"UserPromptSubmit", "PreToolUse", "PermissionRequest",
		"UserPromptSubmit",
		"UserPromptSubmit", "Stop",
		"UserPromptSubmit", "StopFailure",
		"PreCompact", "SubagentStop", "SessionStart", "PostCompact",
		"SessionEnd",
	}
	if !slices.Equal(events, want) {
		t.Fatalf("events =\n%v\nwant\n%v", events, want)
	}

	start := got[0]
	if start.Source != "startup" || start.Model != "claude-opus-4-8[1m]" || start.CWD != "/home/dev/proj" {
		t.Errorf("SessionStart = %+v", start)
	}
	if got[1].Prompt != "say hello" || got[1].PromptID == "" || got[1].PermissionMode != "default" {
		t.Errorf("UserPromptSubmit = %+v", got[1])
	}
	if got[2].LastAssistantMessage != "Hello from mock. Done." || got[2].StopHookActive {
		t.Errorf("Stop = %+v", got[2])
	}
	pre := got[4]
	if pre.ToolName != "Bash" || pre.ToolUseID != "toolu_01" {
		t.Errorf("PreToolUse = %+v", pre)
	}
	var in struct{ Command string }
	if err := json.Unmarshal(pre.ToolInput, &in); err != nil || in.Command != "touch /home/dev/scratch/created_by_tool" {
		t.Errorf("tool_input = %s (%v)", pre.ToolInput, err)
	}
	perm := got[5]
	if !strings.Contains(string(perm.PermissionSuggestions), `"addDirectories"`) {
		t.Errorf("permission_suggestions = %s", perm.PermissionSuggestions)
	}
	if got[6].NotificationType != NotifyPermissionPrompt || got[6].Message != "Claude needs your permission" {
		t.Errorf("Notification = %+v", got[6])
	}
	if !strings.Contains(string(got[7].ToolResponse), `"noOutputExpected":true`) || got[7].DurationMS != 78 {
		t.Errorf("PostToolUse = %+v", got[7])
	}
	fail := got[16]
	if fail.Error != "unknown" || fail.LastAssistantMessage != "API Error: 400 mock failure" {
		t.Errorf("StopFailure = %+v", fail)
	}
	if got[17].Trigger != "manual" || got[17].CustomInstructions != "" {
		t.Errorf("PreCompact = %+v", got[17])
	}
	if got[18].AgentID != "aab1dc4466be2c121" || !strings.HasSuffix(got[18].AgentTranscriptPath, "agent-aab1dc4466be2c121.jsonl") {
		t.Errorf("SubagentStop = %+v", got[18])
	}
	if got[19].Source != "compact" {
		t.Errorf("second SessionStart source = %q", got[19].Source)
	}
	if got[20].CompactSummary != "Hello from mock. Done." {
		t.Errorf("PostCompact = %+v", got[20])
	}
	if got[21].Reason != "prompt_input_exit" {
		t.Errorf("SessionEnd = %+v", got[21])
	}
}

func TestParseHookRejects(t *testing.T) {
	cases := map[string]string{
		"empty":          "",
		"spaces":         "  \n",
		"array":          `[{"hook_event_name":"Stop"}]`,
		"null":           "null",
		"string":         `"Stop"`,
		"no event":       `{"session_id":"x"}`,
		"empty event":    `{"hook_event_name":""}`,
		"event not text": `{"hook_event_name":5}`,
		"truncated":      `{"hook_event_name":"Stop"`,
		"trailing":       `{"hook_event_name":"Stop"} {}`,
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := Parse([]byte(in)); err == nil {
				t.Fatalf("Parse(%q) succeeded", in)
			}
		})
	}
	big := `{"hook_event_name":"Stop","message":"` + strings.Repeat("x", MaxPayload) + `"}`
	if _, err := Parse([]byte(big)); !errors.Is(err, claude.ErrTooLarge) {
		t.Fatalf("oversize payload: err = %v, want claude.ErrTooLarge", err)
	}
}

func TestParseHookTolerantFields(t *testing.T) {
	// A field of an unexpected type must not hide the event.
	p, err := Parse([]byte(`{"hook_event_name":"PostToolUseFailure","session_id":7,"error":{"code":1},"tool_name":"Bash"}`))
	if err != nil {
		t.Fatal(err)
	}
	if p.HookEventName != EventPostToolUseFailure || p.ToolName != "Bash" || p.SessionID != "" {
		t.Fatalf("got %+v", p)
	}
	if p.Error != `{"code":1}` {
		t.Fatalf("error = %q, want the JSON text", p.Error)
	}
}

func TestWaitsForPerson(t *testing.T) {
	cases := []struct {
		p    Payload
		kind string
		ok   bool
	}{
		{Payload{HookEventName: EventPermissionRequest}, "permission", true},
		{Payload{HookEventName: EventPreToolUse, ToolName: "AskUserQuestion"}, "question", true},
		{Payload{HookEventName: EventPreToolUse, ToolName: "Bash"}, "", false},
		{Payload{HookEventName: EventNotification, NotificationType: NotifyPermissionPrompt}, "permission", true},
		{Payload{HookEventName: EventNotification, NotificationType: NotifyWorkerPermissionPrompt}, "permission", true},
		{Payload{HookEventName: EventNotification, NotificationType: NotifyElicitationDialog}, "elicitation", true},
		{Payload{HookEventName: EventNotification, NotificationType: NotifyElicitationURLDialog}, "elicitation", true},
		{Payload{HookEventName: EventNotification, NotificationType: NotifyIdlePrompt}, "", false},
		{Payload{HookEventName: EventStop}, "", false},
	}
	for _, c := range cases {
		kind, ok := c.p.WaitsForPerson()
		if kind != c.kind || ok != c.ok {
			t.Errorf("%s/%s/%s: got %q %v, want %q %v", c.p.HookEventName, c.p.ToolName, c.p.NotificationType, kind, ok, c.kind, c.ok)
		}
		if c.p.HookEventName == EventNotification && NeedsPerson(c.p.NotificationType) != c.ok {
			t.Errorf("NeedsPerson(%q) = %v", c.p.NotificationType, !c.ok)
		}
	}
}

func TestHookEvents(t *testing.T) {
	ev := Events()
	if len(ev) != 18 {
		t.Fatalf("Events has %d events: %v", len(ev), ev)
	}
	for _, e := range []string{EventSubagentStart, EventSubagentStop} {
		if !slices.Contains(ev, e) {
			t.Errorf("Events does not register %s", e)
		}
	}
	ev[0] = "mutated"
	if Events()[0] != EventSessionStart {
		t.Fatal("Events shares its slice with callers")
	}
}
