package api

import (
	"encoding/json"
	"time"
)

// TimelineKind says what a TimelineItem shows.
type TimelineKind string

const (
	TimelinePrompt     TimelineKind = "prompt"     // Text is what the person typed
	TimelineText       TimelineKind = "text"       // Text is assistant markdown, as written
	TimelineThinking   TimelineKind = "thinking"   // Text is the visible thinking
	TimelineTool       TimelineKind = "tool"       // Tool is set
	TimelineInterrupt  TimelineKind = "interrupt"  // Text is Claude's interrupt line
	TimelineCompaction TimelineKind = "compaction" // Text is the trigger ("manual", "auto")
	TimelineAPIError   TimelineKind = "api_error"  // Text is the error as shown; Status is set
	TimelineCommand    TimelineKind = "command"    // Text is the slash command, e.g. "/compact"
)

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
	// Files are, on a prompt, the files its turn changed through Claude's
	// editing tools (api/git.go, TurnFile), in the order first changed.
	Files []TurnFile `json:"files,omitempty"`
	// Tokens are, on a prompt, what its turn's API responses used, as
	// their usage says (each response counted once).
	Tokens *TurnTokens `json:"tokens,omitempty"`
	// DurationMS is, on a prompt, how long its turn took as Claude
	// measured it (its turn_duration line); 0 until the turn ended, and
	// for a turn Claude wrote none for (an interrupted one).
	DurationMS int64 `json:"duration_ms,omitempty"`
}

// TurnTokens sums the usage of a turn's API responses.
type TurnTokens struct {
	Input         int64 `json:"input"`
	Output        int64 `json:"output"`
	CacheRead     int64 `json:"cache_read"`
	CacheCreation int64 `json:"cache_creation"`
	Responses     int   `json:"responses"`
	// CostUSD is what the responses cost at Anthropic's list prices
	// (internal/claude/pricing); Unpriced counts those it leaves out for
	// want of a price (an unknown model), so with Unpriced > 0 it is not
	// the turn's cost. The responses of the subagents the turn launched
	// count in all of these (docs/api.md "Costs").
	CostUSD  float64 `json:"cost_usd"`
	Unpriced int     `json:"unpriced,omitempty"`
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
	// Patch is Claude's own patch of the change, once the result arrived
	// (toolUseResult.structuredPatch): hunks with the file's real line
	// numbers, which the edit alone does not know. At most maxPatchLines
	// lines in all (internal/claude); PatchCut says some were left out.
	Patch    []PatchHunk `json:"patch,omitempty"`
	PatchCut bool        `json:"patch_cut,omitempty"`
}

// PatchHunk is one hunk of a patch: where it starts in the old and the new
// file (1-based), how many lines it spans in each, and its lines, each
// starting with ' ', '-' or '+'.
type PatchHunk struct {
	OldStart int      `json:"old_start"`
	OldLines int      `json:"old_lines"`
	NewStart int      `json:"new_start"`
	NewLines int      `json:"new_lines"`
	Lines    []string `json:"lines"`
}

// FileEdit is one text replacement in a file. For Write, Old is empty and
// New is the whole new content.
type FileEdit struct {
	Path       string `json:"path"`
	Old        string `json:"old"`
	New        string `json:"new"`
	ReplaceAll bool   `json:"replace_all,omitempty"`
}

// TimelineRequest asks for a session's timeline: all of it, or with Since
// (the Cursor of an earlier answer) only what changed after.
type TimelineRequest struct {
	SessionRef
	Since string `json:"since,omitempty"`
}

// Timeline is the readable view of a session's transcript. With Reset, Items
// are its last items (at most 1000) and replace what the reader held;
// without, they are the items new or changed since the request's Since, in
// timeline order: a changed one (a tool call whose result came, a prompt
// whose turn changed a file) replaces the item of its ID, a new one is
// appended. Cursor is what to send as Since next time.
//
// Live is what the screen shows of the tool that runs now, whole in every
// answer (not a change since Since): Claude writes a tool's result to the
// transcript only when it ends. Absent when no tool runs or the screen
// shows none of its output.
type Timeline struct {
	Items  []TimelineItem `json:"items"`
	Reset  bool           `json:"reset,omitempty"`
	Cursor string         `json:"cursor"`
	Live   *LiveOutput    `json:"live,omitempty"`
}

// LiveOutput is the output of a running tool as Claude draws it: plain
// text (escapes removed), its last lines only (at most LiveLines, each cut
// at LiveLineBytes), Hidden earlier ones counted but not drawn.
type LiveOutput struct {
	Tool   string   `json:"tool"`
	Header string   `json:"header,omitempty"`
	Lines  []string `json:"lines"`
	Hidden int      `json:"hidden,omitempty"`
}

// Bounds of a LiveOutput.
const (
	LiveLines     = 50
	LiveLineBytes = 500
)
