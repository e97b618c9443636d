package transcript

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/corral-dev/corral/internal/claude"
)

// Entry types and system subtypes that corral interprets. Transcripts hold
// many more (attachment, file-history-snapshot, mode, permission-mode, ...);
// those parse fine and are ignored by Signals and Timeline.
const (
	EntryUser       = "user"
	EntryAssistant  = "assistant"
	EntrySystem     = "system"
	EntryLastPrompt = "last-prompt"
	EntrySummary    = "summary"

	SubtypeTurnDuration    = "turn_duration"
	SubtypeCompactBoundary = "compact_boundary"
	SubtypeStopHookSummary = "stop_hook_summary"
)

// Content block types.
const (
	BlockText       = "text"
	BlockToolUse    = "tool_use"
	BlockToolResult = "tool_result"
	BlockThinking   = "thinking"
	BlockImage      = "image"
)

// SyntheticModel is the model Claude writes on messages it made up itself
// (an interrupted partial answer, an API error shown as text).
const SyntheticModel = "<synthetic>"

// Entry is one line of a transcript.
type Entry struct {
	Type              string    `json:"type"`
	Subtype           string    `json:"subtype,omitempty"`
	UUID              string    `json:"uuid,omitempty"`
	ParentUUID        string    `json:"parentUuid,omitempty"`
	LogicalParentUUID string    `json:"logicalParentUuid,omitempty"`
	Timestamp         time.Time `json:"timestamp,omitzero"`
	SessionID         string    `json:"sessionId,omitempty"`
	CWD               string    `json:"cwd,omitempty"`
	Version           string    `json:"version,omitempty"`
	PromptID          string    `json:"promptId,omitempty"`
	// PromptSource is "typed" for a prompt a person entered.
	PromptSource string `json:"promptSource,omitempty"`
	// OriginKind is origin.kind: "human" for typed prompts.
	OriginKind string `json:"originKind,omitempty"`
	RequestID  string `json:"requestId,omitempty"`

	IsMeta                    bool `json:"isMeta,omitempty"`
	IsSidechain               bool `json:"isSidechain,omitempty"`
	IsCompactSummary          bool `json:"isCompactSummary,omitempty"`
	IsVisibleInTranscriptOnly bool `json:"isVisibleInTranscriptOnly,omitempty"`
	IsAPIErrorMessage         bool `json:"isApiErrorMessage,omitempty"`
	// APIErrorStatus is the HTTP status of an API error message.
	APIErrorStatus int `json:"apiErrorStatus,omitempty"`
	// Error is the error kind of an API error message ("unknown",
	// "rate_limit", ...), or the JSON text of a non-string error.
	Error                string `json:"error,omitempty"`
	InterruptedMessageID string `json:"interruptedMessageId,omitempty"`

	Message *Message `json:"message,omitempty"`
	// ToolUseResult is Claude's structured tool result, verbatim (a string
	// such as "User rejected tool use", or an object).
	ToolUseResult json.RawMessage `json:"toolUseResult,omitempty"`

	// System entries: Content is the text ("Conversation compacted"),
	// DurationMS the turn duration, CompactMetadata the compaction.
	Content         string           `json:"content,omitempty"`
	Level           string           `json:"level,omitempty"`
	DurationMS      int64            `json:"durationMs,omitempty"`
	CompactMetadata *CompactMetadata `json:"compactMetadata,omitempty"`

	// last-prompt entries.
	LastPrompt string `json:"lastPrompt,omitempty"`
	LeafUUID   string `json:"leafUuid,omitempty"`
	// summary entries (older versions' session titles).
	Summary string `json:"summary,omitempty"`
}

// Message is the API message of a user or assistant entry.
type Message struct {
	ID         string        `json:"id,omitempty"`
	Role       string        `json:"role,omitempty"`
	Model      string        `json:"model,omitempty"`
	Content    Content       `json:"content"`
	StopReason string        `json:"stop_reason,omitempty"`
	Usage      *MessageUsage `json:"usage,omitempty"`
}

// MessageUsage is the token usage of one API response.
type MessageUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	// CacheCreation splits the cache writes by how long they last (the
	// 1-hour ones cost more).
	CacheCreation *CacheCreation `json:"cache_creation,omitempty"`
	// ServiceTier and Speed ("standard", or fast mode's "fast") change
	// the price.
	ServiceTier string `json:"service_tier,omitempty"`
	Speed       string `json:"speed,omitempty"`
}

// CacheCreation is usage.cache_creation.
type CacheCreation struct {
	Ephemeral5m int64 `json:"ephemeral_5m_input_tokens"`
	Ephemeral1h int64 `json:"ephemeral_1h_input_tokens"`
}

// CompactMetadata describes a compaction (compact_boundary entries).
type CompactMetadata struct {
	Trigger    string `json:"trigger,omitempty"` // "manual" or "auto"
	PreTokens  int64  `json:"preTokens,omitempty"`
	PostTokens int64  `json:"postTokens,omitempty"`
	DurationMS int64  `json:"durationMs,omitempty"`
}

// Content is a message's content: either a plain string (IsString) or a
// list of blocks.
type Content struct {
	IsString bool
	String   string
	Blocks   []Block
}

// Block is one content block. Which fields are set depends on Type.
type Block struct {
	Type string `json:"type"`
	// text
	Text string `json:"text,omitempty"`
	// thinking
	Thinking string `json:"thinking,omitempty"`
	// tool_use
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// tool_result
	ToolUseID string   `json:"tool_use_id,omitempty"`
	Content   *Content `json:"content,omitempty"`
	IsError   bool     `json:"is_error,omitempty"`
}

// UnmarshalJSON accepts a string or an array of blocks; anything else (and
// blocks that are not objects) is dropped rather than failing the entry.
func (c *Content) UnmarshalJSON(b []byte) error {
	*c = Content{}
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil
	}
	switch b[0] {
	case '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return nil
		}
		c.IsString, c.String = true, s
	case '[':
		var raws []json.RawMessage
		if err := json.Unmarshal(b, &raws); err != nil {
			return nil
		}
		for _, r := range raws {
			var blk Block
			if len(r) == 0 || r[0] != '{' {
				continue
			}
			if err := claude.DecodeLoose(r, &blk); err != nil {
				continue
			}
			c.Blocks = append(c.Blocks, blk)
		}
	}
	return nil
}

// MarshalJSON writes the string or block form back.
func (c Content) MarshalJSON() ([]byte, error) {
	if c.IsString {
		return json.Marshal(c.String)
	}
	if c.Blocks == nil {
		return []byte("[]"), nil
	}
	return json.Marshal(c.Blocks)
}

// Text joins the text of a content: the string, or the text blocks (and,
// for tool results, nested text) separated by newlines. Images show as
// "[image]".
func (c Content) Text() string {
	if c.IsString {
		return c.String
	}
	var parts []string
	for _, b := range c.Blocks {
		switch b.Type {
		case BlockText:
			parts = append(parts, b.Text)
		case BlockImage:
			parts = append(parts, "[image]")
		case BlockToolResult:
			if b.Content != nil {
				parts = append(parts, b.Content.Text())
			}
		}
	}
	return strings.Join(parts, "\n")
}

// entryJSON decodes the fields whose shape needs care.
type entryJSON struct {
	Entry
	Timestamp  claude.FlexString `json:"timestamp"`
	Error      claude.FlexString `json:"error"`
	Content    claude.FlexString `json:"content"`
	Summary    claude.FlexString `json:"summary"`
	ParentUUID claude.FlexString `json:"parentUuid"`
	Origin     *struct {
		Kind string `json:"kind"`
	} `json:"origin"`
}

// MaxEntryLine is the default cap on one transcript line. Single lines can
// hold whole files or pasted images: generous for real data, small enough
// that a hostile file cannot exhaust memory.
const MaxEntryLine = 16 << 20

// ParseEntry decodes one transcript line. It rejects lines over
// MaxEntryLine, non-objects and lines without a type; fields of an
// unexpected type are left zero.
func ParseEntry(line []byte) (Entry, error) {
	if err := claude.CheckObject("transcript line", line, MaxEntryLine); err != nil {
		return Entry{}, err
	}
	var j entryJSON
	if err := claude.DecodeLoose(line, &j); err != nil {
		return Entry{}, fmt.Errorf("transcript line: %w", err)
	}
	e := j.Entry
	if e.Type == "" {
		return Entry{}, fmt.Errorf("transcript line: missing type")
	}
	e.Timestamp = parseTime(string(j.Timestamp))
	e.Error = string(j.Error)
	e.Content = string(j.Content)
	e.Summary = string(j.Summary)
	e.ParentUUID = string(j.ParentUUID)
	if j.Origin != nil {
		e.OriginKind = j.Origin.Kind
	}
	return e, nil
}

// parseTime accepts RFC 3339 (what Claude writes); anything else is zero.
func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}
