package transcript

import (
	"encoding/json"
	"strings"
	"time"
)

// Signal is one fact a transcript entry tells the status engine. The
// concrete types are PromptSubmitted, Interrupt, ToolUse, ToolResult,
// AssistantText, APIError, TurnEnded, Compacted and Usage; switch on them.
type Signal interface{ isSignal() }

// PromptSubmitted is a prompt a person (or another session) sent: not a
// meta message, tool result, compaction summary or slash-command echo.
type PromptSubmitted struct {
	At       time.Time
	UUID     string
	PromptID string
	Text     string
}

// Interrupt is Claude's "[Request interrupted by user" line: the user
// pressed Escape during an answer, or rejected a tool (ForToolUse). An
// Escape before any answer text arrives writes no line at all.
type Interrupt struct {
	At         time.Time
	ForToolUse bool
}

// ToolUse is a tool call in an assistant message.
type ToolUse struct {
	At    time.Time
	ID    string
	Name  string
	Input json.RawMessage
}

// ToolResult is the result of a tool call (IsError also for a rejection).
type ToolResult struct {
	At      time.Time
	ID      string
	IsError bool
}

// AssistantText is text the assistant wrote (synthetic empty messages are
// skipped; an interrupted partial answer is kept).
type AssistantText struct {
	At   time.Time
	Text string
}

// APIError is an API failure Claude recorded as an assistant message.
type APIError struct {
	At     time.Time
	Status int    // HTTP status, 0 if unknown
	Kind   string // Claude's error kind, e.g. "unknown", "rate_limit"
	Text   string // what the user saw, e.g. "API Error: 400 mock failure"
}

// TurnEnded is the system turn_duration line Claude writes when a turn
// finishes (not when it is interrupted).
type TurnEnded struct {
	At       time.Time
	Duration time.Duration
}

// Compacted is a compaction boundary.
type Compacted struct {
	At         time.Time
	Trigger    string
	PreTokens  int64
	PostTokens int64
}

// Usage is the token usage of one assistant line. Claude writes one API
// response as several lines with the same message id and usage; feed
// entries to UsageTotals to count each response once.
type Usage struct {
	MessageID     string
	RequestID     string
	Model         string
	Input         int64
	Output        int64
	CacheRead     int64
	CacheCreation int64
}

func (PromptSubmitted) isSignal() {}
func (Interrupt) isSignal()       {}
func (ToolUse) isSignal()         {}
func (ToolResult) isSignal()      {}
func (AssistantText) isSignal()   {}
func (APIError) isSignal()        {}
func (TurnEnded) isSignal()       {}
func (Compacted) isSignal()       {}
func (Usage) isSignal()           {}

// interruptPrefix starts both interrupt texts of 2.1.197:
// "[Request interrupted by user]" and "[Request interrupted by user for tool use]".
const interruptPrefix = "[Request interrupted by user"

// isWrapperText reports whether a user text is one Claude writes itself
// around slash commands, bash mode and the like, not a prompt to the model.
func isWrapperText(t string) bool {
	for _, p := range [...]string{
		"<command-name>",
		"<command-message>",
		"<command-args>",
		"<local-command-",
		"<bash-input>",
		"<bash-stdout>",
		"<bash-stderr>",
		"<user-memory-input>",
	} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// Signals interprets one entry. Sidechain (subagent) entries only yield
// Usage: they do not change the state of the main conversation.
func Signals(e Entry) []Signal {
	var out []Signal
	switch e.Type {
	case EntryUser:
		if e.IsSidechain || e.Message == nil {
			return nil
		}
		c := e.Message.Content
		for _, b := range c.Blocks {
			if b.Type == BlockToolResult {
				out = append(out, ToolResult{At: e.Timestamp, ID: b.ToolUseID, IsError: b.IsError})
			}
		}
		if len(out) > 0 {
			return out
		}
		text := userText(c)
		if strings.HasPrefix(strings.TrimSpace(text), interruptPrefix) {
			return []Signal{Interrupt{At: e.Timestamp, ForToolUse: strings.Contains(text, "for tool use")}}
		}
		if isPrompt(e, text) {
			return []Signal{PromptSubmitted{At: e.Timestamp, UUID: e.UUID, PromptID: e.PromptID, Text: text}}
		}
	case EntryAssistant:
		m := e.Message
		if m == nil {
			return nil
		}
		if u, ok := usageOf(e); ok {
			out = append(out, u)
		}
		if e.IsSidechain {
			return out
		}
		if e.IsAPIErrorMessage {
			return append(out, APIError{At: e.Timestamp, Status: e.APIErrorStatus, Kind: e.Error, Text: m.Content.Text()})
		}
		if m.Content.IsString && strings.TrimSpace(m.Content.String) != "" {
			out = append(out, AssistantText{At: e.Timestamp, Text: m.Content.String})
		}
		for _, b := range m.Content.Blocks {
			switch b.Type {
			case BlockText:
				if strings.TrimSpace(b.Text) != "" {
					out = append(out, AssistantText{At: e.Timestamp, Text: b.Text})
				}
			case BlockToolUse:
				out = append(out, ToolUse{At: e.Timestamp, ID: b.ID, Name: b.Name, Input: b.Input})
			}
		}
	case EntrySystem:
		if e.IsSidechain {
			return nil
		}
		switch e.Subtype {
		case SubtypeTurnDuration:
			return []Signal{TurnEnded{At: e.Timestamp, Duration: time.Duration(e.DurationMS) * time.Millisecond}}
		case SubtypeCompactBoundary:
			c := Compacted{At: e.Timestamp}
			if m := e.CompactMetadata; m != nil {
				c.Trigger, c.PreTokens, c.PostTokens = m.Trigger, m.PreTokens, m.PostTokens
			}
			return []Signal{c}
		}
	}
	return out
}

// userText is the text of a user message: the string, or its text blocks.
func userText(c Content) string {
	if c.IsString {
		return c.String
	}
	var parts []string
	for _, b := range c.Blocks {
		if b.Type == BlockText {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// isPrompt tells a real prompt from the user-role lines Claude writes
// itself.
func isPrompt(e Entry, text string) bool {
	if e.IsMeta || e.IsCompactSummary || e.IsVisibleInTranscriptOnly {
		return false
	}
	t := strings.TrimSpace(text)
	if t == "" {
		return false
	}
	return !isWrapperText(t)
}

// slashCommand returns the command of a slash-command echo
// ("<command-name>/compact</command-name>...").
func slashCommand(text string) (string, bool) {
	const open, end = "<command-name>", "</command-name>"
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, open) {
		return "", false
	}
	name, _, ok := strings.Cut(t[len(open):], end)
	if !ok {
		return "", false
	}
	args := ""
	if _, rest, ok := strings.Cut(t, "<command-args>"); ok {
		args, _, _ = strings.Cut(rest, "</command-args>")
	}
	return strings.TrimSpace(strings.TrimSpace(name) + " " + strings.TrimSpace(args)), true
}

func usageOf(e Entry) (Usage, bool) {
	m := e.Message
	if m == nil || m.Usage == nil || m.Model == SyntheticModel {
		return Usage{}, false
	}
	u := m.Usage
	return Usage{
		MessageID:     m.ID,
		RequestID:     e.RequestID,
		Model:         m.Model,
		Input:         u.InputTokens,
		Output:        u.OutputTokens,
		CacheRead:     u.CacheReadInputTokens,
		CacheCreation: u.CacheCreationInputTokens,
	}, true
}
