// Package status is corral's status engine: a pure function from a session's
// state and one signal to the next state. Every source of truth about a
// Claude session (hooks, Claude's own session file, the transcript, the
// process tree, the screen, a person acting on the session) is turned into
// a Signal by the agent and folded in here, so the rules live in one place
// and are tested as a table.
//
// Ordering: each Signal carries the time its signal was produced (a hook's
// start, the session file's statusUpdatedAt, a transcript line's timestamp).
// A status-bearing signal older than the newest one already applied is stale:
// it may still carry metadata (a session id, a tool name) but never moves the
// status. That one watermark resolves the races between the fast sources
// (hooks) and the slower ones (file watcher, transcript tailer).
//
// Dialogs: what the screen shows wins. Once a screen read has shown a dialog
// (State.OnScreen), a signal that would end the needs-input it stands for is
// held back (State.Deferred) and the agent is asked to read the screen again
// (Outcome.Recheck). Only a screen read that no longer shows the dialog
// (ScreenClear) lets the held signal through. So an idle or busy signal, a
// safety re-check or a subagent's tool call never hides a dialog that still
// waits for a person.
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
	HookSubagentStart
	HookSubagentStop
	HookElicitation
	HookElicitationResult
	HookTaskCreated
	HookTaskCompleted
	// FileStatus: Claude's session file says busy, idle or waiting.
	FileStatus
	// Interrupt: the transcript shows "[Request interrupted by user...".
	Interrupt
	// ToolSeen and AssistantText: transcript metadata, never a status change.
	ToolSeen
	AssistantText
	// TurnEnded: the transcript shows the main conversation's turn ended (an
	// assistant message that ends the turn). It stands in for Stop for a
	// claude that delivers no hooks (started by hand in the pane), as
	// PromptSeen (the transcript's prompt line) stands in for
	// UserPromptSubmit.
	TurnEnded
	PromptSeen
	// ScreenDialog: a screen read shows a dialog (Signal.Dialog). ScreenClear:
	// a screen read shows none (Signal.Screen says what it shows instead).
	ScreenDialog
	ScreenClear
	// ClaudeStarted and ClaudeExited: the process tree.
	ClaudeStarted
	ClaudeExited
	// Viewed and Input: a person looked at the session or typed into it
	// through corral.
	Viewed
	Input
	// Restored: corral restarted and loaded this state from disk.
	Restored
	// Verified: what the agent found out about a session whose status could
	// not be trusted (after a restart, or a needs-input nothing confirmed).
	Verified
	// Tick: the time the engine asked for (Outcome.Wake) has come.
	Tick

	kindCount
)

var kindNames = [...]string{
	Launched: "launched", HookSessionStart: "SessionStart", HookSessionEnd: "SessionEnd",
	HookPromptSubmit: "UserPromptSubmit", HookPreToolUse: "PreToolUse", HookPostToolUse: "PostToolUse",
	HookPermissionRequest: "PermissionRequest", HookNotification: "Notification", HookStop: "Stop",
	HookStopFailure: "StopFailure", HookPreCompact: "PreCompact", HookPostCompact: "PostCompact",
	HookSubagentStart: "SubagentStart", HookSubagentStop: "SubagentStop",
	HookElicitation: "Elicitation", HookElicitationResult: "ElicitationResult",
	HookTaskCreated: "TaskCreated", HookTaskCompleted: "TaskCompleted",
	FileStatus: "file-status", Interrupt: "interrupt", ToolSeen: "tool-seen", AssistantText: "assistant-text",
	TurnEnded: "turn-ended", PromptSeen: "prompt-seen", ScreenDialog: "screen-dialog", ScreenClear: "screen-clear",
	ClaudeStarted: "claude-started", ClaudeExited: "claude-exited",
	Viewed: "viewed", Input: "input", Restored: "restored", Verified: "verified", Tick: "tick",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Signal is one fact about one session, from one source (a hook, a session
// file, the transcript, a process, the screen, a person). Only the fields
// its Kind uses are set.
type Signal struct {
	Kind Kind
	// At is when the signal was produced. Zero means "now, and not ordered"
	// (person, process and screen signals).
	At time.Time

	// Source is SessionStart's source or SessionEnd's reason.
	Source string
	// Tool and ToolInput name the tool of PreToolUse, PostToolUse,
	// PermissionRequest, ToolSeen; ToolUseID is the call's id.
	Tool      string
	ToolInput json.RawMessage
	ToolUseID string
	// AgentID is set on every hook fired inside a subagent; AgentType on
	// SubagentStart/SubagentStop.
	AgentID   string
	AgentType string
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
	// Background is Stop's background_tasks that still run; nil when the
	// hook did not say.
	Background []api.BackgroundTask
	// TaskID and TaskSubject are TaskCreated's and TaskCompleted's.
	TaskID, TaskSubject string
	// FileStatus is the session file's status: "busy", "idle", "waiting".
	FileStatus string

	ClaudeSessionID string
	TranscriptPath  string
	Model           string

	// Dialog is what a ScreenDialog read (its DialogID is the id to give it
	// if it is a new dialog), and Fingerprint identifies it.
	Dialog      *api.Waiting
	Fingerprint string
	// Screen is what a ScreenClear read shows instead of a dialog.
	Screen ScreenState

	// Check carries what re-verification found.
	Check Check
}

// ScreenState is what a screen without a dialog shows.
type ScreenState struct {
	// InputBox: Claude's prompt box is drawn and focused.
	InputBox bool
	// Busy: Claude shows that it works ("esc to interrupt").
	Busy bool
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

// Subagent is one Agent tool call the session runs.
type Subagent struct {
	ToolUseID   string
	AgentID     string
	Type        string
	Description string
	Background  bool
	// Returned: the Agent call's own result came back (at once for a
	// background agent, which goes on until SubagentStop).
	Returned bool
}

// Task is one item of the session's task list.
type Task struct {
	ID, Subject, Status string
}

// maxTasks bounds the task list a session remembers.
const maxTasks = 200

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

	// OnScreen is the fingerprint of the dialog the last screen read showed,
	// while the session waits on it; "" when no screen read confirmed one.
	OnScreen string
	// Deferred are the signals held back, in arrival order, because they
	// would have ended a dialog that is still on the screen (at most
	// maxDeferred: the newest are kept).
	Deferred []Signal

	// Hooked: this claude delivers hooks. A claude typed by hand in the pane
	// delivers none, and its turns end by the transcript instead.
	Hooked bool

	// Subagents are the Agent calls running now.
	Subagents []Subagent
	// MainStopped: the main turn stopped while background agents ran.
	// FollowUpFrom: the last of them has ended, at that time; Claude starts
	// a turn of its own about it in a moment, and the session is busy until
	// that turn ends (or followUpWait passes without one).
	MainStopped  bool
	FollowUpFrom time.Time
	// Todos is the task list's progress; Tasks the list (TaskCreate and
	// TaskUpdate: TodoWrite is off in 2.1.197).
	Todos *api.Todos
	Tasks []Task
	// Background is the background work Stop said still runs.
	Background []api.BackgroundTask
}

// Outcome says what Apply did.
type Outcome struct {
	// Changed: the state differs from the input.
	Changed bool
	// Notify: a person should be alerted (a live move into needs-input or
	// review). Restores and re-verification never notify.
	Notify bool
	// Recheck: a signal was held back because a dialog is on the screen; the
	// agent should read the screen again.
	Recheck bool
	// Wake: the agent should send a Tick after this long.
	Wake time.Duration
}

// followUpWait bounds how long a session whose background agents ended
// waits for the turn Claude starts about them.
const followUpWait = 15 * time.Second

// Apply folds one event into a state. It is pure: the same inputs give the
// same result, and now is only used for events without a time.
func Apply(s State, ev Signal, now time.Time) (State, Outcome) {
	prev := s
	ns := s.absorbMetadata(ev)
	var out Outcome
	if held(prev, ev) {
		// What the signal would do, were the dialog gone.
		if next := step(ns, ev, now); next.Status != api.StatusNeedsInput {
			ns.defer1(ev)
			out.Recheck = true
		} else {
			ns = next
		}
	} else {
		ns = step(ns, ev, now)
	}
	if !ns.FollowUpFrom.IsZero() && prev.FollowUpFrom.IsZero() {
		out.Wake = followUpWait
	}
	out.Changed = !equal(prev, ns)
	if ns.Status != prev.Status && (ns.Status == api.StatusNeedsInput || ns.Status == api.StatusReview) {
		out.Notify = ev.Kind != Restored && ev.Kind != Verified && !personsMenu(prev, ns)
	}
	return ns, out
}

// held reports whether ev must not end the dialog on the screen: the
// session waits on a dialog a screen read confirmed, and ev is not a fact
// about the process (which ends any dialog) or the screen itself.
func held(s State, ev Signal) bool {
	if s.Status != api.StatusNeedsInput || s.OnScreen == "" {
		return false
	}
	switch ev.Kind {
	case ScreenDialog, ScreenClear, Launched, ClaudeExited, ClaudeStarted, Restored:
		return false
	case HookSessionEnd:
		return ev.Source == "clear" || ev.Source == "resume"
	}
	return true
}

// personsMenu: a menu that appeared while Claude was idle was opened by the
// person at the terminal (/model, /config); it blocks typed text like any
// dialog but is no reason to call them.
func personsMenu(prev, s State) bool {
	return s.Status == api.StatusNeedsInput && s.Waiting != nil && s.Waiting.Kind == api.DialogChoice &&
		(prev.Status == api.StatusIdle || prev.Status == api.StatusReview)
}

// maxDeferred bounds the signals held back while a dialog is on screen.
const maxDeferred = 32

// defer1 holds ev back until the screen says the dialog is gone. All held
// signals are applied then, in the order they came: a Stop held behind the
// file's idle must not be lost.
func (s *State) defer1(ev Signal) {
	d := append(s.Deferred[:len(s.Deferred):len(s.Deferred)], ev)
	if len(d) > maxDeferred {
		d = d[len(d)-maxDeferred:]
	}
	s.Deferred = d
}

// step applies ev's rule to s.
func step(s State, ev Signal, now time.Time) State {
	at := ev.At
	if at.IsZero() {
		at = now
	}
	fresh := freshness(&s, ev)
	switch ev.Kind {
	case Launched:
		// A launch that resumes a conversation keeps its id.
		s = State{Status: api.StatusStarting, Watermark: s.Watermark, ClaudeSessionID: ev.ClaudeSessionID, Hooked: true}
	case HookSessionStart:
		onSessionStart(&s, ev, fresh)
	case HookSessionEnd:
		onSessionEnd(&s, ev, fresh)
	case HookPromptSubmit:
		onPromptSubmit(&s, ev, at, fresh)
	case HookPreToolUse:
		onPreToolUse(&s, ev, at, fresh)
	case HookPostToolUse:
		onPostToolUse(&s, ev, at, fresh)
	case HookPermissionRequest:
		onPermissionRequest(&s, ev, fresh)
	case HookNotification:
		onNotification(&s, ev, fresh)
	case HookStop, HookStopFailure:
		onStop(&s, ev, at, fresh)
	case HookPreCompact, HookPostCompact:
		if fresh() {
			s.Compacting = ev.Kind == HookPreCompact
		}
	case HookElicitation:
		onElicitation(&s, ev, fresh)
	case HookElicitationResult:
		if fresh() && s.Status == api.StatusNeedsInput {
			s.toBusy(at)
		}
	case HookTaskCreated, HookTaskCompleted:
		// Metadata (absorbMetadata); no status change.
	case HookSubagentStart:
		onSubagentStart(&s, ev)
	case HookSubagentStop:
		onSubagentStop(&s, ev, at)
	case FileStatus:
		onFileStatus(&s, ev, at, fresh)
	case Interrupt:
		onInterrupt(&s, fresh)
	case ToolSeen:
		onToolSeen(&s, ev)
	case AssistantText:
		if t := snippet(ev.Message); t != "" {
			s.LastMessage = t
		}
	case TurnEnded:
		onTurnEnded(&s, ev, at, fresh)
	case PromptSeen:
		if !s.Hooked {
			onPromptSubmit(&s, ev, at, fresh)
		}
	case ScreenDialog:
		onScreenDialog(&s, ev)
	case ScreenClear:
		onScreenClear(&s, ev, now)
	case ClaudeStarted:
		onClaudeStarted(&s)
	case ClaudeExited:
		s.toExited()
	case Viewed, Input:
		// At, when set, is when the person began to act. A review whose
		// signal was produced after that stands: a quick turn that their own
		// answer or prompt started can end before the act is recorded, and
		// what it did is new to them.
		if s.Status == api.StatusReview && (ev.At.IsZero() || !ev.At.Before(s.Watermark)) {
			s.Status = api.StatusIdle
		}
	case Restored:
		onRestored(&s)
	case Verified:
		s.verify(ev.Check, at)
	case Tick:
		onTick(&s, at)
	}
	return s
}

// onToolSeen: the transcript can lag, so a tool seen there is only shown
// while the session still works.
func onToolSeen(s *State, ev Signal) {
	if s.Status == api.StatusBusy && ev.Tool != "" {
		s.CurrentTool = ev.Tool
	}
}

// onTurnEnded: the transcript says a turn ended. A claude with hooks says
// it with Stop, first, and knows of its background agents.
func onTurnEnded(s *State, ev Signal, at time.Time, fresh func() bool) {
	if !s.Hooked {
		onStop(s, Signal{Kind: HookStop, At: ev.At, Message: ev.Message}, at, fresh)
	}
}

// onClaudeStarted: a claude that corral did not launch, typed by hand in
// the pane: it has none of corral's hooks until one arrives.
func onClaudeStarted(s *State) {
	if s.Status == api.StatusExited {
		*s = State{Status: api.StatusStarting, Watermark: s.Watermark}
	}
}

// freshness returns the func that reports whether a timed signal is newer
// than every status signal applied to s so far, advancing the watermark.
// Signals without a time (a person, a process, the screen) are applied but
// never move it: they say nothing about the order of the others.
func freshness(s *State, ev Signal) func() bool {
	return func() bool {
		if ev.At.IsZero() {
			return true
		}
		if ev.At.Before(s.Watermark) {
			return false
		}
		s.Watermark = ev.At
		return true
	}
}

func onElicitation(s *State, ev Signal, fresh func() bool) {
	if !fresh() {
		return
	}
	w := &api.Waiting{Kind: api.DialogElicitation, Message: ev.Message, Tool: ev.Tool}
	if s.Status == api.StatusNeedsInput && s.Waiting != nil && s.Waiting.Kind == api.DialogElicitation {
		cur := *s.Waiting
		cur.Message, cur.Tool = ev.Message, ev.Tool
		w = &cur
	}
	s.toNeedsInput(w)
}

// onInterrupt: the transcript says the turn was interrupted, so no Stop
// will end it.
func onInterrupt(s *State, fresh func() bool) {
	s.FileIdleFrom = time.Time{}
	if fresh() && (s.Status == api.StatusBusy || s.Status == api.StatusNeedsInput) {
		s.toIdle()
	}
}

// onRestored: after a restart, what was busy is re-verified, and the
// screen is read again before a dialog is trusted.
func onRestored(s *State) {
	s.Compacting = false
	s.OnScreen, s.Deferred = "", nil
	if s.Status == api.StatusBusy || s.Status == api.StatusStarting {
		s.Status = api.StatusUnknown
	}
}

// onTick: the background work ended and Claude started no turn about it,
// so its results are there to review.
func onTick(s *State, at time.Time) {
	if !s.FollowUpFrom.IsZero() && !at.Before(s.FollowUpFrom.Add(followUpWait)) {
		s.FollowUpFrom = time.Time{}
		if s.Status == api.StatusBusy {
			s.toReview()
		}
	}
}

func onSessionStart(s *State, ev Signal, fresh func() bool) {
	if !fresh() {
		return
	}
	s.Error, s.ErrorMessage = "", ""
	// A compaction in the middle of a turn restarts the session but not
	// the work: keep busy.
	if ev.Source == "compact" && (s.Status == api.StatusBusy || s.Status == api.StatusNeedsInput) {
		return
	}
	s.toIdle()
	if ev.Source != "compact" {
		s.Subagents, s.Todos, s.Tasks, s.Background = nil, nil, nil, nil
	}
}

func onSessionEnd(s *State, ev Signal, fresh func() bool) {
	if !fresh() {
		return
	}
	switch ev.Source {
	case "clear", "resume":
		// The process lives on with another conversation.
	default:
		s.toExited()
		s.Error, s.ErrorMessage = "", ""
	}
}

func onPromptSubmit(s *State, ev Signal, at time.Time, fresh func() bool) {
	if !fresh() {
		return
	}
	s.toBusy(at)
	s.Error, s.ErrorMessage = "", ""
	s.CurrentTool = ""
	s.FollowUpFrom = time.Time{}
	s.MainStopped = false
	if ev.Prompt != "" {
		s.LastPrompt = ev.Prompt
	}
}

// dialogTool is the dialog kind a tool call opens by itself, if any.
func dialogTool(tool string) string {
	switch tool {
	case "AskUserQuestion":
		return api.DialogQuestion
	case "ExitPlanMode":
		return api.DialogPlan
	}
	return ""
}

func onPreToolUse(s *State, ev Signal, at time.Time, fresh func() bool) {
	if !fresh() {
		return
	}
	if ev.AgentID == "" {
		if k := dialogTool(ev.Tool); k != "" {
			if k == api.DialogQuestion {
				// AskUserQuestion asks at once, without a permission step.
				s.toNeedsInput(toolWaiting(s.Waiting, k, ev))
				return
			}
		}
	}
	if s.Status == api.StatusNeedsInput && ev.AgentID != "" {
		// A subagent works on while another asks: the dialog stays.
		return
	}
	s.toBusy(at)
}

func onPostToolUse(s *State, ev Signal, at time.Time, fresh func() bool) {
	if !fresh() {
		return
	}
	if s.Status == api.StatusNeedsInput && ev.AgentID != "" {
		return
	}
	s.toBusy(at)
	s.CurrentTool = ""
}

// toolWaiting describes the dialog a tool call opens, keeping what a screen
// read already found out about the same dialog.
func toolWaiting(cur *api.Waiting, kind string, ev Signal) *api.Waiting {
	w := &api.Waiting{Kind: kind, Tool: ev.Tool, Input: ev.ToolInput, Suggestions: ev.Suggestions}
	if cur != nil && cur.DialogID != "" && (cur.Kind == kind || cur.Kind == api.DialogChoice) {
		screen := *cur
		screen.Kind, screen.Tool, screen.Input, screen.Suggestions = kind, ev.Tool, ev.ToolInput, ev.Suggestions
		if screen.Message == "" {
			screen.Message = ev.Message
		}
		w = &screen
	}
	if kind == api.DialogQuestion {
		w.Questions = questions(ev.ToolInput)
	}
	if kind == api.DialogPlan && w.Plan == "" {
		var in struct {
			Plan string `json:"plan"`
		}
		if json.Unmarshal(ev.ToolInput, &in) == nil {
			w.Plan = in.Plan
		}
	}
	return w
}

func onPermissionRequest(s *State, ev Signal, fresh func() bool) {
	kind := dialogTool(ev.Tool)
	if kind == "" {
		kind = api.DialogPermission
	}
	if !fresh() {
		// The session file often reports the dialog a moment before this
		// hook starts. The hook is then "older", but it describes the very
		// dialog on screen: keep its details.
		if s.Status == api.StatusNeedsInput && s.Waiting != nil && s.Waiting.Tool == "" {
			msg := s.Waiting.Message
			s.Waiting = toolWaiting(s.Waiting, kind, ev)
			s.Waiting.Message = msg
		}
		return
	}
	if s.Status == api.StatusNeedsInput && s.Waiting != nil && s.Waiting.Kind == api.DialogQuestion && kind == api.DialogQuestion {
		// Claude fires PermissionRequest for AskUserQuestion as well: it is
		// the same question, not a permission.
		return
	}
	s.toNeedsInput(toolWaiting(s.Waiting, kind, ev))
}

func onNotification(s *State, ev Signal, fresh func() bool) {
	kind := notificationWaitKind(ev.NotificationType)
	if kind == "" || !fresh() {
		return
	}
	if s.Status == api.StatusNeedsInput && s.Waiting != nil {
		// The dialog is already known from a faster signal; keep its details.
		if s.Waiting.Message == "" {
			w := *s.Waiting
			w.Message = ev.Message
			s.Waiting = &w
		}
		return
	}
	s.toNeedsInput(&api.Waiting{Kind: kind, Message: ev.Message})
}

func onStop(s *State, ev Signal, at time.Time, fresh func() bool) {
	if !fresh() && !s.endsFileIdle(ev.At) {
		return
	}
	if ev.AgentID != "" {
		return // a subagent's own end; SubagentStop reports it
	}
	s.FollowUpFrom = time.Time{}
	if ev.Background != nil {
		s.Background = ev.Background
	}
	if s.backgroundRunning() {
		// The main turn ended but Claude waits for background agents and
		// starts a turn of its own when they are done: still work.
		s.MainStopped = true
		s.toBusy(at)
		s.CurrentTool = ""
		if ev.Message != "" {
			s.LastMessage = snippet(ev.Message)
		}
		return
	}
	s.toReview()
	if ev.Message != "" {
		s.LastMessage = snippet(ev.Message)
	}
	if ev.Kind == HookStopFailure {
		s.Error = ev.ErrorKind
		if s.Error == "" {
			s.Error = "unknown"
		}
		s.ErrorMessage = ev.Message
	}
}

func onSubagentStart(s *State, ev Signal) {
	// Bind the agent's id to the oldest Agent call of its type without one.
	for i := range s.Subagents {
		a := &s.Subagents[i]
		if a.AgentID == "" && (a.Type == "" || ev.AgentType == "" || a.Type == ev.AgentType) {
			a.AgentID = ev.AgentID
			return
		}
	}
	if ev.AgentID != "" && len(s.Subagents) < maxSubagents {
		s.Subagents = append(s.Subagents, Subagent{AgentID: ev.AgentID, Type: ev.AgentType})
	}
}

// onSubagentStop forgets a subagent. It never ends the turn: the main
// conversation's own Stop does (and a background agent's end is followed by
// a turn Claude starts by itself).
func onSubagentStop(s *State, ev Signal, at time.Time) {
	if ev.AgentID == "" {
		return
	}
	out := s.Subagents[:0:0]
	for _, a := range s.Subagents {
		if a.AgentID != ev.AgentID {
			out = append(out, a)
		}
	}
	s.Subagents = out
	if s.MainStopped && !s.backgroundRunning() {
		s.MainStopped = false
		s.FollowUpFrom = at
	}
}

// maxSubagents bounds what a session remembers of its subagents.
const maxSubagents = 64

// backgroundRunning: background agents run, so Claude will start a turn of
// its own about them. Stop's background_tasks says so; the subagents seen
// are the fallback. A background shell alone does not count: it may run
// for good (a dev server) while Claude waits for the person.
func (s *State) backgroundRunning() bool {
	if s.Background != nil {
		for _, t := range s.Background {
			if t.Type == "subagent" {
				return true
			}
		}
		return false
	}
	for _, a := range s.Subagents {
		if a.Background {
			return true
		}
	}
	return false
}

func onFileStatus(s *State, ev Signal, at time.Time, fresh func() bool) {
	switch ev.FileStatus {
	case "busy", "idle", "waiting":
	default:
		// Claude first writes the file without a status; "shell" and
		// anything newer say nothing corral can use.
		return
	}
	prevMark := s.Watermark
	if !fresh() {
		return
	}
	switch ev.FileStatus {
	case "busy":
		switch s.Status {
		case api.StatusIdle, api.StatusReview, api.StatusUnknown, api.StatusStarting, api.StatusNeedsInput:
			// From needs-input: the person answered the dialog and the
			// tool runs now; PostToolUse only comes when it is done.
			s.toBusy(at)
		}
	case "idle":
		// Only an interruption turns work into idle; a finished turn is
		// reported by Stop as review, which idle must not erase. Between
		// the end of background agents and the turn Claude starts about
		// them, the file says idle for a moment: that is no interruption.
		if s.Status == api.StatusBusy && (!s.FollowUpFrom.IsZero() || s.MainStopped) {
			if s.MainStopped {
				s.MainStopped = false
				s.FollowUpFrom = at
			}
			return
		}
		switch s.Status {
		case api.StatusBusy, api.StatusNeedsInput, api.StatusStarting:
			s.toIdle()
			s.FileIdleFrom = prevMark
		}
	case "waiting":
		if s.Status != api.StatusNeedsInput {
			s.toNeedsInput(&api.Waiting{Kind: fileWaitKind(ev.Message), Message: ev.Message})
		}
	}
}

func onScreenDialog(s *State, ev Signal) {
	if ev.Dialog == nil || ev.Fingerprint == "" {
		return
	}
	switch s.Status {
	case api.StatusExited:
		return // a menu in whatever runs after claude is not Claude's
	}
	w := *ev.Dialog
	if s.Status == api.StatusNeedsInput && s.Waiting != nil {
		cur := s.Waiting
		if ev.Fingerprint == s.OnScreen && cur.DialogID != "" {
			w.DialogID = cur.DialogID // the same dialog, redrawn
			// An untimed check (a safety re-verification) is answered by
			// this read; timed signals wait for the dialog's end.
			var keep []Signal
			for _, d := range s.Deferred {
				if !d.At.IsZero() {
					keep = append(keep, d)
				}
			}
			s.Deferred = keep
		}
		// What hooks said about the dialog stays: the tool, its input, the
		// questions; the screen adds options and text.
		if cur.Tool != "" && (w.Kind == cur.Kind || w.Kind == api.DialogChoice || w.Kind == api.DialogPermission && dialogTool(cur.Tool) == "") {
			if w.Kind == api.DialogChoice {
				w.Kind = cur.Kind
			}
			if w.Tool == "" {
				w.Tool = cur.Tool
			}
			w.Input, w.Suggestions = cur.Input, cur.Suggestions
			if len(w.Questions) == 0 {
				w.Questions = cur.Questions
			}
			if w.Plan == "" {
				w.Plan = cur.Plan
			}
		}
		if w.Message == "" {
			w.Message = cur.Message
		}
	}
	if s.Status != api.StatusNeedsInput {
		s.toNeedsInput(&w)
	} else {
		s.Waiting = &w
	}
	s.OnScreen = ev.Fingerprint
}

// midTurn reports dialogs that a running turn opens (a tool asks): when
// one closes, the turn goes on.
func midTurn(kind string) bool {
	switch kind {
	case api.DialogPermission, api.DialogQuestion, api.DialogPlan, api.DialogElicitation:
		return true
	}
	return false
}

func onScreenClear(s *State, ev Signal, now time.Time) {
	if s.Status != api.StatusNeedsInput {
		return
	}
	held := s.OnScreen != ""
	s.OnScreen = ""
	if ds := s.Deferred; len(ds) > 0 {
		s.Deferred = nil
		for _, d := range ds {
			*s = step(*s, d, now)
		}
		if s.Status != api.StatusNeedsInput {
			return
		}
	}
	if !held && s.Waiting != nil && s.Waiting.DialogID == "" {
		// Hooks announced a dialog the screen has not drawn yet; wait for it.
		return
	}
	kind := ""
	if s.Waiting != nil {
		kind = s.Waiting.Kind
	}
	switch {
	case ev.Screen.Busy:
		s.toBusy(now)
	case midTurn(kind):
		// A dialog of a running turn went without a word yet: answered,
		// Claude goes on (its hooks and file follow, and say otherwise if
		// it was refused).
		s.toBusy(now)
	case ev.Screen.InputBox:
		s.toIdle()
	default:
		// The dialog is gone and corral cannot tell what came instead: it
		// can no longer be answered, and the next signal says more.
		if s.Waiting != nil {
			w := *s.Waiting
			w.DialogID, w.Options = "", nil
			s.Waiting = &w
		}
	}
}

// absorbMetadata takes identity facts from any signal, stale or not: they do
// not depend on ordering.
func (s State) absorbMetadata(ev Signal) State {
	if ev.ClaudeSessionID != "" {
		s.ClaudeSessionID = ev.ClaudeSessionID
	}
	if ev.TranscriptPath != "" {
		s.TranscriptPath = ev.TranscriptPath
	}
	if ev.Model != "" {
		s.Model = ev.Model
	}
	switch ev.Kind {
	case HookSessionStart, HookSessionEnd, HookPromptSubmit, HookPreToolUse, HookPostToolUse, HookPermissionRequest,
		HookNotification, HookStop, HookStopFailure, HookPreCompact, HookPostCompact, HookSubagentStart, HookSubagentStop,
		HookElicitation, HookElicitationResult, HookTaskCreated, HookTaskCompleted:
		s.Hooked = true
	}
	if ev.Kind == HookPreToolUse && ev.Tool != "" && ev.AgentID == "" {
		s.CurrentTool = ev.Tool
	}
	if (ev.Kind == HookPreToolUse || ev.Kind == ToolSeen) && ev.Tool == "TodoWrite" {
		if t := todos(ev.ToolInput); t != nil {
			s.Todos = t
		}
	}
	if s2, ok := s.taskSignal(ev); ok {
		s = s2
	}
	if ev.Kind == HookPreToolUse && ev.Tool == "Agent" && ev.AgentID == "" {
		s.Subagents = withAgentCall(s.Subagents, ev)
	}
	if ev.Kind == HookPostToolUse && ev.Tool == "Agent" && ev.AgentID == "" {
		s.Subagents = agentCallReturned(s.Subagents, ev.ToolUseID)
	}
	return s
}

// withAgentCall records an Agent call, once per tool_use id.
func withAgentCall(list []Subagent, ev Signal) []Subagent {
	for _, a := range list {
		if ev.ToolUseID != "" && a.ToolUseID == ev.ToolUseID {
			return list
		}
	}
	if len(list) >= maxSubagents {
		return list
	}
	var in struct {
		Description  string `json:"description"`
		SubagentType string `json:"subagent_type"`
		Background   bool   `json:"run_in_background"`
	}
	_ = json.Unmarshal(ev.ToolInput, &in)
	out := append(list[:len(list):len(list)], Subagent{ToolUseID: ev.ToolUseID, Type: in.SubagentType,
		Description: snippet(in.Description), Background: in.Background})
	return out
}

// agentCallReturned: an Agent call's result arrived. A foreground subagent
// is done; a background one was only launched and runs until SubagentStop.
func agentCallReturned(list []Subagent, id string) []Subagent {
	out := list[:0:0]
	for _, a := range list {
		if a.ToolUseID == id && id != "" {
			if !a.Background {
				continue
			}
			a.Returned = true
		}
		out = append(out, a)
	}
	return out
}

// todos reads a TodoWrite call's list.
func todos(input json.RawMessage) *api.Todos {
	var in struct {
		Todos []struct {
			Content    string `json:"content"`
			Status     string `json:"status"`
			ActiveForm string `json:"activeForm"`
		} `json:"todos"`
	}
	if json.Unmarshal(input, &in) != nil || in.Todos == nil {
		return nil
	}
	t := &api.Todos{Total: len(in.Todos)}
	for _, it := range in.Todos {
		switch it.Status {
		case "completed":
			t.Done++
		case "in_progress":
			if t.Current == "" {
				t.Current = snippet(it.ActiveForm)
				if t.Current == "" {
					t.Current = snippet(it.Content)
				}
			}
		}
	}
	return t
}

// taskSignal folds a task list change: TaskCreated and TaskCompleted
// hooks, and TaskUpdate calls (hook or transcript) that set a status.
func (s State) taskSignal(ev Signal) (State, bool) {
	var id, subject, st string
	switch {
	case ev.Kind == HookTaskCreated:
		id, subject, st = ev.TaskID, ev.TaskSubject, "pending"
	case ev.Kind == HookTaskCompleted:
		id, subject, st = ev.TaskID, ev.TaskSubject, "completed"
	case (ev.Kind == HookPreToolUse || ev.Kind == ToolSeen) && ev.Tool == "TaskUpdate":
		var in struct {
			TaskID string `json:"taskId"`
			Status string `json:"status"`
		}
		if json.Unmarshal(ev.ToolInput, &in) != nil || in.TaskID == "" || in.Status == "" {
			return s, false
		}
		id, st = in.TaskID, in.Status
	default:
		return s, false
	}
	if id == "" {
		return s, false
	}
	tasks := append([]Task(nil), s.Tasks...)
	found := false
	for i := range tasks {
		if tasks[i].ID == id {
			found = true
			if subject != "" {
				tasks[i].Subject = snippet(subject)
			}
			// Completed stays completed; a late "pending" does not undo it.
			if tasks[i].Status != "completed" || st == "completed" {
				tasks[i].Status = st
			}
		}
	}
	if !found {
		if len(tasks) >= maxTasks {
			return s, false
		}
		tasks = append(tasks, Task{ID: id, Subject: snippet(subject), Status: st})
	}
	s.Tasks = tasks
	t := &api.Todos{Total: len(tasks)}
	for _, k := range tasks {
		switch k.Status {
		case "completed":
			t.Done++
		case "in_progress":
			if t.Current == "" {
				t.Current = k.Subject
			}
		}
	}
	s.Todos = t
	return s, true
}

// questions reads AskUserQuestion's questions from its input.
func questions(input json.RawMessage) []api.Question {
	var in struct {
		Questions []struct {
			Question    string `json:"question"`
			Header      string `json:"header"`
			MultiSelect bool   `json:"multiSelect"`
			Options     []struct {
				Label       string `json:"label"`
				Description string `json:"description"`
			} `json:"options"`
		} `json:"questions"`
	}
	if json.Unmarshal(input, &in) != nil {
		return nil
	}
	var out []api.Question
	for _, q := range in.Questions {
		aq := api.Question{Question: q.Question, Header: q.Header, MultiSelect: q.MultiSelect, Options: []api.QuestionOption{}}
		for _, o := range q.Options {
			aq.Options = append(aq.Options, api.QuestionOption{Label: o.Label, Description: o.Description})
		}
		out = append(out, aq)
	}
	return out
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

// leave resets what belongs to the state being left.
func (s *State) leave() {
	s.FileIdleFrom = time.Time{}
	s.FollowUpFrom = time.Time{}
	s.OnScreen, s.Deferred = "", nil
	s.Waiting = nil
}

func (s *State) toIdle() {
	s.leave()
	s.Status = api.StatusIdle
	s.CurrentTool = ""
	s.BusySince = time.Time{}
	s.Compacting = false
}

func (s *State) toBusy(at time.Time) {
	s.leave()
	if s.Status != api.StatusBusy && s.Status != api.StatusNeedsInput && s.Status != api.StatusUnknown {
		s.BusySince = at
	} else if s.BusySince.IsZero() {
		s.BusySince = at
	}
	s.Status = api.StatusBusy
}

func (s *State) toNeedsInput(w *api.Waiting) {
	s.FileIdleFrom = time.Time{}
	if s.Waiting == nil || w == nil || w.DialogID == "" || s.Waiting.DialogID != w.DialogID {
		// Another dialog: what the screen showed was about the last one.
		s.OnScreen, s.Deferred = "", nil
	}
	s.Status = api.StatusNeedsInput
	s.Waiting = w
}

func (s *State) toReview() {
	s.leave()
	s.Status = api.StatusReview
	s.CurrentTool = ""
	s.BusySince = time.Time{}
	s.Compacting = false
	s.Subagents = nil
}

func (s *State) toExited() {
	s.leave()
	s.Status = api.StatusExited
	s.CurrentTool = ""
	s.BusySince = time.Time{}
	s.Compacting = false
	s.Subagents = nil
}

// notificationWaitKind maps a Notification's type to what the session waits
// for; "" for the types that change nothing (idle_prompt and the like).
func notificationWaitKind(t string) string {
	switch t {
	case "permission_prompt", "worker_permission_prompt":
		return api.DialogPermission
	case "elicitation_dialog", "elicitation_url_dialog":
		return api.DialogElicitation
	}
	return ""
}

// fileWaitKind maps the session file's waitingFor text ("permission prompt").
func fileWaitKind(waitingFor string) string {
	w := strings.ToLower(waitingFor)
	switch {
	case strings.Contains(w, "permission"):
		return api.DialogPermission
	case strings.Contains(w, "elicitation"), strings.Contains(w, "input"):
		return api.DialogElicitation
	}
	return api.DialogChoice
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

// equal compares what readers see of two states; the bookkeeping (the
// watermark, what the screen showed, held signals) changes nothing shown.
func equal(a, b State) bool {
	if a.Status != b.Status || a.Error != b.Error || a.ErrorMessage != b.ErrorMessage ||
		a.Compacting != b.Compacting || a.CurrentTool != b.CurrentTool || !a.BusySince.Equal(b.BusySince) ||
		a.LastMessage != b.LastMessage || a.LastPrompt != b.LastPrompt || a.ClaudeSessionID != b.ClaudeSessionID ||
		a.TranscriptPath != b.TranscriptPath || a.Model != b.Model {
		return false
	}
	if !jsonEqual(a.Waiting, b.Waiting) || !jsonEqual(a.Subagents, b.Subagents) || !jsonEqual(a.Todos, b.Todos) ||
		!jsonEqual(a.Background, b.Background) {
		return false
	}
	return true
}

// jsonEqual compares two values by their JSON form: what readers see.
func jsonEqual(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
