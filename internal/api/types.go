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

// Dialog kinds: what a needs-input session waits for (Waiting.Kind). The set
// is part of the scripting contract; docs/status.md says which signals show
// each.
const (
	DialogPermission  = "permission"  // allow a tool call (Tool, Input)
	DialogQuestion    = "question"    // AskUserQuestion: Questions, the one on screen now
	DialogPlan        = "plan"        // ExitPlanMode: Plan and how to go on
	DialogTrust       = "trust"       // trust the files in this folder (at start)
	DialogAPIKey      = "api_key"     // use this API key (at start)
	DialogElicitation = "elicitation" // an MCP server asks for input (Fields, or options)
	// Other dialogs at start: the --dangerously-skip-permissions warning, a
	// project's .mcp.json server to approve, errors in Claude's settings.
	DialogBypass        = "bypass_permissions"
	DialogMCPServer     = "mcp_server"
	DialogSettingsError = "settings_error"
	// DialogChoice is any other menu Claude shows: corral sees a choice on
	// the screen but not which one. It is answered by its options like any
	// other.
	DialogChoice = "choice"
)

// Waiting describes what a needs-input session waits for: the dialog on
// Claude's screen.
type Waiting struct {
	// DialogID names this dialog; an answer must carry it, so that an answer
	// meant for one dialog never lands in the next. It is set once the
	// dialog has been read off the screen.
	DialogID string `json:"dialog_id,omitempty"`
	// Kind is one of the Dialog* kinds.
	Kind    string          `json:"kind" ts:"DialogKind"`
	Tool    string          `json:"tool,omitempty"`
	Input   json.RawMessage `json:"input,omitempty"`
	Message string          `json:"message,omitempty"`
	// Suggestions are Claude's permission_suggestions, verbatim.
	Suggestions json.RawMessage `json:"suggestions,omitempty"`
	// Title, Question and Body are the dialog's text as drawn.
	Title    string `json:"title,omitempty"`
	Question string `json:"question,omitempty"`
	Body     string `json:"body,omitempty"`
	// Options are the choices on the screen, when they could be read.
	Options []Option `json:"options,omitempty"`
	// MultiSelect: several options may be chosen (Answer.Options).
	MultiSelect bool `json:"multi_select,omitempty"`
	// Questions are AskUserQuestion's questions, from the tool call; Current
	// is the index of the one on the screen now, -1 on the final "Submit
	// answers" step.
	Questions []Question `json:"questions,omitempty"`
	Current   int        `json:"current,omitempty"`
	// Plan is ExitPlanMode's plan (markdown).
	Plan string `json:"plan,omitempty"`
	// Fields are an MCP elicitation form's fields.
	Fields []Field `json:"fields,omitempty"`
	// Summary says what the dialog asks in a few words (Describe).
	Summary string `json:"summary,omitempty"`
}

// Option is one numbered choice of a dialog on the screen.
type Option struct {
	// Number is the option's number as drawn (1-based): what an answer names.
	Number      int    `json:"number"`
	Label       string `json:"label"`
	Description string `json:"description,omitempty"`
	// Text: choosing this option takes text from the person ("Type
	// something", "No, and tell Claude what to do differently").
	Text bool `json:"text,omitempty"`
	// Checked is a multi-select option's state; nil elsewhere.
	Checked *bool `json:"checked,omitempty"`
	// Chat is AskUserQuestion's "Chat about this": it declines the
	// questions so that the person can talk to Claude instead.
	Chat bool `json:"chat,omitempty"`
}

// Field is one field of an MCP elicitation form.
type Field struct {
	Name string `json:"name"`
	// Kind is "text", "boolean" or "choice".
	Kind        string   `json:"kind" ts:"'text' | 'boolean' | 'choice'"`
	Value       string   `json:"value,omitempty"`
	Missing     bool     `json:"missing,omitempty"`
	Description string   `json:"description,omitempty"`
	Choices     []string `json:"choices,omitempty"`
}

// Question is one question of an AskUserQuestion call.
type Question struct {
	Header      string           `json:"header,omitempty"`
	Question    string           `json:"question"`
	MultiSelect bool             `json:"multi_select,omitempty"`
	Options     []QuestionOption `json:"options"`
}

// QuestionOption is one offered answer of a Question.
type QuestionOption struct {
	Label       string `json:"label"`
	Description string `json:"description,omitempty"`
}

// Subagent is a subagent (the Agent tool) that a session runs now.
type Subagent struct {
	Description string `json:"description,omitempty"`
	Type        string `json:"type,omitempty"`
	// Background: started with run_in_background; the session stays busy
	// until it and Claude's follow-up turn end.
	Background bool `json:"background,omitempty"`
}

// BackgroundTask is background work a session's Claude runs after its turn
// (Stop's background_tasks): a subagent or a shell command.
type BackgroundTask struct {
	Type        string `json:"type"` // "subagent", "shell"
	Description string `json:"description,omitempty"`
	Command     string `json:"command,omitempty"`
}

// Todos is a session's task list progress (TaskCreate/TaskUpdate, or
// TodoWrite).
type Todos struct {
	Done  int `json:"done"`
	Total int `json:"total"`
	// Current is the item in progress, if any.
	Current string `json:"current,omitempty"`
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
	// CostToday is what the transcript's API responses written on
	// CostDay (the agent's local date, YYYY-MM-DD) cost at Anthropic's
	// list prices (internal/claude/pricing), and TodayUnpriced how many
	// of them it leaves out for want of a price (an unknown model).
	// The subagents' transcripts count too, each response on its own
	// day; so do the token counts above.
	CostToday     float64 `json:"cost_today_usd,omitempty"`
	CostDay       string  `json:"cost_day,omitempty"`
	TodayUnpriced int     `json:"today_unpriced,omitempty"`
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
	// Subagents are the subagents running now; Todos the task list's
	// progress; Background the background work still running after the
	// last turn (background agents keep the session busy; shells do not).
	Subagents      []Subagent       `json:"subagents,omitempty"`
	Todos          *Todos           `json:"todos,omitempty"`
	Background     []BackgroundTask `json:"background,omitempty"`
	ClaudePID      int              `json:"claude_pid,omitempty"`
	TranscriptPath string           `json:"transcript_path,omitempty"`
	Args           []string         `json:"args,omitempty"`
	CreatedAt      time.Time        `json:"created_at"`
	UpdatedAt      time.Time        `json:"updated_at"`
	// Offline: the session's device is not connected to the hub; this is
	// its last known state.
	Offline bool `json:"offline,omitempty"`
	// Git is the session's repository at a glance (api/git.go), absent
	// outside one; Worktree the worktree corral made for it, if it did.
	Git      *GitSummary      `json:"git,omitempty"`
	Worktree *SessionWorktree `json:"worktree,omitempty"`
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
	// Worktree starts the session in a new git worktree of Dir's
	// repository, on a new branch (docs/git.md).
	Worktree *NewWorktree `json:"worktree,omitempty"`
}

// RenameRequest renames a session.
type RenameRequest struct {
	SessionRef
	Name string `json:"name"`
}

// InputRequest types text into Claude's input box, then presses Enter if
// asked. It is refused while a dialog is open (dialog_open), when Claude's
// input box holds a draft typed elsewhere (draft_present; ClearDraft clears
// it first), and when corral cannot see the input box (screen_unclear).
type InputRequest struct {
	SessionRef
	Text  string `json:"text"`
	Enter bool   `json:"enter"`
	// ClearDraft: the person chose to replace a draft left in the input box.
	ClearDraft bool `json:"clear_draft,omitempty"`
}

// AnswerRequest answers the dialog a session shows. Dialog is the dialog's
// id (Waiting.DialogID); an answer to a dialog that is no longer on the
// screen is refused (stale_dialog). Give one of Option (its number), Options
// (several, for a multi-select), Choice ("yes", "no", "always": the option
// that says so) or Text alone (the dialog's text option, e.g. "Type
// something"); Text with Option types into that option.
//
// An elicitation form is answered with Option 1 (Accept) and Fields (values
// by field name; "true"/"false" for a boolean, a choice's label), or Option 2
// (Decline); Cancel presses Escape where the dialog offers "Esc to cancel".
type AnswerRequest struct {
	SessionRef
	Dialog  string            `json:"dialog"`
	Option  int               `json:"option,omitempty"`
	Options []int             `json:"options,omitempty"`
	Choice  string            `json:"choice,omitempty" ts:"'yes' | 'no' | 'always'"`
	Text    string            `json:"text,omitempty"`
	Fields  map[string]string `json:"fields,omitempty"`
	Cancel  bool              `json:"cancel,omitempty"`
}

// AnswerResult says what an answer did.
type AnswerResult struct {
	// Answered is the option chosen, as drawn ("1. Yes").
	Answered string `json:"answered"`
}

// RestartRequest starts Claude again in an exited session's pane: a new
// conversation, or with Resume the session's last one.
type RestartRequest struct {
	SessionRef
	Resume bool `json:"resume,omitempty"`
}

// KeysRequest presses tmux-named keys (Enter, Escape, Up, C-c, 1 ...).
type KeysRequest struct {
	SessionRef
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
	SessionRef
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
	SessionRef
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
	// ClaudeMissing: the machine's agent found no claude to start when it
	// connected (the dashboard shows how to install it).
	ClaudeMissing bool `json:"claude_missing,omitempty"`
	// Key is the fingerprint of the key the machine proves on every
	// connection (SHA256:…); empty until it enrols.
	Key string `json:"key,omitempty"`
	// Conflict is set while another machine tries to connect with this
	// one's identity (its key) as this one is connected, or the other way
	// round: someone copied its key.
	Conflict *DeviceConflict `json:"conflict,omitempty"`
}

// DeviceConflict describes the latest connection the hub refused because
// the device was already connected and healthy.
type DeviceConflict struct {
	// At is when the latest one was refused; Count how many were since
	// the first.
	At    time.Time `json:"at"`
	Count int       `json:"count"`
	// Address and Hostname are what the refused connection came from and
	// claimed (the hostname is the other machine's word).
	Address  string `json:"address,omitempty"`
	Hostname string `json:"hostname,omitempty"`
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
	// RunningIn is the corral session running this conversation now, if
	// any (resuming it is refused: conversation_running); Running says a
	// live Claude runs it, in corral or not.
	RunningIn   string `json:"running_in,omitempty"`
	RunningName string `json:"running_name,omitempty"`
	Running     bool   `json:"running,omitempty"`
}

// EventType names what an Event reports.
type EventType string

const (
	// EventSnapshot carries every session, and on a hub every machine of
	// the user; it is the first event of a stream and follows a "resync".
	EventSnapshot EventType = "snapshot"
	// EventSession carries one session after any change.
	EventSession EventType = "session"
	// EventRemoved says a session is gone (killed).
	EventRemoved EventType = "removed"
	// EventResync says the reader fell behind; a snapshot follows.
	EventResync EventType = "resync"
	// EventDevice carries one of the user's machines after any change
	// (connected, offline, another machine using its identity).
	EventDevice EventType = "device"
	// EventDeviceRemoved says a machine is gone (revoked); ID is its id.
	EventDeviceRemoved EventType = "device_removed"
	// EventNotification carries a notification as it was logged and sent
	// (Web Push, the webhook): what a page shows too, in the same words.
	EventNotification EventType = "notification"
)

// Notification is what alerted a person about a session: its reason (the
// status, needs-input or review) and its words.
type Notification struct {
	// ID is the notification log's id (0 when the log failed).
	ID          int64     `json:"id,omitempty"`
	Time        time.Time `json:"time"`
	Device      string    `json:"device,omitempty"`
	SessionID   string    `json:"session_id"`
	SessionName string    `json:"session_name"`
	Reason      string    `json:"reason" ts:"Status"`
	// Title names the session and what happened ("laptop/work needs
	// you"); Message says more ("Allow Bash: make test?").
	Title   string `json:"title"`
	Message string `json:"message,omitempty"`
	// Updated: not a new notification but more words for the logged one
	// of ID (a dialog's details came after it was logged); a reader
	// replaces that entry's message and does not alert again.
	Updated bool `json:"updated,omitempty"`
	// DialogID and Actions, on a needs-input notification whose dialog can
	// be answered from a button: the dialog an answer must name, and the
	// answers offered, the same as the push's. A page that shows its own
	// notification shows these; it decides none of its own.
	DialogID string               `json:"dialog_id,omitempty"`
	Actions  []NotificationAction `json:"actions,omitempty"`
}

// NotificationAction is a notification's button. Action is what a press
// answers with: "yes" or "no" (AnswerRequest.Choice), "option:N"
// (AnswerRequest.Option).
type NotificationAction struct {
	Action string `json:"action"`
	Title  string `json:"title"`
}

// Event is one entry of the event stream. Seq grows by one for every event
// the daemon publishes; a gap tells a reader it missed something.
type Event struct {
	Seq      uint64    `json:"seq"`
	Type     EventType `json:"type"`
	Time     time.Time `json:"time"`
	Session  *Session  `json:"session,omitempty"`
	Sessions []Session `json:"sessions,omitempty"`
	ID       string    `json:"id,omitempty"` // for removed and device_removed
	// Device is the machine of a device event; Devices are the user's
	// machines in a snapshot (a hub's).
	Device       *Device       `json:"device,omitempty"`
	Devices      []Device      `json:"devices,omitempty"`
	Notification *Notification `json:"notification,omitempty"`
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
	// Problems are what the daemon cannot do right now and keeps trying,
	// such as saving to its database; `corral doctor` shows them.
	Problems []string `json:"problems,omitempty"`
}

// Describe says in a few words what a dialog asks, the same everywhere it
// is shown (the sidebar, notifications, `corral ls`): "Allow Bash: rm -rf
// build?" is not "Claude asks: Which database?".
func (w *Waiting) Describe() string {
	if w == nil {
		return ""
	}
	subject := func() string {
		var in struct {
			Command  string `json:"command"`
			FilePath string `json:"file_path"`
			URL      string `json:"url"`
			Pattern  string `json:"pattern"`
		}
		if json.Unmarshal(w.Input, &in) == nil {
			for _, v := range []string{in.Command, in.FilePath, in.URL, in.Pattern} {
				if v != "" {
					return v
				}
			}
		}
		return ""
	}
	switch w.Kind {
	case DialogPermission:
		tool := w.Tool
		if tool == "" {
			tool = "a tool"
		}
		if sub := subject(); sub != "" {
			return "Allow " + tool + ": " + sub + "?"
		}
		return "Allow " + tool + "?"
	case DialogQuestion:
		q := w.Question
		if len(w.Questions) > 0 && w.Current >= 0 && w.Current < len(w.Questions) {
			q = w.Questions[w.Current].Question
		}
		if w.Current < 0 && len(w.Questions) > 1 {
			return "Claude asks: submit your answers?"
		}
		if q == "" {
			return "Claude asks a question"
		}
		return "Claude asks: " + q
	case DialogPlan:
		return "Claude's plan is ready: approve it?"
	case DialogTrust:
		return "Trust the files in this folder?"
	case DialogAPIKey:
		return "Use this API key?"
	case DialogBypass:
		return "Start in bypass-permissions mode?"
	case DialogMCPServer:
		return "Use the MCP server this project names?"
	case DialogSettingsError:
		return "Claude's settings have errors: go on?"
	case DialogElicitation:
		if w.Message != "" {
			return "An MCP server asks: " + w.Message
		}
		return "An MCP server asks for input"
	}
	for _, t := range []string{w.Question, w.Title, w.Message} {
		if t != "" {
			return t
		}
	}
	return "A choice is open on the screen"
}
