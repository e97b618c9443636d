package screen

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// What Claude Code 2.1.197's screen shows at its bottom: a dialog, or its
// input box, and whether a turn is running. Everything here reads the plain
// text of `tmux capture-pane -p` (a capture with escapes, -e, works too and
// tells a little more); testdata/claude-code-2.1.197/flows holds the real
// screens this was written from, and docs/claude-observations.md says what
// each dialog looks like and which keys answer it.

// Dialog kinds. A dialog whose structure is on screen but which is none of
// these is KindChoice: corral must not type into it either.
const (
	KindPermission    = "permission"         // a tool asks to run (Bash, Edit, Write, WebFetch, MCP tools...)
	KindQuestion      = "question"           // AskUserQuestion, one question or the "Submit answers" step
	KindPlan          = "plan"               // ExitPlanMode: "Ready to code?" or "Exit plan mode?"
	KindTrust         = "trust"              // "Accessing workspace:" / "Yes, I trust this folder"
	KindAPIKey        = "api_key"            // "Do you want to use this API key?"
	KindElicitation   = "elicitation"        // an MCP server "requests your input" (a form)
	KindBypass        = "bypass_permissions" // the --dangerously-skip-permissions warning
	KindMCPServer     = "mcp_server"         // "New MCP server found in this project"
	KindSettingsError = "settings_error"     // "Settings Error" at start
	KindChoice        = "choice"             // any other menu (the /resume picker, Rewind, /model...)
)

// Screen is what Claude's screen shows at its bottom.
type Screen struct {
	// Dialog is the open dialog, or nil.
	Dialog *Dialog `json:"dialog,omitempty"`
	// Input is Claude's prompt box when it is visible, and so focused: nil
	// under a dialog, and when it cannot be seen.
	Input *InputBox `json:"input,omitempty"`
	// Busy reports the spinner line of a running turn
	// ("✶ Photosynthesizing… (19s · ↓ 15 tokens)").
	Busy bool `json:"busy,omitempty"`
	// BackgroundTasks counts the background agents Claude says it waits for
	// ("Waiting for 1 background agent to finish") and its background shells
	// ("1 shell still running", "1 shell" under the box).
	BackgroundTasks int `json:"background_tasks,omitempty"`
}

// InputBox is Claude's prompt box: "❯\u00a0" between two rules.
type InputBox struct {
	// Draft is what is typed in the box now, lines joined with "\n"; ""
	// when it is empty.
	Draft string `json:"draft"`
}

// Dialog is an open dialog as the screen shows it.
type Dialog struct {
	Kind string `json:"kind"`
	// Title is the dialog's heading ("Bash command", "Edit file", "Ready to
	// code?", "Accessing workspace:", "Review your answers"...).
	Title string `json:"title,omitempty"`
	// Body is the text between the title and the question: a command and
	// its description, a diff, a path; lines joined with "\n".
	Body string `json:"body,omitempty"`
	// Question is the paragraph above the options, unwrapped.
	Question string `json:"question,omitempty"`
	// Footer is the hint line under the options ("Esc to cancel · Tab to
	// amend"); empty when the dialog has none (WebFetch, Exit plan mode?).
	Footer string `json:"footer,omitempty"`
	// Tool is, for a permission, the tool the screen names: Bash, Edit,
	// Write, WebFetch, NotebookEdit, PowerShell, or mcp__<server>__<tool>.
	Tool string `json:"tool,omitempty"`
	// Agent is the subagent a permission comes from, when the title says
	// ("Bash command · from the general-purpose agent").
	Agent string `json:"agent,omitempty"`
	// Options are the choices in the order shown (numbered 1.. on screen),
	// or an elicitation's buttons (Accept, Decline).
	Options []DialogOption `json:"options,omitempty"`
	// Selected is the index in Options of the focused option (❯), or -1
	// when the focus is elsewhere (see Focus) or not shown.
	Selected int `json:"selected"`
	// Focus is the label of what has the focus: an option, a button
	// ("Submit", "Next") or a form field; "" when no focus marker is shown.
	Focus string `json:"focus,omitempty"`
	// MultiSelect reports a question whose options are checkboxes.
	MultiSelect bool `json:"multi_select,omitempty"`
	// Questions are the headers of an AskUserQuestion's tabs, in order
	// (one question without tabs: its header alone).
	Questions []string `json:"questions,omitempty"`
	// Answered tells, per question, whether its tab shows it answered (☒).
	Answered []bool `json:"answered,omitempty"`
	// Current is the index of the question on screen; CurrentSubmit on the
	// "Submit answers" step; CurrentUnknown when the screen does not say:
	// Claude marks the current tab with a background colour only, which a
	// capture without escapes (-e) does not keep.
	Current int `json:"current"`
	// Plan is the plan text an ExitPlanMode dialog shows.
	Plan string `json:"plan,omitempty"`
	// Preview is what a permission shows between ╌ rules: an Edit's diff,
	// a new file's content. Claude draws it late ("…" first), so it is not
	// part of the Fingerprint.
	Preview string `json:"preview,omitempty"`
	// Fields are an elicitation form's fields.
	Fields []Field `json:"fields,omitempty"`
	// Truncated reports a dialog taller than the pane: its top (the title
	// rule) is scrolled off.
	Truncated bool `json:"truncated,omitempty"`
}

// Current values that are not a question index.
const (
	CurrentSubmit  = -1
	CurrentUnknown = -2
)

// DialogOption is one choice of a dialog.
type DialogOption struct {
	Label       string `json:"label"`
	Description string `json:"description,omitempty"`
	// Text reports an option that takes text: choosing it opens a text
	// input ("Type something.", "Tell Claude what to change"), or the
	// dialog offers "Tab to amend" for it (a permission's Yes and No).
	Text bool `json:"text,omitempty"`
	// Checked is a multi-select checkbox's state.
	Checked *bool `json:"checked,omitempty"`
	// Chat reports AskUserQuestion's "Chat about this": it declines the
	// questions so that the person can talk to Claude instead.
	Chat bool `json:"chat,omitempty"`
}

// Field is one field of an elicitation form.
type Field struct {
	Name string `json:"name"`
	// Kind is "text" (strings and numbers), "boolean" or "choice".
	Kind string `json:"kind"`
	// Value is the value shown: "" when not set; "true"/"false" for a
	// boolean; the chosen label for a choice.
	Value string `json:"value,omitempty"`
	// Missing reports a required field without a valid value (marked *).
	Missing bool `json:"missing,omitempty"`
	// Valid reports a field marked ✔.
	Valid       bool   `json:"valid,omitempty"`
	Description string `json:"description,omitempty"`
	// Choices are a choice field's labels, shown only while it is
	// expanded (→ expands it).
	Choices []string `json:"choices,omitempty"`
	// ChoiceFocus is the index in Choices of the focused choice, or -1.
	ChoiceFocus int `json:"choice_focus"`
}

// Limits of what Read looks at: a pane bigger than this is read from
// its bottom.
const (
	maxScreenLines = 1000
	maxLineRunes   = 2000
)

// line is one row of the capture.
type scrLine struct {
	s  string // plain text, trailing blanks removed (NBSP is kept)
	r  []rune
	hi []bool // per rune: drawn with a background colour or reversed (captures with escapes only)
}

func (l scrLine) indent() int {
	n := 0
	for _, r := range l.r {
		if r != ' ' {
			break
		}
		n++
	}
	return n
}

func (l scrLine) trim() string { return strings.TrimSpace(strings.Trim(l.s, "\u00a0")) }
func (l scrLine) blank() bool  { return strings.TrimSpace(l.s) == "" }

// parseLines splits a capture into lines, decoding SGR attributes and
// dropping every other escape and control character.
func parseLines(screen string) []scrLine {
	raw := strings.Split(screen, "\n")
	if len(raw) > maxScreenLines {
		raw = raw[len(raw)-maxScreenLines:]
	}
	out := make([]scrLine, 0, len(raw))
	var st sgrState
	for _, s := range raw {
		out = append(out, decodeLine(s, &st))
	}
	for len(out) > 0 && out[len(out)-1].blank() {
		out = out[:len(out)-1]
	}
	return out
}

// sgrState is the part of the terminal's graphic rendition that matters
// here: a background colour or reverse video marks a selected tab.
type sgrState struct{ bg, rev bool }

func (st *sgrState) apply(params string) {
	if params == "" {
		*st = sgrState{}
		return
	}
	ps := strings.Split(params, ";")
	for i := 0; i < len(ps); i++ {
		n, err := strconv.Atoi(ps[i])
		if err != nil {
			continue
		}
		switch {
		case n == 0:
			*st = sgrState{}
		case n == 7:
			st.rev = true
		case n == 27:
			st.rev = false
		case n == 49:
			st.bg = false
		case n >= 40 && n <= 47, n >= 100 && n <= 107:
			st.bg = true
		case n == 48:
			st.bg = true
			if i+1 < len(ps) && ps[i+1] == "5" {
				i += 2
			} else if i+1 < len(ps) && ps[i+1] == "2" {
				i += 4
			}
		case n == 38:
			if i+1 < len(ps) && ps[i+1] == "5" {
				i += 2
			} else if i+1 < len(ps) && ps[i+1] == "2" {
				i += 4
			}
		}
	}
}

func decodeLine(s string, st *sgrState) scrLine {
	var rs []rune
	var hi []bool
	for i := 0; i < len(s) && len(rs) < maxLineRunes; {
		c := s[i]
		if c == 0x1b {
			i = skipEscape(s, i, st)
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		switch {
		case r == '\t':
			r = ' '
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			continue
		}
		rs = append(rs, r)
		hi = append(hi, st.bg || st.rev)
	}
	for len(rs) > 0 && rs[len(rs)-1] == ' ' {
		rs, hi = rs[:len(rs)-1], hi[:len(hi)-1]
	}
	return scrLine{s: string(rs), r: rs, hi: hi}
}

// skipEscape skips the escape sequence at s[i] (applying SGR ones) and
// returns the index after it.
func skipEscape(s string, i int, st *sgrState) int {
	if i+1 >= len(s) {
		return len(s)
	}
	switch s[i+1] {
	case '[':
		j := i + 2
		for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
			j++
		}
		if j >= len(s) {
			return len(s)
		}
		if s[j] == 'm' {
			st.apply(s[i+2 : j])
		}
		return j + 1
	case ']', 'P', '_', '^':
		// OSC and other strings: up to BEL or ST.
		for j := i + 2; j < len(s); j++ {
			if s[j] == 0x07 {
				return j + 1
			}
			if s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\' {
				return j + 2
			}
		}
		return len(s)
	default:
		return i + 2
	}
}

// isRule reports a horizontal rule of at least min runes.
func isHRule(l scrLine, min int) bool {
	t := strings.TrimRight(l.s, " ")
	n := utf8.RuneCountInString(t)
	return n >= min && n >= 10 && strings.Trim(t, "─") == ""
}

// isDashRule reports the ╌ border around a diff or a plan.
func isDashRule(l scrLine) bool {
	t := strings.TrimSpace(l.s)
	return utf8.RuneCountInString(t) >= 10 && strings.Trim(t, "╌") == ""
}

var spinnerGlyphs = "·✢✳✶✻✽*"

// optionRE matches a numbered option line: indent, focus marker, number,
// label. Claude drops the space after "N." when the line is full.
var optionRE = regexp.MustCompile(`^( *)(❯)? *([1-9][0-9]?)\.( ?)(\S.*)$`)

type optRow struct {
	num    int
	label  string
	focus  bool
	indent int // columns before the number (or the marker)
	col    int // column where the label starts
}

func parseOptRow(l scrLine) (optRow, bool) {
	m := optionRE.FindStringSubmatch(l.s)
	if m == nil {
		return optRow{}, false
	}
	if m[4] == "" {
		// "3.No" only when the label starts like a label, not "1.5 s".
		r, _ := utf8.DecodeRuneInString(m[5])
		if !(r >= 'A' && r <= 'Z') && r != '[' {
			return optRow{}, false
		}
	}
	n, _ := strconv.Atoi(m[3])
	col := utf8.RuneCountInString(l.s) - utf8.RuneCountInString(m[5])
	return optRow{num: n, label: strings.TrimSpace(m[5]), focus: m[2] != "", indent: len(m[1]), col: col}, true
}

// conversation reports a line that only the conversation above a dialog
// (or the logo box) draws at column 0, never a dialog.
func conversation(l scrLine) bool {
	s := l.s
	if s == "" {
		return false
	}
	r, n := utf8.DecodeRuneInString(s)
	rest := s[n:]
	switch {
	case r == '●' || r == '⏺' || r == '╭' || r == '│' || r == '╰':
		return true
	case r == '❯':
		if strings.HasPrefix(rest, "\u00a0") {
			return true // the input box
		}
		if _, ok := parseOptRow(l); ok {
			return false
		}
		// A past prompt: "❯ text" with one space.
		return strings.HasPrefix(rest, " ") && len(rest) > 1 && rest[1] != ' '
	case strings.ContainsRune(spinnerGlyphs, r):
		return strings.HasPrefix(rest, " ") && len(rest) > 1 && rest[1] != ' '
	case strings.HasPrefix(s, "  ⎿"):
		return true
	}
	return false
}

// Read tells what Claude's screen shows at its bottom. It recognises
// a dialog only by its structure (a rule above it, options with the focus
// marker ❯, or a form's buttons), and the input box only by its shape (the
// "❯\u00a0" line between two rules, nothing boxed below it). When neither
// can be seen both are nil, and nothing should be typed.
func Read(screen string) Screen {
	lines := parseLines(screen)
	var s Screen
	if len(lines) > 0 && exited(lines[len(lines)-1]) {
		// What is drawn is Claude's last frame; a shell (or nothing) runs now.
		return s
	}
	width := 0
	for _, l := range lines {
		width = max(width, len(l.r))
	}
	top := len(lines)
	if in, boxTop, ok := readInputBox(lines, width); ok {
		s.Input = in
		top = boxTop
	} else if d, dTop := readDialog(lines, width); d != nil {
		s.Dialog = d
		top = dTop
	}
	s.Busy, s.BackgroundTasks = activity(lines, top)
	return s
}

// readInputBox finds the input box: a "❯\u00a0" line right under a
// full-width rule, continuation lines indented by two, a rule under them,
// and no rule below that (the status line and hints only).
func readInputBox(lines []scrLine, width int) (*InputBox, int, bool) {
	full := width - 1
	for i := len(lines) - 1; i > 0; i-- {
		s := lines[i].s
		if !(strings.HasPrefix(s, "❯\u00a0") || s == "❯") {
			if isHRule(lines[i], full) {
				// A rule with no box line below it before the bottom:
				// keep looking up only past the box's own bottom rule.
				continue
			}
			continue
		}
		if !isHRule(lines[i-1], full) {
			return nil, 0, false
		}
		end := -1
		for j := i + 1; j < len(lines); j++ {
			if isHRule(lines[j], full) {
				end = j
				break
			}
			if !strings.HasPrefix(lines[j].s, "  ") && !lines[j].blank() {
				return nil, 0, false
			}
		}
		if end < 0 {
			return nil, 0, false
		}
		for _, l := range lines[end+1:] {
			if isHRule(l, full) || strings.Contains(l.s, "Resume this session with:") {
				// Something boxed below it, or Claude has exited and printed
				// its farewell: this box is history.
				return nil, 0, false
			}
		}
		draft := []string{strings.TrimPrefix(strings.TrimPrefix(s, "❯"), "\u00a0")}
		for _, l := range lines[i+1 : end] {
			draft = append(draft, strings.TrimPrefix(l.s, "  "))
		}
		for len(draft) > 1 && draft[len(draft)-1] == "" {
			draft = draft[:len(draft)-1]
		}
		return &InputBox{Draft: strings.Join(draft, "\n")}, i - 1, true
	}
	return nil, 0, false
}

// shellPromptRE matches a bare shell prompt as the bottom line ("$",
// "root@host:~#").
var shellPromptRE = regexp.MustCompile(`^\S*[$#%]$`)

// exited reports a bottom line that says Claude is no longer running in
// the pane: tmux's "Pane is dead" note, or a shell prompt under Claude's
// last frame.
func exited(l scrLine) bool {
	return strings.HasPrefix(l.s, "Pane is dead") || shellPromptRE.MatchString(l.s)
}

var (
	waitingAgentsRE = regexp.MustCompile(`Waiting for (\d+) background agents? to finish`)
	shellsRE        = regexp.MustCompile(`(?:^|[ ·])(\d+) shells?(?: still running|\b)`)
)

// activity reads the spinner line and the background-work notes from the
// conversation's last lines above top (the box or the dialog).
func activity(lines []scrLine, top int) (busy bool, background int) {
	agents, shells := 0, 0
	// The status area under the box says "N shell(s)".
	for _, l := range lines[min(top, len(lines)):] {
		if m := shellsRE.FindStringSubmatch(l.s); m != nil && !strings.Contains(l.s, "❯") {
			shells = max(shells, atoi(m[1]))
		}
	}
	for i := min(top, len(lines)) - 1; i >= 0 && i >= top-40; i-- {
		l := lines[i]
		r, _ := utf8.DecodeRuneInString(l.s)
		if r == '❯' && conversation(l) {
			break // the prompt of the turn: nothing older counts
		}
		if !strings.ContainsRune(spinnerGlyphs, r) || !conversation(l) {
			continue
		}
		// The last spinner line: "✶ Verb… (3s · ↓ 9 tokens)" while a turn
		// runs, "✻ Cooked for 4s" after it, "✻ Waiting for 1 background
		// agent to finish" while Claude waits for one.
		busy = strings.Contains(l.s, "…")
		if m := waitingAgentsRE.FindStringSubmatch(l.s); m != nil {
			agents = atoi(m[1])
		}
		if m := shellsRE.FindStringSubmatch(l.s); m != nil {
			shells = max(shells, atoi(m[1]))
		}
		break
	}
	return busy, agents + shells
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 1000 {
		return 0
	}
	return n
}

// readDialog finds the dialog at the bottom: the region under its top rule
// (the topmost full-width rule under the conversation), holding a focus
// marker.
func readDialog(lines []scrLine, width int) (*Dialog, int) {
	if len(lines) == 0 {
		return nil, 0
	}
	full := width - 1
	top := -1
	stop := -1
	for i := len(lines) - 1; i >= 0; i-- {
		if conversation(lines[i]) {
			stop = i
			break
		}
		if isHRule(lines[i], full) {
			top = i
		}
	}
	truncated := false
	if top < 0 {
		if stop >= 0 {
			return nil, 0
		}
		// A dialog taller than the pane: its top is scrolled off. Only a
		// menu with a focus marker and Claude's confirm footer counts.
		truncated = true
	}
	region := lines[top+1:]
	if !hasFocus(region) {
		return nil, 0
	}
	d := parseRegion(region)
	if d == nil {
		return nil, 0
	}
	if truncated {
		if !strings.Contains(d.Footer, "Enter to confirm") && !strings.Contains(d.Footer, "Esc to cancel") {
			return nil, 0
		}
		d.Truncated = true
	}
	return d, max(top, 0)
}

func hasFocus(region []scrLine) bool {
	for _, l := range region {
		if strings.Contains(l.s, "❯") {
			return true
		}
	}
	return false
}

// parseRegion reads the dialog under the top rule.
func parseRegion(region []scrLine) *Dialog {
	d := &Dialog{Selected: -1, Current: CurrentUnknown}
	if isElicitation(region) {
		parseElicitation(d, region)
		d.Current = 0
		return d
	}
	opts := findOptions(region)
	if opts == nil {
		// A focus marker but no numbered options: some other menu.
		d.Kind = KindChoice
		d.Current = 0
		d.Title = firstText(region)
		for _, l := range region {
			if i := strings.Index(l.s, "❯"); i >= 0 {
				d.Focus = strings.TrimSpace(l.s[i+len("❯"):])
			}
		}
		d.Footer = lastParagraph(region)
		return d
	}
	parseOptions(d, region, opts)
	boxed := parseHead(d, region[:opts.lines[0]])
	classify(d, boxed)
	if d.Kind == KindPlan {
		d.Plan = boxed
	} else {
		d.Preview = boxed
	}
	return d
}

func firstText(ls []scrLine) string {
	for _, l := range ls {
		if !l.blank() && !isHRule(l, 0) {
			return l.trim()
		}
	}
	return ""
}

func lastParagraph(ls []scrLine) string {
	var p []string
	for i := len(ls) - 1; i >= 0; i-- {
		if ls[i].blank() {
			if len(p) > 0 {
				break
			}
			continue
		}
		p = append([]string{ls[i].trim()}, p...)
	}
	return strings.Join(p, " ")
}

// optBlock is where the options are in the region.
type optBlock struct {
	lines []int // region index of each numbered option
	end   int   // region index after the block
}

// findOptions locates the last run of options numbered 1, 2, ... in the
// region.
func findOptions(region []scrLine) *optBlock {
	var best *optBlock
	for i := range region {
		o, ok := parseOptRow(region[i])
		if !ok || o.num != 1 {
			continue
		}
		b := &optBlock{lines: []int{i}}
		next := 2
		j := i + 1
		for ; j < len(region); j++ {
			l := region[j]
			if p, ok := parseOptRow(l); ok {
				if p.num != next {
					break
				}
				b.lines = append(b.lines, j)
				next++
				continue
			}
			if l.blank() {
				break
			}
		}
		b.end = j
		if len(b.lines) >= 2 {
			best = b
		}
	}
	return best
}

var checkboxRE = regexp.MustCompile(`^\[( |✔|x|X)\] ?(.*)$`)

// parseOptions fills Options, Selected, Focus, Footer and the question
// shape (text options, checkboxes, "Chat about this").
func parseOptions(d *Dialog, region []scrLine, b *optBlock) {
	width := 0
	for _, l := range region {
		width = max(width, len(l.r))
	}
	innerRule := -1 // the option after which a rule is drawn
	for k, li := range b.lines {
		o, _ := parseOptRow(region[li])
		end := b.end
		if k+1 < len(b.lines) {
			end = b.lines[k+1]
		}
		opt := DialogOption{Label: o.label}
		prevWidth := len(region[li].r)
		var desc []string
		descWidth := 0
		for j := li + 1; j < end; j++ {
			l := region[j]
			switch {
			case l.blank():
				continue
			case isHRule(l, 10):
				innerRule = k
				continue
			}
			t := l.trim()
			if t == "Submit" || t == "Next" || strings.HasPrefix(l.s, "❯") && (strings.TrimSpace(strings.TrimPrefix(l.s, "❯")) == "Submit" || strings.TrimSpace(strings.TrimPrefix(l.s, "❯")) == "Next") {
				// A multi-select question's button.
				if strings.HasPrefix(l.s, "❯") {
					d.Focus = strings.TrimSpace(strings.TrimPrefix(l.s, "❯"))
				}
				continue
			}
			word := strings.Fields(t)[0]
			if len(desc) == 0 && l.indent() >= o.col && prevWidth+1+utf8.RuneCountInString(word) > width {
				// The label did not fit: this line is its wrap.
				opt.Label += " " + t
				prevWidth = len(l.r)
				continue
			}
			if len(desc) > 0 && descWidth+1+utf8.RuneCountInString(word) > width {
				desc[len(desc)-1] += " " + t
			} else {
				desc = append(desc, t)
			}
			descWidth = len(l.r)
			prevWidth = width // later lines are description
		}
		opt.Description = strings.Join(desc, "\n")
		if m := checkboxRE.FindStringSubmatch(opt.Label); m != nil {
			checked := m[1] != " "
			opt.Checked = &checked
			opt.Label = m[2]
			d.MultiSelect = true
		}
		if o.focus {
			d.Selected = k
			d.Focus = opt.Label
		}
		d.Options = append(d.Options, opt)
	}
	if innerRule >= 0 && innerRule+1 < len(d.Options) {
		// AskUserQuestion draws a rule between the free-text answer and
		// "Chat about this".
		d.Options[innerRule].Text = true
		d.Options[innerRule+1].Chat = true
	}
	var foot []string
	for _, l := range region[b.end:] {
		if !l.blank() && !isHRule(l, 10) {
			foot = append(foot, l.trim())
		}
	}
	d.Footer = strings.Join(foot, " ")
}

// parseHead reads the lines above the options: the title (the first
// paragraph's first line), the question (the last paragraph, or the last
// that asks something), the body (the rest), a question's tabs, and the
// text boxed between ╌ rules (a plan, or a diff), which it returns.
func parseHead(d *Dialog, head []scrLine) (boxed string) {
	var paras [][]scrLine
	var cur, box []scrLine
	inBox := false
	flush := func() {
		if len(cur) > 0 {
			paras = append(paras, cur)
			cur = nil
		}
	}
	for _, l := range head {
		switch {
		case isDashRule(l):
			flush()
			inBox = !inBox
			continue
		case inBox:
			box = append(box, l)
			continue
		case isHRule(l, 10), l.blank():
			flush()
			continue
		}
		if qs, ans, c, ok := parseTabs(l); ok {
			flush()
			d.Questions, d.Answered, d.Current = qs, ans, c
			continue
		}
		cur = append(cur, l)
	}
	flush()
	boxed = dedent(box)
	if len(paras) == 0 {
		return boxed
	}
	if len(paras) == 1 {
		// One paragraph: an AskUserQuestion's question (its header is the
		// tab), or a title alone.
		if d.Questions != nil || strings.Contains(joinPara(paras[0]), "?") {
			d.Question = joinPara(paras[0])
		} else {
			d.Title = joinPara(paras[0])
		}
		return boxed
	}
	// The question: the last paragraph that asks something; none when no
	// paragraph after the title does (it is all body then).
	q := -1
	for i := len(paras) - 1; i >= 1; i-- {
		if strings.Contains(joinPara(paras[i]), "?") {
			q = i
			break
		}
	}
	if q >= 0 {
		d.Question = joinPara(paras[q])
	}
	// The title, with the lines it wrapped onto on a narrow pane.
	width := 0
	for _, l := range head {
		width = max(width, len(l.r))
	}
	n := 1
	for n < len(paras[0]) {
		prev, next := paras[0][n-1], paras[0][n]
		if f := strings.Fields(next.s); len(f) == 0 || len(prev.r)+1+utf8.RuneCountInString(f[0]) <= width {
			break
		}
		n++
	}
	d.Title = joinPara(paras[0][:n])
	var body []string
	if len(paras[0]) > n {
		body = append(body, dedent(paras[0][n:]))
	}
	for i := 1; i < len(paras); i++ {
		if i != q {
			body = append(body, dedent(paras[i]))
		}
	}
	d.Body = strings.Join(body, "\n\n")
	return boxed
}

func joinPara(p []scrLine) string {
	var parts []string
	for _, l := range p {
		parts = append(parts, l.trim())
	}
	return strings.Join(parts, " ")
}

// dedent joins lines, removing their common indentation.
func dedent(ls []scrLine) string {
	ind := -1
	for _, l := range ls {
		if !l.blank() && (ind < 0 || l.indent() < ind) {
			ind = l.indent()
		}
	}
	var out []string
	for _, l := range ls {
		if l.blank() {
			if len(out) > 0 && out[len(out)-1] != "" {
				out = append(out, "")
			}
			continue
		}
		out = append(out, string(l.r[max(ind, 0):]))
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return strings.Join(out, "\n")
}

// parseTabs reads AskUserQuestion's tab line: "←  ☐ Database  ☒ Features
// ✔ Submit  →", or " ☐ Database" for a single question.
func parseTabs(l scrLine) (qs []string, answered []bool, current int, ok bool) {
	t := strings.TrimSpace(l.s)
	if !strings.HasPrefix(t, "←") && !strings.HasPrefix(t, "☐") && !strings.HasPrefix(t, "☒") {
		return nil, nil, 0, false
	}
	current = CurrentUnknown
	highlighted := -1
	col := 0
	for _, tok := range splitTabs(l) {
		text := strings.TrimSpace(string(l.r[tok[0]:tok[1]]))
		col = tok[0]
		mark, n := utf8.DecodeRuneInString(text)
		if mark != '☐' && mark != '☒' {
			if mark == '✔' && strings.TrimSpace(text[n:]) == "Submit" && anyHi(l, col, tok[1]) {
				highlighted = -2 // the Submit tab
			}
			continue
		}
		if anyHi(l, col, tok[1]) {
			highlighted = len(qs)
		}
		qs = append(qs, strings.TrimSpace(text[n:]))
		answered = append(answered, mark == '☒')
	}
	if len(qs) == 0 {
		return nil, nil, 0, false
	}
	switch {
	case highlighted >= 0:
		current = highlighted
	case len(qs) == 1:
		current = 0
	}
	return qs, answered, current, true
}

// splitTabs returns the [start, end) rune ranges of a tab line's items,
// separated by two or more spaces.
func splitTabs(l scrLine) [][2]int {
	var out [][2]int
	start := -1
	for i := 0; i <= len(l.r); i++ {
		gap := i == len(l.r) || (l.r[i] == ' ' && i+1 < len(l.r) && l.r[i+1] == ' ')
		if gap {
			if start >= 0 {
				out = append(out, [2]int{start, i})
				start = -1
			}
			continue
		}
		if start < 0 && l.r[i] != ' ' {
			start = i
		}
	}
	return out
}

func anyHi(l scrLine, from, to int) bool {
	for i := from; i < to && i < len(l.hi); i++ {
		if l.hi[i] && l.r[i] != ' ' {
			return true
		}
	}
	return false
}

// classify sets the dialog's kind from what it says.
func classify(d *Dialog, boxed string) {
	text := d.Title + "\n" + d.Body + "\n" + d.Question
	has := func(s string) bool { return strings.Contains(text, s) }
	labels := map[string]bool{}
	for _, o := range d.Options {
		labels[o.Label] = true
	}
	switch {
	case d.Questions != nil || d.MultiSelect || d.Title == "Review your answers" || anyChat(d):
		d.Kind = KindQuestion
		if d.Title == "Review your answers" || has("Ready to submit your answers?") {
			d.Current = CurrentSubmit
		}
	case labels["Yes, I trust this folder"] || d.Title == "Accessing workspace:":
		d.Kind = KindTrust
	case has("Do you want to use this API key?"):
		d.Kind = KindAPIKey
	case has("Bypass Permissions mode") && labels["Yes, I accept"]:
		d.Kind = KindBypass
	case strings.HasPrefix(d.Title, "New MCP server found"):
		d.Kind = KindMCPServer
	case d.Title == "Settings Error" || (d.Truncated && labels["Continue without these settings"]):
		d.Kind = KindSettingsError
	case d.Title == "Ready to code?" || d.Title == "Exit plan mode?" || boxed != "" && has("Would you like to proceed?"):
		d.Kind = KindPlan
		for i := range d.Options {
			if strings.HasPrefix(d.Options[i].Label, "Tell Claude what to change") || strings.Contains(d.Options[i].Description, "approve with this feedback") {
				d.Options[i].Text = true
			}
		}
	case permissionTitle(d):
		d.Kind = KindPermission
		amend := strings.Contains(d.Footer, "Tab to amend")
		for i := range d.Options {
			o := &d.Options[i]
			switch {
			case strings.HasPrefix(o.Label, "Yes, and tell Claude what to do next"),
				strings.HasPrefix(o.Label, "No, and tell Claude what to do differently") && !strings.HasSuffix(o.Label, "(esc)"):
				o.Text = true
			case amend && (o.Label == "Yes" || o.Label == "No"):
				o.Text = true
			case !amend && i == d.Selected && (i == 0 && strings.HasPrefix(o.Label, "Yes, ") || i == len(d.Options)-1 && strings.HasPrefix(o.Label, "No, ")):
				// Amending now: the label shows what is typed.
				o.Text = true
			}
		}
	default:
		d.Kind = KindChoice
	}
	if d.Kind != KindQuestion {
		d.Current = 0
	}
}

func anyChat(d *Dialog) bool {
	for _, o := range d.Options {
		if o.Chat {
			return true
		}
	}
	return false
}

// permissionTools maps a permission dialog's title to its tool.
var permissionTools = map[string]string{
	"Bash command":       "Bash",
	"PowerShell command": "PowerShell",
	"Edit file":          "Edit",
	"Create file":        "Write",
	"Overwrite file":     "Write",
	"Edit notebook":      "NotebookEdit",
	"Fetch":              "WebFetch",
	"Tool use":           "",
}

var (
	agentSuffixRE = regexp.MustCompile(`^(.*?) · from the (.+?) agent$`)
	mcpToolRE     = regexp.MustCompile(`^(\S+) - (\S+?)\(.*\) \(MCP\)$|^(\S+) - (\S+) \(MCP\)$`)
)

func permissionTitle(d *Dialog) bool {
	title := d.Title
	if m := agentSuffixRE.FindStringSubmatch(title); m != nil {
		title = m[1]
		d.Agent = m[2]
	}
	tool, ok := permissionTools[title]
	if !ok {
		if !strings.HasPrefix(d.Question, "Do you want to") || !strings.Contains(d.Footer+d.Question, "") {
			d.Agent = ""
			return false
		}
	}
	if tool == "" && d.Body != "" {
		// "server - tool(args) (MCP)", perhaps wrapped over lines.
		first := strings.SplitN(d.Body, "\n\n", 2)[0]
		first = strings.Join(strings.Fields(first), " ")
		if i := strings.Index(first, "(MCP)"); i >= 0 {
			first = first[:i+len("(MCP)")]
		}
		if m := mcpToolRE.FindStringSubmatch(first); m != nil {
			server, name := m[1], m[2]
			if server == "" {
				server, name = m[3], m[4]
			}
			tool = "mcp__" + server + "__" + name
		}
	}
	d.Tool = tool
	return true
}

// isElicitation reports an MCP form: "<server> requests your input" and
// the Accept/Decline buttons.
func isElicitation(region []scrLine) bool {
	title, buttons := false, false
	for _, l := range region {
		if strings.Contains(l.s, "requests your input") {
			title = true
		}
		if isButtons(l) {
			buttons = true
		}
	}
	return title && buttons
}

var buttonsRE = regexp.MustCompile(`^ *(❯ )?Accept +(❯ )?Decline$`)

func isButtons(l scrLine) bool { return buttonsRE.MatchString(l.s) }

var fieldRE = regexp.MustCompile(`^( *)(❯ )? *([*✔])? *([^:]+): ?(.*)$`)

// parseElicitation reads an MCP form.
func parseElicitation(d *Dialog, region []scrLine) {
	d.Kind = KindElicitation
	i := 0
	for ; i < len(region) && region[i].blank(); i++ {
	}
	if i < len(region) {
		d.Title = region[i].trim()
		i++
	}
	// The message: the paragraph after the title.
	for ; i < len(region) && region[i].blank(); i++ {
	}
	var msg []scrLine
	for ; i < len(region) && !region[i].blank(); i++ {
		msg = append(msg, region[i])
	}
	d.Question = joinPara(msg)
	d.Options = []DialogOption{{Label: "Accept"}, {Label: "Decline"}}
	var f *Field
	nameCol := -1
	for ; i < len(region); i++ {
		l := region[i]
		if l.blank() {
			continue
		}
		if isButtons(l) {
			m := buttonsRE.FindStringSubmatch(l.s)
			switch {
			case m[1] != "":
				d.Selected, d.Focus = 0, "Accept"
			case m[2] != "":
				d.Selected, d.Focus = 1, "Decline"
			}
			var foot []string
			for _, r := range region[i+1:] {
				if !r.blank() {
					foot = append(foot, r.trim())
				}
			}
			d.Footer = strings.Join(foot, " ")
			break
		}
		t := strings.TrimSpace(l.s)
		if f != nil && (strings.HasPrefix(t, "◯") || strings.HasPrefix(t, "◉") || strings.HasPrefix(t, "❯ ◯") || strings.HasPrefix(t, "❯ ◉")) {
			focus := strings.HasPrefix(t, "❯")
			c := strings.TrimSpace(strings.TrimPrefix(t, "❯"))
			c = strings.TrimSpace(c[len("◯"):])
			if focus {
				f.ChoiceFocus = len(f.Choices)
			}
			f.Choices = append(f.Choices, c)
			continue
		}
		m := fieldRE.FindStringSubmatchIndex(l.s)
		if m != nil && (nameCol < 0 || utf8.RuneCountInString(l.s[:m[8]]) == nameCol) {
			// A field: its name starts in the column of the first field's
			// (markers ❯, * and ✔ sit left of it); deeper lines describe it.
			if nameCol < 0 {
				nameCol = utf8.RuneCountInString(l.s[:m[8]])
			}
			d.Fields = append(d.Fields, Field{Name: strings.TrimSpace(l.s[m[8]:m[9]]), ChoiceFocus: -1})
			f = &d.Fields[len(d.Fields)-1]
			mark := ""
			if m[6] >= 0 {
				mark = l.s[m[6]:m[7]]
			}
			f.Missing = mark == "*"
			f.Valid = mark == "✔"
			if m[4] >= 0 {
				d.Focus = f.Name
			}
			v := strings.TrimSpace(l.s[m[10]:m[11]])
			switch {
			case v == "☐" || v == "☒":
				f.Kind = "boolean"
				f.Value = strconv.FormatBool(v == "☒")
			case strings.HasPrefix(v, "▸") || strings.HasPrefix(v, "▾"):
				f.Kind = "choice"
				v = strings.TrimSpace(v[len("▸"):])
				if v != "not set" {
					f.Value = v
				}
			default:
				f.Kind = "text"
				if v != "not set" && v != "Type something…" {
					f.Value = v
				}
			}
			continue
		}
		if f != nil {
			if f.Description != "" {
				f.Description += " "
			}
			f.Description += t
		}
	}
	// A choice field shown without its ▸ once chosen and unfocused: the
	// value alone. Nothing more can be told from the screen.
}

// Fingerprint identifies the dialog: its kind, title, body, question,
// plan, option labels, questions, current question and field names, not
// the focus, the checkboxes, typed text, values or a permission's Preview,
// so that "the same dialog is still on screen" can be told from "another
// dialog replaced it".
func (d Dialog) Fingerprint() string {
	var labels []string
	for i, o := range d.Options {
		l := o.Label
		switch {
		case o.Text && d.Kind == KindPermission:
			// "Yes"/"No" read "Yes, and tell Claude what to do next" or
			// "No, <typed text>" while amended.
			l, _, _ = strings.Cut(l, ",")
		case o.Text:
			l = "<text>"
		}
		labels = append(labels, strconv.Itoa(i+1)+"."+l)
	}
	var fields []string
	for _, f := range d.Fields {
		// Names only: a chosen choice field loses its ▸ when unfocused.
		fields = append(fields, f.Name)
	}
	// Current only as "a question or the Submit step": a capture without
	// escapes does not show which tab is current, and the question's own
	// text tells them apart.
	cur := 0
	if d.Current == CurrentSubmit {
		cur = -1
	}
	b, _ := json.Marshal([]any{d.Kind, d.Title, d.Body, d.Question, d.Plan, d.Tool, d.Agent, labels, d.Questions, cur, fields, d.MultiSelect})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}
