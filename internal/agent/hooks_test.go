package agent_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/hookwire"
)

type payload map[string]any

func TestHooksDriveStatus(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	s := r.shell("")
	w := r.watch()

	r.sendHook(header(s.ID), payload{"session_id": "c1", "hook_event_name": "UserPromptSubmit", "prompt": "do the thing"})
	ev := w.status(s.ID, api.StatusBusy)
	if ev.Prev != api.StatusIdle || ev.Notify || ev.Session.LastPrompt != "do the thing" || ev.Session.BusySince.IsZero() {
		t.Errorf("busy event: prev %q notify %v session %+v", ev.Prev, ev.Notify, ev.Session)
	}

	r.sendHook(header(s.ID), payload{"session_id": "c1", "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": payload{"command": "ls"}})
	w.waitFor(5*time.Second, "current tool Bash", func(ev api.Event) bool {
		return ev.Type == api.EventSession && ev.Session.CurrentTool == "Bash"
	})

	r.sendHook(header(s.ID), payload{"session_id": "c1", "hook_event_name": "PermissionRequest", "tool_name": "Bash", "tool_input": payload{"command": "rm -rf build"}})
	ev = w.status(s.ID, api.StatusNeedsInput)
	if !ev.Notify || ev.Session.WaitingFor == nil || ev.Session.WaitingFor.Kind != "permission" || ev.Session.WaitingFor.Tool != "Bash" ||
		!strings.Contains(string(ev.Session.WaitingFor.Input), "rm -rf build") {
		t.Errorf("needs-input event: notify %v waiting %+v", ev.Notify, ev.Session.WaitingFor)
	}

	r.sendHook(header(s.ID), payload{"session_id": "c1", "hook_event_name": "PostToolUse", "tool_name": "Bash"})
	ev = w.status(s.ID, api.StatusBusy)
	if ev.Session.WaitingFor != nil {
		t.Errorf("still waiting after PostToolUse: %+v", ev.Session.WaitingFor)
	}

	r.sendHook(header(s.ID), payload{"session_id": "c1", "hook_event_name": "Stop", "last_assistant_message": "All done."})
	ev = w.status(s.ID, api.StatusReview)
	if !ev.Notify || ev.Session.LastMessage != "All done." || ev.Prev != api.StatusBusy {
		t.Errorf("review event: notify %v prev %q last message %q", ev.Notify, ev.Prev, ev.Session.LastMessage)
	}

	if err := r.a.Viewed(ctxT(t), api.SessionRef{ID: s.ID}); err != nil {
		t.Fatal(err)
	}
	ev = w.status(s.ID, api.StatusIdle)
	if ev.Notify || ev.Prev != api.StatusReview {
		t.Errorf("viewed event: notify %v prev %q", ev.Notify, ev.Prev)
	}

	// A failed turn: review with the error kind; the next prompt clears it.
	r.sendHook(header(s.ID), payload{"session_id": "c1", "hook_event_name": "UserPromptSubmit", "prompt": "again"})
	w.status(s.ID, api.StatusBusy)
	r.sendHook(header(s.ID), payload{"session_id": "c1", "hook_event_name": "StopFailure", "error": "rate_limit", "last_assistant_message": "slow down"})
	ev = w.status(s.ID, api.StatusReview)
	if ev.Session.Error != "rate_limit" || ev.Session.ErrorMessage != "slow down" {
		t.Errorf("StopFailure: error %q message %q", ev.Session.Error, ev.Session.ErrorMessage)
	}
	// Typing into the session counts as seeing it.
	if err := r.a.SendText(ctxT(t), api.InputRequest{SessionRef: api.SessionRef{ID: s.ID}, Text: "true", Enter: true}); err != nil {
		t.Fatal(err)
	}
	w.status(s.ID, api.StatusIdle)

	// The state is stored: a restart brings back the last one.
	r.sendHook(header(s.ID), payload{"session_id": "c1", "hook_event_name": "UserPromptSubmit", "prompt": "third"})
	w.status(s.ID, api.StatusBusy)
	r.sendHook(header(s.ID), payload{"session_id": "c1", "hook_event_name": "Stop"})
	w.status(s.ID, api.StatusReview)
	r.restart()
	back, err := r.a.Session(ctxT(t), api.SessionRef{ID: s.ID})
	if err != nil || back.Status != api.StatusReview || back.LastPrompt != "third" {
		t.Errorf("after restart: %+v, %v; want review with the last prompt", back, err)
	}
}

func TestHookNotifications(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	s := r.shell("")
	w := r.watch()
	r.sendHook(header(s.ID), payload{"session_id": "c1", "hook_event_name": "UserPromptSubmit", "prompt": "p"})
	w.status(s.ID, api.StatusBusy)

	// idle_prompt changes nothing: prove it by handling it to the end
	// before looking.
	seq := r.a.Bus().Seq()
	r.deliverAndWait(rawDelivery(t, header(s.ID), mustJSON(t, payload{"session_id": "c1", "hook_event_name": "Notification", "notification_type": "idle_prompt", "message": "waiting"})))
	if got := r.a.Bus().Seq(); got != seq {
		t.Errorf("idle_prompt notification published %d events", got-seq)
	}

	r.sendHook(header(s.ID), payload{"session_id": "c1", "hook_event_name": "Notification", "notification_type": "permission_prompt", "message": "Claude needs your permission to use Bash"})
	ev := w.status(s.ID, api.StatusNeedsInput)
	if ev.Session.WaitingFor == nil || ev.Session.WaitingFor.Message != "Claude needs your permission to use Bash" {
		t.Errorf("waiting for: %+v", ev.Session.WaitingFor)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestHookBadDeliveriesChangeNothing(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	s := r.shell("")
	good := mustJSON(t, payload{"session_id": "c1", "hook_event_name": "UserPromptSubmit", "prompt": "p"})
	serverPID, err := r.a.Tmux().ServerPID(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.a.Tmux().PaneInfo(ctxT(t), s.ID)
	if err != nil {
		t.Fatal(err)
	}

	withTmux := func(tmuxVar, pane string) hookwire.Header {
		h := header(s.ID)
		h.Tmux, h.Pane = tmuxVar, pane
		return h
	}
	truncated := header(s.ID)
	truncated.Truncated = true
	statusLine := header(s.ID)
	statusLine.Kind = hookwire.KindStatusLine

	bad := []struct {
		name string
		raw  []byte
	}{
		{"garbage payload", rawDelivery(t, header(s.ID), []byte("\x00\xff not json {{{"))},
		{"JSON array payload", rawDelivery(t, header(s.ID), []byte(`[1,2,3]`))},
		{"payload without an event name", rawDelivery(t, header(s.ID), []byte(`{"session_id":"c1"}`))},
		{"unknown event", rawDelivery(t, header(s.ID), []byte(`{"session_id":"c1","hook_event_name":"NoSuchEvent"}`))},
		{"garbage header", []byte("this is not a header\n" + string(good))},
		{"no newline after the header", []byte(`{"kind":"hook"`)},
		{"unknown kind", rawDelivery(t, hookwire.Header{Kind: "bogus", Session: s.ID}, good)},
		{"empty delivery", nil},
		{"no session", rawDelivery(t, header(""), good)},
		{"unknown session", rawDelivery(t, header("nosuchsession"), good)},
		{"another tmux server", rawDelivery(t, withTmux(fmt.Sprintf("/tmp/other/sock,%d,0", serverPID+1), ""), good)},
		{"another pane", rawDelivery(t, withTmux(fmt.Sprintf("%s,%d,0", r.a.Tmux().SocketPath(), serverPID), "%9999"), good)},
		{"truncated by the sender", rawDelivery(t, truncated, nil)},
		{"garbage status line", rawDelivery(t, statusLine, []byte("]["))},
	}
	for _, b := range bad {
		seq := r.a.Bus().Seq()
		r.deliverAndWait(b.raw)
		if got := r.a.Bus().Seq(); got != seq {
			cur, _ := r.a.Session(ctxT(t), api.SessionRef{ID: s.ID})
			t.Errorf("%s: published %d events; session now %s", b.name, got-seq, cur.Status)
		}
	}

	// The agent still serves, and the right server and pane are accepted.
	w := r.watch()
	r.sendHook(withTmux(fmt.Sprintf("%s,%d,0", r.a.Tmux().SocketPath(), serverPID), p.ID), good)
	w.status(s.ID, api.StatusBusy)
}

func TestStatusLineDelivery(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	s := r.shell("")
	w := r.watch()
	h := header(s.ID)
	h.Kind = hookwire.KindStatusLine
	r.sendHook(h, payload{
		"session_id":     "c1",
		"model":          payload{"id": "claude-test-1", "display_name": "Test One"},
		"cost":           payload{"total_cost_usd": 0.25},
		"context_window": payload{"context_window_size": 200000, "used_percentage": 12.5},
	})
	ev := w.waitFor(5*time.Second, "usage from the status line", func(ev api.Event) bool {
		return ev.Type == api.EventSession && ev.Session.Usage.Model != ""
	})
	u := ev.Session.Usage
	if u.Model != "claude-test-1" || u.ModelName != "Test One" || u.CostUSD != 0.25 || u.ContextPercent != 12.5 || u.ContextSize != 200000 {
		t.Errorf("usage = %+v", u)
	}
	if ev.Prev != ev.Session.Status || ev.Notify {
		t.Errorf("a usage update changed the status or notified: %+v", ev)
	}
	// The same status line again is not news.
	seq := r.a.Bus().Seq()
	r.deliverAndWait(rawDelivery(t, h, mustJSON(t, payload{
		"session_id":     "c1",
		"model":          payload{"id": "claude-test-1", "display_name": "Test One"},
		"cost":           payload{"total_cost_usd": 0.25},
		"context_window": payload{"context_window_size": 200000, "used_percentage": 12.5},
	})))
	if got := r.a.Bus().Seq(); got != seq {
		t.Errorf("an unchanged status line published %d events", got-seq)
	}
}

// TestForgedFIFOTranscript: a hook that names a FIFO as its transcript (any
// process of the user can send one, a tool Claude runs included) must not
// freeze the agent: opening a FIFO blocks until a writer comes.
func TestForgedFIFOTranscript(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	s := r.shell("")
	dir := filepath.Join(r.home, ".claude", "projects", "-forged")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	inside := filepath.Join(dir, "c1.jsonl")
	outside := filepath.Join(r.home, "elsewhere.jsonl")
	for _, p := range []string{inside, outside} {
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{inside, outside} {
		r.sendHook(header(s.ID), payload{"session_id": "c1", "hook_event_name": "UserPromptSubmit", "prompt": "x", "transcript_path": p})
	}
	// Every operation still answers, promptly.
	done := make(chan error, 1)
	go func() {
		ctx := ctxT(t)
		if _, err := r.a.Sessions(ctx); err != nil {
			done <- err
			return
		}
		if _, err := r.a.Capture(ctx, api.CaptureRequest{SessionRef: api.SessionRef{ID: s.ID}}); err != nil {
			done <- err
			return
		}
		if err := r.a.SendText(ctx, api.InputRequest{SessionRef: api.SessionRef{ID: s.ID}, Text: "true", Enter: true}); err != nil {
			done <- err
			return
		}
		o, err := r.a.Create(ctx, api.CreateRequest{Dir: r.proj, Shell: true})
		if err == nil {
			err = r.a.Kill(ctx, api.SessionRef{ID: o.ID})
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the agent froze after a hook named a FIFO as its transcript")
	}
	cur, err := r.a.Session(ctxT(t), api.SessionRef{ID: s.ID})
	if err != nil {
		t.Fatal(err)
	}
	if cur.TranscriptPath == outside {
		t.Errorf("a transcript outside Claude's directory was taken: %s", cur.TranscriptPath)
	}
}
