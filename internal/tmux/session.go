package tmux

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// PaneInfo describes one pane.
type PaneInfo struct {
	ID          string // pane id, "%3": a stable exact target
	PID         int    // the pane's process (the command or shell tmux started)
	SessionID   string // "$1"
	SessionName string
	// Command is tmux's pane_current_command: the name of the foreground
	// process of the pane's terminal.
	Command string
	Path    string // current directory of that process
	Width   int
	Height  int
	CursorX int
	CursorY int
	Dead    bool // the command exited and the pane stays (remain-on-exit)
	// DeadStatus is the command's exit status when Dead; -1 while tmux
	// has not collected it (tmux 3.3a, under heavy load, sometimes marks
	// an instant command's pane dead and never reports its status).
	DeadStatus int
	Title      string
	InMode     bool // in copy mode (scrolled back) or another mode
	Active     bool // the active pane of the current window
	Clients    int  // clients attached to the pane's session
}

// SessionInfo describes one session and its active pane.
type SessionInfo struct {
	Name     string
	ID       string // "$1"
	Created  time.Time
	Attached int // number of attached clients
	Width    int // window size
	Height   int
	Pane     PaneInfo // the active pane of the current window
}

// Output field and record separators: control characters no session name
// can hold and which the format strips from free text (see field).
const (
	fieldSep  = "\x1f"
	recordSep = "\x1e"
)

// field is a format for a tmux variable with the separators replaced, so a
// pane path or title holding them cannot break parsing.
func field(name string) string { return "#{s/[" + fieldSep + recordSep + "]/_/:" + name + "}" }

var paneFields = []string{
	"pane_id", "pane_pid", "session_id", "session_name", "pane_current_command", "pane_current_path",
	"pane_width", "pane_height", "cursor_x", "cursor_y", "pane_dead", "pane_dead_status",
	"pane_title", "pane_in_mode", "pane_active", "window_active", "session_attached",
}

var sessionFields = []string{"session_created", "session_attached", "window_width", "window_height"}

func format(fields []string) string {
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = field(f)
	}
	return strings.Join(parts, fieldSep) + recordSep
}

// records splits tmux output into records of n fields each.
func records(out string, n int) ([][]string, error) {
	var recs [][]string
	parts := strings.Split(out, recordSep)
	// What follows the last separator is only its newline; anything else
	// is a record cut short.
	if last := parts[len(parts)-1]; last != "" && last != "\n" {
		return nil, fmt.Errorf("tmux: unexpected output %q: unterminated record", last)
	}
	for _, r := range parts[:len(parts)-1] {
		r = strings.TrimPrefix(r, "\n")
		f := strings.Split(r, fieldSep)
		if len(f) != n {
			return nil, fmt.Errorf("tmux: unexpected output %q: %d fields, want %d", r, len(f), n)
		}
		recs = append(recs, f)
	}
	return recs, nil
}

// fieldReader reads fields in order, remembering the first parse error.
type fieldReader struct {
	f   []string
	i   int
	err error
}

func (r *fieldReader) str() string { r.i++; return r.f[r.i-1] }

func (r *fieldReader) int() int {
	s := r.str()
	if s == "" {
		return 0
	}
	n, err := strconv.Atoi(s)
	if err != nil && r.err == nil {
		r.err = fmt.Errorf("tmux: field %d: %w", r.i, err)
	}
	return n
}

func (r *fieldReader) bool() bool { return r.int() != 0 }

// readPane reads paneFields, in their order.
func readPane(r *fieldReader) PaneInfo {
	p := PaneInfo{
		ID: r.str(), PID: r.int(), SessionID: r.str(), SessionName: r.str(),
		Command: r.str(), Path: r.str(), Width: r.int(), Height: r.int(),
		CursorX: r.int(), CursorY: r.int(), Dead: r.bool(),
	}
	// pane_dead_status is empty while the pane lives, and while tmux has
	// not collected a dead pane's exit status.
	if st := r.str(); st != "" {
		n, err := strconv.Atoi(st)
		if err != nil && r.err == nil {
			r.err = fmt.Errorf("tmux: field %d: %w", r.i, err)
		}
		p.DeadStatus = n
	} else if p.Dead {
		p.DeadStatus = -1
	}
	p.Title, p.InMode = r.str(), r.bool()
	paneActive, windowActive := r.bool(), r.bool()
	p.Active = paneActive && windowActive
	p.Clients = r.int()
	return p
}

// ValidateName checks a session name: not empty, valid UTF-8, printable
// (letters, marks, numbers, punctuation, symbols, spaces), without the
// characters tmux 3.3a rewrites in names ('.' and ':' become '_', '\' and
// '$' get a backslash), and not starting with a character tmux reads as an
// id in a target ('@', '%', '=').
func ValidateName(name string) error {
	if name == "" {
		return invalid("empty session name")
	}
	if !utf8.ValidString(name) {
		return invalid("session name %q is not UTF-8", name)
	}
	if strings.ContainsAny(name[:1], "@%=") {
		return invalid("session name %q starts with %q", name, name[:1])
	}
	for _, r := range name {
		if strings.ContainsRune(".:\\$", r) || !unicode.IsGraphic(r) {
			return invalid("session name %q contains %q", name, r)
		}
	}
	return nil
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("tmux: "+format+": %w", append(args, ErrInvalid)...)
}

// sessionTarget addresses a session by exact name: a bare name would
// prefix-match ("ab" finds "abc").
func sessionTarget(name string) string { return "=" + name }

var paneIDPattern = regexp.MustCompile(`^%[0-9]+$`)

// paneTarget turns a target into an exact tmux pane target: a pane id
// ("%3") stays, anything else is a session name and becomes "=name:" (the
// active pane of its current window; "=name" alone does not resolve as a
// pane on tmux 3.3a).
func paneTarget(target string) (string, error) {
	if paneIDPattern.MatchString(target) {
		return target, nil
	}
	if err := ValidateName(target); err != nil {
		return "", err
	}
	return sessionTarget(target) + ":", nil
}

// NewSessionOptions describes a session to create.
type NewSessionOptions struct {
	Name string
	// Dir is the start directory; it must exist. Empty means the directory
	// of this process.
	Dir string
	// Env holds "KEY=VALUE" entries set for this session only, on top of
	// the server's environment.
	Env []string
	// Argv is the command, run directly (no shell parses it). Empty runs
	// the default shell.
	Argv []string
	// Cols and Rows size the window until a client attaches; 0 means
	// DefaultCols and DefaultRows.
	Cols, Rows int
	// RemainOnExit keeps the pane, marked dead, when its command exits,
	// instead of closing the session.
	RemainOnExit bool
}

// NewSession creates a detached session, starting the server if needed,
// and returns its pane. The pane's Command and Path are read at once, when
// the command may not have started yet; ask PaneInfo later for settled ones.
func (s *Server) NewSession(ctx context.Context, o NewSessionOptions) (PaneInfo, error) {
	if err := ValidateName(o.Name); err != nil {
		return PaneInfo{}, err
	}
	cols, rows := o.Cols, o.Rows
	if cols == 0 {
		cols = DefaultCols
	}
	if rows == 0 {
		rows = DefaultRows
	}
	if err := checkSize(cols, rows); err != nil {
		return PaneInfo{}, err
	}
	args := []string{"new-session", "-d", "-s", escapeFormat(o.Name), "-x", strconv.Itoa(cols), "-y", strconv.Itoa(rows)}
	if o.Dir != "" {
		dir, err := filepath.Abs(o.Dir)
		if err != nil {
			return PaneInfo{}, fmt.Errorf("tmux: start directory: %w", err)
		}
		// tmux silently falls back to another directory when this one is
		// missing, so check first.
		if fi, err := os.Stat(dir); err != nil {
			return PaneInfo{}, fmt.Errorf("tmux: start directory: %w", err)
		} else if !fi.IsDir() {
			return PaneInfo{}, fmt.Errorf("tmux: start directory %s is not a directory", dir)
		}
		args = append(args, "-c", escapeFormat(dir))
	}
	for _, kv := range o.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" || strings.ContainsRune(kv, 0) {
			return PaneInfo{}, invalid("environment entry %q is not KEY=VALUE", kv)
		}
		args = append(args, "-e", kv)
	}
	args = append(args, "-P", "-F", format(paneFields))
	if len(o.Argv) > 0 {
		args = append(args, "--")
		args = append(args, commandArgv(o.Argv)...)
	}
	cmds := [][]string{args}
	if o.RemainOnExit {
		// Same invocation: the server runs it before it handles the exit
		// of even an instant command.
		cmds = append(cmds, []string{"set-option", "-w", "-t", sessionTarget(o.Name) + ":", "remain-on-exit", "on"})
	}
	if err := s.EnsureRunning(ctx); err != nil {
		return PaneInfo{}, err
	}
	out, err := s.runCommands(ctx, s.configPath, cmds)
	if err != nil {
		return PaneInfo{}, err
	}
	panes, err := parsePanes(out)
	if err != nil {
		return PaneInfo{}, err
	}
	if len(panes) != 1 {
		return PaneInfo{}, fmt.Errorf("tmux: new-session printed %d panes", len(panes))
	}
	p := panes[0]
	if p.SessionName != o.Name {
		// Defence in depth: ValidateName should exclude every rewrite.
		s.run(ctx, "kill-session", "-t", p.SessionID)
		return PaneInfo{}, invalid("tmux renamed session %q to %q", o.Name, p.SessionName)
	}
	return p, nil
}

// RespawnOptions describe the command that replaces a pane's.
type RespawnOptions struct {
	// Dir is the start directory ("" keeps the pane's); Env adds entries
	// as NewSession's do; Argv is run directly.
	Dir  string
	Env  []string
	Argv []string
}

// RespawnPane kills what runs in the pane target and starts o.Argv in it,
// keeping the pane, its size and its history. It returns the new pane.
func (s *Server) RespawnPane(ctx context.Context, target string, o RespawnOptions) (PaneInfo, error) {
	t, err := paneTarget(target)
	if err != nil {
		return PaneInfo{}, err
	}
	if len(o.Argv) == 0 {
		return PaneInfo{}, invalid("no command to respawn")
	}
	args := []string{"respawn-pane", "-k", "-t", t}
	if o.Dir != "" {
		if fi, err := os.Stat(o.Dir); err != nil {
			return PaneInfo{}, fmt.Errorf("tmux: start directory: %w", err)
		} else if !fi.IsDir() {
			return PaneInfo{}, fmt.Errorf("tmux: start directory %s is not a directory", o.Dir)
		}
		args = append(args, "-c", escapeFormat(o.Dir))
	}
	for _, kv := range o.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" || strings.ContainsRune(kv, 0) {
			return PaneInfo{}, invalid("environment entry %q is not KEY=VALUE", kv)
		}
		args = append(args, "-e", kv)
	}
	args = append(args, "--")
	args = append(args, commandArgv(o.Argv)...)
	if _, err := s.runCommands(ctx, s.configPath, [][]string{args}); err != nil {
		return PaneInfo{}, err
	}
	return s.PaneInfo(ctx, target)
}

// commandArgv makes sure tmux execs argv directly. tmux runs a command of
// several words with execvp but hands a single word to "sh -c", which
// would split a path with spaces or quotes; a fixed script that execs its
// $0 keeps that word whole.
func commandArgv(argv []string) []string {
	if len(argv) == 1 {
		return []string{"/bin/sh", "-c", `exec "$0"`, argv[0]}
	}
	return argv
}

func checkSize(cols, rows int) error {
	if cols < 1 || rows < 1 || cols > 10000 || rows > 10000 {
		return invalid("size %dx%d out of range", cols, rows)
	}
	return nil
}

func parsePanes(out string) ([]PaneInfo, error) {
	recs, err := records(out, len(paneFields))
	if err != nil {
		return nil, err
	}
	panes := make([]PaneInfo, 0, len(recs))
	for _, f := range recs {
		r := &fieldReader{f: f}
		p := readPane(r)
		if r.err != nil {
			return nil, r.err
		}
		panes = append(panes, p)
	}
	return panes, nil
}

// ListSessions lists every session with its active pane, in one tmux
// call. No server running gives an empty list and no error.
func (s *Server) ListSessions(ctx context.Context) ([]SessionInfo, error) {
	// list-sessions fills pane variables from each session's active pane.
	out, err := s.run(ctx, "list-sessions", "-F", format(append(paneFields[:len(paneFields):len(paneFields)], sessionFields...)))
	if errors.Is(err, ErrNoServer) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	recs, err := records(out, len(paneFields)+len(sessionFields))
	if err != nil {
		return nil, err
	}
	sessions := make([]SessionInfo, 0, len(recs))
	for _, f := range recs {
		r := &fieldReader{f: f}
		p := readPane(r)
		si := SessionInfo{
			Name:     p.SessionName,
			ID:       p.SessionID,
			Created:  time.Unix(int64(r.int()), 0),
			Attached: r.int(),
			Width:    r.int(),
			Height:   r.int(),
			Pane:     p,
		}
		if r.err != nil {
			return nil, r.err
		}
		sessions = append(sessions, si)
	}
	return sessions, nil
}

// HasSession reports whether session name exists (exactly). No server
// means no session, not an error.
func (s *Server) HasSession(ctx context.Context, name string) (bool, error) {
	if err := ValidateName(name); err != nil {
		return false, err
	}
	_, err := s.run(ctx, "has-session", "-t", sessionTarget(name))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrNoSession), errors.Is(err, ErrNoServer):
		return false, nil
	}
	return false, err
}

// KillSession kills session name (exactly) and every process in it that
// exits on SIGHUP. A missing session gives an error matching ErrNoSession,
// a missing server one matching ErrNoServer.
func (s *Server) KillSession(ctx context.Context, name string) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	_, err := s.run(ctx, "kill-session", "-t", sessionTarget(name))
	return err
}

// PaneInfo describes the pane target: a pane id ("%3") or a session name
// (its active pane).
func (s *Server) PaneInfo(ctx context.Context, target string) (PaneInfo, error) {
	t, err := paneTarget(target)
	if err != nil {
		return PaneInfo{}, err
	}
	// Not display-message: tmux 3.3a prints an empty line and exits 0
	// when its target does not exist.
	out, err := s.run(ctx, "list-panes", "-t", t, "-F", format(paneFields))
	if err != nil {
		return PaneInfo{}, err
	}
	panes, err := parsePanes(out)
	if err != nil {
		return PaneInfo{}, err
	}
	// list-panes lists the whole window of the target; pick the pane.
	for _, p := range panes {
		if p.ID == target || (t != target && p.Active) {
			return p, nil
		}
	}
	return PaneInfo{}, &Error{Args: []string{"list-panes", "-t", t}, Stderr: "can't find pane: " + target}
}

// HistoryMark identifies the state of a pane's scrollback: its length and
// its newest line. A line that scrolls off the screen changes it: it
// lengthens the history or, at the history limit (where tmux drops a
// tenth of the lines at once and the length comes back to the same
// numbers), it changes the newest line unless the output repeats one line
// exactly. clear-history changes it too. Two equal marks therefore say
// that nothing scrolled off the screen in between.
type HistoryMark struct {
	Lines int
	Last  string // the newest line of the history, "" without one
}

// History returns the mark of the pane target's scrollback, from one tmux
// invocation, so both parts describe the same moment.
func (s *Server) History(ctx context.Context, target string) (HistoryMark, error) {
	t, err := paneTarget(target)
	if err != nil {
		return HistoryMark{}, err
	}
	out, err := s.runCommands(ctx, s.configPath, [][]string{
		{"display-message", "-p", "-t", t, "#{history_size}"},
		{"capture-pane", "-p", "-t", t, "-S", "-1", "-E", "-1"},
	})
	if err != nil {
		return HistoryMark{}, err
	}
	size, last, ok := strings.Cut(out, "\n")
	if !ok {
		return HistoryMark{}, fmt.Errorf("tmux: unexpected output %q", out)
	}
	n, err := atoi(size)
	if err != nil {
		return HistoryMark{}, err
	}
	m := HistoryMark{Lines: n}
	if n > 0 { // else capture-pane clamps to the screen's first line
		m.Last = strings.TrimSuffix(last, "\n")
	}
	return m, nil
}

func atoi(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("tmux: unexpected output %q", s)
	}
	return n, nil
}

// pause waits a moment between polls, or until ctx is done.
func pause(ctx context.Context) error {
	t := time.NewTimer(10 * time.Millisecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// DetachClient detaches the client whose terminal is tty (e.g.
// "/dev/pts/3"); the client exits saying it was detached.
func (s *Server) DetachClient(ctx context.Context, tty string) error {
	if !strings.HasPrefix(tty, "/dev/") {
		return invalid("client %q is not a terminal path", tty)
	}
	_, err := s.run(ctx, "detach-client", "-t", tty)
	return err
}

// SuspendAlone suspends the client whose terminal is tty: the server stops
// drawing to it until the client process gets SIGCONT, which makes the
// client ask to be woken, and then redraws it whole. A suspended client
// does not count for the window's size, so while another client of the
// same session has a different size, suspending this one would resize the
// window under the program in it; then SuspendAlone refuses with
// ErrOtherSize and changes nothing.
func (s *Server) SuspendAlone(ctx context.Context, tty string) error {
	if !strings.HasPrefix(tty, "/dev/") {
		return invalid("client %q is not a terminal path", tty)
	}
	out, err := s.run(ctx, "list-clients", "-F", format([]string{"client_tty", "client_session", "client_width", "client_height"}))
	if err != nil {
		return err
	}
	recs, err := records(out, 4)
	if err != nil {
		return err
	}
	var me []string
	for _, f := range recs {
		if f[0] == tty {
			me = f
		}
	}
	if me == nil {
		return fmt.Errorf("tmux: no client on %s", tty)
	}
	for _, f := range recs {
		if f[0] != tty && f[1] == me[1] && (f[2] != me[2] || f[3] != me[3]) {
			return ErrOtherSize
		}
	}
	_, err = s.run(ctx, "suspend-client", "-t", tty)
	return err
}

// resizedChannel is the wait-for channel that corral's window-resized hook
// signals.
const resizedChannel = "corral-window-resized"

// HookWindowResized makes the server signal a channel whenever any of its
// windows changes size, whoever changed it (a client that attached, typed
// or resized under window-size latest, resize-window, a person's own
// tmux client), for WaitWindowResized. It is set at run time, not in the
// config file, so that a server an older corral started gets it too.
//
// It also signals the channel once. A waiter whose process was killed
// stays on the channel in the server until the next signal, and would take
// it from the next live waiter; this wakes any such waiter, or leaves the
// signal for the next wait (a spurious wake-up, which costs one look).
func (s *Server) HookWindowResized(ctx context.Context) error {
	_, err := s.runCommands(ctx, s.configPath, [][]string{
		{"set-hook", "-g", "window-resized", "wait-for -S " + resizedChannel},
		{"wait-for", "-S", resizedChannel},
	})
	return err
}

// WaitWindowResized returns when a window changed size
// (HookWindowResized), or at the latest after max: then it ends its wait by
// signalling the channel itself rather than by killing the waiter (see
// HookWindowResized), so the caller cannot tell the two apart and takes
// either as a reason to look. A change since the last wait, while nobody
// waited, counts: tmux keeps a signal nobody waited for until a waiter
// comes.
func (s *Server) WaitWindowResized(ctx context.Context, max time.Duration) error {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTimer(max)
		defer t.Stop()
		select {
		case <-done:
		case <-ctx.Done():
		case <-t.C:
			_, _ = s.run(ctx, "wait-for", "-S", resizedChannel)
		}
	})
	// The time limit only guards against a signal that never comes.
	_, err := s.runFor(ctx, max+s.timeout, s.configPath, [][]string{{"wait-for", resizedChannel}})
	close(done)
	wg.Wait()
	return err
}
