// Package api holds the wire types of corral's public HTTP+JSON API: the
// shapes that the daemon serves on its unix socket (and, later, over TCP to
// browsers and through the hub) and that the typed client and the CLI read.
// It depends on nothing of ours, so both ends can import it.
package api

import (
	"encoding/json"
	"time"
)

// Version is the API version in every route prefix.
const Version = "v1"

// Status is the one-word state of a session. The set is part of the
// scripting contract (`corral ls --json`).
type Status string

const (
	StatusStarting   Status = "starting"    // launched, Claude not up yet
	StatusIdle       Status = "idle"        // waiting for a prompt
	StatusBusy       Status = "busy"        // working on a turn
	StatusNeedsInput Status = "needs-input" // a permission prompt or question waits for a person
	StatusReview     Status = "review"      // finished a turn that nobody has looked at yet
	StatusUnknown    Status = "unknown"     // was busy when corral restarted; being re-verified
	StatusExited     Status = "exited"      // Claude is not running in the pane
)

// Valid reports whether s is one of the known statuses.
func (s Status) Valid() bool {
	switch s {
	case StatusStarting, StatusIdle, StatusBusy, StatusNeedsInput, StatusReview, StatusUnknown, StatusExited:
		return true
	}
	return false
}

// Priority orders statuses for roll-ups (a machine's dot shows its most
// urgent session): higher is more urgent. Error is folded in by callers
// (review with an error ranks above plain review).
func (s Status) Priority() int {
	switch s {
	case StatusNeedsInput:
		return 7
	case StatusReview:
		return 5
	case StatusBusy:
		return 4
	case StatusUnknown:
		return 3
	case StatusStarting:
		return 2
	case StatusIdle:
		return 1
	}
	return 0
}

// Kind says what a session runs.
type Kind string

const (
	KindClaude Kind = "claude"
	KindShell  Kind = "shell"
	// KindExternal is a claude that corral did not start, seen through the
	// hooks of `corral hooks install --global`. corral watches it; it can
	// type into it only when it runs in a tmux pane.
	KindExternal Kind = "external"
)

// Waiting describes what a needs-input session waits for.
type Waiting struct {
	// Kind is "permission", "question" or "elicitation".
	Kind    string          `json:"kind"`
	Tool    string          `json:"tool,omitempty"`
	Input   json.RawMessage `json:"input,omitempty"`
	Message string          `json:"message,omitempty"`
	// Suggestions are Claude's permission_suggestions, verbatim.
	Suggestions json.RawMessage `json:"suggestions,omitempty"`
	// Options are the choices on the screen, when they could be read.
	Options []Option `json:"options,omitempty"`
}

// Option is one numbered choice of an on-screen prompt and the keys that pick it.
type Option struct {
	Label string   `json:"label"`
	Keys  []string `json:"keys"`
}

// Usage is what Claude reports about the model and spending.
type Usage struct {
	Model          string  `json:"model,omitempty"`
	ModelName      string  `json:"model_name,omitempty"`
	ContextPercent float64 `json:"context_percent,omitempty"`
	ContextSize    int64   `json:"context_size,omitempty"`
	InputTokens    int64   `json:"input_tokens,omitempty"`
	OutputTokens   int64   `json:"output_tokens,omitempty"`
	CacheRead      int64   `json:"cache_read_tokens,omitempty"`
	CacheCreation  int64   `json:"cache_creation_tokens,omitempty"`
	CostUSD        float64 `json:"cost_usd,omitempty"`
	// RateLimits is Claude's rate_limits object, verbatim (subscription logins only).
	RateLimits json.RawMessage `json:"rate_limits,omitempty"`
}

// Session is one session as the API shows it.
type Session struct {
	ID              string    `json:"id"`
	Device          string    `json:"device,omitempty"`
	Name            string    `json:"name"`
	Dir             string    `json:"dir"`
	Kind            Kind      `json:"kind"`
	Status          Status    `json:"status"`
	ClaudeSessionID string    `json:"claude_session_id"`
	CurrentTool     string    `json:"current_tool"`
	WaitingFor      *Waiting  `json:"waiting_for"`
	Error           string    `json:"error"`
	ErrorMessage    string    `json:"error_message,omitempty"`
	Compacting      bool      `json:"compacting,omitempty"`
	BusySince       time.Time `json:"busy_since,omitzero"`
	LastMessage     string    `json:"last_message,omitempty"`
	LastPrompt      string    `json:"last_prompt,omitempty"`
	Usage           Usage     `json:"usage"`
	ClaudePID       int       `json:"claude_pid,omitempty"`
	TranscriptPath  string    `json:"transcript_path,omitempty"`
	Args            []string  `json:"args,omitempty"`
	CreatedAt       time.Time `json:"created_at"`
	UpdatedAt       time.Time `json:"updated_at"`
	// Offline: the session's device is not connected to the hub; this is
	// its last known state.
	Offline bool `json:"offline,omitempty"`
}

// CreateRequest asks for a new session.
type CreateRequest struct {
	// Device names the machine (through a hub; empty: the only one).
	Device string   `json:"device,omitempty"`
	Dir    string   `json:"dir"`
	Name   string   `json:"name,omitempty"`
	Resume string   `json:"resume,omitempty"` // a Claude session id to resume
	Shell  bool     `json:"shell,omitempty"`  // a plain shell instead of claude
	Args   []string `json:"args,omitempty"`   // extra claude arguments
	Cols   int      `json:"cols,omitempty"`
	Rows   int      `json:"rows,omitempty"`
}

// RenameRequest renames a session.
type RenameRequest struct {
	Name string `json:"name"`
}

// InputRequest types text into a session; Enter presses Enter after it.
type InputRequest struct {
	Text  string `json:"text"`
	Enter bool   `json:"enter"`
}

// KeysRequest presses tmux-named keys (Enter, Escape, Up, C-c, 1 ...).
type KeysRequest struct {
	Keys []string `json:"keys"`
}

// Screen is a capture of a session's visible pane.
type Screen struct {
	Text   string `json:"text"`
	Cols   int    `json:"cols"`
	Rows   int    `json:"rows"`
	Cursor [2]int `json:"cursor"` // x, y
}

// RunRequest runs a command beside a session (in its directory, with its
// environment), not inside the pane.
type RunRequest struct {
	Argv      []string `json:"argv"`
	TimeoutMS int      `json:"timeout_ms,omitempty"`
}

// RunResult is the outcome of a RunRequest. Output is stdout and stderr
// interleaved, cut at a limit (Truncated says so).
type RunResult struct {
	Output     string `json:"output"`
	ExitCode   int    `json:"exit_code"`
	Truncated  bool   `json:"truncated,omitempty"`
	DurationMS int64  `json:"duration_ms"`
}

// DownloadRequest fetches a URL (http(s) or s3://bucket/key) into a
// session's directory.
type DownloadRequest struct {
	URL string `json:"url"`
	// Path is relative to the session's directory; empty: the URL's name.
	Path      string `json:"path,omitempty"`
	Overwrite bool   `json:"overwrite,omitempty"`
	// MaxBytes caps the size (0: the default, 100 MiB).
	MaxBytes int64 `json:"max_bytes,omitempty"`
}

// DownloadResult says where a download went.
type DownloadResult struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Device is a machine as the hub knows it.
type Device struct {
	ID       string    `json:"id"`
	Name     string    `json:"name"`
	Online   bool      `json:"online"`
	Hostname string    `json:"hostname,omitempty"`
	OS       string    `json:"os,omitempty"`
	Version  string    `json:"version,omitempty"`
	LastSeen time.Time `json:"last_seen,omitzero"`
}

// DirEntry is one entry of a directory listing.
type DirEntry struct {
	Name  string `json:"name"`
	Path  string `json:"path"`
	IsDir bool   `json:"is_dir"`
}

// DirListing is the answer to a directory listing.
type DirListing struct {
	Path    string     `json:"path"`
	Parent  string     `json:"parent,omitempty"`
	Entries []DirEntry `json:"entries"`
}

// Resumable is an earlier Claude session of a directory that can be resumed.
type Resumable struct {
	ID           string    `json:"id"`
	FirstPrompt  string    `json:"first_prompt"`
	LastPrompt   string    `json:"last_prompt,omitempty"`
	LastActivity time.Time `json:"last_activity"`
	Size         int64     `json:"size"`
	Path         string    `json:"path"`
}

// EventType names what an Event reports.
type EventType string

const (
	// EventSnapshot carries every session; it is the first event of a
	// stream and follows a "resync".
	EventSnapshot EventType = "snapshot"
	// EventSession carries one session after any change.
	EventSession EventType = "session"
	// EventRemoved says a session is gone (killed).
	EventRemoved EventType = "removed"
	// EventResync says the reader fell behind; a snapshot follows.
	EventResync EventType = "resync"
)

// Event is one entry of the event stream. Seq grows by one for every event
// the daemon publishes; a gap tells a reader it missed something.
type Event struct {
	Seq      uint64    `json:"seq"`
	Type     EventType `json:"type"`
	Time     time.Time `json:"time"`
	Session  *Session  `json:"session,omitempty"`
	Sessions []Session `json:"sessions,omitempty"`
	ID       string    `json:"id,omitempty"` // for removed
	// Prev is the status before this change (session events only).
	Prev Status `json:"prev,omitempty"`
	// Notify is set when this change should alert a person (a live
	// transition into needs-input or review, never a restore).
	Notify bool `json:"notify,omitempty"`
	// JSON is this event already encoded, set by the bus that published
	// it, so that a change fanned out to many readers is encoded once.
	// Never sent; treat it as read-only.
	JSON []byte `json:"-"`
}

// Encode returns the event's JSON: ev.JSON when the bus set it.
func (ev Event) Encode() ([]byte, error) {
	if ev.JSON != nil {
		return ev.JSON, nil
	}
	return json.Marshal(ev)
}

// VersionInfo describes the daemon.
type VersionInfo struct {
	Version string `json:"version"`
	// Commit and BuildDate are the daemon build's (internal/version).
	Commit    string    `json:"commit,omitempty"`
	BuildDate string    `json:"build_date,omitempty"`
	Tmux      string    `json:"tmux,omitempty"`
	Claude    string    `json:"claude,omitempty"`
	DataDir   string    `json:"data_dir"`
	PID       int       `json:"pid"`
	StartedAt time.Time `json:"started_at"`
}
