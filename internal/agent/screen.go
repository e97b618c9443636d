package agent

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/claude"
	"github.com/corral-dev/corral/internal/status"
	"github.com/corral-dev/corral/internal/tmux"
)

// The screen is the one signal that shows what a person would answer:
// which dialog is open and what its options are. The agent reads it on
// events (a hook, a session-file change, a key sent, a signal held back by
// a dialog), never as a status poll, and only while Claude starts does it
// look every few hundred milliseconds, because startup dialogs come before
// any hook or session file.

// screenView is what one read of a session's screen shows.
type screenView struct {
	// dialog is the dialog open at the bottom of the screen, if any.
	dialog *claude.Prompt
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
	var v screenView
	if p, ok := claude.ParsePrompt(text); ok {
		v.dialog = &p
		v.kind = dialogKind(p)
		v.fp = fingerprint(v.kind, p)
		return v
	}
	v.input, v.draft, v.busy = inputBox(text)
	return v
}

// dialogKind tells which dialog a menu is by its words.
func dialogKind(p claude.Prompt) string {
	all := strings.ToLower(p.Title + "\n" + p.Body + "\n" + p.Question)
	for _, o := range p.Options {
		all += "\n" + strings.ToLower(o.Label)
	}
	switch {
	case strings.Contains(all, "trust this folder") || strings.Contains(all, "trust the files"):
		return api.DialogTrust
	case strings.Contains(all, "use this api key"):
		return api.DialogAPIKey
	case strings.Contains(all, "ready to execute") || strings.Contains(all, "would you like to proceed"):
		return api.DialogPlan
	case strings.Contains(all, "do you want to proceed") || strings.Contains(all, "do you want to make this edit") ||
		strings.Contains(all, "do you want to create") || strings.Contains(all, "do you want to allow"):
		return api.DialogPermission
	}
	return api.DialogChoice
}

// fingerprint identifies a dialog by what it asks, not by where its focus is.
func fingerprint(kind string, p claude.Prompt) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s", kind, p.Title, p.Body, p.Question)
	for _, o := range p.Options {
		fmt.Fprintf(h, "\x00%s", o.Label)
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// isRuleLine reports a horizontal rule: the borders of Claude's input box.
func isRuleLine(l string) bool {
	t := strings.TrimSpace(l)
	return utf8.RuneCountInString(t) >= 10 && strings.Trim(t, "─━") == ""
}

// inputBox finds Claude's prompt box: a "❯" line right under a rule, the
// box ending at the next rule. It returns what is typed in it, and whether
// the spinner above it says Claude works.
func inputBox(text string) (found bool, draft string, busy bool) {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i := len(lines) - 1; i > 0; i-- {
		l := strings.TrimRightFunc(lines[i], unicode.IsSpace)
		rest, ok := strings.CutPrefix(l, "❯")
		if !ok || !isRuleLine(lines[i-1]) {
			continue
		}
		end := -1
		for j := i + 1; j < len(lines) && j <= i+40; j++ {
			if isRuleLine(lines[j]) {
				end = j
				break
			}
		}
		if end < 0 {
			return false, "", false
		}
		parts := []string{strings.TrimSpace(rest)}
		for _, c := range lines[i+1 : end] {
			parts = append(parts, strings.TrimSpace(c))
		}
		draft = strings.TrimSpace(strings.Join(parts, "\n"))
		return true, draft, spinnerAbove(lines[:i-1])
	}
	return false, "", false
}

// spinnerAbove reports Claude's working line ("· Photosynthesizing… (3s")
// just above the input box; a finished turn says "✻ Cogitated for 3s".
func spinnerAbove(lines []string) bool {
	seen := 0
	for i := len(lines) - 1; i >= 0 && seen < 6; i-- {
		t := strings.TrimSpace(lines[i])
		if t == "" {
			continue
		}
		seen++
		r, size := utf8.DecodeRuneInString(t)
		if !strings.ContainsRune("·✢✳✶✻✽*", r) {
			continue
		}
		word := strings.TrimSpace(t[size:])
		if i := strings.Index(word, "…"); i > 0 && !strings.Contains(word[:i], " ") {
			return true
		}
	}
	return false
}

// screenWait bounds one screen read.
const screenWait = 5 * time.Second

// look reads a session's screen. It does I/O; call it without a.mu.
func (a *Agent) look(ctx context.Context, id string) (screenView, error) {
	tm, target, err := a.terminal(id)
	if err != nil {
		return screenView{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, screenWait)
	defer cancel()
	text, err := tm.Capture(ctx, target, tmux.CaptureOptions{})
	if err != nil {
		return screenView{}, a.tmuxErr(err)
	}
	return readScreen(text), nil
}

// observe folds what a screen read showed into the session's state.
func (a *Agent) observe(id string, v screenView) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s, ok := a.sessions[id]; ok {
		a.observeLocked(s, v)
	}
}

// observeLocked is observe with a.mu held.
func (a *Agent) observeLocked(s *session, v screenView) {
	if s.kind == api.KindShell {
		return
	}
	if v.dialog == nil {
		a.applyLocked(s, status.Event{Kind: status.ScreenClear, Screen: status.ScreenState{InputBox: v.input, Busy: v.busy}})
		return
	}
	a.applyLocked(s, status.Event{Kind: status.ScreenDialog, Fingerprint: v.fp, Dialog: waitingOf(v)})
}

// waitingOf describes a dialog read off the screen, under a fresh id (kept
// by the engine if it is the dialog it already knows).
func waitingOf(v screenView) *api.Waiting {
	p := v.dialog
	w := &api.Waiting{DialogID: newDialogID(), Kind: v.kind, Title: p.Title, Question: p.Question, Body: p.Body,
		Options: make([]api.Option, len(p.Options))}
	for i, o := range p.Options {
		w.Options[i] = api.Option{Number: i + 1, Label: o.Label}
	}
	if v.kind == api.DialogPlan {
		w.Plan = p.Body
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

// recheck reads a session's screen again soon, and a few more times while
// a signal waits on a dialog that may be closing (Claude redraws a moment
// after it reports). One chain per session at a time.
func (a *Agent) recheck(s *session) {
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
			done := !ok || s.st.Deferred == nil && (s.st.Status != api.StatusNeedsInput || s.st.OnScreen != "")
			a.mu.Unlock()
			if done {
				return
			}
		}
	})
}

// Startup screen reads: Claude asks some questions (trust this folder? use
// this API key?) before any hook can run, and only the screen shows them.
const (
	startupLookEvery = 200 * time.Millisecond
	startupLookFor   = 2 * time.Minute
)

// watchStartup reads a starting session's screen until Claude is up or
// shows a dialog.
func (a *Agent) watchStartup(id string) {
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
