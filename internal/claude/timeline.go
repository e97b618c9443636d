package claude

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// TimelineKind says what a TimelineItem shows.
type TimelineKind string

const (
	KindPrompt     TimelineKind = "prompt"     // Text is what the person typed
	KindText       TimelineKind = "text"       // Text is assistant markdown, as written
	KindThinking   TimelineKind = "thinking"   // Text is the visible thinking
	KindTool       TimelineKind = "tool"       // Tool is set
	KindInterrupt  TimelineKind = "interrupt"  // Text is Claude's interrupt line
	KindCompaction TimelineKind = "compaction" // Text is the trigger ("manual", "auto")
	KindAPIError   TimelineKind = "api_error"  // Text is the error as shown; Status is set
	KindCommand    TimelineKind = "command"    // Text is the slash command, e.g. "/compact"
)

// maxToolResultText caps the result text kept per tool call; the full
// result stays in the transcript.
const maxToolResultText = 64 << 10

// TimelineItem is one thing to show in the readable view of a session.
type TimelineItem struct {
	// ID is the entry's uuid, with "/<n>" for the n-th block of an entry
	// that yields several items.
	ID   string       `json:"id"`
	Time time.Time    `json:"time,omitzero"`
	Kind TimelineKind `json:"kind"`
	Text string       `json:"text,omitempty"`
	// Status is the HTTP status of an API error.
	Status int       `json:"status,omitempty"`
	Tool   *ToolCall `json:"tool,omitempty"`
}

// ToolCall is a tool call and, once it arrived, its result.
type ToolCall struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input,omitempty"`
	// Done is set when the result arrived.
	Done    bool   `json:"done"`
	Result  string `json:"result,omitempty"`
	IsError bool   `json:"is_error,omitempty"`
	// Truncated says Result was cut at 64 KiB.
	Truncated bool `json:"truncated,omitempty"`
	// Edits are the changes of an Edit, MultiEdit or Write call, for a
	// diff view.
	Edits []FileEdit `json:"edits,omitempty"`
}

// FileEdit is one text replacement in a file. For Write, Old is empty and
// New is the whole new content.
type FileEdit struct {
	Path       string `json:"path"`
	Old        string `json:"old"`
	New        string `json:"new"`
	ReplaceAll bool   `json:"replace_all,omitempty"`
}

// TimelineBuilder turns entries into timeline items incrementally. Add
// returns the items that are new or changed (a tool call changes when its
// result arrives), so a UI can patch its view. The zero value is ready.
type TimelineBuilder struct {
	items []TimelineItem
	// open maps a tool_use id to the index of its still-unanswered item.
	// Ids can repeat (fake APIs reuse them), so an answer goes to the
	// latest call with that id.
	open map[string]int
}

// Timeline builds the whole timeline of a list of entries.
func Timeline(entries []Entry) []TimelineItem {
	var b TimelineBuilder
	for _, e := range entries {
		b.Add(e)
	}
	return b.Items()
}

// Items returns a copy of all items so far.
func (b *TimelineBuilder) Items() []TimelineItem {
	return append([]TimelineItem(nil), b.items...)
}

// Reset forgets everything, for a transcript that started over.
func (b *TimelineBuilder) Reset() { *b = TimelineBuilder{} }

// Add adds one entry and returns the new or changed items.
func (b *TimelineBuilder) Add(e Entry) []TimelineItem {
	if e.IsSidechain {
		return nil
	}
	var changed []TimelineItem
	n := 0
	add := func(it TimelineItem) {
		it.ID = e.UUID
		if n > 0 {
			it.ID += "/" + strconv.Itoa(n)
		}
		n++
		it.Time = e.Timestamp
		b.items = append(b.items, it)
		changed = append(changed, it)
	}
	switch e.Type {
	case EntryUser:
		if e.Message == nil {
			return nil
		}
		c := e.Message.Content
		hadResult := false
		for _, blk := range c.Blocks {
			if blk.Type != BlockToolResult {
				continue
			}
			hadResult = true
			if it, ok := b.answer(blk); ok {
				changed = append(changed, it)
			}
		}
		if hadResult {
			return changed
		}
		text := userText(c)
		t := strings.TrimSpace(text)
		switch {
		case strings.HasPrefix(t, interruptPrefix):
			add(TimelineItem{Kind: KindInterrupt, Text: t})
		case isPrompt(e, text):
			add(TimelineItem{Kind: KindPrompt, Text: text})
		default:
			if cmd, ok := slashCommand(text); ok && !e.IsMeta {
				add(TimelineItem{Kind: KindCommand, Text: cmd})
			}
		}
	case EntryAssistant:
		m := e.Message
		if m == nil {
			return nil
		}
		if e.IsAPIErrorMessage {
			add(TimelineItem{Kind: KindAPIError, Text: m.Content.Text(), Status: e.APIErrorStatus})
			return changed
		}
		if m.Content.IsString && strings.TrimSpace(m.Content.String) != "" {
			add(TimelineItem{Kind: KindText, Text: m.Content.String})
		}
		for _, blk := range m.Content.Blocks {
			switch blk.Type {
			case BlockText:
				if strings.TrimSpace(blk.Text) != "" {
					add(TimelineItem{Kind: KindText, Text: blk.Text})
				}
			case BlockThinking:
				if strings.TrimSpace(blk.Thinking) != "" {
					add(TimelineItem{Kind: KindThinking, Text: blk.Thinking})
				}
			case BlockToolUse:
				add(TimelineItem{Kind: KindTool, Tool: &ToolCall{
					ID: blk.ID, Name: blk.Name, Input: blk.Input, Edits: editsOf(blk.Name, blk.Input),
				}})
				if b.open == nil {
					b.open = map[string]int{}
				}
				b.open[blk.ID] = len(b.items) - 1
			}
		}
	case EntrySystem:
		if e.Subtype == SubtypeCompactBoundary {
			trigger := ""
			if e.CompactMetadata != nil {
				trigger = e.CompactMetadata.Trigger
			}
			add(TimelineItem{Kind: KindCompaction, Text: trigger})
		}
	}
	return changed
}

// answer attaches a tool result to its call.
func (b *TimelineBuilder) answer(blk Block) (TimelineItem, bool) {
	i, ok := b.open[blk.ToolUseID]
	if !ok {
		return TimelineItem{}, false
	}
	delete(b.open, blk.ToolUseID)
	it := b.items[i]
	tc := *it.Tool
	tc.Done = true
	tc.IsError = blk.IsError
	if blk.Content != nil {
		tc.Result = blk.Content.Text()
	}
	if len(tc.Result) > maxToolResultText {
		tc.Result = clipBytes(tc.Result, maxToolResultText)
		tc.Truncated = true
	}
	it.Tool = &tc
	b.items[i] = it
	return it, true
}

// clipBytes cuts s to at most n bytes without splitting a UTF-8 sequence.
func clipBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// editsOf reads the file changes of the editing tools from their input.
func editsOf(name string, input json.RawMessage) []FileEdit {
	if len(input) == 0 {
		return nil
	}
	type edit struct {
		OldString  string `json:"old_string"`
		NewString  string `json:"new_string"`
		ReplaceAll bool   `json:"replace_all"`
	}
	var in struct {
		FilePath string `json:"file_path"`
		Content  string `json:"content"`
		edit
		Edits []edit `json:"edits"`
	}
	if err := decodeLoose(input, &in); err != nil || in.FilePath == "" {
		return nil
	}
	switch name {
	case "Edit":
		return []FileEdit{{Path: in.FilePath, Old: in.OldString, New: in.NewString, ReplaceAll: in.ReplaceAll}}
	case "MultiEdit":
		var out []FileEdit
		for _, e := range in.Edits {
			out = append(out, FileEdit{Path: in.FilePath, Old: e.OldString, New: e.NewString, ReplaceAll: e.ReplaceAll})
		}
		return out
	case "Write":
		return []FileEdit{{Path: in.FilePath, New: in.Content}}
	}
	return nil
}
