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
		events     []Event
		want       api.Status
		wantNotify []bool // per event; nil means "never"
		check      func(t *testing.T, s State)
	}{
		{name: "compact SessionStart during a turn keeps busy", from: busy,
			events: []Event{{Kind: HookPreCompact, At: at(5)}, {Kind: HookSessionStart, Source: "compact", At: at(6)}},
			want:   api.StatusBusy,
			check: func(t *testing.T, s State) {
				if !s.Compacting || !s.BusySince.Equal(at(0)) {
					t.Errorf("compacting %v busy since %v", s.Compacting, s.BusySince)
				}
			}},
		{name: "a launch that resumes keeps the conversation's id", from: State{Status: api.StatusReview, ClaudeSessionID: "c1", LastMessage: "done"},
			events: []Event{{Kind: Launched, ClaudeSessionID: "c1"}}, want: api.StatusStarting,
			check: func(t *testing.T, s State) {
				if s.ClaudeSessionID != "c1" || s.LastMessage != "" {
					t.Errorf("conversation %q, last message %q", s.ClaudeSessionID, s.LastMessage)
				}
			}},
		{name: "a fresh launch forgets the conversation", from: State{Status: api.StatusIdle, ClaudeSessionID: "c1"},
			events: []Event{{Kind: Launched}}, want: api.StatusStarting,
			check: func(t *testing.T, s State) {
				if s.ClaudeSessionID != "" {
					t.Errorf("conversation %q", s.ClaudeSessionID)
				}
			}},
		{name: "compact SessionStart when idle is idle", from: State{Status: api.StatusIdle},
			events: []Event{{Kind: HookSessionStart, Source: "compact", At: at(6)}}, want: api.StatusIdle},
		{name: "needs-input clears on PostToolUse", from: needs,
			events: []Event{{Kind: HookPostToolUse, Tool: "Bash", At: at(30)}}, want: api.StatusBusy,
			check: func(t *testing.T, s State) {
				if s.Waiting != nil || !s.BusySince.Equal(at(0)) {
					t.Errorf("waiting %+v, busy since %v (the turn's start must be kept)", s.Waiting, s.BusySince)
				}
			}},
		{name: "needs-input clears on PostToolUseFailure too", from: needs,
			events: []Event{{Kind: HookPostToolUse, At: at(30)}}, want: api.StatusBusy},
		{name: "approval seen in the session file clears needs-input before the tool ends", from: needs,
			events: []Event{{Kind: FileStatus, FileStatus: "busy", At: at(30)}}, want: api.StatusBusy},
		{name: "review becomes idle when viewed", from: review, events: []Event{{Kind: Viewed}}, want: api.StatusIdle},
		{name: "review becomes idle on input", from: review, events: []Event{{Kind: Input}}, want: api.StatusIdle},
		{name: "viewing a busy session changes nothing", from: busy, events: []Event{{Kind: Viewed}}, want: api.StatusBusy},
		{name: "session file idle does not erase review", from: review,
			events: []Event{{Kind: FileStatus, FileStatus: "idle", At: at(25)}}, want: api.StatusReview},
		{name: "stale session file busy after Stop is ignored", from: busy,
			events: []Event{{Kind: HookStop, At: at(50)}, {Kind: FileStatus, FileStatus: "busy", At: at(40)}},
			want:   api.StatusReview, wantNotify: []bool{true, false}},
		{name: "stale PostToolUse arriving after Stop is ignored", from: busy,
			events: []Event{{Kind: HookStop, At: at(50)}, {Kind: HookPostToolUse, At: at(45)}},
			want:   api.StatusReview, wantNotify: []bool{true, false}},
		{name: "file idle before Stop: brief idle, then review notifies", from: busy,
			events: []Event{{Kind: FileStatus, FileStatus: "idle", At: at(49)}, {Kind: HookStop, At: at(50)}},
			want:   api.StatusReview, wantNotify: []bool{false, true}},
		{name: "file idle seen before an older Stop of the same turn: review", from: busy,
			events: []Event{{Kind: FileStatus, FileStatus: "idle", At: at(52)}, {Kind: HookStop, At: at(50)}},
			want:   api.StatusReview, wantNotify: []bool{false, true}},
		{name: "file idle seen before an older StopFailure of the same turn: review with the error", from: busy,
			events: []Event{{Kind: FileStatus, FileStatus: "idle", At: at(52)}, {Kind: HookStopFailure, ErrorKind: "rate_limit", At: at(50)}},
			want:   api.StatusReview, wantNotify: []bool{false, true},
			check: func(t *testing.T, s State) {
				if s.Error != "rate_limit" {
					t.Errorf("error %q", s.Error)
				}
			}},
		{name: "a Stop from before the turn does not end a file idle", from: busy,
			events: []Event{{Kind: HookPromptSubmit, At: at(40)}, {Kind: FileStatus, FileStatus: "idle", At: at(52)}, {Kind: HookStop, At: at(30)}},
			want:   api.StatusIdle},
		{name: "a Stop after an interrupt in the transcript does not end a file idle", from: busy,
			events: []Event{{Kind: FileStatus, FileStatus: "idle", At: at(52)}, {Kind: Interrupt, At: at(51)}, {Kind: HookStop, At: at(50)}},
			want:   api.StatusIdle},
		{name: "file idle, then a new prompt: a late Stop of the old turn changes nothing", from: busy,
			events: []Event{{Kind: FileStatus, FileStatus: "idle", At: at(52)}, {Kind: HookPromptSubmit, At: at(60)}, {Kind: HookStop, At: at(50)}},
			want:   api.StatusBusy},
		{name: "transcript interrupt older than a new prompt is ignored", from: busy,
			events: []Event{{Kind: HookPromptSubmit, At: at(100)}, {Kind: Interrupt, At: at(90)}},
			want:   api.StatusBusy},
		{name: "idle_prompt notification changes nothing", from: State{Status: api.StatusIdle},
			events: []Event{{Kind: HookNotification, NotificationType: "idle_prompt", At: at(5)}}, want: api.StatusIdle},
		{name: "elicitation notification needs input", from: busy,
			events: []Event{{Kind: HookNotification, NotificationType: "elicitation_dialog", Message: "MCP asks", At: at(5)}},
			want:   api.StatusNeedsInput, wantNotify: []bool{true},
			check: func(t *testing.T, s State) {
				if s.Waiting.Kind != "elicitation" || s.Waiting.Message != "MCP asks" {
					t.Errorf("waiting %+v", s.Waiting)
				}
			}},
		{name: "AskUserQuestion needs input", from: busy,
			events: []Event{{Kind: HookPreToolUse, Tool: "AskUserQuestion", ToolInput: []byte(`{"questions":[]}`), At: at(5)}},
			want:   api.StatusNeedsInput, wantNotify: []bool{true},
			check: func(t *testing.T, s State) {
				if s.Waiting.Kind != "question" || string(s.Waiting.Input) != `{"questions":[]}` {
					t.Errorf("waiting %+v", s.Waiting)
				}
			}},
		{name: "PreToolUse sets the current tool", from: busy,
			events: []Event{{Kind: HookPreToolUse, Tool: "Read", At: at(5)}}, want: api.StatusBusy,
			check: func(t *testing.T, s State) {
				if s.CurrentTool != "Read" {
					t.Errorf("tool %q", s.CurrentTool)
				}
			}},
		{name: "session file waiting needs input at once", from: busy,
			events: []Event{{Kind: FileStatus, FileStatus: "waiting", Message: "permission prompt", At: at(5)}},
			want:   api.StatusNeedsInput, wantNotify: []bool{true}},
		{name: "StopFailure is review with the error, a new prompt clears it", from: busy,
			events: []Event{{Kind: HookStopFailure, ErrorKind: "rate_limit", Message: "API Error: 429", At: at(5)},
				{Kind: HookPromptSubmit, At: at(9)}},
			want: api.StatusBusy, wantNotify: []bool{true, false},
			check: func(t *testing.T, s State) {
				if s.Error != "" {
					t.Errorf("error %q kept into the next turn", s.Error)
				}
			}},
		{name: "SessionEnd clear keeps the process", from: State{Status: api.StatusIdle},
			events: []Event{{Kind: HookSessionEnd, Source: "clear", At: at(5)}, {Kind: HookSessionStart, Source: "clear", ClaudeSessionID: "new", At: at(6)}},
			want:   api.StatusIdle,
			check: func(t *testing.T, s State) {
				if s.ClaudeSessionID != "new" {
					t.Errorf("session id %q", s.ClaudeSessionID)
				}
			}},
		{name: "PermissionRequest just after the file's waiting still gives the details",
			from: busy,
			events: []Event{{Kind: FileStatus, FileStatus: "waiting", Message: "permission prompt", At: at(10)},
				{Kind: HookPermissionRequest, Tool: "Bash", ToolInput: []byte(`{"command":"ls"}`), At: at(8)}},
			want: api.StatusNeedsInput, wantNotify: []bool{true, false},
			check: func(t *testing.T, s State) {
				if s.Waiting.Tool != "Bash" || string(s.Waiting.Input) != `{"command":"ls"}` || s.Waiting.Message != "permission prompt" {
					t.Errorf("waiting %+v", s.Waiting)
				}
			}},
		{name: "a stale PermissionRequest does not bring back a dialog that was answered", from: busy,
			events: []Event{{Kind: FileStatus, FileStatus: "busy", At: at(10)},
				{Kind: HookPermissionRequest, Tool: "Bash", At: at(8)}},
			want: api.StatusBusy},
		{name: "compaction clears the last turn's error", from: State{Status: api.StatusReview, Error: "unknown", Watermark: at(0)},
			events: []Event{{Kind: HookSessionStart, Source: "compact", At: at(5)}},
			want:   api.StatusIdle,
			check: func(t *testing.T, s State) {
				if s.Error != "" {
					t.Errorf("error %q", s.Error)
				}
			}},
		{name: "a session file without a status moves nothing, not even the watermark",
			from: State{Status: api.StatusStarting, Watermark: at(0)},
			events: []Event{{Kind: FileStatus, FileStatus: "", At: at(500)}, {Kind: FileStatus, FileStatus: "shell", At: at(501)},
				{Kind: HookSessionStart, Source: "startup", At: at(100)}},
			want: api.StatusIdle},
		{name: "untimed signals do not make timed ones stale",
			from:   State{Status: api.StatusReview, Watermark: at(0)},
			events: []Event{{Kind: Viewed}, {Kind: HookPromptSubmit, At: at(5)}},
			want:   api.StatusBusy},
		{name: "SessionEnd exit", from: busy, events: []Event{{Kind: HookSessionEnd, Source: "prompt_input_exit", At: at(5)}}, want: api.StatusExited},
		{name: "process exit wins whatever its time", from: busy, events: []Event{{Kind: ClaudeExited}}, want: api.StatusExited},
		{name: "claude started again in the pane", from: State{Status: api.StatusExited},
			events: []Event{{Kind: ClaudeStarted}, {Kind: HookSessionStart, Source: "startup", At: at(5)}}, want: api.StatusIdle},
		{name: "the dialog's options read off the screen become buttons", from: needs,
			events: []Event{{Kind: ScreenPrompt, Options: []api.Option{{Label: "Yes", Keys: []string{"1"}}, {Label: "No", Keys: []string{"3"}}}}},
			want:   api.StatusNeedsInput,
			check: func(t *testing.T, s State) {
				if s.Waiting.Tool != "Bash" || len(s.Waiting.Options) != 2 || s.Waiting.Options[1].Keys[0] != "3" {
					t.Errorf("waiting %+v", s.Waiting)
				}
			}},
		{name: "a screen prompt does not invent needs-input for an idle session", from: State{Status: api.StatusIdle},
			events: []Event{{Kind: ScreenPrompt, Options: []api.Option{{Label: "Yes", Keys: []string{"1"}}}}},
			want:   api.StatusIdle},
		{name: "trust dialog on screen while starting needs input", from: State{Status: api.StatusStarting},
			events: []Event{{Kind: ScreenPrompt, Message: "Do you trust the files in this folder?", Options: []api.Option{{Label: "Yes", Keys: []string{"1"}}}}},
			want:   api.StatusNeedsInput, wantNotify: []bool{true}},

		// Restarts.
		{name: "restart: busy becomes unknown, without a notification", from: busy,
			events: []Event{{Kind: Restored}}, want: api.StatusUnknown, wantNotify: []bool{false}},
		{name: "restart: needs-input, review and idle are kept", from: review,
			events: []Event{{Kind: Restored}}, want: api.StatusReview},
		{name: "re-verified busy", from: State{Status: api.StatusUnknown, BusySince: at(0)},
			events: []Event{{Kind: Verified, Check: Check{ClaudeRunning: true, FileStatus: "busy"}}}, want: api.StatusBusy,
			check: func(t *testing.T, s State) {
				if !s.BusySince.Equal(at(0)) {
					t.Errorf("busy since %v, want the original start", s.BusySince)
				}
			}},
		{name: "re-verified: the turn finished while corral was away is review, silently",
			from:   State{Status: api.StatusUnknown},
			events: []Event{{Kind: Verified, Check: Check{ClaudeRunning: true, FileStatus: "idle", TurnEnded: true}}},
			want:   api.StatusReview, wantNotify: []bool{false}},
		{name: "re-verified: interrupted while away is idle", from: State{Status: api.StatusUnknown},
			events: []Event{{Kind: Verified, Check: Check{ClaudeRunning: true, FileStatus: "idle"}}}, want: api.StatusIdle},
		{name: "re-verified: waiting", from: State{Status: api.StatusUnknown},
			events: []Event{{Kind: Verified, Check: Check{ClaudeRunning: true, FileStatus: "waiting", FileWaitingFor: "permission prompt"}}},
			want:   api.StatusNeedsInput, wantNotify: []bool{false}},
		{name: "re-verified: claude gone", from: State{Status: api.StatusUnknown},
			events: []Event{{Kind: Verified, Check: Check{}}}, want: api.StatusExited},
		{name: "re-verified: a stale needs-input is cleared", from: needs,
			events: []Event{{Kind: Verified, Check: Check{ClaudeRunning: true, FileStatus: "idle"}}}, want: api.StatusIdle},
		{name: "re-verification keeps review", from: review,
			events: []Event{{Kind: Verified, Check: Check{ClaudeRunning: true, FileStatus: "idle"}}}, want: api.StatusReview},
		{name: "a live Stop after a restart notifies", from: State{Status: api.StatusUnknown},
			events: []Event{{Kind: HookStop, At: at(5)}}, want: api.StatusReview, wantNotify: []bool{true}},
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
	ns, out := Apply(s, Event{Kind: HookNotification, NotificationType: "permission_prompt", Message: "m", At: time.Unix(1, 0)}, time.Unix(2, 0))
	if w.Message != "" {
		t.Fatal("Apply mutated the input's Waiting")
	}
	if ns.Waiting.Message != "m" || !out.Changed {
		t.Fatalf("got %+v changed=%v", ns.Waiting, out.Changed)
	}
	if _, out := Apply(ns, Event{Kind: Viewed}, time.Unix(3, 0)); out.Changed {
		t.Fatal("viewing needs-input reported a change")
	}
}

func FuzzApply(f *testing.F) {
	f.Add(uint8(HookStop), int64(5), "", "busy", uint8(2))
	f.Add(uint8(FileStatus), int64(-5), "compact", "idle", uint8(3))
	f.Fuzz(func(t *testing.T, kind uint8, atMS int64, source, fileStatus string, from uint8) {
		statuses := []api.Status{api.StatusStarting, api.StatusIdle, api.StatusBusy, api.StatusNeedsInput, api.StatusReview, api.StatusUnknown, api.StatusExited}
		s := State{Status: statuses[int(from)%len(statuses)], Watermark: time.Unix(1000, 0)}
		ev := Event{Kind: Kind(kind % uint8(Verified+1)), At: time.Unix(1000, 0).Add(time.Duration(atMS) * time.Millisecond),
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
