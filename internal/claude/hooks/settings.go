package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/corral-dev/corral/internal/shellquote"
)

// OwnMarker ends every command corral registers in a Claude settings file.
// It is a shell comment, so it changes nothing when Claude runs the
// command, and it survives Claude rewriting the file (Claude drops unknown
// JSON fields when it normalises settings, but keeps command strings). It
// is how install stays idempotent and uninstall removes exactly corral's
// entries, wherever the binary has moved since.
const OwnMarker = "#corral-managed"

// TimeoutSeconds is the timeout written for corral's hooks: a safety
// net only, since `corral hook` gives up after about a second itself.
const TimeoutSeconds = 10

// MarkCommand appends OwnMarker to a command (once). SettingsJSON and
// InstallGlobal both mark, so the same binary yields the same string in
// both files and Claude, which deduplicates identical hook commands, runs
// it once when both are active.
func MarkCommand(cmd string) string {
	cmd = strings.TrimSpace(cmd)
	if strings.HasSuffix(cmd, OwnMarker) {
		return cmd
	}
	return cmd + " " + OwnMarker
}

// Exec is a hook command in Claude's exec form: a program and its
// arguments, run without a shell. corral's hooks use it: a shell costs a
// fork and an exec on every event, and Claude waits for its hooks.
type Exec struct {
	Path string
	Args []string
}

// HookPrograms are the program names corral's hooks run: the small
// dedicated binary, or corral itself with the "hook" argument.
var hookPrograms = []string{"corral-hook", "corral"}

// OwnArg ends the arguments of every exec-form hook corral registers: the
// hook ignores it, and it marks the entry as corral's wherever the binary
// is and whatever it is called (the shell form has OwnMarker instead).
const OwnArg = "--corral-managed"

// IsOwnHook reports whether a hook entry is corral's: an exec-form entry
// carrying OwnArg, running corral-hook, or corral with the argument "hook";
// or a shell command that IsOwnCommand recognises.
func IsOwnHook(command string, args []string) bool {
	if slices.Contains(args, OwnArg) {
		return true
	}
	switch filepath.Base(command) {
	case hookPrograms[0]:
		return true
	case hookPrograms[1]:
		if len(args) > 0 {
			return args[0] == "hook"
		}
	}
	return IsOwnCommand(command)
}

func checkExec(e Exec) error {
	if !filepath.IsAbs(e.Path) {
		return fmt.Errorf("hook: program %q is not an absolute path", e.Path)
	}
	for _, a := range append([]string{e.Path}, e.Args...) {
		if strings.ContainsAny(a, "\n\r\x00") {
			return fmt.Errorf("hook: argument %q contains a newline or NUL", a)
		}
	}
	return nil
}

// IsOwnCommand reports whether a settings command is corral's: it carries
// OwnMarker, or (written by hand) its program is named "corral" and its
// first argument is "hook" or "statusline".
func IsOwnCommand(cmd string) bool {
	if strings.Contains(cmd, OwnMarker) {
		return true
	}
	w := shellquote.Words(cmd, 2)
	if len(w) < 2 {
		return false
	}
	return filepath.Base(w[0]) == "corral" && (w[1] == "hook" || w[1] == "statusline")
}

// checkCommand rejects commands that could not be a single shell command.
func checkCommand(what, cmd string) error {
	if strings.TrimSpace(cmd) == "" {
		return fmt.Errorf("%s: empty command", what)
	}
	if strings.ContainsAny(cmd, "\n\r\x00") {
		return fmt.Errorf("%s: command contains a newline or NUL", what)
	}
	return nil
}

// hookCommand is one entry of a matcher group's "hooks" list.
type hookCommand struct {
	Type    string   `json:"type"`
	Command string   `json:"command"`
	Args    []string `json:"args,omitempty"`
	Timeout int      `json:"timeout,omitempty"`
}

// hookGroup is one element of an event's list in the "hooks" object.
type hookGroup struct {
	Matcher *string       `json:"matcher,omitempty"`
	Hooks   []hookCommand `json:"hooks"`
}

type statusLineSetting struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Padding int    `json:"padding"`
}

// ownGroup is the matcher group corral registers for an event.
func ownGroup(event string, hook Exec) hookGroup {
	args := hook.Args
	if !slices.Contains(args, OwnArg) {
		args = append(slices.Clip(args), OwnArg)
	}
	g := hookGroup{Hooks: []hookCommand{{Type: "command", Command: hook.Path, Args: args, Timeout: TimeoutSeconds}}}
	if isToolEvent(event) {
		all := "*"
		g.Matcher = &all
	}
	return g
}

func ownStatusLine(cmd string) statusLineSetting {
	return statusLineSetting{Type: "command", Command: MarkCommand(cmd), Padding: 0}
}

// SettingsJSON is the file corral passes to `claude --settings`: one
// exec-form command hook running hook for each of Events, and a status
// line running statusLineCommand (none if it is empty; a shell command,
// marked with OwnMarker, since Claude has no exec form for it). Hooks from
// --settings add to the user's own hooks; they do not replace them.
func SettingsJSON(hook Exec, statusLineCommand string) ([]byte, error) {
	if err := checkExec(hook); err != nil {
		return nil, err
	}
	if statusLineCommand != "" {
		if err := checkCommand("status line", statusLineCommand); err != nil {
			return nil, err
		}
	}
	var s struct {
		Hooks      map[string][]hookGroup `json:"hooks"`
		StatusLine *statusLineSetting     `json:"statusLine,omitempty"`
	}
	s.Hooks = map[string][]hookGroup{}
	for _, ev := range Events() {
		s.Hooks[ev] = []hookGroup{ownGroup(ev, hook)}
	}
	if statusLineCommand != "" {
		sl := ownStatusLine(statusLineCommand)
		s.StatusLine = &sl
	}
	return marshalIndent(s)
}

// marshalIndent is json.MarshalIndent without HTML escaping (commands
// contain '&' and '<' legitimately) and with a final newline.
func marshalIndent(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
