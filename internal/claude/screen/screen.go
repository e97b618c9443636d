package screen

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Prompt is a numbered-choice dialog read from the bottom of Claude's
// screen: the permission dialog ("Do you want to proceed?") or another
// menu (AskUserQuestion, trust and API-key questions).
type Prompt struct {
	// Title is the dialog's heading, e.g. "Bash command".
	Title string `json:"title,omitempty"`
	// Body is the text between the title and the question (for a
	// permission: the command and its description), lines joined by "\n".
	Body string `json:"body,omitempty"`
	// Question is the line just above the options.
	Question string `json:"question,omitempty"`
	// Options are the choices in order. Keys choose one: in 2.1.197 a
	// digit 1-9 picks its option at once, without Enter (a text-input
	// option, such as "Type something", is only focused by its digit).
	// Options past 9 are reached with Up/Down from the focused one, then
	// Enter.
	Options []PromptOption `json:"options"`
	// Selected is the index of the focused option (the one Enter picks).
	Selected int `json:"selected"`
	// Footer is the hint line under the options, e.g.
	// "Esc to cancel · Tab to amend · ctrl+e to explain".
	Footer string `json:"footer,omitempty"`
}

// PromptOption is one option of a Prompt and the keys that pick it.
type PromptOption struct {
	Label string   `json:"label"`
	Keys  []string `json:"keys"`
}

// optLine is one "N. label" line of a menu.
type optLine struct {
	num    int
	label  string
	cursor bool // the focus marker ❯ precedes the number
	col    int  // column where the label starts
	width  int  // display width of the whole line
}

// isCursorMark reports the focus markers Claude's menus draw before an option.
func isCursorMark(r rune) bool { return r == '❯' || r == '›' || r == '>' }

// parseOptLine reads "  ❯ 2. label" (marker optional).
func parseOptLine(l string) (optLine, bool) {
	o := optLine{width: utf8.RuneCountInString(l)}
	i := 0
	rs := []rune(l)
	for i < len(rs) && isBlank(rs[i]) {
		i++
	}
	if i < len(rs) && isCursorMark(rs[i]) {
		o.cursor = true
		i++
		for i < len(rs) && isBlank(rs[i]) {
			i++
		}
	}
	j := i
	for j < len(rs) && j-i < 3 && rs[j] >= '0' && rs[j] <= '9' {
		j++
	}
	if j == i || j >= len(rs) || rs[j] != '.' {
		return o, false
	}
	n, err := strconv.Atoi(string(rs[i:j]))
	if err != nil || n <= 0 {
		return o, false
	}
	k := j + 1
	if k >= len(rs) || !isBlank(rs[k]) {
		return o, false
	}
	for k < len(rs) && isBlank(rs[k]) {
		k++
	}
	if k >= len(rs) {
		return o, false
	}
	o.num, o.col, o.label = n, k, strings.TrimRightFunc(string(rs[k:]), unicode.IsSpace)
	return o, true
}

func isBlank(r rune) bool { return r == ' ' || r == '\t' || r == '\u00a0' }

func indentOf(l string) int {
	n := 0
	for _, r := range l {
		if !isBlank(r) {
			break
		}
		n++
	}
	return n
}

// isRule reports a horizontal rule line (the dialog's top border).
func isRule(l string) bool {
	t := strings.TrimSpace(l)
	return utf8.RuneCountInString(t) >= 10 && strings.Trim(t, "─━═-") == ""
}

// isConversationLine reports lines that only appear in the conversation or
// the idle input box, never below an open dialog's options.
func isConversationLine(l string) bool {
	t := strings.TrimFunc(l, unicode.IsSpace)
	if t == "" {
		return false
	}
	r, _ := utf8.DecodeRuneInString(t)
	switch r {
	case '●', '⏺', '✻', '✶', '✳', '✢', '·', '*':
		return true
	case '❯', '>':
		// The input box: the marker alone or followed by typed text,
		// not by an option number.
		_, isOpt := parseOptLine(l)
		return !isOpt
	}
	return false
}

// ParsePrompt finds an open numbered-choice dialog at the bottom of a
// screen capture.
//
// Deprecated: Read tells which dialog is open (its kind, options,
// focus and fingerprint) and whether the input box is visible, and
// Dialog.Keys plans answers from it; ParsePrompt stays until its callers
// in internal/agent switch. It is tolerant of width (wrapped labels are joined) and
// of menus other than the permission dialog; it rejects numbered lists in
// the conversation (they have no focus marker, or conversation follows
// them).
func ParsePrompt(screen string) (Prompt, bool) {
	lines := strings.Split(strings.ReplaceAll(screen, "\r\n", "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRightFunc(l, unicode.IsSpace)
	}
	width := 0
	for _, l := range lines {
		width = max(width, utf8.RuneCountInString(l))
	}

	// Find the last run of options numbered 1..n.
	var best []int // line index of each option of the best block
	for i := range lines {
		o, ok := parseOptLine(lines[i])
		if !ok || o.num != 1 {
			continue
		}
		block := []int{i}
		next := 2
		gap := 0
		for j := i + 1; j < len(lines) && gap <= 6; j++ {
			if p, ok := parseOptLine(lines[j]); ok {
				if p.num != next {
					break
				}
				block = append(block, j)
				next++
				gap = 0
				continue
			}
			if isConversationLine(lines[j]) {
				break
			}
			gap++
		}
		if len(block) >= 2 {
			best = block
		}
	}
	if best == nil {
		return Prompt{}, false
	}
	last := best[len(best)-1]
	// Below the options only hints and blank lines may follow.
	for _, l := range lines[last+1:] {
		if isConversationLine(l) {
			return Prompt{}, false
		}
	}

	p := Prompt{Selected: -1}
	for k, li := range best {
		o, _ := parseOptLine(lines[li])
		label := o.label
		prevWidth := o.width
		end := len(lines)
		if k+1 < len(best) {
			end = best[k+1]
		}
		// Join wrapped continuation lines: indented to the label and
		// only where the previous line was too full for the next word.
		for j := li + 1; j < end; j++ {
			l := lines[j]
			if strings.TrimSpace(l) == "" || indentOf(l) < o.col {
				break
			}
			word := strings.Fields(l)[0]
			if prevWidth+1+utf8.RuneCountInString(word) <= width {
				break // a description line, not a wrap
			}
			label += " " + strings.TrimSpace(l)
			prevWidth = utf8.RuneCountInString(l)
		}
		if o.cursor {
			p.Selected = k
		}
		p.Options = append(p.Options, PromptOption{Label: label})
	}
	if p.Selected < 0 {
		return Prompt{}, false // no focus marker: a list in the text, not a menu
	}
	for k := range p.Options {
		p.Options[k].Keys = optionKeys(k, p.Selected)
	}

	// The heading: from the rule above the options down to the question.
	first := best[0]
	top := -1
	for j := first - 1; j >= 0 && j >= first-40; j-- {
		if isRule(lines[j]) {
			top = j
			break
		}
	}
	var head []string
	for j := top + 1; j < first; j++ {
		if t := strings.TrimSpace(lines[j]); t != "" {
			head = append(head, t)
		}
	}
	if top < 0 && len(head) > 0 {
		// No border found: keep only the paragraph above the options.
		head = head[len(head)-1:]
	}
	if n := len(head); n > 0 {
		p.Question = head[n-1]
		if n > 1 {
			p.Title = head[0]
			p.Body = strings.Join(head[1:n-1], "\n")
		}
	}
	for _, l := range lines[last+1:] {
		if t := strings.TrimSpace(l); t != "" && !isRule(l) && indentOf(l) < 3 {
			p.Footer = t
			break
		}
	}
	return p, true
}

// optionKeys are the tmux keys that choose option k when option sel has
// the focus.
func optionKeys(k, sel int) []string {
	if k < 9 {
		return []string{strconv.Itoa(k + 1)}
	}
	var keys []string
	for i := sel; i < k; i++ {
		keys = append(keys, "Down")
	}
	for i := sel; i > k; i-- {
		keys = append(keys, "Up")
	}
	return append(keys, "Enter")
}
