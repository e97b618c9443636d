package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/claude"
	"github.com/corral-dev/corral/internal/events"
	"github.com/corral-dev/corral/internal/proc"
	"github.com/corral-dev/corral/internal/status"
	"github.com/corral-dev/corral/internal/termsafe"
	"github.com/corral-dev/corral/internal/tmux"
)

// Sessions lists every session.
func (a *Agent) Sessions(ctx context.Context) ([]api.Session, error) {
	return a.bus.Sessions(), nil
}

// Session returns one session.
func (a *Agent) Session(ctx context.Context, req api.SessionRef) (api.Session, error) {
	id := req.ID
	s, ok := a.bus.Session(id)
	if !ok {
		return api.Session{}, api.Errorf(api.CodeNotFound, "no session %q", id)
	}
	return s, nil
}

// Subscribe streams changes (see events.Feed.Subscribe).
func (a *Agent) Subscribe(ctx context.Context, since uint64) (*events.Sub, error) {
	return a.bus.Subscribe(since), nil
}

const maxNameLen = 100

// sanitizeName makes a usable name out of anything (a directory's name):
// control and bidi characters become spaces, and it is cut to the length
// limit.
func sanitizeName(name string) string {
	name = strings.Map(func(r rune) rune {
		if termsafe.Unsafe(r) || r == utf8.RuneError {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(name, " "))
	name = strings.Join(strings.Fields(name), " ")
	for len(name) > maxNameLen {
		_, size := utf8.DecodeLastRuneInString(name)
		name = name[:len(name)-size]
	}
	if name == "" {
		name = "session"
	}
	return name
}

func cleanName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if len(name) > maxNameLen {
		return "", api.Errorf(api.CodeBadRequest, "name is longer than %d bytes", maxNameLen)
	}
	if !termsafe.Clean(name) {
		// C0 and C1 controls steer terminals; bidi controls make a name
		// read as another.
		return "", api.Errorf(api.CodeBadRequest, "name has control characters (C0, C1 or bidi controls) or is not UTF-8: %s", termsafe.String(name))
	}
	return name, nil
}

// Create starts a session.
func (a *Agent) Create(ctx context.Context, req api.CreateRequest) (api.Session, error) {
	name, err := cleanName(req.Name)
	if err != nil {
		return api.Session{}, err
	}
	dir, err := a.checkDir(req.Dir)
	if err != nil {
		return api.Session{}, err
	}
	kind := api.KindClaude
	if req.Shell {
		kind = api.KindShell
		if req.Resume != "" || len(req.Args) > 0 {
			return api.Session{}, api.Errorf(api.CodeBadRequest, "a shell session takes no resume id or claude arguments")
		}
	}
	if req.Cols != 0 || req.Rows != 0 {
		if req.Cols < 10 || req.Cols > 1000 || req.Rows < 5 || req.Rows > 500 {
			return api.Session{}, api.Errorf(api.CodeBadRequest, "size %dx%d: cols must be 10-1000 and rows 5-500 (or both 0 for the default)", req.Cols, req.Rows)
		}
	}
	if req.Resume != "" && !validClaudeID(req.Resume) {
		return api.Session{}, api.Errorf(api.CodeBadRequest, "resume: %q is not a Claude session id", req.Resume)
	}
	if req.Resume != "" {
		// Two Claudes on one conversation would mix their turns.
		if other := a.runningConversation(req.Resume, ""); other != "" {
			return api.Session{}, api.Errorf(api.CodeConversationRunning, "conversation %s is running in session %s; switch to it instead", req.Resume, other)
		}
		if pid := claudeRunning(a.cfg.ClaudeDir, req.Resume); pid != 0 {
			return api.Session{}, api.Errorf(api.CodeConversationRunning, "conversation %s is running in a claude outside corral (pid %d)", req.Resume, pid)
		}
	}
	for _, arg := range req.Args {
		if strings.ContainsRune(arg, 0) {
			return api.Session{}, api.Errorf(api.CodeBadRequest, "claude arguments must not contain NUL")
		}
	}
	if kind == api.KindClaude {
		if _, err := a.lookPath(a.cfg.ClaudeBin); err != nil {
			return api.Session{}, api.Errorf(api.CodeUnavailable,
				"claude not found (%v): install Claude Code with `npm install -g @anthropic-ai/claude-code`", err)
		}
	}
	var wt *api.SessionWorktree
	if req.Worktree != nil {
		if req.Resume != "" {
			// Claude keeps a conversation by its folder: a new one has none.
			return api.Session{}, api.Errorf(api.CodeBadRequest, "a session in a new worktree cannot resume a conversation")
		}
		if wt, err = a.makeWorktree(ctx, dir, req.Worktree); err != nil {
			return api.Session{}, err
		}
		dir = wt.Path
		if name == "" {
			name = sanitizeName(wt.Branch)
		}
	}
	if name == "" {
		name = sanitizeName(filepath.Base(dir))
	}

	s := &session{
		id: newID(), dir: dir, kind: kind, args: req.Args,
		created: now(), watching: map[int]bool{}, worktree: wt,
	}
	// The name is reserved until the session is in the table (or failed),
	// so two concurrent creates never get the same one.
	a.mu.Lock()
	s.name = a.uniqueNameLocked(name)
	a.reserved[s.name] = true
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		delete(a.reserved, s.name)
		a.mu.Unlock()
	}()
	s.updated = s.created
	s.st.ClaudeSessionID = req.Resume
	if kind == api.KindClaude {
		s.track(status.Event{Kind: status.Launched, ClaudeSessionID: req.Resume})
	} else {
		s.st.Status = api.StatusIdle
	}

	// The record goes to disk before the pane exists: a crash in between
	// leaves a session to recreate, never a pane nobody knows.
	a.storeMu.Lock()
	err = a.store.PutSession(ctx, s.record())
	a.storeMu.Unlock()
	if err != nil {
		if wt != nil {
			a.undoWorktree(wt)
		}
		return api.Session{}, fmt.Errorf("save session: %w", err)
	}
	if err := a.launch(ctx, s, req.Resume, req.Cols, req.Rows); err != nil {
		a.storeMu.Lock()
		a.dropRecord(context.Background(), s.id)
		a.storeMu.Unlock()
		if wt != nil {
			a.undoWorktree(wt)
		}
		return api.Session{}, err
	}
	a.mu.Lock()
	a.sessions[s.id] = s
	a.publishLocked(s, "", false)
	out := s.toAPI()
	a.mu.Unlock()
	if kind == api.KindClaude {
		a.watchStartup(s.id)
	}
	a.gitKick(dir)
	a.log.Info("session created", "id", s.id, "name", s.name, "dir", dir, "kind", kind)
	return out, nil
}

// launch starts the session's pane: claude (resuming resume if set) or a
// shell. After claude exits the pane drops to a shell, so the terminal and
// any error stay visible and the person can start claude again.
func (a *Agent) launch(ctx context.Context, s *session, resume string, cols, rows int) error {
	if err := a.tmux.EnsureRunning(ctx); err != nil {
		return api.Errorf(api.CodeUnavailable, "tmux: %v", err)
	}
	pane, err := a.tmux.NewSession(ctx, tmux.NewSessionOptions{
		Name: s.id, Dir: s.dir, Env: sessionEnv(a.cfg.Env, s.id), Argv: a.paneArgv(s, resume), Cols: cols, Rows: rows,
	})
	if err != nil {
		return api.Errorf(api.CodeUnavailable, "start session: %v", err)
	}
	a.watchServer()
	a.mu.Lock()
	s.panePID = pane.PID
	s.paneID = pane.ID
	s.claudePID = 0
	s.launchedAt = now()
	a.watchPIDLocked(s, pane.PID)
	a.mu.Unlock()
	return nil
}

// paneArgv is what a session's pane runs: claude (resuming resume if set),
// then the user's shell; or only the shell.
func (a *Agent) paneArgv(s *session, resume string) []string {
	if s.kind == api.KindShell {
		return []string{"/bin/sh", "-c", `exec "${SHELL:-/bin/sh}"`}
	}
	claudeArgv := []string{a.cfg.ClaudeBin, "--settings", a.settings}
	if resume != "" {
		claudeArgv = append(claudeArgv, "--resume", resume)
	}
	claudeArgv = append(claudeArgv, s.args...)
	// The script is constant; the command arrives as "$@", so nothing
	// from the request is ever parsed by a shell.
	return append([]string{"/bin/sh", "-c", `"$@"; exec "${SHELL:-/bin/sh}"`, "corral"}, claudeArgv...)
}

// Restart starts Claude again in an exited session's pane, in a new
// conversation or (Resume) in the session's last one. The pane's shell is
// replaced; a shell that runs a command of the person's is left alone.
func (a *Agent) Restart(ctx context.Context, req api.RestartRequest) (api.Session, error) {
	id := req.ID
	a.mu.Lock()
	s, err := a.getLocked(id)
	if err != nil {
		a.mu.Unlock()
		return api.Session{}, err
	}
	kind, st, panePID, conv := s.kind, s.st.Status, s.panePID, s.st.ClaudeSessionID
	tpath := s.transcript(a.cfg.ClaudeDir)
	a.mu.Unlock()
	switch {
	case kind == api.KindShell:
		return api.Session{}, api.Errorf(api.CodeBadRequest, "a shell session runs no Claude to restart")
	case kind == api.KindExternal:
		return api.Session{}, api.Errorf(api.CodeConflict, "corral did not start this claude; start it again where it ran")
	case st != api.StatusExited:
		return api.Session{}, api.Errorf(api.CodeConflict, "Claude is running in session %s (%s); only an exited session can be restarted", id, st)
	}
	resume := ""
	if req.Resume {
		if conv == "" || !claude.Saved(tpath) {
			return api.Session{}, api.Errorf(api.CodeBadRequest, "session %s has no saved conversation to resume; restart it without resume", id)
		}
		if other := a.runningConversation(conv, id); other != "" {
			return api.Session{}, api.Errorf(api.CodeConversationRunning, "conversation %s is running in %s; switch to it", conv, other)
		}
		resume = conv
	}
	if panePID > 0 {
		kids, _ := proc.Children(panePID)
		for _, k := range kids {
			// A claude still on its way out goes with the shell.
			if p, err := proc.Stat(k); err == nil && !proc.IsClaude(p) {
				return api.Session{}, api.Errorf(api.CodeConflict, "the session's shell is running a command (pid %d); finish it first", k)
			}
		}
	}
	a.mu.Lock()
	s.args = withoutResume(s.args)
	argv := a.paneArgv(s, resume)
	a.mu.Unlock()
	pane, err := a.tmux.RespawnPane(ctx, id, tmux.RespawnOptions{Dir: s.dir, Env: sessionEnv(a.cfg.Env, id), Argv: argv})
	if err != nil {
		return api.Session{}, a.tmuxErr(err)
	}
	a.mu.Lock()
	clear(s.watching)
	s.tr = nil
	s.panePID, s.paneID, s.claudePID = pane.PID, pane.ID, 0
	s.launchedAt = now()
	a.watchPIDLocked(s, pane.PID)
	a.applyLocked(s, status.Event{Kind: status.Launched, ClaudeSessionID: resume})
	out := s.toAPI()
	a.mu.Unlock()
	a.watchStartup(id)
	a.log.Info("session restarted", "id", id, "resume", resume)
	return out, nil
}

// runningConversation names the live session (other than except) whose
// Claude runs a conversation, or "" if none does.
func (a *Agent) runningConversation(conv, except string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, s := range a.sessions {
		if s.id != except && s.kind != api.KindShell && s.st.ClaudeSessionID == conv && s.st.Status != api.StatusExited {
			return s.name
		}
	}
	return ""
}

// validClaudeID: Claude's session ids are UUIDs. Anything starting with
// '-' would be read by claude as an option.
func validClaudeID(id string) bool {
	if len(id) < 8 || len(id) > 64 || !isAlnum(id[0]) {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// checkDir validates a session's directory.
func (a *Agent) checkDir(dir string) (string, error) {
	if dir == "" {
		return "", api.Errorf(api.CodeBadRequest, "dir is required")
	}
	if strings.ContainsRune(dir, 0) {
		return "", api.Errorf(api.CodeBadRequest, "dir contains NUL")
	}
	if strings.HasPrefix(dir, "~/") || dir == "~" {
		dir = filepath.Join(a.cfg.Home, strings.TrimPrefix(dir, "~"))
	}
	if !filepath.IsAbs(dir) {
		return "", api.Errorf(api.CodeBadRequest, "dir must be an absolute path, got %q", dir)
	}
	dir = filepath.Clean(dir)
	fi, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", api.Errorf(api.CodeBadRequest, "directory does not exist: %s", dir)
		}
		return "", api.Errorf(api.CodeBadRequest, "directory: %v", err)
	}
	if !fi.IsDir() {
		return "", api.Errorf(api.CodeBadRequest, "not a directory: %s", dir)
	}
	return dir, nil
}

// uniqueNameLocked returns name, or name-2, name-3 ... if it is taken,
// within the length limit. The caller holds a.mu.
func (a *Agent) uniqueNameLocked(name string) string {
	taken := map[string]bool{}
	for _, s := range a.sessions {
		taken[s.name] = true
	}
	for n := range a.reserved {
		taken[n] = true
	}
	if !taken[name] {
		return name
	}
	for i := 2; ; i++ {
		suffix := fmt.Sprintf("-%d", i)
		base := name
		for len(base)+len(suffix) > maxNameLen {
			_, size := utf8.DecodeLastRuneInString(base)
			base = base[:len(base)-size]
		}
		if n := base + suffix; !taken[n] {
			return n
		}
	}
}

// Kill ends a session: its pane and everything in it.
func (a *Agent) Kill(ctx context.Context, req api.SessionRef) error {
	return a.KillWith(ctx, api.KillRequest{SessionRef: req})
}

// KillWith ends a session and, with RemoveWorktree, removes the worktree
// corral made for it (git.go): refused, with nothing done, when the
// worktree has changes that would be lost (unless Force).
func (a *Agent) KillWith(ctx context.Context, req api.KillRequest) error {
	id := req.ID
	var wt *api.SessionWorktree
	if req.RemoveWorktree {
		var err error
		if wt, err = a.checkRemoveWorktree(ctx, id, req.Force); err != nil {
			return err
		}
	}
	if err := a.kill(ctx, id); err != nil {
		return err
	}
	if wt != nil {
		return a.removeWorktree(wt, req.Force)
	}
	return nil
}

func (a *Agent) kill(ctx context.Context, id string) error {
	a.storeMu.Lock()
	defer a.storeMu.Unlock()
	a.mu.Lock()
	s, err := a.getLocked(id)
	if err != nil {
		a.mu.Unlock()
		return err
	}
	if s.kind == api.KindExternal {
		a.mu.Unlock()
		return api.Errorf(api.CodeConflict, "corral did not start this claude (pid %d); end it where it runs", s.claudePID)
	}
	delete(a.sessions, id)
	delete(a.dirty, id)
	a.mu.Unlock()
	a.streams.CloseSession(id)
	if err := a.tmux.KillSession(ctx, id); err != nil && !errors.Is(err, tmux.ErrNoSession) && !errors.Is(err, tmux.ErrNoServer) {
		a.log.Warn("kill session", "id", id, "err", err)
	}
	a.dropRecord(context.Background(), id)
	a.bus.Remove(id)
	a.log.Info("session killed", "id", id, "name", s.name)
	return nil
}

// Rename renames a session.
func (a *Agent) Rename(ctx context.Context, req api.RenameRequest) (api.Session, error) {
	id, name := req.ID, req.Name
	name, err := cleanName(name)
	if err != nil {
		return api.Session{}, err
	}
	if name == "" {
		return api.Session{}, api.Errorf(api.CodeBadRequest, "name is empty")
	}
	// storeMu orders this write with the others; the database is written
	// without the agent's lock.
	a.storeMu.Lock()
	defer a.storeMu.Unlock()
	a.mu.Lock()
	s, err := a.getLocked(id)
	if err != nil {
		a.mu.Unlock()
		return api.Session{}, err
	}
	for _, o := range a.sessions {
		if o != s && o.name == name {
			a.mu.Unlock()
			return api.Session{}, api.Errorf(api.CodeConflict, "another session is named %q", name)
		}
	}
	old := s.name
	s.name = name
	rec := s.record()
	a.mu.Unlock()
	err = a.store.PutSession(ctx, rec)
	a.mu.Lock()
	defer a.mu.Unlock()
	if err != nil {
		if s.name == name {
			s.name = old
		}
		return api.Session{}, fmt.Errorf("save session: %w", err)
	}
	a.publishLocked(s, s.st.Status, false)
	return s.toAPI(), nil
}

// startWait bounds how long input waits for Claude to come up.
const startWait = 30 * time.Second

// waitStarted returns once a session is no longer starting: keys typed
// before Claude reads its terminal are lost.
func (a *Agent) waitStarted(ctx context.Context, id string) error {
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

// Viewed records that a person looked at a session.
func (a *Agent) Viewed(ctx context.Context, req api.SessionRef) error {
	id := req.ID
	if _, err := a.get(id); err != nil {
		return err
	}
	a.personActed(id, status.Viewed)
	return nil
}

func (a *Agent) personActed(id string, k status.Kind) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s, ok := a.sessions[id]; ok {
		a.applyLocked(s, status.Event{Kind: k})
	}
}

func (a *Agent) tmuxErr(err error) error {
	if errors.Is(err, tmux.ErrNoSession) || errors.Is(err, tmux.ErrNoServer) {
		a.kickReconcile()
		return api.Errorf(api.CodeConflict, "the session's terminal is gone (%v)", err)
	}
	return api.Errorf(api.CodeUnavailable, "tmux: %v", err)
}

// Capture returns the visible screen, with history lines of scrollback.
func (a *Agent) Capture(ctx context.Context, req api.CaptureRequest) (api.Screen, error) {
	id, history := req.ID, req.History
	tm, target, err := a.terminal(id)
	if err != nil {
		return api.Screen{}, err
	}
	text, err := tm.Capture(ctx, target, tmux.CaptureOptions{History: history})
	if err != nil {
		return api.Screen{}, a.tmuxErr(err)
	}
	scr := api.Screen{Text: text}
	if p, err := tm.PaneInfo(ctx, target); err == nil {
		scr.Cols, scr.Rows, scr.Cursor = p.Width, p.Height, [2]int{p.CursorX, p.CursorY}
	}
	return scr, nil
}

// Limits of Run.
const (
	runDefaultTimeout = time.Minute
	runMaxTimeout     = 10 * time.Minute
	// runMaxOutput keeps a result well inside the device link's 1 MiB
	// frame even after JSON escaping.
	runMaxOutput = 256 << 10
	// runWaitDelay bounds the wait for output after the command exited.
	runWaitDelay = time.Second
)

// Run runs a command beside a session: in the directory its pane is in,
// with its environment, outside the pane, so nothing is typed into Claude.
func (a *Agent) Run(ctx context.Context, req api.RunRequest) (api.RunResult, error) {
	id := req.ID
	s, err := a.get(id)
	if err != nil {
		return api.RunResult{}, err
	}
	if len(req.Argv) == 0 || req.Argv[0] == "" {
		return api.RunResult{}, api.Errorf(api.CodeBadRequest, "no command given")
	}
	timeout := time.Duration(req.TimeoutMS) * time.Millisecond
	if timeout <= 0 {
		timeout = runDefaultTimeout
	}
	timeout = min(timeout, runMaxTimeout)
	a.mu.Lock()
	dir := s.dir
	a.mu.Unlock()
	if tm, target, err := a.terminal(id); err == nil {
		if p, err := tm.PaneInfo(ctx, target); err == nil && p.Path != "" {
			dir = p.Path
		}
	}
	argv0 := req.Argv[0]
	if strings.Contains(argv0, "/") && !filepath.IsAbs(argv0) {
		argv0 = filepath.Join(dir, argv0)
	}
	bin, err := a.lookPath(argv0)
	if err != nil {
		return api.RunResult{Output: fmt.Sprintf("corral: %s: command not found\n", req.Argv[0]), ExitCode: 127}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, req.Argv[1:]...)
	cmd.Args[0] = req.Argv[0]
	cmd.Dir = dir
	cmd.Env = sessionEnv(a.cfg.Env, id)
	cmd.Stdin = nil
	out := &capped{max: runMaxOutput}
	cmd.Stdout, cmd.Stderr = out, out
	// Its own process group, so a timeout kills the whole pipeline.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// A background child may hold the pipe for ever: read it this much
	// longer after the command exits, then return.
	cmd.WaitDelay = runWaitDelay
	start := time.Now()
	err = cmd.Run()
	res := api.RunResult{Output: out.buf.String(), Truncated: out.cut, DurationMS: time.Since(start).Milliseconds()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.Is(err, exec.ErrWaitDelay):
		// The command exited 0, but a process it put in the background
		// (`cmd &`) still holds the output: keep what came, and say so.
		res.Output += fmt.Sprintf("\ncorral: the command exited, but a process it started keeps its output open; output after %v is not shown\n", runWaitDelay)
	case ctx.Err() == context.DeadlineExceeded:
		res.ExitCode = 124
		res.Output += fmt.Sprintf("\ncorral: command timed out after %v\n", timeout)
	case errors.As(err, &ee):
		res.ExitCode = ee.ExitCode()
		if res.ExitCode < 0 {
			res.ExitCode = 128 + int(ee.Sys().(syscall.WaitStatus).Signal())
		}
	default:
		return api.RunResult{}, api.Errorf(api.CodeBadRequest, "run: %v", err)
	}
	return res, nil
}

// capped is a writer that keeps the first max bytes.
type capped struct {
	buf bytes.Buffer
	max int
	cut bool
}

func (c *capped) Write(p []byte) (int, error) {
	room := c.max - c.buf.Len()
	if room <= 0 {
		c.cut = c.cut || len(p) > 0
		return len(p), nil
	}
	if len(p) > room {
		c.buf.Write(p[:room])
		c.cut = true
		return len(p), nil
	}
	return c.buf.Write(p)
}

// ListDir lists a directory inside the configured roots. An empty path
// lists the roots themselves.
func (a *Agent) ListDir(ctx context.Context, req api.DirsRequest) (api.DirListing, error) {
	path := req.Path
	if path == "" {
		if len(a.cfg.Roots) == 1 {
			path = a.cfg.Roots[0]
		} else {
			l := api.DirListing{Entries: []api.DirEntry{}}
			for _, r := range a.cfg.Roots {
				l.Entries = append(l.Entries, api.DirEntry{Name: r, Path: r, IsDir: true})
			}
			return l, nil
		}
	}
	real, root, err := a.inRoots(path)
	if err != nil {
		return api.DirListing{}, err
	}
	des, err := os.ReadDir(real)
	if err != nil {
		return api.DirListing{}, api.Errorf(api.CodeBadRequest, "list %s: %v", path, err)
	}
	const maxEntries = 5000
	l := api.DirListing{Path: real, Entries: make([]api.DirEntry, 0, min(len(des), maxEntries))}
	if real != root {
		l.Parent = filepath.Dir(real)
	}
	for _, de := range des {
		if len(l.Entries) == maxEntries {
			break
		}
		isDir := de.IsDir()
		if de.Type()&os.ModeSymlink != 0 {
			// A link counts as a directory only if it stays inside the roots.
			if _, _, err := a.inRoots(filepath.Join(real, de.Name())); err == nil {
				if fi, err := os.Stat(filepath.Join(real, de.Name())); err == nil {
					isDir = fi.IsDir()
				}
			} else {
				continue
			}
		}
		l.Entries = append(l.Entries, api.DirEntry{Name: de.Name(), Path: filepath.Join(real, de.Name()), IsDir: isDir})
	}
	sort.SliceStable(l.Entries, func(i, j int) bool {
		if l.Entries[i].IsDir != l.Entries[j].IsDir {
			return l.Entries[i].IsDir
		}
		return strings.ToLower(l.Entries[i].Name) < strings.ToLower(l.Entries[j].Name)
	})
	return l, nil
}

// inRoots resolves path (following symlinks) and checks that it lies inside
// one of the roots. It returns the resolved path and its root. A path
// outside the roots is refused the same way whether or not it exists, so
// the answer tells nothing about what is there.
func (a *Agent) inRoots(path string) (string, string, error) {
	if !filepath.IsAbs(path) || strings.ContainsRune(path, 0) {
		return "", "", api.Errorf(api.CodeBadRequest, "path must be absolute: %q", path)
	}
	real, exists := resolvePath(filepath.Clean(path))
	for _, r := range a.cfg.Roots {
		rr, err := filepath.EvalSymlinks(r)
		if err != nil {
			continue
		}
		if real == rr || strings.HasPrefix(real, rr+string(filepath.Separator)) || rr == "/" {
			if !exists {
				return "", "", api.Errorf(api.CodeNotFound, "no such directory: %s", path)
			}
			return real, rr, nil
		}
	}
	return "", "", api.Errorf(api.CodeForbidden, "%s is outside the allowed roots (%s)", path, strings.Join(a.cfg.Roots, ", "))
}

// resolvePath follows the symlinks of path as far as it exists and keeps
// the rest as written: where a missing path would be if it existed. A
// dangling link counts as where it points. exists says whether all of it
// does.
func resolvePath(path string) (real string, exists bool) {
	// 40 links, as Linux allows, then give up (a loop).
	for range 40 {
		p, rest := path, ""
		for {
			if r, err := filepath.EvalSymlinks(p); err == nil {
				return filepath.Join(r, rest), rest == ""
			}
			if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink != 0 {
				if t, err := os.Readlink(p); err == nil {
					if !filepath.IsAbs(t) {
						t = filepath.Join(filepath.Dir(p), t)
					}
					path = filepath.Join(t, rest)
					break
				}
			}
			parent := filepath.Dir(p)
			if parent == p {
				return path, false
			}
			rest = filepath.Join(filepath.Base(p), rest)
			p = parent
		}
	}
	return path, false
}

// Resumable lists the Claude sessions recorded for a directory.
func (a *Agent) Resumable(ctx context.Context, req api.ResumableRequest) ([]api.Resumable, error) {
	dir := req.Dir
	if !filepath.IsAbs(dir) {
		return nil, api.Errorf(api.CodeBadRequest, "dir must be an absolute path")
	}
	list, err := claude.ListResumable(a.cfg.ClaudeDir, filepath.Clean(dir), 200)
	if err != nil {
		return nil, api.Errorf(api.CodeInternal, "resumable sessions: %v", err)
	}
	live := liveConversations(a.cfg.ClaudeDir)
	a.mu.Lock()
	for i := range list {
		for _, s := range a.sessions {
			if s.kind != api.KindShell && s.st.ClaudeSessionID == list[i].ID && s.st.Status != api.StatusExited {
				list[i].RunningIn, list[i].RunningName, list[i].Running = s.id, s.name, true
			}
		}
		if live[list[i].ID] {
			list[i].Running = true
		}
	}
	a.mu.Unlock()
	return list, nil
}
