package status

import (
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/api"
)

func TestRules(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	busy := State{Status: api.StatusBusy, BusySince: at(0), Watermark: at(0)}
	needs := State{Status: api.StatusNeedsInput, BusySince: at(0), Watermark: at(10),
		Waiting: &api.Waiting{Kind: "permission", Tool: "Bash"}}
	review := State{Status: api.StatusReview, Watermark: at(20), LastMessage: "done"}

	tests := []struct {
		name       string
		from       State
		events     []Signal
		want       api.Status
		wantNotify []bool // per event; nil means "never"
		check      func(t *testing.T, s State)
	}{
		{name: "compact SessionStart during a turn keeps busy", from: busy,
			events: []Signal{{Kind: HookPreCompact, At: at(5)}, {Kind: HookSessionStart, Source: "compact", At: at(6)}},
			want:   api.StatusBusy,
			check: func(t *testing.T, s State) {
				if !s.Compacting || !s.BusySince.Equal(at(0)) {
					t.Errorf("compacting %v busy since %v", s.Compacting, s.BusySince)
				}
			}},
		{name: "a launch that resumes keeps the conversation's id", from: State{Status: api.StatusReview, ClaudeSessionID: "c1", LastMessage: "done"},
			events: []Signal{{Kind: Launched, ClaudeSessionID: "c1"}}, want: api.StatusStarting,
			check: func(t *testing.T, s State) {
				if s.ClaudeSessionID != "c1" || s.LastMessage != "" {
					t.Errorf("conversation %q, last message %q", s.ClaudeSessionID, s.LastMessage)
				}
			}},
		{name: "a fresh launch forgets the conversation", from: State{Status: api.StatusIdle, ClaudeSessionID: "c1"},
			events: []Signal{{Kind: Launched}}, want: api.StatusStarting,
			check: func(t *testing.T, s State) {
				if s.ClaudeSessionID != "" {
					t.Errorf("conversation %q", s.ClaudeSessionID)
				}
			}},
		{name: "compact SessionStart when idle is idle", from: State{Status: api.StatusIdle},
			events: []Signal{{Kind: HookSessionStart, Source: "compact", At: at(6)}}, want: api.StatusIdle},
		{name: "needs-input clears on PostToolUse", from: needs,
			events: []Signal{{Kind: HookPostToolUse, Tool: "Bash", At: at(30)}}, want: api.StatusBusy,
			check: func(t *testing.T, s State) {
				if s.Waiting != nil || !s.BusySince.Equal(at(0)) {
					t.Errorf("waiting %+v, busy since %v (the turn's start must be kept)", s.Waiting, s.BusySince)
				}
			}},
		{name: "needs-input clears on PostToolUseFailure too", from: needs,
			events: []Signal{{Kind: HookPostToolUse, At: at(30)}}, want: api.StatusBusy},
		{name: "approval seen in the session file clears needs-input before the tool ends", from: needs,
			events: []Signal{{Kind: FileStatus, FileStatus: "busy", At: at(30)}}, want: api.StatusBusy},
		{name: "review becomes idle when viewed", from: review, events: []Signal{{Kind: Viewed}}, want: api.StatusIdle},
		{name: "review becomes idle on input", from: review, events: []Signal{{Kind: Input}}, want: api.StatusIdle},
		{name: "input begun after the review clears it", from: review, events: []Signal{{Kind: Input, At: at(25)}}, want: api.StatusIdle},
		// The person's answer started a turn that ended (review at 20) before
		// their act was recorded: what it did is new to them.
		{name: "a review produced after the input began stands", from: review, events: []Signal{{Kind: Input, At: at(15)}}, want: api.StatusReview},
		{name: "a review produced after the view began stands", from: review, events: []Signal{{Kind: Viewed, At: at(15)}}, want: api.StatusReview},
		{name: "viewing a busy session changes nothing", from: busy, events: []Signal{{Kind: Viewed}}, want: api.StatusBusy},
		{name: "session file idle does not erase review", from: review,
			events: []Signal{{Kind: FileStatus, FileStatus: "idle", At: at(25)}}, want: api.StatusReview},
		{name: "stale session file busy after Stop is ignored", from: busy,
			events: []Signal{{Kind: HookStop, At: at(50)}, {Kind: FileStatus, FileStatus: "busy", At: at(40)}},
			want:   api.StatusReview, wantNotify: []bool{true, false}},
		{name: "stale PostToolUse arriving after Stop is ignored", from: busy,
			events: []Signal{{Kind: HookStop, At: at(50)}, {Kind: HookPostToolUse, At: at(45)}},
			want:   api.StatusReview, wantNotify: []bool{true, false}},
		{name: "file idle before Stop: brief idle, then review notifies", from: busy,
			events: []Signal{{Kind: FileStatus, FileStatus: "idle", At: at(49)}, {Kind: HookStop, At: at(50)}},
			want:   api.StatusReview, wantNotify: []bool{false, true}},
		{name: "file idle seen before an older Stop of the same turn: review", from: busy,
			events: []Signal{{Kind: FileStatus, FileStatus: "idle", At: at(52)}, {Kind: HookStop, At: at(50)}},
			want:   api.StatusReview, wantNotify: []bool{false, true}},
		{name: "file idle seen before an older StopFailure of the same turn: review with the error", from: busy,
			events: []Signal{{Kind: FileStatus, FileStatus: "idle", At: at(52)}, {Kind: HookStopFailure, ErrorKind: "rate_limit", At: at(50)}},
			want:   api.StatusReview, wantNotify: []bool{false, true},
			check: func(t *testing.T, s State) {
				if s.Error != "rate_limit" {
					t.Errorf("error %q", s.Error)
				}
			}},
		{name: "a Stop from before the turn does not end a file idle", from: busy,
			events: []Signal{{Kind: HookPromptSubmit, At: at(40)}, {Kind: FileStatus, FileStatus: "idle", At: at(52)}, {Kind: HookStop, At: at(30)}},
			want:   api.StatusIdle},
		{name: "a Stop after an interrupt in the transcript does not end a file idle", from: busy,
			events: []Signal{{Kind: FileStatus, FileStatus: "idle", At: at(52)}, {Kind: Interrupt, At: at(51)}, {Kind: HookStop, At: at(50)}},
			want:   api.StatusIdle},
		{name: "file idle, then a new prompt: a late Stop of the old turn changes nothing", from: busy,
			events: []Signal{{Kind: FileStatus, FileStatus: "idle", At: at(52)}, {Kind: HookPromptSubmit, At: at(60)}, {Kind: HookStop, At: at(50)}},
			want:   api.StatusBusy},
		{name: "transcript interrupt older than a new prompt is ignored", from: busy,
			events: []Signal{{Kind: HookPromptSubmit, At: at(100)}, {Kind: Interrupt, At: at(90)}},
			want:   api.StatusBusy},
		{name: "idle_prompt notification changes nothing", from: State{Status: api.StatusIdle},
			events: []Signal{{Kind: HookNotification, NotificationType: "idle_prompt", At: at(5)}}, want: api.StatusIdle},
		{name: "elicitation notification needs input", from: busy,
			events: []Signal{{Kind: HookNotification, NotificationType: "elicitation_dialog", Message: "MCP asks", At: at(5)}},
			want:   api.StatusNeedsInput, wantNotify: []bool{true},
			check: func(t *testing.T, s State) {
				if s.Waiting.Kind != "elicitation" || s.Waiting.Message != "MCP asks" {
					t.Errorf("waiting %+v", s.Waiting)
				}
			}},
		{name: "AskUserQuestion needs input", from: busy,
			events: []Signal{{Kind: HookPreToolUse, Tool: "AskUserQuestion", ToolInput: []byte(`{"questions":[]}`), At: at(5)}},
			want:   api.StatusNeedsInput, wantNotify: []bool{true},
			check: func(t *testing.T, s State) {
				if s.Waiting.Kind != "question" || string(s.Waiting.Input) != `{"questions":[]}` {
					t.Errorf("waiting %+v", s.Waiting)
				}
			}},
		{name: "PreToolUse sets the current tool", from: busy,
			events: []Signal{{Kind: HookPreToolUse, Tool: "Read", At: at(5)}}, want: api.StatusBusy,
			check: func(t *testing.T, s State) {
				if s.CurrentTool != "Read" {
					t.Errorf("tool %q", s.CurrentTool)
				}
			}},
		{name: "session file waiting needs input at once", from: busy,
			events: []Signal{{Kind: FileStatus, FileStatus: "waiting", Message: "permission prompt", At: at(5)}},
			want:   api.StatusNeedsInput, wantNotify: []bool{true}},
		{name: "StopFailure is review with the error, a new prompt clears it", from: busy,
			events: []Signal{{Kind: HookStopFailure, ErrorKind: "rate_limit", Message: "API Error: 429", At: at(5)},
				{Kind: HookPromptSubmit, At: at(9)}},
			want: api.StatusBusy, wantNotify: []bool{true, false},
			check: func(t *testing.T, s State) {
				if s.Error != "" {
					t.Errorf("error %q kept into the next turn", s.Error)
				}
			}},
		{name: "SessionEnd clear keeps the process", from: State{Status: api.StatusIdle},
			events: []Signal{{Kind: HookSessionEnd, Source: "clear", At: at(5)}, {Kind: HookSessionStart, Source: "clear", ClaudeSessionID: "new", At: at(6)}},
			want:   api.StatusIdle,
			check: func(t *testing.T, s State) {
				if s.ClaudeSessionID != "new" {
					t.Errorf("session id %q", s.ClaudeSessionID)
				}
			}},
		{name: "PermissionRequest just after the file's waiting still gives the details",
			from: busy,
			events: []Signal{{Kind: FileStatus, FileStatus: "waiting", Message: "permission prompt", At: at(10)},
				{Kind: HookPermissionRequest, Tool: "Bash", ToolInput: []byte(`{"command":"ls"}`), At: at(8)}},
			want: api.StatusNeedsInput, wantNotify: []bool{true, false},
			check: func(t *testing.T, s State) {
				if s.Waiting.Tool != "Bash" || string(s.Waiting.Input) != `{"command":"ls"}` || s.Waiting.Message != "permission prompt" {
					t.Errorf("waiting %+v", s.Waiting)
				}
			}},
		{name: "a stale PermissionRequest does not bring back a dialog that was answered", from: busy,
			events: []Signal{{Kind: FileStatus, FileStatus: "busy", At: at(10)},
				{Kind: HookPermissionRequest, Tool: "Bash", At: at(8)}},
			want: api.StatusBusy},
		{name: "compaction clears the last turn's error", from: State{Status: api.StatusReview, Error: "unknown", Watermark: at(0)},
			events: []Signal{{Kind: HookSessionStart, Source: "compact", At: at(5)}},
			want:   api.StatusIdle,
			check: func(t *testing.T, s State) {
				if s.Error != "" {
					t.Errorf("error %q", s.Error)
				}
			}},
		{name: "a session file without a status moves nothing, not even the watermark",
			from: State{Status: api.StatusStarting, Watermark: at(0)},
			events: []Signal{{Kind: FileStatus, FileStatus: "", At: at(500)}, {Kind: FileStatus, FileStatus: "shell", At: at(501)},
				{Kind: HookSessionStart, Source: "startup", At: at(100)}},
			want: api.StatusIdle},
		{name: "untimed signals do not make timed ones stale",
			from:   State{Status: api.StatusReview, Watermark: at(0)},
			events: []Signal{{Kind: Viewed}, {Kind: HookPromptSubmit, At: at(5)}},
			want:   api.StatusBusy},
		{name: "SessionEnd exit", from: busy, events: []Signal{{Kind: HookSessionEnd, Source: "prompt_input_exit", At: at(5)}}, want: api.StatusExited},
		{name: "process exit wins whatever its time", from: busy, events: []Signal{{Kind: ClaudeExited}}, want: api.StatusExited},
		{name: "claude started again in the pane", from: State{Status: api.StatusExited},
			events: []Signal{{Kind: ClaudeStarted}, {Kind: HookSessionStart, Source: "startup", At: at(5)}}, want: api.StatusIdle},
		{name: "the dialog read off the screen gets its id and options, and keeps the hook's details", from: needs,
			events: []Signal{screenDialog("d1", "fp1", api.DialogPermission)},
			want:   api.StatusNeedsInput,
			check: func(t *testing.T, s State) {
				if s.Waiting.Tool != "Bash" || s.Waiting.DialogID != "d1" || len(s.Waiting.Options) != 2 || s.OnScreen != "fp1" {
					t.Errorf("waiting %+v on screen %q", s.Waiting, s.OnScreen)
				}
			}},
		{name: "a menu the person opens while idle blocks input but calls nobody", from: State{Status: api.StatusIdle},
			events: []Signal{screenDialog("d1", "fp1", api.DialogChoice)},
			want:   api.StatusNeedsInput, wantNotify: []bool{false}},
		{name: "trust dialog on screen while starting needs input", from: State{Status: api.StatusStarting},
			events: []Signal{screenDialog("d1", "fp1", api.DialogTrust)},
			want:   api.StatusNeedsInput, wantNotify: []bool{true},
			check: func(t *testing.T, s State) {
				if s.Waiting.Kind != api.DialogTrust {
					t.Errorf("kind %q", s.Waiting.Kind)
				}
			}},
		{name: "a safety re-check never ends a dialog on the screen", from: State{Status: api.StatusStarting},
			events: []Signal{screenDialog("d1", "fp1", api.DialogTrust),
				{Kind: Verified, Check: Check{ClaudeRunning: true}}, screenDialog("d2", "fp1", api.DialogTrust),
				{Kind: Verified, Check: Check{ClaudeRunning: true}}},
			want: api.StatusNeedsInput, wantNotify: []bool{true, false, false, false},
			check: func(t *testing.T, s State) {
				if s.Waiting.DialogID != "d1" {
					t.Errorf("the same dialog got a new id: %q", s.Waiting.DialogID)
				}
			}},
		{name: "idle and busy from the file are held while the dialog is on screen, then applied when it is gone",
			from: needs,
			events: []Signal{screenDialog("d1", "fp1", api.DialogPermission),
				{Kind: FileStatus, FileStatus: "busy", At: at(40)}, screenDialog("d2", "fp1", api.DialogPermission),
				{Kind: ScreenClear}},
			want: api.StatusBusy,
			check: func(t *testing.T, s State) {
				if s.Waiting != nil || s.OnScreen != "" || len(s.Deferred) != 0 {
					t.Errorf("left %+v %q %v", s.Waiting, s.OnScreen, s.Deferred)
				}
			}},
		{name: "a held signal asks for a screen read", from: needs,
			events: []Signal{screenDialog("d1", "fp1", api.DialogPermission), {Kind: HookStop, At: at(40)}},
			want:   api.StatusNeedsInput,
			check: func(t *testing.T, s State) {
				if len(s.Deferred) != 1 || s.Deferred[0].Kind != HookStop {
					t.Errorf("deferred %v", s.Deferred)
				}
			}},
		{name: "every held signal is applied once the dialog is gone, in order: a Stop held behind the file's idle is kept", from: needs,
			events: []Signal{screenDialog("d1", "fp1", api.DialogQuestion),
				{Kind: HookPostToolUse, At: at(40)}, {Kind: HookStop, At: at(41)}, {Kind: FileStatus, FileStatus: "idle", At: at(42)},
				{Kind: ScreenClear, Screen: ScreenState{InputBox: true}}},
			want: api.StatusReview, wantNotify: []bool{false, false, false, false, true}},
		{name: "a question answered before any hook says so: Claude goes on", from: needs,
			events: []Signal{screenDialog("d1", "fp1", api.DialogQuestion), {Kind: ScreenClear, Screen: ScreenState{InputBox: true}}},
			want:   api.StatusBusy},
		{name: "a new dialog replacing the one on screen gets a new id", from: needs,
			events: []Signal{screenDialog("d1", "fp1", api.DialogPermission), screenDialog("d2", "fp2", api.DialogPermission)},
			want:   api.StatusNeedsInput,
			check: func(t *testing.T, s State) {
				if s.Waiting.DialogID != "d2" || s.OnScreen != "fp2" {
					t.Errorf("waiting %+v", s.Waiting)
				}
			}},
		{name: "a dialog answered through corral: the screen shows Claude at work", from: needs,
			events: []Signal{screenDialog("d1", "fp1", api.DialogPermission), {Kind: ScreenClear, Screen: ScreenState{Busy: true, InputBox: true}}},
			want:   api.StatusBusy},
		{name: "a trust dialog answered: the input box waits for a prompt", from: State{Status: api.StatusStarting},
			events: []Signal{screenDialog("d1", "fp1", api.DialogTrust), {Kind: ScreenClear, Screen: ScreenState{InputBox: true}}},
			want:   api.StatusIdle, wantNotify: []bool{true, false}},
		{name: "a dialog a hook announced but the screen has not drawn yet stays", from: needs,
			events: []Signal{{Kind: ScreenClear, Screen: ScreenState{InputBox: true}}},
			want:   api.StatusNeedsInput},
		{name: "claude exiting ends a dialog on screen", from: needs,
			events: []Signal{screenDialog("d1", "fp1", api.DialogPermission), {Kind: ClaudeExited}},
			want:   api.StatusExited},
		{name: "a subagent's tool calls do not end the dialog another subagent shows", from: needs,
			events: []Signal{{Kind: HookPreToolUse, Tool: "Read", AgentID: "a2", At: at(40)}, {Kind: HookPostToolUse, Tool: "Read", AgentID: "a2", At: at(41)}},
			want:   api.StatusNeedsInput},
		{name: "AskUserQuestion's PermissionRequest keeps it a question", from: busy,
			events: []Signal{{Kind: HookPreToolUse, Tool: "AskUserQuestion", ToolInput: []byte(`{"questions":[{"question":"Which database?","header":"DB","multiSelect":false,"options":[{"label":"Postgres","description":"the usual"},{"label":"SQLite"}]}]}`), At: at(5)},
				{Kind: HookPermissionRequest, Tool: "AskUserQuestion", ToolInput: []byte(`{"questions":[]}`), At: at(6)}},
			want: api.StatusNeedsInput, wantNotify: []bool{true, false},
			check: func(t *testing.T, s State) {
				w := s.Waiting
				if w.Kind != api.DialogQuestion || len(w.Questions) != 1 || w.Questions[0].Header != "DB" || w.Questions[0].Options[0].Description != "the usual" {
					t.Errorf("waiting %+v", w)
				}
			}},
		{name: "ExitPlanMode's PermissionRequest is a plan with its text", from: busy,
			events: []Signal{{Kind: HookPreToolUse, Tool: "ExitPlanMode", ToolInput: []byte(`{"plan":"1. do it"}`), At: at(5)},
				{Kind: HookPermissionRequest, Tool: "ExitPlanMode", ToolInput: []byte(`{"plan":"1. do it"}`), At: at(6)}},
			want: api.StatusNeedsInput, wantNotify: []bool{false, true},
			check: func(t *testing.T, s State) {
				if s.Waiting.Kind != api.DialogPlan || s.Waiting.Plan != "1. do it" {
					t.Errorf("waiting %+v", s.Waiting)
				}
			}},
		{name: "a turn with a subagent stays busy until the main Stop", from: busy,
			events: []Signal{
				{Kind: HookPreToolUse, Tool: "Agent", ToolUseID: "t1", ToolInput: []byte(`{"description":"look around","subagent_type":"general-purpose"}`), At: at(5)},
				{Kind: HookSubagentStart, AgentID: "a1", AgentType: "general-purpose", At: at(6)},
				{Kind: HookPreToolUse, Tool: "Bash", AgentID: "a1", At: at(7)},
				{Kind: HookPostToolUse, Tool: "Bash", AgentID: "a1", At: at(8)},
				{Kind: HookSubagentStop, AgentID: "a1", At: at(9)},
				{Kind: HookPostToolUse, Tool: "Agent", ToolUseID: "t1", At: at(10)},
				{Kind: HookStop, At: at(11)}},
			want: api.StatusReview, wantNotify: []bool{false, false, false, false, false, false, true}},
		{name: "the subagents running are listed", from: busy,
			events: []Signal{
				{Kind: HookPreToolUse, Tool: "Agent", ToolUseID: "t1", ToolInput: []byte(`{"description":"look around","subagent_type":"general-purpose"}`), At: at(5)},
				{Kind: HookSubagentStart, AgentID: "a1", AgentType: "general-purpose", At: at(6)}},
			want: api.StatusBusy,
			check: func(t *testing.T, s State) {
				if len(s.Subagents) != 1 || s.Subagents[0].Description != "look around" || s.Subagents[0].AgentID != "a1" || s.CurrentTool != "Agent" {
					t.Errorf("subagents %+v tool %q", s.Subagents, s.CurrentTool)
				}
			}},
		{name: "a background agent keeps the session busy past the main Stop, until Claude's own follow-up turn ends", from: busy,
			events: []Signal{
				{Kind: HookPreToolUse, Tool: "Agent", ToolUseID: "t1", ToolInput: []byte(`{"description":"bg","subagent_type":"general-purpose","run_in_background":true}`), At: at(5)},
				{Kind: HookSubagentStart, AgentID: "a1", At: at(6)},
				{Kind: HookPostToolUse, Tool: "Agent", ToolUseID: "t1", At: at(7)},
				{Kind: HookStop, At: at(8)},
				{Kind: FileStatus, FileStatus: "busy", At: at(9)},
				{Kind: HookSubagentStop, AgentID: "a1", At: at(20)},
				{Kind: HookPromptSubmit, Prompt: "<task-notification>", At: at(21)},
				{Kind: HookStop, At: at(22)}},
			want: api.StatusReview, wantNotify: []bool{false, false, false, false, false, false, false, true}},
		{name: "between background agents' end and Claude's own turn the file's idle is no interruption", from: busy,
			events: []Signal{
				{Kind: HookPreToolUse, Tool: "Agent", ToolUseID: "t1", ToolInput: []byte(`{"description":"bg","run_in_background":true}`), At: at(5)},
				{Kind: HookSubagentStart, AgentID: "a1", At: at(6)},
				{Kind: HookPostToolUse, Tool: "Agent", ToolUseID: "t1", At: at(7)},
				{Kind: HookStop, At: at(8)},
				{Kind: HookSubagentStop, AgentID: "a1", At: at(20)},
				{Kind: FileStatus, FileStatus: "idle", At: at(21)},
				{Kind: FileStatus, FileStatus: "busy", At: at(22)},
				{Kind: HookPromptSubmit, Prompt: "<task-notification>", At: at(23)},
				{Kind: HookStop, At: at(24)}},
			want: api.StatusReview, wantNotify: []bool{false, false, false, false, false, false, false, false, true}},
		{name: "background agents ended and no turn followed: review once the wait is over", from: busy,
			events: []Signal{
				{Kind: HookPreToolUse, Tool: "Agent", ToolUseID: "t1", ToolInput: []byte(`{"description":"bg","run_in_background":true}`), At: at(5)},
				{Kind: HookSubagentStart, AgentID: "a1", At: at(6)},
				{Kind: HookStop, At: at(8)},
				{Kind: HookSubagentStop, AgentID: "a1", At: at(20)},
				{Kind: Tick, At: at(21)},
				{Kind: Tick, At: at(20).Add(followUpWait)}},
			want: api.StatusReview, wantNotify: []bool{false, false, false, false, false, true}},
		{name: "Stop naming a running background agent keeps the turn busy; its file idle then expects Claude's own turn", from: busy,
			events: []Signal{{Kind: HookStop, At: at(8), Background: []api.BackgroundTask{{Type: "subagent", Description: "slow"}}},
				{Kind: FileStatus, FileStatus: "idle", At: at(20)},
				{Kind: HookPromptSubmit, Prompt: "<task-notification>", At: at(21)},
				{Kind: HookStop, At: at(22), Background: []api.BackgroundTask{}}},
			want: api.StatusReview, wantNotify: []bool{false, false, false, true},
			check: func(t *testing.T, s State) {
				if len(s.Background) != 0 {
					t.Errorf("background %+v", s.Background)
				}
			}},
		{name: "a background shell alone does not keep the session busy", from: busy,
			events: []Signal{{Kind: HookStop, At: at(8), Background: []api.BackgroundTask{{Type: "shell", Command: "sleep 6"}}},
				{Kind: FileStatus, FileStatus: "shell", At: at(9)}},
			want: api.StatusReview, wantNotify: []bool{true, false},
			check: func(t *testing.T, s State) {
				if len(s.Background) != 1 || s.Background[0].Command != "sleep 6" {
					t.Errorf("background %+v", s.Background)
				}
			}},
		{name: "the Elicitation hook is needs-input at once; its result is busy", from: busy,
			events: []Signal{{Kind: HookElicitation, Message: "Tell me about you", Tool: "fake", At: at(5)},
				{Kind: HookElicitationResult, At: at(9)}},
			want: api.StatusBusy, wantNotify: []bool{true, false}},
		{name: "task list progress from TaskCreated, TaskUpdate and TaskCompleted", from: busy,
			events: []Signal{
				{Kind: HookTaskCreated, TaskID: "1", TaskSubject: "Write code", At: at(5)},
				{Kind: HookTaskCreated, TaskID: "2", TaskSubject: "Test it", At: at(6)},
				{Kind: HookTaskCreated, TaskID: "3", TaskSubject: "Ship", At: at(7)},
				{Kind: HookPreToolUse, Tool: "TaskUpdate", ToolInput: []byte(`{"taskId":"1","status":"completed"}`), At: at(8)},
				{Kind: HookTaskCompleted, TaskID: "1", At: at(9)},
				{Kind: HookPreToolUse, Tool: "TaskUpdate", ToolInput: []byte(`{"taskId":"2","status":"in_progress"}`), At: at(10)}},
			want: api.StatusBusy,
			check: func(t *testing.T, s State) {
				if s.Todos == nil || s.Todos.Done != 1 || s.Todos.Total != 3 || s.Todos.Current != "Test it" {
					t.Errorf("todos %+v", s.Todos)
				}
			}},
		{name: "TodoWrite progress", from: busy,
			events: []Signal{{Kind: HookPreToolUse, Tool: "TodoWrite", At: at(5),
				ToolInput: []byte(`{"todos":[{"content":"a","status":"completed","activeForm":"Doing a"},{"content":"b","status":"in_progress","activeForm":"Doing b"},{"content":"c","status":"pending","activeForm":"Doing c"}]}`)}},
			want: api.StatusBusy,
			check: func(t *testing.T, s State) {
				if s.Todos == nil || s.Todos.Done != 1 || s.Todos.Total != 3 || s.Todos.Current != "Doing b" {
					t.Errorf("todos %+v", s.Todos)
				}
			}},
		{name: "a claude started by hand (no hooks): file busy, then the transcript's turn end is review", from: State{Status: api.StatusExited},
			events: []Signal{{Kind: ClaudeStarted}, {Kind: FileStatus, FileStatus: "idle", At: at(5)},
				{Kind: FileStatus, FileStatus: "busy", At: at(10)}, {Kind: FileStatus, FileStatus: "idle", At: at(20)},
				{Kind: TurnEnded, At: at(19)}},
			want: api.StatusReview, wantNotify: []bool{false, false, false, false, true}},
		{name: "a claude started by hand: the transcript's prompt is busy, its turn end review", from: State{Status: api.StatusExited},
			events: []Signal{{Kind: ClaudeStarted}, {Kind: FileStatus, FileStatus: "idle", At: at(5)},
				{Kind: PromptSeen, Prompt: "say hello", At: at(10)}, {Kind: TurnEnded, At: at(19)}},
			want: api.StatusReview, wantNotify: []bool{false, false, false, true}},
		{name: "with hooks the transcript's prompt and turn end change nothing", from: State{Status: api.StatusIdle, Hooked: true},
			events: []Signal{{Kind: PromptSeen, At: at(5)}, {Kind: TurnEnded, At: at(19)}},
			want:   api.StatusIdle},
		{name: "with hooks the transcript's turn end changes nothing", from: busy,
			events: []Signal{{Kind: HookPromptSubmit, At: at(5)}, {Kind: TurnEnded, At: at(19)}},
			want:   api.StatusBusy},

		// Restarts.
		{name: "restart: busy becomes unknown, without a notification", from: busy,
			events: []Signal{{Kind: Restored}}, want: api.StatusUnknown, wantNotify: []bool{false}},
		{name: "restart: needs-input, review and idle are kept", from: review,
			events: []Signal{{Kind: Restored}}, want: api.StatusReview},
		{name: "re-verified busy", from: State{Status: api.StatusUnknown, BusySince: at(0)},
			events: []Signal{{Kind: Verified, Check: Check{ClaudeRunning: true, FileStatus: "busy"}}}, want: api.StatusBusy,
			check: func(t *testing.T, s State) {
				if !s.BusySince.Equal(at(0)) {
					t.Errorf("busy since %v, want the original start", s.BusySince)
				}
			}},
		{name: "re-verified: the turn finished while corral was away is review, silently",
			from:   State{Status: api.StatusUnknown},
			events: []Signal{{Kind: Verified, Check: Check{ClaudeRunning: true, FileStatus: "idle", TurnEnded: true}}},
			want:   api.StatusReview, wantNotify: []bool{false}},
		{name: "re-verified: interrupted while away is idle", from: State{Status: api.StatusUnknown},
			events: []Signal{{Kind: Verified, Check: Check{ClaudeRunning: true, FileStatus: "idle"}}}, want: api.StatusIdle},
		{name: "re-verified: waiting", from: State{Status: api.StatusUnknown},
			events: []Signal{{Kind: Verified, Check: Check{ClaudeRunning: true, FileStatus: "waiting", FileWaitingFor: "permission prompt"}}},
			want:   api.StatusNeedsInput, wantNotify: []bool{false}},
		{name: "re-verified: claude gone", from: State{Status: api.StatusUnknown},
			events: []Signal{{Kind: Verified, Check: Check{}}}, want: api.StatusExited},
		{name: "re-verified: a stale needs-input is cleared", from: needs,
			events: []Signal{{Kind: Verified, Check: Check{ClaudeRunning: true, FileStatus: "idle"}}}, want: api.StatusIdle},
		{name: "re-verification keeps review", from: review,
			events: []Signal{{Kind: Verified, Check: Check{ClaudeRunning: true, FileStatus: "idle"}}}, want: api.StatusReview},
		{name: "a live Stop after a restart notifies", from: State{Status: api.StatusUnknown},
			events: []Signal{{Kind: HookStop, At: at(5)}}, want: api.StatusReview, wantNotify: []bool{true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.from
			for i, ev := range tt.events {
				var out Outcome
				s, out = Apply(s, ev, at(1000))
				want := false
				if tt.wantNotify != nil {
					want = tt.wantNotify[i]
				}
				if out.Notify != want {
					t.Errorf("event %d (%s): notify %v, want %v", i, ev.Kind, out.Notify, want)
				}
			}
			if s.Status != tt.want {
				t.Fatalf("status %s, want %s", s.Status, tt.want)
			}
			if tt.check != nil {
				tt.check(t, s)
			}
		})
	}
}

// TestApplyIsPure checks that Apply does not mutate what it was given.
func TestApplyIsPure(t *testing.T) {
	w := &api.Waiting{Kind: "permission", Tool: "Bash"}
	s := State{Status: api.StatusNeedsInput, Waiting: w}
	ns, out := Apply(s, Signal{Kind: HookNotification, NotificationType: "permission_prompt", Message: "m", At: time.Unix(1, 0)}, time.Unix(2, 0))
	if w.Message != "" {
		t.Fatal("Apply mutated the input's Waiting")
	}
	if ns.Waiting.Message != "m" || !out.Changed {
		t.Fatalf("got %+v changed=%v", ns.Waiting, out.Changed)
	}
	if _, out := Apply(ns, Signal{Kind: Viewed}, time.Unix(3, 0)); out.Changed {
		t.Fatal("viewing needs-input reported a change")
	}
}

func FuzzApply(f *testing.F) {
	f.Add(uint8(HookStop), int64(5), "", "busy", uint8(2))
	f.Add(uint8(FileStatus), int64(-5), "compact", "idle", uint8(3))
	f.Fuzz(func(t *testing.T, kind uint8, atMS int64, source, fileStatus string, from uint8) {
		statuses := []api.Status{api.StatusStarting, api.StatusIdle, api.StatusBusy, api.StatusNeedsInput, api.StatusReview, api.StatusUnknown, api.StatusExited}
		s := State{Status: statuses[int(from)%len(statuses)], Watermark: time.Unix(1000, 0)}
		ev := Signal{Kind: Kind(kind % uint8(kindCount)), At: time.Unix(1000, 0).Add(time.Duration(atMS) * time.Millisecond),
			Source: source, FileStatus: fileStatus, NotificationType: source, Tool: source}
		ns, out := Apply(s, ev, time.Unix(2000, 0))
		if !ns.Status.Valid() && !(ev.Kind == 0 && ns.Status == s.Status) {
			t.Fatalf("invalid status %q from %s on %s", ns.Status, s.Status, ev.Kind)
		}
		if out.Notify && (ev.Kind == Restored || ev.Kind == Verified) {
			t.Fatal("restore notified")
		}
		if ns.Watermark.Before(s.Watermark) {
			t.Fatal("watermark went back")
		}
	})
}

// screenDialog is a screen read that shows a dialog with two options.
func screenDialog(id, fp, kind string) Signal {
	return Signal{Kind: ScreenDialog, Fingerprint: fp, Dialog: &api.Waiting{DialogID: id, Kind: kind, Question: "Do you want to proceed?",
		Options: []api.Option{{Number: 1, Label: "Yes"}, {Number: 2, Label: "No"}}}}
}
