package claude

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// OwnMarker ends every command corral registers in a Claude settings file.
// It is a shell comment, so it changes nothing when Claude runs the
// command, and it survives Claude rewriting the file (Claude drops unknown
// JSON fields when it normalises settings, but keeps command strings). It
// is how install stays idempotent and uninstall removes exactly corral's
// entries, wherever the binary has moved since.
const OwnMarker = "#corral-managed"

// HookTimeoutSeconds is the timeout written for corral's hooks: a safety
// net only, since `corral hook` gives up after about a second itself.
const HookTimeoutSeconds = 10

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
	w := shellWords(cmd, 2)
	if len(w) < 2 {
		return false
	}
	return filepath.Base(w[0]) == "corral" && (w[1] == "hook" || w[1] == "statusline")
}

// shellWords splits the first n words of a POSIX shell command, honouring
// quotes and backslashes (enough to find a program and its first
// argument; no expansion).
func shellWords(s string, n int) []string {
	var out []string
	var cur strings.Builder
	in := false // inside a word
	for i := 0; i < len(s) && len(out) < n; i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		case c == '\'':
			in = true
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				cur.WriteString(s[i+1:])
				i = len(s)
			} else {
				cur.WriteString(s[i+1 : i+1+j])
				i += j + 1
			}
		case c == '"':
			in = true
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(`"\$`+"`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
		case c == '\\' && i+1 < len(s):
			in = true
			i++
			cur.WriteByte(s[i])
		default:
			in = true
			cur.WriteByte(c)
		}
	}
	if in && len(out) < n {
		out = append(out, cur.String())
	}
	return out
}

// ShellQuote quotes s for a POSIX shell, leaving plain words as they are.
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%+=:,./-_", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// CommandLine joins arguments into a shell command line, quoting each.
// Build hook and status-line commands with it ("corral" path, "hook").
func CommandLine(args ...string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = ShellQuote(a)
	}
	return strings.Join(q, " ")
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
	g := hookGroup{Hooks: []hookCommand{{Type: "command", Command: hook.Path, Args: args, Timeout: HookTimeoutSeconds}}}
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
// exec-form command hook running hook for each of HookEvents, and a status
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
	for _, ev := range HookEvents() {
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

// WriteFileAtomic writes data to path through a temporary file in the same
// directory, synced and renamed into place, so readers see the old or the
// new content, never a mix. The file gets perm exactly (not masked).
func WriteFileAtomic(path string, data []byte, perm fs.FileMode) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Chmod(perm); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	// Make the rename itself durable; not all systems allow syncing a
	// directory, and the data is already safe, so failure is ignored.
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// WriteIfChanged writes data atomically unless path already holds exactly
// data with mode perm; it reports whether it wrote.
func WriteIfChanged(path string, data []byte, perm fs.FileMode) (bool, error) {
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && fi.Size() == int64(len(data)) && fi.Mode().Perm() == perm.Perm() {
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
			return false, nil
		}
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	if err := WriteFileAtomic(path, data, perm); err != nil {
		return false, err
	}
	return true, nil
}
