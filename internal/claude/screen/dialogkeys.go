package screen

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Answering a dialog: Keys plans the tmux keys that give an answer on the
// screen a Dialog was read from. It never guesses: every key is located on
// that screen (a digit shown next to the option, the focus marker's
// position, a footer's "Tab to amend"), and anything the screen does not
// back is an error that says why.
//
// A plan is a list of steps. Claude 2.1.197 drops keys that arrive while it
// re-renders after a focus or mode change (Tab, then typed text at once,
// loses the text; a burst of arrow keys can be lost), so each step says
// what the screen shows once it has taken effect (Until), and the next step
// is sent only then. Until.Met checks a fresh capture.

// Answer is what the person chose.
type Answer struct {
	// Option is the option to choose, 1-based as shown (for an elicitation:
	// 1 Accept, 2 Decline).
	Option int `json:"option,omitempty"`
	// Options are a multi-select question's options to leave checked,
	// 1-based; the others are unchecked.
	Options []int `json:"options,omitempty"`
	// Text is the text for an option that takes it ("Type something.",
	// "Tell Claude what to change", a permission's Yes or No amended with
	// Tab). One line.
	Text string `json:"text,omitempty"`
	// Fields are an elicitation form's values by field name (with Option 1).
	// A boolean takes "true" or "false"; a choice its label.
	Fields map[string]string `json:"fields,omitempty"`
	// Cancel presses Escape, where the footer offers "Esc to cancel". (At
	// the trust dialog that makes Claude exit.)
	Cancel bool `json:"cancel,omitempty"`
}

// KeyPlan is the keys that give an answer, in order.
type KeyPlan struct {
	Steps []KeyStep `json:"steps"`
	// Replan reports a plan that stops where the screen must be read again
	// (an elicitation's choice field was just expanded, and its choices are
	// not known yet): when the last step is met, read the screen and call
	// Keys with the same Answer to go on.
	Replan bool `json:"replan,omitempty"`
}

// KeyStep is one step of a plan: tmux key names (internal/tmux.ValidKey
// accepts them) or text typed literally, not both.
type KeyStep struct {
	Keys []string `json:"keys,omitempty"`
	Text string   `json:"text,omitempty"`
	// Until is what the screen shows once the step has taken effect.
	Until Until `json:"until"`
}

// What a step waits for.
const (
	// UntilGone: the dialog the plan was made for is no longer on screen
	// (another dialog, another question of the same AskUserQuestion, the
	// input box, or nothing).
	UntilGone = "gone"
	// UntilFocus: the same dialog, with the focus on Option (1-based) or,
	// when Option is 0, on Target (a button or a field).
	UntilFocus = "focus"
	// UntilChecked and UntilUnchecked: the same dialog, with Option's
	// checkbox in that state.
	UntilChecked   = "checked"
	UntilUnchecked = "unchecked"
	// UntilShows: the same dialog, showing Target in an option's label, a
	// field's value or its text.
	UntilShows = "shows"
	// UntilExpanded: the same elicitation, with field Target's choices shown.
	UntilExpanded = "expanded"
	// UntilChoice: the same elicitation, with field Target expanded and
	// its choice Option (1-based) focused.
	UntilChoice = "choice"
	// UntilValue: the same elicitation, with field Target showing Value.
	UntilValue = "value"
	// UntilHint: the screen shows Target anywhere (a hint under the box).
	UntilHint = "hint"
	// UntilInputEmpty: the input box is visible and empty.
	UntilInputEmpty = "input_empty"
)

// Until is the condition that ends a step.
type Until struct {
	What   string `json:"what"`
	Option int    `json:"option,omitempty"`
	Target string `json:"target,omitempty"`
	Value  string `json:"value,omitempty"`
}

// Met reports whether the screen (a fresh capture) shows the condition, for
// a plan made from the dialog before (nil for plans on the input box).
func (u Until) Met(before *Dialog, screen string) bool {
	s := Read(screen)
	same := func() *Dialog {
		if before == nil || s.Dialog == nil || s.Dialog.Fingerprint() != before.Fingerprint() {
			return nil
		}
		return s.Dialog
	}
	switch u.What {
	case UntilGone:
		return before != nil && same() == nil
	case UntilFocus:
		d := same()
		if d == nil {
			return false
		}
		if u.Option > 0 {
			return d.Selected == u.Option-1
		}
		return d.Focus == u.Target
	case UntilChecked, UntilUnchecked:
		d := same()
		if d == nil || u.Option < 1 || u.Option > len(d.Options) || d.Options[u.Option-1].Checked == nil {
			return false
		}
		return *d.Options[u.Option-1].Checked == (u.What == UntilChecked)
	case UntilShows:
		d := same()
		if d == nil {
			return false
		}
		want := normSpace(u.Target)
		for _, o := range d.Options {
			if strings.Contains(normSpace(o.Label), want) {
				return true
			}
		}
		for _, f := range d.Fields {
			if strings.Contains(normSpace(f.Value), want) {
				return true
			}
		}
		return strings.Contains(normSpace(d.Title+" "+d.Body+" "+d.Question), want)
	case UntilExpanded:
		d := same()
		if d == nil {
			return false
		}
		for _, f := range d.Fields {
			if f.Name == u.Target {
				return len(f.Choices) > 0
			}
		}
		return false
	case UntilChoice:
		d := same()
		if d == nil {
			return false
		}
		for _, f := range d.Fields {
			if f.Name == u.Target {
				return len(f.Choices) > 0 && f.ChoiceFocus == u.Option-1
			}
		}
		return false
	case UntilValue:
		d := same()
		if d == nil {
			return false
		}
		for _, f := range d.Fields {
			if f.Name == u.Target {
				return strings.EqualFold(normSpace(f.Value), normSpace(u.Value))
			}
		}
		return false
	case UntilHint:
		return strings.Contains(screen, u.Target)
	case UntilInputEmpty:
		return s.Dialog == nil && s.Input != nil && s.Input.Draft == ""
	}
	return false
}

func normSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// maxAnswerText bounds typed answers.
const maxAnswerText = 4000

// checkText rejects text that cannot be typed into a one-line input.
func checkText(s string) error {
	if !utf8.ValidString(s) {
		return errors.New("the text is not valid UTF-8")
	}
	if utf8.RuneCountInString(s) > maxAnswerText {
		return fmt.Errorf("the text is longer than %d characters", maxAnswerText)
	}
	if strings.TrimSpace(s) == "" {
		return errors.New("the text is empty")
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return fmt.Errorf("the text holds a control character (%q): this answer takes one line", r)
		}
	}
	return nil
}

// Keys plans the keys that give answer a on the screen the dialog was read
// from.
func (d Dialog) Keys(a Answer) (KeyPlan, error) {
	if a.Text != "" {
		if err := checkText(a.Text); err != nil {
			return KeyPlan{}, err
		}
	}
	if a.Cancel {
		if a.Option != 0 || a.Options != nil || a.Text != "" || a.Fields != nil {
			return KeyPlan{}, errors.New("cancel takes no option, text or fields")
		}
		if !strings.Contains(d.Footer, "Esc to cancel") {
			return KeyPlan{}, fmt.Errorf("this %s dialog does not offer Escape (its footer is %q)", d.Kind, d.Footer)
		}
		return plan(step(UntilGone, 0, "", "Escape")), nil
	}
	switch d.Kind {
	case KindChoice:
		return KeyPlan{}, fmt.Errorf("the screen shows a menu corral does not know (%q): answer it in the terminal", d.Title)
	case KindElicitation:
		return d.elicitationKeys(a)
	}
	if a.Fields != nil {
		return KeyPlan{}, fmt.Errorf("a %s dialog has no fields", d.Kind)
	}
	if d.MultiSelect {
		return d.multiKeys(a)
	}
	if a.Options != nil {
		return KeyPlan{}, fmt.Errorf("this %s dialog takes one option, not several", d.Kind)
	}
	if a.Option < 1 || a.Option > len(d.Options) {
		return KeyPlan{}, fmt.Errorf("option %d is not on screen (the dialog shows %d)", a.Option, len(d.Options))
	}
	if d.inputFocused() {
		return KeyPlan{}, fmt.Errorf("a text input of this %s dialog has the focus (%q), so keys would be typed into it: finish or clear it in the terminal", d.Kind, d.Focus)
	}
	o := d.Options[a.Option-1]
	if a.Text == "" {
		if o.Text && d.Kind != KindPermission {
			return KeyPlan{}, fmt.Errorf("option %d (%q) takes text", a.Option, o.Label)
		}
		return d.pick(a.Option)
	}
	if !o.Text {
		return KeyPlan{}, fmt.Errorf("option %d (%q) takes no text", a.Option, o.Label)
	}
	if d.Kind == KindPermission {
		return d.amendKeys(a.Option, a.Text)
	}
	// A free-text option: its digit opens the input.
	if o.Label != "Type something." && o.Label != "Type something" && o.Label != "Tell Claude what to change" {
		return KeyPlan{}, fmt.Errorf("option %d already holds text on screen (%q): change it in the terminal", a.Option, o.Label)
	}
	if a.Option > 9 {
		return KeyPlan{}, fmt.Errorf("option %d has no digit key", a.Option)
	}
	return plan(
		step(UntilFocus, a.Option, "", strconv.Itoa(a.Option)),
		textStep(a.Text),
		step(UntilGone, 0, "", "Enter"),
	), nil
}

func plan(steps ...KeyStep) KeyPlan { return KeyPlan{Steps: steps} }

func step(what string, option int, target string, keys ...string) KeyStep {
	return KeyStep{Keys: keys, Until: Until{What: what, Option: option, Target: target}}
}

// textStep types text; the step is done when the screen shows its start
// (a long text wraps, and a narrow pane cuts it).
func textStep(text string) KeyStep {
	r := []rune(strings.TrimSpace(text))
	if len(r) > 20 {
		r = r[:20]
	}
	return KeyStep{Text: text, Until: Until{What: UntilShows, Target: string(r)}}
}

// inputFocused reports a text input with the focus: digits would be typed
// into it instead of choosing an option.
func (d Dialog) inputFocused() bool {
	if d.Selected < 0 || d.Selected >= len(d.Options) {
		return false
	}
	o := d.Options[d.Selected]
	switch d.Kind {
	case KindQuestion, KindPlan:
		return o.Text
	case KindPermission:
		return o.Text && o.Label != "Yes" && o.Label != "No"
	}
	return false
}

// pick chooses option k: its digit (1-9), or arrows from the focus and Enter.
func (d Dialog) pick(k int) (KeyPlan, error) {
	if k <= 9 {
		return plan(step(UntilGone, 0, "", strconv.Itoa(k))), nil
	}
	p, err := d.moveTo(k - 1)
	if err != nil {
		return KeyPlan{}, err
	}
	p.Steps = append(p.Steps, step(UntilGone, 0, "", "Enter"))
	return p, nil
}

// moveTo moves the focus from the selected option to option index i, one
// arrow per step.
func (d Dialog) moveTo(i int) (KeyPlan, error) {
	if d.Selected < 0 {
		return KeyPlan{}, fmt.Errorf("the screen shows no focused option to move from (focus %q)", d.Focus)
	}
	var p KeyPlan
	for s := d.Selected; s != i; {
		key := "Down"
		if i < s {
			key = "Up"
			s--
		} else {
			s++
		}
		p.Steps = append(p.Steps, step(UntilFocus, s+1, "", key))
	}
	return p, nil
}

// amendKeys answers a permission's Yes or No with text: focus it, Tab
// ("Tab to amend"), type, Enter.
func (d Dialog) amendKeys(k int, text string) (KeyPlan, error) {
	if !strings.Contains(d.Footer, "Tab to amend") {
		return KeyPlan{}, fmt.Errorf("this permission dialog does not offer \"Tab to amend\" now (footer %q)", d.Footer)
	}
	p, err := d.moveTo(k - 1)
	if err != nil {
		return KeyPlan{}, err
	}
	p.Steps = append(p.Steps,
		step(UntilShows, 0, "and tell Claude what to do", "Tab"),
		textStep(text),
		step(UntilGone, 0, "", "Enter"),
	)
	return p, nil
}

// multiKeys answers a multi-select question: digits toggle the options
// whose state differs, the free-text option is focused and typed into,
// then the focus goes down to the Submit (or Next) button and Enter.
func (d Dialog) multiKeys(a Answer) (KeyPlan, error) {
	if a.Option != 0 {
		return KeyPlan{}, fmt.Errorf("question %q takes several options: give them as Options", d.Question)
	}
	textIdx := -1
	for i, o := range d.Options {
		if o.Text {
			textIdx = i
		}
	}
	want := map[int]bool{}
	for _, k := range a.Options {
		if k < 1 || k > len(d.Options) {
			return KeyPlan{}, fmt.Errorf("option %d is not on screen (the question shows %d)", k, len(d.Options))
		}
		o := d.Options[k-1]
		if o.Chat {
			return KeyPlan{}, fmt.Errorf("option %d (%q) cannot be checked: answer it alone", k, o.Label)
		}
		if o.Checked == nil {
			return KeyPlan{}, fmt.Errorf("option %d (%q) has no checkbox on screen", k, o.Label)
		}
		if k-1 == textIdx && a.Text == "" && !*o.Checked {
			return KeyPlan{}, fmt.Errorf("option %d (%q) takes text", k, o.Label)
		}
		want[k-1] = true
	}
	if a.Text != "" {
		if textIdx < 0 {
			return KeyPlan{}, errors.New("this question has no free-text answer")
		}
		if o := d.Options[textIdx]; o.Label != "Type something" || (o.Checked != nil && *o.Checked) {
			return KeyPlan{}, fmt.Errorf("the free-text answer already holds %q on screen: change it in the terminal", o.Label)
		}
		want[textIdx] = true
	}
	if len(want) == 0 {
		return KeyPlan{}, errors.New("no option to check: give Options or Text")
	}
	if d.inputFocused() {
		return KeyPlan{}, fmt.Errorf("the free-text answer has the focus, so digits would be typed into it: finish or clear it in the terminal")
	}
	// The focus: an option, or the button after the free-text option.
	button := len(d.Options)
	if textIdx >= 0 {
		button = textIdx + 1
	}
	pos := d.Selected
	if pos < 0 {
		if d.Focus != "Submit" && d.Focus != "Next" {
			return KeyPlan{}, fmt.Errorf("the screen shows no focused option to move from (focus %q)", d.Focus)
		}
		pos = button
	}
	var p KeyPlan
	for i, o := range d.Options {
		if o.Checked == nil || i == textIdx && a.Text != "" {
			continue
		}
		if *o.Checked != want[i] {
			if i > 8 {
				return KeyPlan{}, fmt.Errorf("option %d has no digit key", i+1)
			}
			what := UntilUnchecked
			if want[i] {
				what = UntilChecked
			}
			p.Steps = append(p.Steps, step(what, i+1, "", strconv.Itoa(i+1)))
		}
	}
	buttonLabel := "Submit"
	if len(d.Questions) > 1 {
		buttonLabel = "Next"
	}
	// Move down one step at a time; digits do not move the focus.
	moveDown := func(to int) {
		for pos < to {
			pos++
			if pos == button {
				p.Steps = append(p.Steps, step(UntilFocus, 0, buttonLabel, "Down"))
			} else {
				p.Steps = append(p.Steps, step(UntilFocus, pos+1, "", "Down"))
			}
		}
		for pos > to {
			pos--
			p.Steps = append(p.Steps, step(UntilFocus, pos+1, "", "Up"))
		}
	}
	if a.Text != "" {
		moveDown(textIdx)
		p.Steps = append(p.Steps, textStep(a.Text))
	}
	moveDown(button)
	p.Steps = append(p.Steps, step(UntilGone, 0, "", "Enter"))
	return p, nil
}

// elicitationKeys fills an MCP form and presses Accept, or presses
// Decline. The focus cycles Down through the fields, Accept and Decline.
func (d Dialog) elicitationKeys(a Answer) (KeyPlan, error) {
	if a.Options != nil || a.Text != "" {
		return KeyPlan{}, errors.New("an elicitation takes Accept (with Fields) or Decline, not text or several options")
	}
	n := len(d.Fields)
	pos := -1
	switch {
	case d.Selected >= 0:
		pos = n + d.Selected
	default:
		for i, f := range d.Fields {
			if f.Name == d.Focus {
				pos = i
			}
		}
	}
	if pos < 0 {
		return KeyPlan{}, fmt.Errorf("the form shows no focus to move from (%q)", d.Focus)
	}
	var p KeyPlan
	label := func(i int) string {
		switch {
		case i < n:
			return d.Fields[i].Name
		case i == n:
			return "Accept"
		}
		return "Decline"
	}
	goTo := func(i int) {
		for pos != i {
			if i > pos {
				pos++
				p.Steps = append(p.Steps, step(UntilFocus, 0, label(pos), "Down"))
			} else {
				pos--
				p.Steps = append(p.Steps, step(UntilFocus, 0, label(pos), "Up"))
			}
		}
	}
	switch a.Option {
	case 2:
		if a.Fields != nil {
			return KeyPlan{}, errors.New("decline takes no fields")
		}
		goTo(n + 1)
		p.Steps = append(p.Steps, step(UntilGone, 0, "", "Enter"))
		return p, nil
	case 1:
	default:
		return KeyPlan{}, fmt.Errorf("option %d is not on screen (the form offers 1 Accept and 2 Decline)", a.Option)
	}
	for name := range a.Fields {
		if d.field(name) < 0 {
			return KeyPlan{}, fmt.Errorf("the form has no field %q", name)
		}
	}
	for i, f := range d.Fields {
		v, ok := a.Fields[f.Name]
		if !ok {
			if f.Missing {
				return KeyPlan{}, fmt.Errorf("field %q is required", f.Name)
			}
			continue
		}
		if err := checkText(v); err != nil {
			return KeyPlan{}, fmt.Errorf("field %q: %w", f.Name, err)
		}
		switch f.Kind {
		case "boolean":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return KeyPlan{}, fmt.Errorf("field %q takes true or false, not %q", f.Name, v)
			}
			if strconv.FormatBool(b) == f.Value {
				continue
			}
			goTo(i)
			p.Steps = append(p.Steps, KeyStep{Keys: []string{"Space"}, Until: Until{What: UntilValue, Target: f.Name, Value: strconv.FormatBool(b)}})
		case "choice":
			if strings.EqualFold(f.Value, v) {
				continue
			}
			goTo(i)
			if len(f.Choices) == 0 {
				// The choices show once it is expanded: plan the rest then.
				p.Steps = append(p.Steps, step(UntilExpanded, 0, f.Name, "Right"))
				p.Replan = true
				return p, nil
			}
			c := -1
			for j, ch := range f.Choices {
				if strings.EqualFold(ch, v) {
					c = j
				}
			}
			if c < 0 {
				return KeyPlan{}, fmt.Errorf("field %q offers %s, not %q", f.Name, strings.Join(f.Choices, ", "), v)
			}
			cf := max(f.ChoiceFocus, 0)
			for cf != c {
				key := "Down"
				if c < cf {
					key, cf = "Up", cf-1
				} else {
					cf++
				}
				p.Steps = append(p.Steps, KeyStep{Keys: []string{key}, Until: Until{What: UntilChoice, Target: f.Name, Option: cf + 1}})
			}
			p.Steps = append(p.Steps, KeyStep{Keys: []string{"Space"}, Until: Until{What: UntilValue, Target: f.Name, Value: f.Choices[c]}})
		default:
			if f.Value == v {
				continue
			}
			if f.Value != "" {
				return KeyPlan{}, fmt.Errorf("field %q already holds %q: change it in the terminal", f.Name, f.Value)
			}
			goTo(i)
			p.Steps = append(p.Steps, KeyStep{Text: v, Until: Until{What: UntilValue, Target: f.Name, Value: v}})
		}
	}
	goTo(n)
	p.Steps = append(p.Steps, step(UntilGone, 0, "", "Enter"))
	return p, nil
}

func (d Dialog) field(name string) int {
	for i, f := range d.Fields {
		if f.Name == name {
			return i
		}
	}
	return -1
}

// Reasons Screen.Typable refuses.
var (
	// ErrDialogOpen: a dialog is open; typed text would answer it.
	ErrDialogOpen = errors.New("a dialog is open")
	// ErrNoInputBox: the screen shows neither a dialog nor the input box.
	ErrNoInputBox = errors.New("the input box is not on screen")
	// ErrDraftPresent: the input box holds text typed in the terminal.
	ErrDraftPresent = errors.New("the input box holds a draft")
)

// Typable reports whether a prompt may be typed now: Claude's input box is
// on screen, empty, with no dialog. The errors wrap ErrDialogOpen (naming
// the dialog), ErrNoInputBox or ErrDraftPresent.
func (s Screen) Typable() error {
	switch {
	case s.Dialog != nil:
		what := s.Dialog.Question
		if what == "" {
			what = s.Dialog.Title
		}
		return fmt.Errorf("%w: %s %q", ErrDialogOpen, s.Dialog.Kind, what)
	case s.Input == nil:
		return ErrNoInputBox
	case s.Input.Draft != "":
		return fmt.Errorf("%w: %q", ErrDraftPresent, truncateRunes(s.Input.Draft, 40))
	}
	return nil
}

func truncateRunes(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// ClearDraftKeys plans the keys that empty the input box: Escape shows
// "Esc again to clear", a second Escape clears it. Only while Claude is
// idle (Escape interrupts a running turn) and only when there is a draft
// (Escape twice on an empty box opens the Rewind menu).
func (s Screen) ClearDraftKeys() (KeyPlan, error) {
	switch {
	case s.Dialog != nil || s.Input == nil:
		return KeyPlan{}, ErrNoInputBox
	case s.Input.Draft == "":
		return KeyPlan{}, errors.New("the input box is empty")
	case s.Busy:
		return KeyPlan{}, errors.New("claude is busy: Escape would interrupt its turn")
	}
	return plan(
		KeyStep{Keys: []string{"Escape"}, Until: Until{What: UntilHint, Target: "Esc again to clear"}},
		KeyStep{Keys: []string{"Escape"}, Until: Until{What: UntilInputEmpty}},
	), nil
}
