package status

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/api"
)

const fixtures = "../../testdata/claude-code-2.1.197"

// hookSignal turns one recorded hook payload into a Signal. The agent has the
// production version of this mapping; this one is deliberately independent
// so that the table below tests the rules, not the mapping.
func hookSignal(t *testing.T, line []byte, at time.Time) Signal {
	t.Helper()
	var p struct {
		Event       string          `json:"hook_event_name"`
		SessionID   string          `json:"session_id"`
		Transcript  string          `json:"transcript_path"`
		Source      string          `json:"source"`
		Reason      string          `json:"reason"`
		Prompt      string          `json:"prompt"`
		Tool        string          `json:"tool_name"`
		Input       json.RawMessage `json:"tool_input"`
		Suggestions json.RawMessage `json:"permission_suggestions"`
		NType       string          `json:"notification_type"`
		Message     string          `json:"message"`
		Last        string          `json:"last_assistant_message"`
		Err         string          `json:"error"`
		Model       string          `json:"model"`
	}
	if err := json.Unmarshal(line, &p); err != nil {
		t.Fatal(err)
	}
	ev := Signal{At: at, ClaudeSessionID: p.SessionID, TranscriptPath: p.Transcript, Model: p.Model}
	switch p.Event {
	case "SessionStart":
		ev.Kind, ev.Source = HookSessionStart, p.Source
	case "SessionEnd":
		ev.Kind, ev.Source = HookSessionEnd, p.Reason
	case "UserPromptSubmit":
		ev.Kind, ev.Prompt = HookPromptSubmit, p.Prompt
	case "PreToolUse":
		ev.Kind, ev.Tool, ev.ToolInput = HookPreToolUse, p.Tool, p.Input
	case "PostToolUse", "PostToolUseFailure":
		ev.Kind, ev.Tool = HookPostToolUse, p.Tool
	case "PermissionRequest":
		ev.Kind, ev.Tool, ev.ToolInput, ev.Suggestions = HookPermissionRequest, p.Tool, p.Input, p.Suggestions
	case "Notification":
		ev.Kind, ev.NotificationType, ev.Message = HookNotification, p.NType, p.Message
	case "Stop":
		ev.Kind, ev.Message = HookStop, p.Last
	case "StopFailure":
		ev.Kind, ev.ErrorKind, ev.Message = HookStopFailure, p.Err, p.Last
	case "PreCompact":
		ev.Kind = HookPreCompact
	case "PostCompact":
		ev.Kind = HookPostCompact
	default:
		ev.Kind = 0 // SubagentStop and others corral does not use
	}
	return ev
}

func fileEvent(t *testing.T, name string) Signal {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures, "sessions", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Status          string `json:"status"`
		WaitingFor      string `json:"waitingFor"`
		SessionID       string `json:"sessionId"`
		StatusUpdatedAt int64  `json:"statusUpdatedAt"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return Signal{Kind: FileStatus, At: time.UnixMilli(f.StatusUpdatedAt), FileStatus: f.Status, Message: f.WaitingFor, ClaudeSessionID: f.SessionID}
}

// TestFixtureReplay replays the recorded hooks of the fixture scenario
// together with Claude's session file after each step, and checks corral's
// state after each step of the table in the fixtures' README.
func TestFixtureReplay(t *testing.T) {
	f, err := os.Open(filepath.Join(fixtures, "hooks.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var hooks [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		hooks = append(hooks, append([]byte(nil), sc.Bytes()...))
	}
	if len(hooks) != 22 {
		t.Fatalf("fixture has %d hooks, want 22", len(hooks))
	}

	// Hook times are read off the transcript's timestamps for the same
	// moments (the recording's clock); ms after 22:23:00Z.
	base := time.Date(2026, 11, 29, 22, 23, 0, 0, time.UTC)
	ms := func(n int) time.Time { return base.Add(time.Duration(n) * time.Millisecond) }
	interrupt := func(at int) Signal { return Signal{Kind: Interrupt, At: ms(at)} }

	steps := []struct {
		name      string
		hookTimes []int    // one per hook of this step, in order
		extra     []Signal // other signals after the hooks (transcript)
		want      api.Status
		check     func(t *testing.T, s State, notified []bool)
	}{
		{name: "1-started", hookTimes: []int{-17200}, want: api.StatusIdle},
		{name: "2-replied", hookTimes: []int{8673, 8795}, want: api.StatusReview,
			check: func(t *testing.T, s State, n []bool) {
				if s.LastMessage != "Hello from mock. Done." {
					t.Errorf("last message %q", s.LastMessage)
				}
				if !n[1] || n[2] {
					t.Errorf("notifications %v, want only on Stop", n)
				}
			}},
		{name: "3-permission", hookTimes: []int{12979, 13050, 13060, 19060}, want: api.StatusNeedsInput,
			check: func(t *testing.T, s State, n []bool) {
				if s.Waiting == nil || s.Waiting.Kind != "permission" || s.Waiting.Tool != "Bash" {
					t.Fatalf("waiting = %+v", s.Waiting)
				}
				var in struct{ Command string }
				if json.Unmarshal(s.Waiting.Input, &in); in.Command != "touch /home/dev/scratch/created_by_tool" {
					t.Errorf("waiting input %s", s.Waiting.Input)
				}
				if s.Waiting.Message != "Claude needs your permission" {
					t.Errorf("late Notification's message not kept: %q", s.Waiting.Message)
				}
				// PermissionRequest (third hook) notifies at once; the later
				// Notification must not notify again.
				if !n[2] || n[3] {
					t.Errorf("notifications %v, want only on PermissionRequest", n)
				}
			}},
		{name: "4-approved", hookTimes: []int{21079, 21141}, want: api.StatusReview,
			check: func(t *testing.T, s State, _ []bool) {
				if s.Waiting != nil || s.CurrentTool != "" {
					t.Errorf("waiting %+v tool %q after the turn", s.Waiting, s.CurrentTool)
				}
			}},
		{name: "5-rejected", hookTimes: []int{25319, 25393, 25400}, extra: []Signal{interrupt(28386)}, want: api.StatusIdle},
		{name: "6-interrupted-early", hookTimes: []int{31653}, want: api.StatusIdle},
		{name: "7-busy", hookTimes: []int{36480}, want: api.StatusBusy,
			check: func(t *testing.T, s State, _ []bool) {
				if !s.BusySince.Equal(ms(36480)) {
					t.Errorf("busy since %v", s.BusySince)
				}
				if s.LastPrompt != "SLOW with text" {
					t.Errorf("last prompt %q", s.LastPrompt)
				}
			}},
		{name: "8-done", hookTimes: []int{41562}, want: api.StatusReview},
		{name: "9-failed", hookTimes: []int{43306, 43362}, want: api.StatusReview,
			check: func(t *testing.T, s State, _ []bool) {
				if s.Error != "unknown" || s.ErrorMessage != "API Error: 400 mock failure" {
					t.Errorf("error %q %q", s.Error, s.ErrorMessage)
				}
			}},
		{name: "10-compacted", hookTimes: []int{47600, 47700, 47705, 47710}, want: api.StatusIdle,
			check: func(t *testing.T, s State, _ []bool) {
				if s.Compacting {
					t.Error("still compacting after PostCompact")
				}
			}},
		{name: "11-exited", hookTimes: []int{50000}, want: api.StatusExited},
	}

	s := State{}
	s, _ = Apply(s, Signal{Kind: Launched}, ms(-18000))
	if s.Status != api.StatusStarting {
		t.Fatalf("launched: %s", s.Status)
	}
	next := 0
	for _, st := range steps {
		var notified []bool
		apply := func(ev Signal) {
			var out Outcome
			s, out = Apply(s, ev, ev.At)
			notified = append(notified, out.Notify)
		}
		for _, at := range st.hookTimes {
			apply(hookSignal(t, hooks[next], ms(at)))
			next++
		}
		for _, ev := range st.extra {
			apply(ev)
		}
		if st.name != "11-exited" {
			apply(fileEvent(t, st.name))
		}
		if s.Status != st.want {
			t.Errorf("after %s: status %s, want %s", st.name, s.Status, st.want)
		}
		if s.ClaudeSessionID != "bcc27dbc-b3d2-457e-9e21-34e69eba33f2" {
			t.Errorf("after %s: claude session id %q", st.name, s.ClaudeSessionID)
		}
		if st.check != nil {
			t.Run(st.name, func(t *testing.T) { st.check(t, s, notified) })
		}
	}
	if next != len(hooks) {
		t.Fatalf("table used %d of %d hooks", next, len(hooks))
	}
}
