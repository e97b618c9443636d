// Package status is corral's status engine: a pure function from a session's
// state and one signal to the next state. Every source of truth about a
// Claude session (hooks, Claude's own session file, the transcript, the
// process tree, a person looking at the session) is turned into an Event by
// the agent and folded in here, so the rules live in one place and are tested
// as a table.
//
// Ordering: each Event carries the time its signal was produced (a hook's
// start, the session file's statusUpdatedAt, a transcript line's timestamp).
// A status-bearing signal older than the newest one already applied is stale:
// it may still carry metadata (a session id, a tool name) but never moves the
// status. That one watermark resolves the races between the fast sources
// (hooks) and the slower ones (file watcher, transcript tailer).
package status

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/corral-dev/corral/internal/api"
)

// Kind names a signal.
type Kind uint8

const (
	_ Kind = iota
	// Launched: corral started claude in a new pane.
	Launched
	// Hook signals, one per Claude Code hook event.
	HookSessionStart
	HookSessionEnd
	HookPromptSubmit
	HookPreToolUse
	HookPostToolUse // PostToolUse and PostToolUseFailure
	HookPermissionRequest
	HookNotification
	HookStop
	HookStopFailure
	HookPreCompact
	HookPostCompact
	// FileStatus: Claude's session file says busy, idle or waiting.
	FileStatus
	// Interrupt: the transcript shows "[Request interrupted by user...".
	Interrupt
	// ToolSeen and AssistantText: transcript metadata, never a status change.
	ToolSeen
	AssistantText
	// ScreenPrompt: a dialog read off the screen while Claude is starting
	// (trust this folder, use this API key) that hooks cannot report.
	ScreenPrompt
	// ClaudeStarted and ClaudeExited: the process tree.
	ClaudeStarted
	ClaudeExited
	// Viewed and Input: a person looked at the session or typed into it
	// through corral.
	Viewed
	Input
	// Restored: corral restarted and loaded this state from disk.
	Restored
	// Verified: after a restart, what the agent found out about a session
	// whose status could not be trusted.
	Verified
)

var kindNames = [...]string{
	Launched: "launched", HookSessionStart: "SessionStart", HookSessionEnd: "SessionEnd",
	HookPromptSubmit: "UserPromptSubmit", HookPreToolUse: "PreToolUse", HookPostToolUse: "PostToolUse",
	HookPermissionRequest: "PermissionRequest", HookNotification: "Notification", HookStop: "Stop",
	HookStopFailure: "StopFailure", HookPreCompact: "PreCompact", HookPostCompact: "PostCompact",
	FileStatus: "file-status", Interrupt: "interrupt", ToolSeen: "tool-seen", AssistantText: "assistant-text",
	ScreenPrompt: "screen-prompt", ClaudeStarted: "claude-started", ClaudeExited: "claude-exited",
	Viewed: "viewed", Input: "input", Restored: "restored", Verified: "verified",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Event is one signal about one session. Only the fields its Kind uses are set.
type Event struct {
	Kind Kind
	// At is when the signal was produced. Zero means "now, and not ordered"
	// (person and process signals).
	At time.Time

	// Source is SessionStart's source or SessionEnd's reason.
	Source string
	// Tool and ToolInput name the tool of PreToolUse, PermissionRequest,
	// ToolSeen.
	Tool      string
	ToolInput json.RawMessage
	// Suggestions are PermissionRequest's permission_suggestions.
	Suggestions json.RawMessage
	// NotificationType is Notification's notification_type.
	NotificationType string
	// Message is a Notification's message, the last assistant message of
	// Stop/StopFailure, AssistantText's text, or the file's waitingFor.
	Message string
	// ErrorKind is StopFailure's error.
	ErrorKind string
	// Prompt is UserPromptSubmit's prompt.
	Prompt string
	// FileStatus is the session file's status: "busy", "idle", "waiting".
	FileStatus string

	ClaudeSessionID string
	TranscriptPath  string
	Model           string

	// Options are the choices read off the screen (ScreenPrompt).
	Options []api.Option

	// Verified carries what re-verification found.
	Check Check
}

// Check is what the agent learned about a session after a restart.
type Check struct {
	// ClaudeRunning: a claude process lives in the pane.
	ClaudeRunning bool
	// FileStatus is the session file's status, "" when there is none.
	FileStatus string
	// FileWaitingFor is the session file's waitingFor.
	FileWaitingFor string
	// TurnEnded: the transcript's last turn ended (a reply or a failure
	// after the last prompt), so the person has something to review.
	TurnEnded bool
}

// State is what corral knows about one session's activity.
type State struct {
	Status       api.Status
	Waiting      *api.Waiting
	Error        string
	ErrorMessage string
	Compacting   bool
	CurrentTool  string
	BusySince    time.Time
	LastMessage  string
	LastPrompt   string

	ClaudeSessionID string
	TranscriptPath  string
	Model           string

	// Watermark is the production time of the newest status signal applied;
	// older status signals are stale.
	Watermark time.Time

	// FileIdleFrom is set while the session is idle because its session
	// file said idle in the middle of work: the watermark from before that.
	// A finished turn fires Stop and then writes idle, and under load the
	// file's change can be seen first; a Stop produced after FileIdleFrom
	// is that turn's end, not a stale signal. Zero otherwise.
	FileIdleFrom time.Time
}

// Outcome says what Apply did.
type Outcome struct {
	// Changed: the state differs from the input.
	Changed bool
	// Notify: a person should be alerted (a live move into needs-input or
	// review). Restores and re-verification never notify.
	Notify bool
}

// Apply folds one event into a state. It is pure: the same inputs give the
// same result, and now is only used for events without a time.
func Apply(s State, ev Event, now time.Time) (State, Outcome) {
	prev := s
	at := ev.At
	if at.IsZero() {
		at = now
	}
	s.absorbMetadata(ev)

	// fresh reports whether a status-bearing signal is newer than every
	// status signal applied so far, and advances the watermark if so.
	// Signals without a time (a person, a process) are applied but never
	// move the watermark: they say nothing about the order of the others.
	fresh := func() bool {
		if ev.At.IsZero() {
			return true
		}
		if ev.At.Before(s.Watermark) {
			return false
		}
		s.Watermark = ev.At
		return true
	}

	switch ev.Kind {
	case Launched:
		// A launch that resumes a conversation keeps its id.
		s = State{Status: api.StatusStarting, Watermark: s.Watermark, ClaudeSessionID: ev.ClaudeSessionID}
	case HookSessionStart:
		if !fresh() {
			break
		}
		// A compaction in the middle of a turn restarts the session but not
		// the work: keep busy.
		s.Error, s.ErrorMessage = "", ""
		if ev.Source == "compact" && (s.Status == api.StatusBusy || s.Status == api.StatusNeedsInput) {
			break
		}
		s.toIdle()
	case HookSessionEnd:
		if !fresh() {
			break
		}
		switch ev.Source {
		case "clear", "resume":
			// The process lives on with another conversation.
		default:
			s.toExited()
			s.Error, s.ErrorMessage = "", ""
		}
	case HookPromptSubmit:
		if !fresh() {
			break
		}
		s.toBusy(at)
		s.Error, s.ErrorMessage = "", ""
		s.CurrentTool = ""
		if ev.Prompt != "" {
			s.LastPrompt = ev.Prompt
		}
	case HookPreToolUse:
		if !fresh() {
			break
		}
		if ev.Tool == "AskUserQuestion" {
			s.toNeedsInput(&api.Waiting{Kind: "question", Tool: ev.Tool, Input: ev.ToolInput})
			break
		}
		s.toBusy(at)
		s.Waiting = nil
	case HookPostToolUse:
		if !fresh() {
			break
		}
		s.toBusy(at)
		s.Waiting = nil
		s.CurrentTool = ""
	case HookPermissionRequest:
		w := &api.Waiting{Kind: "permission", Tool: ev.Tool, Input: ev.ToolInput, Suggestions: ev.Suggestions}
		if !fresh() {
			// The session file often reports the dialog a moment before this
			// hook starts. The hook is then "older", but it describes the very
			// dialog on screen: keep its details.
			if s.Status == api.StatusNeedsInput && s.Waiting != nil && s.Waiting.Tool == "" {
				w.Message = s.Waiting.Message
				s.Waiting = w
			}
			break
		}
		s.toNeedsInput(w)
	case HookNotification:
		kind := notificationWaitKind(ev.NotificationType)
		if kind == "" || !fresh() {
			break
		}
		if s.Status == api.StatusNeedsInput && s.Waiting != nil {
			// The dialog is already known from a faster signal; keep its details.
			if s.Waiting.Message == "" {
				w := *s.Waiting
				w.Message = ev.Message
				s.Waiting = &w
			}
			break
		}
		s.toNeedsInput(&api.Waiting{Kind: kind, Message: ev.Message})
	case HookStop:
		if !fresh() && !s.endsFileIdle(ev.At) {
			break
		}
		s.toReview()
		if ev.Message != "" {
			s.LastMessage = snippet(ev.Message)
		}
	case HookStopFailure:
		if !fresh() && !s.endsFileIdle(ev.At) {
			break
		}
		s.toReview()
		s.Error = ev.ErrorKind
		if s.Error == "" {
			s.Error = "unknown"
		}
		s.ErrorMessage = ev.Message
	case HookPreCompact:
		if fresh() {
			s.Compacting = true
		}
	case HookPostCompact:
		if fresh() {
			s.Compacting = false
		}
	case FileStatus:
		switch ev.FileStatus {
		case "busy", "idle", "waiting":
		default:
			// Claude first writes the file without a status; "shell" and
			// anything newer say nothing corral can use.
			return s, Outcome{Changed: !equal(prev, s)}
		}
		if !fresh() {
			break
		}
		switch ev.FileStatus {
		case "busy":
			switch s.Status {
			case api.StatusIdle, api.StatusReview, api.StatusUnknown, api.StatusStarting, api.StatusNeedsInput:
				// From needs-input: the person answered the dialog and the
				// tool runs now; PostToolUse only comes when it is done.
				s.toBusy(at)
				s.Waiting = nil
			}
		case "idle":
			// Only an interruption turns work into idle; a finished turn is
			// reported by Stop as review, which idle must not erase.
			switch s.Status {
			case api.StatusBusy, api.StatusNeedsInput, api.StatusStarting:
				s.toIdle()
				s.FileIdleFrom = prev.Watermark
			}
		case "waiting":
			if s.Status != api.StatusNeedsInput {
				s.toNeedsInput(&api.Waiting{Kind: fileWaitKind(ev.Message), Message: ev.Message})
			}
		}
	case Interrupt:
		// The transcript says the turn was interrupted: no Stop will end it.
		s.FileIdleFrom = time.Time{}
		if !fresh() {
			break
		}
		if s.Status == api.StatusBusy || s.Status == api.StatusNeedsInput {
			s.toIdle()
		}
	case ToolSeen:
		// Metadata only; see absorbMetadata. The transcript can lag, so a
		// tool seen there is only shown while the session still works.
		if s.Status == api.StatusBusy && ev.Tool != "" {
			s.CurrentTool = ev.Tool
		}
	case AssistantText:
		if t := snippet(ev.Message); t != "" {
			s.LastMessage = t
		}
	case ScreenPrompt:
		switch s.Status {
		case api.StatusStarting:
			s.toNeedsInput(&api.Waiting{Kind: "question", Message: ev.Message, Options: ev.Options})
		case api.StatusNeedsInput:
			// The dialog a hook announced, as drawn: its choices as buttons.
			if len(ev.Options) > 0 {
				w := api.Waiting{Kind: "question"}
				if s.Waiting != nil {
					w = *s.Waiting
				}
				w.Options = ev.Options
				s.Waiting = &w
			}
		}
	case ClaudeStarted:
		if s.Status == api.StatusExited {
			s = State{Status: api.StatusStarting, Watermark: s.Watermark}
		}
	case ClaudeExited:
		s.toExited()
	case Viewed, Input:
		if s.Status == api.StatusReview {
			s.Status = api.StatusIdle
		}
	case Restored:
		s.Compacting = false
		if s.Status == api.StatusBusy || s.Status == api.StatusStarting {
			s.Status = api.StatusUnknown
		}
	case Verified:
		s.verify(ev.Check, at)
	}

	out := Outcome{Changed: !equal(prev, s)}
	if s.Status != prev.Status && (s.Status == api.StatusNeedsInput || s.Status == api.StatusReview) {
		out.Notify = ev.Kind != Restored && ev.Kind != Verified
	}
	return s, out
}

// absorbMetadata takes identity facts from any signal, stale or not: they do
// not depend on ordering.
func (s *State) absorbMetadata(ev Event) {
	if ev.ClaudeSessionID != "" {
		s.ClaudeSessionID = ev.ClaudeSessionID
	}
	if ev.TranscriptPath != "" {
		s.TranscriptPath = ev.TranscriptPath
	}
	if ev.Model != "" {
		s.Model = ev.Model
	}
	if ev.Kind == HookPreToolUse && ev.Tool != "" {
		s.CurrentTool = ev.Tool
	}
}

func (s *State) verify(c Check, at time.Time) {
	if !c.ClaudeRunning {
		if s.Status != api.StatusExited {
			s.toExited()
		}
		return
	}
	switch s.Status {
	case api.StatusUnknown, api.StatusNeedsInput, api.StatusExited, api.StatusStarting:
	default:
		// idle and review are the person's to change; the process lives.
		return
	}
	switch c.FileStatus {
	case "busy":
		if s.Status != api.StatusBusy {
			s.toBusy(at)
		}
	case "waiting":
		if s.Status != api.StatusNeedsInput {
			s.toNeedsInput(&api.Waiting{Kind: fileWaitKind(c.FileWaitingFor), Message: c.FileWaitingFor})
		}
	default:
		// Idle, or no session file yet: the transcript tells whether the turn
		// that was running finished while corral was away.
		if c.TurnEnded && s.Status == api.StatusUnknown {
			s.toReview()
		} else {
			s.toIdle()
		}
	}
}

// endsFileIdle reports whether a Stop produced at `at`, older than the
// watermark, is the end of the turn whose session file already said idle.
func (s *State) endsFileIdle(at time.Time) bool {
	return s.Status == api.StatusIdle && !s.FileIdleFrom.IsZero() && !at.IsZero() && !at.Before(s.FileIdleFrom)
}

func (s *State) toIdle() {
	s.FileIdleFrom = time.Time{}
	s.Status = api.StatusIdle
	s.Waiting = nil
	s.CurrentTool = ""
	s.BusySince = time.Time{}
	s.Compacting = false
}

func (s *State) toBusy(at time.Time) {
	s.FileIdleFrom = time.Time{}
	if s.Status != api.StatusBusy && s.Status != api.StatusNeedsInput && s.Status != api.StatusUnknown {
		s.BusySince = at
	} else if s.BusySince.IsZero() {
		s.BusySince = at
	}
	s.Status = api.StatusBusy
}

func (s *State) toNeedsInput(w *api.Waiting) {
	s.FileIdleFrom = time.Time{}
	s.Status = api.StatusNeedsInput
	s.Waiting = w
}

func (s *State) toReview() {
	s.FileIdleFrom = time.Time{}
	s.Status = api.StatusReview
	s.Waiting = nil
	s.CurrentTool = ""
	s.BusySince = time.Time{}
	s.Compacting = false
}

func (s *State) toExited() {
	s.FileIdleFrom = time.Time{}
	s.Status = api.StatusExited
	s.Waiting = nil
	s.CurrentTool = ""
	s.BusySince = time.Time{}
	s.Compacting = false
}

// notificationWaitKind maps a Notification's type to what the session waits
// for; "" for the types that change nothing (idle_prompt and the like).
func notificationWaitKind(t string) string {
	switch t {
	case "permission_prompt", "worker_permission_prompt":
		return "permission"
	case "elicitation_dialog", "elicitation_url_dialog":
		return "elicitation"
	}
	return ""
}

// fileWaitKind maps the session file's waitingFor text ("permission prompt").
func fileWaitKind(waitingFor string) string {
	w := strings.ToLower(waitingFor)
	switch {
	case strings.Contains(w, "permission"):
		return "permission"
	case strings.Contains(w, "elicitation"), strings.Contains(w, "input"):
		return "elicitation"
	}
	return "question"
}

// snippet keeps the start of a message short enough for a sidebar row.
func snippet(s string) string {
	s = strings.TrimSpace(s)
	const max = 280
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

func equal(a, b State) bool {
	if a.Status != b.Status || a.Error != b.Error || a.ErrorMessage != b.ErrorMessage ||
		a.Compacting != b.Compacting || a.CurrentTool != b.CurrentTool || !a.BusySince.Equal(b.BusySince) ||
		a.LastMessage != b.LastMessage || a.LastPrompt != b.LastPrompt || a.ClaudeSessionID != b.ClaudeSessionID ||
		a.TranscriptPath != b.TranscriptPath || a.Model != b.Model {
		return false
	}
	if (a.Waiting == nil) != (b.Waiting == nil) {
		return false
	}
	if a.Waiting != nil {
		wa, wb := a.Waiting, b.Waiting
		if wa.Kind != wb.Kind || wa.Tool != wb.Tool || wa.Message != wb.Message ||
			string(wa.Input) != string(wb.Input) || len(wa.Options) != len(wb.Options) {
			return false
		}
		for i := range wa.Options {
			if wa.Options[i].Label != wb.Options[i].Label || strings.Join(wa.Options[i].Keys, " ") != strings.Join(wb.Options[i].Keys, " ") {
				return false
			}
		}
	}
	return true
}
