package tmux

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Limits for SendText. tmux refuses a client command bigger than about
// 16 KiB ("command too long"), so text goes in pieces, several pieces per
// call while they fit.
const (
	textChunk   = 4 << 10
	callBudget  = 12 << 10
	nulKey      = "C-@" // what a terminal sends for Ctrl-Space: a NUL byte
	cancelModes = "copy-mode"
)

// SendText types text into the pane target (a pane id or a session name)
// exactly as given, character by character (send-keys -l): text starting
// with '-', semicolons, '#', quotes, any Unicode and even invalid UTF-8 or
// NUL bytes arrive unchanged. Text never submits by itself: "\r\n" and a
// lone "\r" (what Enter sends) are typed as "\n" (Ctrl-J, which a shell
// reads as end of line and Claude Code's input box as a new line); press
// Enter with SendKeys. A pane scrolled back in copy mode is returned to
// the live screen first, or the text would go to copy mode's key table.
func (s *Server) SendText(ctx context.Context, target, text string) error {
	t, err := paneTarget(target)
	if err != nil {
		return err
	}
	if text == "" {
		return nil
	}
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	cmds := [][]string{{cancelModes, "-q", "-t", t}}
	for i, part := range strings.Split(text, "\x00") {
		if i > 0 {
			// An argv cannot hold a NUL byte; a key can send one.
			cmds = append(cmds, []string{"send-keys", "-t", t, nulKey})
		}
		for _, c := range chunks(part, textChunk) {
			cmds = append(cmds, []string{"send-keys", "-t", t, "-l", "--", c})
		}
	}
	for _, batch := range batches(cmds, callBudget) {
		if _, err := s.runCommands(ctx, s.configPath, batch); err != nil {
			return err
		}
	}
	return nil
}

// Paste puts text into the pane target as one bracketed paste (paste-buffer
// -p), through a buffer of its own that is deleted after. An application
// that asked for bracketed paste (Claude Code does) reads it as pasted text,
// never as keys: a "1" pasted into a menu picks nothing, and a newline in
// it submits nothing. The text must hold no NUL and no ESC (a paste's end
// marker starts with one): the caller checks.
func (s *Server) Paste(ctx context.Context, target, text string) error {
	t, err := paneTarget(target)
	if err != nil {
		return err
	}
	if strings.ContainsAny(text, "\x00\x1b") {
		return invalid("pasted text must not contain NUL or ESC")
	}
	if text == "" {
		return nil
	}
	var id [6]byte
	rand.Read(id[:])
	buf := "corral-paste-" + hex.EncodeToString(id[:])
	cmds := [][]string{{cancelModes, "-q", "-t", t}}
	for i, c := range chunks(text, textChunk) {
		set := []string{"set-buffer", "-b", buf, "--", c}
		if i > 0 {
			set = []string{"set-buffer", "-a", "-b", buf, "--", c}
		}
		cmds = append(cmds, set)
	}
	// -r: newlines stay newlines (not Enter); -d: the buffer goes after.
	cmds = append(cmds, []string{"paste-buffer", "-p", "-r", "-d", "-b", buf, "-t", t})
	for _, batch := range batches(cmds, callBudget) {
		if _, err := s.runCommands(ctx, s.configPath, batch); err != nil {
			s.run(context.WithoutCancel(ctx), "delete-buffer", "-b", buf)
			return err
		}
	}
	return nil
}

// chunks splits s into pieces of at most n bytes without splitting a
// UTF-8 sequence.
func chunks(s string, n int) []string {
	var out []string
	for len(s) > n {
		cut := n
		for cut > n-utf8.UTFMax && !utf8.RuneStart(s[cut]) {
			cut--
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

// batches groups commands into tmux calls whose arguments stay within
// budget bytes.
func batches(cmds [][]string, budget int) [][][]string {
	var out [][][]string
	var cur [][]string
	size := 0
	for _, c := range cmds {
		n := 2 // the ";" separator
		for _, a := range c {
			n += len(a) + 2 // the NUL, and a possible escaping backslash
		}
		if len(cur) > 0 && size+n > budget {
			out = append(out, cur)
			cur, size = nil, 0
		}
		cur = append(cur, c)
		size += n
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// keyPattern accepts tmux key names: optional C-/M-/S- modifiers on a
// named key, a function key or one printable ASCII character. tmux sends
// an unknown key name as literal text, so this list is the guard.
var keyPattern = regexp.MustCompile(`^(?:[CMS]-)*(?:` +
	`Enter|Escape|Tab|BTab|BSpace|Space|Up|Down|Left|Right|Home|End|` +
	`PageUp|PgUp|PageDown|PgDn|PPage|NPage|Insert|IC|Delete|DC|` +
	`F(?:[1-9]|1[0-2])|[!-~])$`)

// ValidKey reports whether key is a key name SendKeys accepts.
func ValidKey(key string) bool { return keyPattern.MatchString(key) }

// SendKeys presses named keys in the pane target, in order: "Enter",
// "Escape", "Tab", "BTab", "BSpace", "Space", arrows ("Up"...), "Home",
// "End", "PageUp", "PageDown", "Insert", "Delete", "F1"-"F12", a single
// printable ASCII character ("y", "1", "/"), each optionally with C-, M-
// or S- modifiers ("C-c", "M-Enter"). Anything else is refused with an
// error matching ErrInvalid, before tmux runs. Like SendText it leaves
// copy mode first.
func (s *Server) SendKeys(ctx context.Context, target string, keys ...string) error {
	t, err := paneTarget(target)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if !ValidKey(k) {
			return invalid("key %q is not a key name (want e.g. Enter, Escape, C-c, Up, F1, y)", k)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	send := append([]string{"send-keys", "-t", t, "--"}, keys...)
	_, err = s.runCommands(ctx, s.configPath, [][]string{{cancelModes, "-q", "-t", t}, send})
	return err
}

// CaptureOptions select what Capture returns.
type CaptureOptions struct {
	// Escapes keeps colours and attributes as escape sequences.
	Escapes bool
	// History includes up to this many lines of scrollback above the
	// visible screen.
	History int
	// Join joins lines that were wrapped to fit the width.
	Join bool
	// HistoryOnly leaves out the visible screen: only scrollback.
	HistoryOnly bool
}

// Capture returns the text of the pane target's screen, one line per row,
// each ending in "\n".
func (s *Server) Capture(ctx context.Context, target string, o CaptureOptions) (string, error) {
	t, err := paneTarget(target)
	if err != nil {
		return "", err
	}
	if o.History < 0 {
		return "", invalid("history %d is negative", o.History)
	}
	args := []string{"capture-pane", "-p", "-t", t}
	if o.Escapes {
		args = append(args, "-e")
	}
	if o.Join {
		args = append(args, "-J")
	}
	if o.History > 0 {
		args = append(args, "-S", strconv.Itoa(-o.History))
	}
	if o.HistoryOnly {
		if o.History <= 0 {
			return "", nil
		}
		args = append(args, "-E", "-1")
	}
	return s.run(ctx, args...)
}

// Resize sets the window size of target (a pane id or a session name).
// The size holds while no client is attached; an attached client of
// another size takes over again, since resize-window would otherwise pin
// the window at this size for good (it sets window-size to manual).
func (s *Server) Resize(ctx context.Context, target string, cols, rows int) error {
	t, err := paneTarget(target)
	if err != nil {
		return err
	}
	if err := checkSize(cols, rows); err != nil {
		return err
	}
	_, err = s.runCommands(ctx, s.configPath, [][]string{
		{"resize-window", "-t", t, "-x", strconv.Itoa(cols), "-y", strconv.Itoa(rows)},
		{"set-option", "-w", "-u", "-t", t, "window-size"},
	})
	return err
}
