package agent

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/claude/screen"
	"github.com/corral-dev/corral/internal/status"
	"github.com/corral-dev/corral/internal/tmux"
)

// inputGate is the one way text and keys go into a session (see above).
type inputGate struct{ *Agent }

// Input safety. Every path that types into a Claude session (corral send,
// the web prompt box, the API, the hub) comes through SendText, which looks
// at the screen first: text goes only into Claude's own input box, never
// into a dialog (dialog_open), never over a draft typed elsewhere
// (draft_present, unless the person chose to replace it), and never when
// corral cannot tell what the screen shows (screen_unclear). Dialogs are
// answered with Answer, which names the dialog and picks the option on the
// screen it was read from. SendKeys stays raw: the escape hatch.

// maxText bounds one text input: a long prompt, not a file.
const maxText = 256 << 10

// checkText refuses text that would act as keys rather than characters:
// escape sequences (an ESC could interrupt Claude or end a paste), C0
// controls other than tab and newlines, DEL and C1 controls.
func checkText(t string) error {
	if !utf8.ValidString(t) {
		return api.Errorf(api.CodeBadRequest, "text is not valid UTF-8")
	}
	if len(t) > maxText {
		return api.Errorf(api.CodeTooLarge, "text is %d bytes; the limit is %d", len(t), maxText)
	}
	for i, r := range t {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			return api.Errorf(api.CodeBadRequest, "text has a control character (U+%04X at byte %d); send keys with `corral keys` instead", r, i)
		}
	}
	return nil
}

// typedWait bounds how long typed text may take to show in Claude's box:
// Claude draws a few milliseconds after the keys arrive.
const typedWait = 2 * time.Second

// settleWait bounds how long corral waits for Claude to draw its input
// box: a Claude that just started or resumed reports itself up a moment
// before its screen is drawn.
const settleWait = 3 * time.Second

// Submitting: Claude drops a key that arrives while it redraws (after a
// turn's end, a paste), and then the prompt waits in the box. Enter is
// pressed again, up to submitTries times, only while the box still holds
// the very text corral typed and no dialog is open; Enter on an empty box
// does nothing, so a first Enter that did arrive is not doubled.
const (
	submitTries = 3
	submitWait  = 1500 * time.Millisecond
)

func dialogOpen(v screenView, what string) error {
	q := v.question()
	if q != "" {
		q = fmt.Sprintf(" (%q)", clip(q, 80))
	}
	return api.Errorf(api.CodeDialogOpen, "a %s dialog is open%s; %s. Answer it with `corral answer`, or press keys with `corral keys`", v.kind, q, what)
}

// clip shortens s to n runes for a message.
func clip(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// answerOf turns an answer request into what the screen's dialog takes,
// and says what was chosen.
func answerOf(d *screen.Dialog, req api.AnswerRequest) (screen.Answer, string, error) {
	ans := screen.Answer{Option: req.Option, Options: req.Options, Text: req.Text, Fields: req.Fields, Cancel: req.Cancel}
	if req.Choice != "" {
		if req.Option != 0 || len(req.Options) > 0 {
			return ans, "", api.Errorf(api.CodeBadRequest, "give an option or a choice, not both")
		}
		n, err := choiceOption(d, req.Choice)
		if err != nil {
			return ans, "", err
		}
		ans.Option = n
	}
	var label string
	switch {
	case ans.Cancel:
		label = "Esc (cancel)"
	case ans.Option > 0 && ans.Option <= len(d.Options):
		label = strconv.Itoa(ans.Option) + ". " + d.Options[ans.Option-1].Label
	case len(ans.Options) > 0:
		var parts []string
		for _, n := range ans.Options {
			if n > 0 && n <= len(d.Options) {
				parts = append(parts, strconv.Itoa(n)+". "+d.Options[n-1].Label)
			}
		}
		label = strings.Join(parts, ", ")
	}
	if ans.Text != "" {
		label += fmt.Sprintf(" with %q", clip(ans.Text, 60))
	}
	return ans, strings.TrimSpace(label), nil
}

// maxReplans bounds how often one answer reads a dialog again (an
// elicitation's choice field shows its choices only once expanded).
const maxReplans = 8

// stepWait bounds how long one step of an answer may take to show: Claude
// drops keys that arrive while it redraws, so each step waits for its own.
const stepWait = 3 * time.Second

func describeStep(st screen.KeyStep) string {
	if st.Text != "" {
		return "typing the text"
	}
	return strings.Join(st.Keys, " ")
}

// choiceOption finds the option a yes/no/always answer means, by its label.
func choiceOption(d *screen.Dialog, choice string) (int, error) {
	match := func(pred func(l string) bool) []int {
		var out []int
		for i, o := range d.Options {
			if pred(strings.ToLower(o.Label)) {
				out = append(out, i+1)
			}
		}
		return out
	}
	always := func(l string) bool {
		return strings.Contains(l, "always") || strings.Contains(l, "don't ask again") || strings.Contains(l, "do not ask again")
	}
	var found []int
	switch strings.ToLower(choice) {
	case "yes", "y":
		found = match(func(l string) bool { return strings.HasPrefix(l, "yes") && !always(l) })
	case "always", "a":
		found = match(func(l string) bool { return strings.HasPrefix(l, "yes") && always(l) })
	case "no", "n":
		found = match(func(l string) bool { return strings.HasPrefix(l, "no") })
	default:
		return 0, api.Errorf(api.CodeBadRequest, "choice %q: want yes, no or always", choice)
	}
	if len(found) != 1 {
		return 0, api.Errorf(api.CodeBadRequest, "the dialog has no single %q option; answer with its number", choice)
	}
	return found[0], nil
}

// startWait bounds how long input waits for Claude to come up.

// waitStarted returns once a session is no longer starting: keys typed
// before Claude reads its terminal are lost.
func (a *inputGate) waitStarted(ctx context.Context, id string) error {
	sub := a.bus.Subscribe(0)
	defer sub.Close()
	ctx, cancel := context.WithTimeout(ctx, startWait)
	defer cancel()
	for {
		s, ok := a.bus.Session(id)
		if !ok {
			return api.Errorf(api.CodeNotFound, "no session %q", id)
		}
		if s.Status != api.StatusStarting {
			return nil
		}
		select {
		case <-ctx.Done():
			return api.Errorf(api.CodeConflict, "session %s is still starting; try again", id)
		case _, ok := <-sub.C():
			if !ok {
				sub = a.bus.Subscribe(0)
			}
		}
	}
}

// SendText types text into a session, then presses Enter if asked.
func (a *inputGate) SendText(ctx context.Context, req api.InputRequest) error {
	id, began := req.ID, now()
	if err := checkText(req.Text); err != nil {
		return err
	}
	if req.Text == "" && !req.Enter {
		return api.Errorf(api.CodeBadRequest, "nothing to send")
	}
	s, err := a.get(id)
	if err != nil {
		return err
	}
	a.mu.Lock()
	kind, st := s.kind, s.st.Status
	a.mu.Unlock()
	if kind == api.KindShell || st == api.StatusExited {
		// No Claude runs there: the pane is a shell, which takes text as
		// typed. Still, nothing goes into a Claude dialog on the screen.
		if kind != api.KindShell {
			v, err := a.screen.look(ctx, id)
			if err != nil {
				return err
			}
			if v.dialog != nil {
				a.screen.observe(id, v)
				return dialogOpen(v, "nothing was typed")
			}
		}
		if err := a.typeText(ctx, id, req.Text, req.Enter); err != nil {
			return err
		}
		a.in.personActed(id, status.Input, began)
		return nil
	}
	if err := a.waitStarted(ctx, id); err != nil {
		return err
	}
	if err := a.checkInputBox(ctx, id, req.ClearDraft); err != nil {
		return err
	}
	if req.Text != "" {
		if err := a.paste(ctx, id, req.Text); err != nil {
			return err
		}
	}
	if req.Enter {
		// The text is in; Enter is what submits, and what picks an option in
		// a dialog. Look once more: a dialog that opened meanwhile gets
		// nothing, the text waits in the box.
		v, err := a.lookTyped(ctx, id, req.Text != "")
		if err != nil {
			return err
		}
		a.screen.observe(id, v)
		if v.dialog != nil {
			return dialogOpen(v, "the text was typed but not sent")
		}
		if !v.input {
			return api.Errorf(api.CodeScreenUnclear, "the text was typed, but corral no longer sees Claude's input box, so it did not press Enter; look at the terminal")
		}
		if req.Text != "" && v.draft == "" {
			return api.Errorf(api.CodeScreenUnclear, "the text did not arrive in Claude's input box, so corral did not press Enter; look at the terminal")
		}
		if err := a.submit(ctx, id, v.draft); err != nil {
			return err
		}
	}
	a.in.personActed(id, status.Input, began)
	return nil
}

// lookTyped reads the screen after text was typed, until the text shows in
// Claude's input box or something else covers it, within typedWait.
func (a *inputGate) lookTyped(ctx context.Context, id string, typed bool) (screenView, error) {
	deadline := time.Now().Add(typedWait)
	for {
		v, err := a.screen.look(ctx, id)
		if err != nil || !typed || v.dialog != nil || v.draft != "" || time.Now().After(deadline) {
			return v, err
		}
		select {
		case <-ctx.Done():
			return v, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// lookSettled reads the screen until it shows a dialog or Claude's input
// box, within settleWait.
func (a *inputGate) lookSettled(ctx context.Context, id string) (screenView, error) {
	deadline := time.Now().Add(settleWait)
	for {
		v, err := a.screen.look(ctx, id)
		if err != nil || v.dialog != nil || v.input || time.Now().After(deadline) {
			return v, err
		}
		select {
		case <-ctx.Done():
			return v, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// submit presses Enter and checks that Claude took the prompt.
func (a *inputGate) submit(ctx context.Context, id, draft string) error {
	for try := 1; ; try++ {
		if err := a.keys(ctx, id, "Enter"); err != nil {
			return err
		}
		deadline := time.Now().Add(submitWait)
		for {
			v, err := a.screen.look(ctx, id)
			if err != nil {
				return err
			}
			if v.dialog != nil || !v.input || v.draft != draft || v.busy {
				return nil // taken (or something else now owns the screen)
			}
			if time.Now().After(deadline) {
				break
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
		}
		if try == submitTries {
			return api.Errorf(api.CodeScreenUnclear, "Claude did not take the prompt after %d presses of Enter; it waits in the input box", submitTries)
		}
		a.log.Debug("Enter was not taken; pressing it again", "session", id, "try", try)
	}
}

// checkInputBox returns nil when Claude's input box is on the screen, empty
// (a draft is cleared first when the person asked), and no dialog is open.
func (a *inputGate) checkInputBox(ctx context.Context, id string, clearDraft bool) error {
	v, err := a.lookSettled(ctx, id)
	if err != nil {
		return err
	}
	a.screen.observe(id, v)
	if v.dialog != nil {
		return dialogOpen(v, "nothing was typed")
	}
	a.mu.Lock()
	s, ok := a.sessions[id]
	var st api.Status
	var w *api.Waiting
	if ok {
		st, w = s.st.Status, s.st.Waiting
	}
	a.mu.Unlock()
	if st == api.StatusNeedsInput {
		// A hook said a dialog opens; the screen has not drawn it yet.
		what := "a dialog"
		if w != nil && w.Kind != "" {
			what = "a " + w.Kind + " dialog"
		}
		return api.Errorf(api.CodeDialogOpen, "Claude is opening %s; nothing was typed. Answer it with `corral answer %s`", what, id)
	}
	if !v.input {
		return api.Errorf(api.CodeScreenUnclear, "corral cannot see Claude's input box on the screen, so it typed nothing; look at the terminal (`corral capture %s`)", id)
	}
	if v.draft == "" {
		return nil
	}
	if !clearDraft {
		return api.Errorf(api.CodeDraftPresent, "Claude's input box already holds text typed elsewhere (%q); nothing was typed. Send again with --clear-draft to replace it, or finish it in the terminal", clip(v.draft, 60))
	}
	return a.clearDraft(ctx, id, v)
}

// clearDraft empties Claude's input box, as the person asked, and checks
// that it is empty: Escape once ("Esc again to clear"), then again. Never
// while Claude works (Escape would interrupt the turn).
func (a *inputGate) clearDraft(ctx context.Context, id string, v screenView) error {
	plan, err := v.scr.ClearDraftKeys()
	if err != nil {
		return api.Errorf(api.CodeDraftPresent, "the draft in Claude's input box cannot be cleared now (%v); nothing was typed", err)
	}
	return a.runPlan(ctx, id, nil, plan)
}

// typeText types text (and Enter) into a session's pane.
func (a *inputGate) typeText(ctx context.Context, id, text string, enter bool) error {
	tm, target, err := a.panes.terminal(id)
	if err != nil {
		return err
	}
	if text != "" {
		if err := tm.SendText(ctx, target, text); err != nil {
			return a.panes.tmuxErr(err)
		}
	}
	if enter {
		if err := tm.SendKeys(ctx, target, "Enter"); err != nil {
			return a.panes.tmuxErr(err)
		}
	}
	return nil
}

// paste puts text into Claude's input box as one bracketed paste: should a
// dialog open between the look at the screen and the paste, Claude's menus
// take none of it as keys (a pasted "1" picks nothing; a newline submits
// nothing). Tested against 2.1.197 (docs/claude-observations.md).
func (a *inputGate) paste(ctx context.Context, id, text string) error {
	tm, target, err := a.panes.terminal(id)
	if err != nil {
		return err
	}
	text = strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
	if err := tm.Paste(ctx, target, text); err != nil {
		return a.panes.tmuxErr(err)
	}
	return nil
}

// keys presses keys in a session's pane.
func (a *inputGate) keys(ctx context.Context, id string, keys ...string) error {
	tm, target, err := a.panes.terminal(id)
	if err != nil {
		return err
	}
	if err := tm.SendKeys(ctx, target, keys...); err != nil {
		if errors.Is(err, tmux.ErrInvalid) {
			return api.Errorf(api.CodeBadRequest, "%v", err)
		}
		return a.panes.tmuxErr(err)
	}
	return nil
}

// SendKeys presses named keys in a session, as given: the raw escape hatch,
// which knows nothing of dialogs.
func (a *inputGate) SendKeys(ctx context.Context, req api.KeysRequest) error {
	id, keys, began := req.ID, req.Keys, now()
	if _, err := a.get(id); err != nil {
		return err
	}
	if len(keys) > 200 {
		return api.Errorf(api.CodeBadRequest, "too many keys in one request (%d > 200)", len(keys))
	}
	for _, k := range keys {
		if !tmux.ValidKey(k) {
			return api.Errorf(api.CodeBadRequest, "invalid key name %q (tmux key names: Enter, Escape, Up, C-c, 1 ...)", k)
		}
	}
	if err := a.keys(ctx, id, keys...); err != nil {
		return err
	}
	a.in.personActed(id, status.Input, began)
	a.afterKeys(id)
	return nil
}

// afterKeys reads the screen again after keys went to a session that shows
// or may show a dialog: the keys may have answered it.
func (a *inputGate) afterKeys(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s, ok := a.sessions[id]; ok && (s.st.Status == api.StatusNeedsInput || s.st.Status == api.StatusStarting) {
		a.screen.recheck(s)
	}
}

// TerminalInput is told when a viewer typed into a session's terminal: a
// dialog on the screen may have been answered there.
func (a *inputGate) TerminalInput(id string) { a.afterKeys(id) }

// Answer answers the dialog a session shows, with the option (or text) the
// person chose, located on the screen read now. An answer to a dialog that
// is no longer on the screen is refused.
func (a *inputGate) Answer(ctx context.Context, req api.AnswerRequest) (api.AnswerResult, error) {
	id, began := req.ID, now()
	if req.Dialog == "" {
		return api.AnswerResult{}, api.Errorf(api.CodeBadRequest, "an answer names its dialog (waiting_for.dialog_id)")
	}
	if err := checkText(req.Text); err != nil {
		return api.AnswerResult{}, err
	}
	s, err := a.get(id)
	if err != nil {
		return api.AnswerResult{}, err
	}
	a.mu.Lock()
	kind := s.kind
	a.mu.Unlock()
	if kind == api.KindShell {
		return api.AnswerResult{}, api.Errorf(api.CodeStaleDialog, "a shell session shows no Claude dialog")
	}
	v, err := a.screen.look(ctx, id)
	if err != nil {
		return api.AnswerResult{}, err
	}
	a.screen.observe(id, v)
	if v.dialog == nil {
		return api.AnswerResult{}, api.Errorf(api.CodeStaleDialog, "dialog %s is no longer on the screen; nothing was pressed", req.Dialog)
	}
	a.mu.Lock()
	cur, onScreen := "", ""
	if s, ok := a.sessions[id]; ok && s.st.Waiting != nil {
		cur, onScreen = s.st.Waiting.DialogID, s.st.OnScreen
	}
	a.mu.Unlock()
	if cur != req.Dialog || onScreen != v.fp {
		return api.AnswerResult{}, api.Errorf(api.CodeStaleDialog, "the screen shows another dialog now (%s, not %s); nothing was pressed", cur, req.Dialog)
	}
	ans, label, err := answerOf(v.dialog, req)
	if err != nil {
		return api.AnswerResult{}, err
	}
	if err := a.answerDialog(ctx, id, v, ans); err != nil {
		return api.AnswerResult{}, err
	}
	a.log.Info("dialog answered", "session", id, "dialog", req.Dialog, "kind", v.kind, "answer", label)
	a.in.personActed(id, status.Input, began)
	a.afterKeys(id)
	return api.AnswerResult{Answered: label}, nil
}

// answerDialog plans the keys of an answer on the dialog v shows and sends
// them, step by step.
func (a *inputGate) answerDialog(ctx context.Context, id string, v screenView, ans screen.Answer) error {
	d := v.dialog
	for range maxReplans {
		plan, err := d.Keys(ans)
		if err != nil {
			return api.Errorf(api.CodeBadRequest, "%v", err)
		}
		if err := a.runPlan(ctx, id, d, plan); err != nil {
			return err
		}
		if !plan.Replan {
			return nil
		}
		nv, err := a.screen.look(ctx, id)
		if err != nil {
			return err
		}
		if nv.dialog == nil || nv.fp != v.fp {
			return api.Errorf(api.CodeScreenUnclear, "the dialog changed while it was being answered; look at the terminal")
		}
		d = nv.dialog
	}
	return api.Errorf(api.CodeScreenUnclear, "the dialog would not take the answer in %d rounds; look at the terminal", maxReplans)
}

// runPlan sends a plan's steps, each once the screen shows the last one
// took effect. before is the dialog the plan was made for (nil for plans
// on the input box).
func (a *inputGate) runPlan(ctx context.Context, id string, before *screen.Dialog, plan screen.KeyPlan) error {
	tm, target, err := a.panes.terminal(id)
	if err != nil {
		return err
	}
	for i, st := range plan.Steps {
		if st.Text != "" {
			err = tm.SendText(ctx, target, st.Text)
		} else {
			err = tm.SendKeys(ctx, target, st.Keys...)
		}
		if err != nil {
			return a.panes.tmuxErr(err)
		}
		if err := a.waitStep(ctx, tm, target, before, st.Until); err != nil {
			return api.Errorf(api.CodeScreenUnclear, "step %d of %d (%s) did not show on the screen: %v; look at the terminal", i+1, len(plan.Steps), describeStep(st), err)
		}
	}
	return nil
}

// waitStep reads the screen until it shows u, within stepWait.
func (a *inputGate) waitStep(ctx context.Context, tm *tmux.Server, target string, before *screen.Dialog, u screen.Until) error {
	deadline := time.Now().Add(stepWait)
	for {
		// Plain text: a hint may be styled word by word.
		text, err := tm.Capture(ctx, target, tmux.CaptureOptions{})
		if err != nil {
			return a.panes.tmuxErr(err)
		}
		if u.Met(before, text) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("waited %v for %s", stepWait, u.What)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(30 * time.Millisecond):
		}
	}
}
