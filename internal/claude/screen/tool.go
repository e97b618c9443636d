package screen

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ToolOutput is what Claude's screen shows of the tool that runs now: Claude
// writes a tool's result to the transcript only when the tool ends, and
// until then the screen alone shows its output (2.1.197 draws the last few
// lines under the call, the earlier ones counted as "+N lines").
type ToolOutput struct {
	// Header is the call as drawn, e.g. "Bash(sleep 30)"; Tool its name.
	Header string
	Tool   string
	// Lines are the output lines shown, oldest first, as plain text
	// (wrapped lines stay apart: the screen does not say which wrapped).
	Lines []string
	// Hidden is how many earlier lines Claude did not draw ("+10 lines").
	Hidden int
}

// toolHeadRE matches a tool call line: the bullet (Claude blinks it while
// the tool runs, so it may be blank), the tool's name and its argument.
var toolHeadRE = regexp.MustCompile(`^(?:[●⏺] |  )([A-Za-z][A-Za-z0-9_:.-]*)\((.*)$`)

// hiddenRE matches the count of lines Claude leaves out while a tool runs,
// with the time it has run: "+10 lines (7s)" (the ellipsis before it blinks).
var hiddenRE = regexp.MustCompile(`^(?:… )?\+([0-9]+) lines? \([0-9hms ]+\)$`)

// RunningTool reads the output of the tool that runs now from a capture of
// Claude's screen (with or without escapes). It finds the last tool call
// above the spinner of a working turn, and reports nothing when the turn
// is not working, no tool call is drawn last or the call shows no sign of
// running (its finished form says "(ctrl+o to expand)", not a time).
func RunningTool(screen string) (ToolOutput, bool) {
	lines := parseLines(screen)
	width := 0
	for _, l := range lines {
		width = max(width, len(l.r))
	}
	top := len(lines)
	if _, boxTop, ok := readInputBox(lines, width); ok {
		top = boxTop
	}
	// The spinner line of the turn, the last before the input box.
	spin := -1
	for i := top - 1; i >= 0 && i >= top-40; i-- {
		r, _ := utf8.DecodeRuneInString(lines[i].s)
		if r == '❯' && conversation(lines[i]) {
			return ToolOutput{}, false
		}
		if strings.ContainsRune(spinnerGlyphs, r) && conversation(lines[i]) {
			if !strings.Contains(lines[i].s, "…") {
				return ToolOutput{}, false // "✻ Baked for 10s": the turn ended
			}
			spin = i
			break
		}
	}
	if spin < 0 {
		return ToolOutput{}, false
	}
	// The tool call: the last head line above the spinner with its "⎿"
	// output right under it.
	head, first := -1, -1
	for i := spin - 1; i > 0 && i >= spin-maxScreenLines; i-- {
		if toolHeadRE.MatchString(lines[i].s) {
			// A long call wraps onto a few lines indented under it.
			j := i + 1
			for j < spin && j <= i+4 && !isResultLine(lines[j]) && lines[j].indent() >= 4 {
				j++
			}
			if j < spin && isResultLine(lines[j]) {
				head, first = i, j
				break
			}
		}
		if r, _ := utf8.DecodeRuneInString(lines[i].s); r == '●' || r == '⏺' || r == '❯' {
			return ToolOutput{}, false // something else was drawn after the last call
		}
	}
	if head < 0 {
		return ToolOutput{}, false
	}
	m := toolHeadRE.FindStringSubmatch(lines[head].s)
	parts := []string{lines[head].trim()}
	for _, l := range lines[head+1 : first] {
		parts = append(parts, l.trim())
	}
	out := ToolOutput{Tool: m[1], Header: strings.Join(parts, " ")}
	if r, n := utf8.DecodeRuneInString(out.Header); r == '●' || r == '⏺' {
		out.Header = strings.TrimSpace(out.Header[n:])
	}
	end := spin
	for end > head+1 && lines[end-1].blank() {
		end--
	}
	running := false
	var body []string
	for i := first; i < end; i++ {
		t := outputText(lines[i])
		tt := strings.TrimSpace(strings.Trim(t, "\u00a0"))
		switch {
		case strings.HasPrefix(tt, "(ctrl+b") && strings.HasSuffix(tt, "to run in background)"):
			running = true
			continue
		case strings.HasPrefix(tt, "Running…") || strings.HasPrefix(tt, "Running..."):
			running = true
			continue
		case hiddenRE.MatchString(tt):
			out.Hidden, _ = strconv.Atoi(hiddenRE.FindStringSubmatch(tt)[1])
			running = true
			continue
		case strings.Contains(tt, "(ctrl+o to expand)"):
			return ToolOutput{}, false // the finished call's summary
		}
		body = append(body, strings.TrimRight(strings.ReplaceAll(t, "\u00a0", " "), " "))
	}
	if !running {
		return ToolOutput{}, false
	}
	for len(body) > 0 && body[len(body)-1] == "" {
		body = body[:len(body)-1]
	}
	out.Lines = body
	return out, true
}

// isResultLine reports the first line under a tool call: "  ⎿  ...".
func isResultLine(l scrLine) bool {
	return strings.HasPrefix(strings.TrimLeft(l.s, " "), "⎿") && l.indent() <= 4
}

// outputText is a line of a call's output without its margin: the "  ⎿  "
// of the first line, or the five columns of indent of the others.
func outputText(l scrLine) string {
	r := l.r
	n := 0
	for n < len(r) && n < 5 && (r[n] == ' ' || r[n] == '\u00a0' || r[n] == '⎿') {
		n++
	}
	return string(r[n:])
}
