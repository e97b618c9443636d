package transcript

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// sigString renders a signal compactly for table comparisons.
func sigString(s Signal) string {
	switch s := s.(type) {
	case PromptSubmitted:
		return "prompt:" + s.Text
	case Interrupt:
		return fmt.Sprintf("interrupt:tool=%v", s.ForToolUse)
	case ToolUse:
		return "tool:" + s.Name + ":" + s.ID
	case ToolResult:
		return fmt.Sprintf("result:%s:err=%v", s.ID, s.IsError)
	case AssistantText:
		return "text:" + s.Text
	case APIError:
		return fmt.Sprintf("apierror:%d:%s:%s", s.Status, s.Kind, s.Text)
	case TurnEnded:
		return "end:" + s.Duration.String()
	case Compacted:
		return fmt.Sprintf("compacted:%s:%d->%d", s.Trigger, s.PreTokens, s.PostTokens)
	case Usage:
		return fmt.Sprintf("usage:%s:%d/%d", s.MessageID, s.Input, s.Output)
	}
	return fmt.Sprintf("?%T", s)
}

func TestSignalsFixture(t *testing.T) {
	var got []string
	for _, e := range fixtureEntries(t) {
		for _, s := range Signals(e) {
			got = append(got, sigString(s))
		}
	}
	want := []string{
		"prompt:say hello",
		"usage:msg_1:12/5", "text:Hello from mock. Done.",
		"end:89ms",
		"prompt:RUNTOOL one",
		"usage:msg_1:12/20", "tool:Bash:toolu_01",
		"result:toolu_01:err=false",
		"usage:msg_1:12/5", "text:Hello from mock. Done.",
		"end:220ms",
		"prompt:RUNTOOL two",
		"usage:msg_1:12/20", "tool:Bash:toolu_01",
		"result:toolu_01:err=true",
		"interrupt:tool=true",
		"prompt:SLOW answer",
		"text:Hello from mock. ", // the synthetic partial answer
		"interrupt:tool=false",
		"prompt:SLOW with text",
		"usage:msg_1:12/5", "text:Hello from mock. Done.",
		"end:5.063s",
		"prompt:FAIL please",
		"apierror:400:unknown:API Error: 400 mock failure",
		"end:41ms",
		"compacted:manual:176->724",
		// The compact summary, caveat, /compact echo and its output are
		// not prompts.
	}
	if !slices.Equal(got, want) {
		t.Fatalf("signals:\n%q\nwant\n%q", got, want)
	}
}

func TestSignalsPrompts(t *testing.T) {
	user := func(content string, mod func(*Entry)) Entry {
		e := Entry{Type: EntryUser, UUID: "u", Timestamp: time.Unix(1, 0), Message: &Message{Role: "user", Content: Content{IsString: true, String: content}}}
		if mod != nil {
			mod(&e)
		}
		return e
	}
	cases := []struct {
		name string
		e    Entry
		want []string
	}{
		{"typed", user("fix it", nil), []string{"prompt:fix it"}},
		{"meta", user("fix it", func(e *Entry) { e.IsMeta = true }), nil},
		{"summary", user("summary", func(e *Entry) { e.IsCompactSummary = true }), nil},
		{"sidechain", user("sub task", func(e *Entry) { e.IsSidechain = true }), nil},
		{"command", user("<command-name>/clear</command-name>", nil), nil},
		{"caveat", user("<local-command-caveat>Caveat: x</local-command-caveat>", nil), nil},
		{"stdout", user("<local-command-stdout>ok</local-command-stdout>", nil), nil},
		{"bash", user("<bash-input>ls</bash-input>", nil), nil},
		{"blank", user("  \n", nil), nil},
		{"interrupt", user("[Request interrupted by user]", nil), []string{"interrupt:tool=false"}},
		{"interrupt tool", user("[Request interrupted by user for tool use]", nil), []string{"interrupt:tool=true"}},
		{"blocks", Entry{Type: EntryUser, Message: &Message{Content: Content{Blocks: []Block{{Type: BlockText, Text: "look"}, {Type: BlockImage}}}}}, []string{"prompt:look"}},
		{"no message", Entry{Type: EntryUser}, nil},
		{"assistant empty synthetic", Entry{Type: EntryAssistant, Message: &Message{Model: SyntheticModel, Content: Content{Blocks: []Block{{Type: BlockText, Text: ""}}}}}, nil},
		{"assistant string", Entry{Type: EntryAssistant, Message: &Message{Content: Content{IsString: true, String: "hi"}}}, []string{"text:hi"}},
		{"sidechain assistant", Entry{Type: EntryAssistant, IsSidechain: true, Message: &Message{ID: "m", Model: "x", Usage: &MessageUsage{InputTokens: 3, OutputTokens: 4}, Content: Content{Blocks: []Block{{Type: BlockText, Text: "sub"}}}}}, []string{"usage:m:3/4"}},
	}
	for _, c := range cases {
		var got []string
		for _, s := range Signals(c.e) {
			got = append(got, sigString(s))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestSlashCommand(t *testing.T) {
	cmd, ok := slashCommand("<command-name>/compact</command-name>\n            <command-message>compact</command-message>\n            <command-args></command-args>")
	if !ok || cmd != "/compact" {
		t.Fatalf("%q %v", cmd, ok)
	}
	cmd, ok = slashCommand("<command-name>/model</command-name><command-args>opus</command-args>")
	if !ok || cmd != "/model opus" {
		t.Fatalf("%q %v", cmd, ok)
	}
	if _, ok := slashCommand("hello"); ok {
		t.Fatal("plain text is a command")
	}
}
