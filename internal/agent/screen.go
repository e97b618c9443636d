package agent

import (
	"context"
	"crypto/rand"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/claude/screen"
	"github.com/corral-dev/corral/internal/status"
	"github.com/corral-dev/corral/internal/tmux"
)

// screens reads sessions' screens and hands what they show to the intake.
type screens struct{ *Agent }

// The screen is the one signal that shows what a person would answer:
// which dialog is open and what its options are. The agent reads it on
// events (a hook, a session-file change, a key sent, a signal held back by
// a dialog), never as a status poll, and only while Claude starts does it
// look every few hundred milliseconds, because startup dialogs come before
// any hook or session file.

// screenView is what one read of a session's screen shows.
type screenView struct {
	// scr is the screen as screen.Read read it, from the capture text.
	scr  screen.Screen
	text string
	// dialog is the dialog open at the bottom of the screen, if any, its
	// kind and its fingerprint.
	dialog *screen.Dialog
	kind   string
	fp     string
	// input: Claude's prompt box is drawn (and no dialog covers it); draft
	// is what is typed in it.
	input bool
	draft string
	// busy: Claude's spinner says it works.
	busy bool
}

// readScreen interprets a capture of Claude's screen.
func readScreen(text string) screenView {
	sc := screen.Read(text)
	v := screenView{scr: sc, text: text, dialog: sc.Dialog, busy: sc.Busy}
	if sc.Dialog != nil {
		v.kind = sc.Dialog.Kind
		v.fp = sc.Dialog.Fingerprint()
	}
	if sc.Input != nil {
		v.input, v.draft = true, sc.Input.Draft
	}
	return v
}

// question is what a dialog asks, for messages.
func (v screenView) question() string {
	if v.dialog == nil {
		return ""
	}
	if v.dialog.Question != "" {
		return v.dialog.Question
	}
	return v.dialog.Title
}

// screenWait bounds one screen read.
const screenWait = 5 * time.Second

// waitingOf describes a dialog read off the screen, under a fresh id (kept
// by the engine if it is the dialog it already knows).
func waitingOf(v screenView) *api.Waiting {
	d := v.dialog
	w := &api.Waiting{DialogID: newDialogID(), Kind: v.kind, Title: d.Title, Question: d.Question, Body: d.Body,
		Tool: d.Tool, MultiSelect: d.MultiSelect, Plan: d.Plan, Options: make([]api.Option, len(d.Options))}
	for i, o := range d.Options {
		w.Options[i] = api.Option{Number: i + 1, Label: o.Label, Description: o.Description, Text: o.Text, Checked: o.Checked, Chat: o.Chat}
	}
	switch d.Current {
	case screen.CurrentSubmit:
		w.Current = -1
	case screen.CurrentUnknown:
		// The screen did not say which tab is on: the first unanswered.
		for i, done := range d.Answered {
			if !done {
				w.Current = i
				break
			}
		}
	default:
		w.Current = d.Current
	}
	for _, f := range d.Fields {
		w.Fields = append(w.Fields, api.Field{Name: f.Name, Kind: f.Kind, Value: f.Value, Missing: f.Missing,
			Description: f.Description, Choices: f.Choices})
	}
	return w
}

// newDialogID names a dialog: 8 random base32 characters.
func newDialogID() string {
	const alphabet = "abcdefghijkmnpqrstuvwxyz23456789"
	var b [8]byte
	rand.Read(b[:])
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b[:])
}

// Startup screen reads: Claude asks some questions (trust this folder? use
// this API key?) before any hook can run, and only the screen shows them.
const (
	startupLookEvery = 200 * time.Millisecond
	startupLookFor   = 2 * time.Minute
)

// look reads a session's screen. It does I/O; call it without a.mu.
func (a *screens) look(ctx context.Context, id string) (screenView, error) {
	tm, target, err := a.panes.terminal(id)
	if err != nil {
		return screenView{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, screenWait)
	defer cancel()
	// With escapes: the question on screen of several is marked by colour.
	text, err := tm.Capture(ctx, target, tmux.CaptureOptions{Escapes: true})
	if err != nil {
		return screenView{}, a.panes.tmuxErr(err)
	}
	return readScreen(text), nil
}

// observe folds what a screen read showed into the session's state.
func (a *screens) observe(id string, v screenView) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s, ok := a.sessions[id]; ok {
		a.observeLocked(s, v)
	}
}

// observeLocked is observe with a.mu held.
func (a *screens) observeLocked(s *session, v screenView) {
	if s.kind == api.KindShell {
		return
	}
	if v.dialog == nil {
		a.in.applyLocked(s, status.Signal{Kind: status.ScreenClear, Screen: status.ScreenState{InputBox: v.input, Busy: v.busy}})
		return
	}
	a.in.applyLocked(s, status.Signal{Kind: status.ScreenDialog, Fingerprint: v.fp, Dialog: waitingOf(v)})
}

// recheck reads a session's screen again soon, and a few more times while
// a signal waits on a dialog that may be closing (Claude redraws a moment
// after it reports). One chain per session at a time.
func (a *screens) recheck(s *session) {
	if a.ctx == nil || s.rechecking || s.kind == api.KindShell {
		return
	}
	s.rechecking = true
	id := s.id
	delays := []time.Duration{30 * time.Millisecond, 250 * time.Millisecond, time.Second, 3 * time.Second}
	a.goLoop("recheck", func() {
		defer func() {
			a.mu.Lock()
			if s, ok := a.sessions[id]; ok {
				s.rechecking = false
			}
			a.mu.Unlock()
		}()
		for _, d := range delays {
			select {
			case <-a.ctx.Done():
				return
			case <-time.After(d):
			}
			v, err := a.look(a.ctx, id)
			if err != nil {
				return
			}
			a.observe(id, v)
			a.mu.Lock()
			s, ok := a.sessions[id]
			// Done once nothing waits on the screen: no held signal, and a
			// needs-input has been seen drawn.
			done := !ok || len(s.st.Deferred) == 0 && (s.st.Status != api.StatusNeedsInput || s.st.OnScreen != "")
			a.mu.Unlock()
			if done {
				return
			}
		}
	})
}

// watchStartup reads a starting session's screen until Claude is up or
// shows a dialog.
func (a *screens) watchStartup(id string) {
	if a.ctx == nil {
		return
	}
	a.goLoop("startup-screen", func() {
		deadline := time.Now().Add(startupLookFor)
		every := startupLookEvery
		for time.Now().Before(deadline) {
			select {
			case <-a.ctx.Done():
				return
			case <-time.After(every):
			}
			a.mu.Lock()
			s, ok := a.sessions[id]
			starting := ok && s.st.Status == api.StatusStarting
			a.mu.Unlock()
			if !starting {
				return
			}
			v, err := a.look(a.ctx, id)
			if err != nil {
				every = min(every*2, 2*time.Second)
				continue
			}
			if v.dialog != nil {
				a.observe(id, v)
				return
			}
		}
	})
}
