package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/claude/transcript"
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
	name, dir, kind, err := a.checkCreate(req)
	if err != nil {
		return api.Session{}, err
	}
	var wt *api.SessionWorktree
	if req.Worktree != nil {
		if req.Resume != "" {
			// Claude keeps a conversation by its folder: a new one has none.
			return api.Session{}, api.Errorf(api.CodeBadRequest, "a session in a new worktree cannot resume a conversation")
		}
		if wt, err = a.git.makeWorktree(ctx, dir, req.Worktree); err != nil {
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
		s.track(status.Signal{Kind: status.Launched, ClaudeSessionID: req.Resume})
	} else {
		s.st.Status = api.StatusIdle
	}

	// The record goes to disk before the pane exists: a crash in between
	// leaves a session to recreate, never a pane nobody knows.
	a.persist.storeMu.Lock()
	err = a.store.PutSession(ctx, s.record())
	a.persist.storeMu.Unlock()
	if err != nil {
		if wt != nil {
			a.git.undoWorktree(wt)
		}
		return api.Session{}, fmt.Errorf("save session: %w", err)
	}
	if err := a.panes.launch(ctx, s, req.Resume, req.Cols, req.Rows); err != nil {
		a.persist.storeMu.Lock()
		a.persist.dropRecord(context.Background(), s.id)
		a.persist.storeMu.Unlock()
		if wt != nil {
			a.git.undoWorktree(wt)
		}
		return api.Session{}, err
	}
	a.mu.Lock()
	a.sessions[s.id] = s
	a.in.publishLocked(s, "", false)
	out := s.toAPI()
	a.mu.Unlock()
	if kind == api.KindClaude {
		a.screen.watchStartup(s.id)
	}
	a.git.gitKick(dir)
	a.log.Info("session created", "id", s.id, "name", s.name, "dir", dir, "kind", kind)
	return out, nil
}

// checkCreate checks a create request before anything is made: its name,
// folder, kind and size, the conversation it resumes, claude's arguments,
// and that claude is installed.
func (a *Agent) checkCreate(req api.CreateRequest) (name, dir string, kind api.Kind, err error) {
	name, err = cleanName(req.Name)
	if err != nil {
		return "", "", "", err
	}
	dir, err = a.checkDir(req.Dir)
	if err != nil {
		return "", "", "", err
	}
	kind = api.KindClaude
	if req.Shell {
		kind = api.KindShell
		if req.Resume != "" || len(req.Args) > 0 {
			return "", "", "", api.Errorf(api.CodeBadRequest, "a shell session takes no resume id or claude arguments")
		}
	}
	if req.Cols != 0 || req.Rows != 0 {
		if req.Cols < 10 || req.Cols > 1000 || req.Rows < 5 || req.Rows > 500 {
			return "", "", "", api.Errorf(api.CodeBadRequest, "size %dx%d: cols must be 10-1000 and rows 5-500 (or both 0 for the default)", req.Cols, req.Rows)
		}
	}
	if req.Resume != "" && !validClaudeID(req.Resume) {
		return "", "", "", api.Errorf(api.CodeBadRequest, "resume: %q is not a Claude session id", req.Resume)
	}
	if req.Resume != "" {
		// Two Claudes on one conversation would mix their turns.
		if other := a.runningConversation(req.Resume, ""); other != "" {
			return "", "", "", api.Errorf(api.CodeConversationRunning, "conversation %s is running in session %s; switch to it instead", req.Resume, other)
		}
		if pid := claudeRunning(a.cfg.ClaudeDir, req.Resume); pid != 0 {
			return "", "", "", api.Errorf(api.CodeConversationRunning, "conversation %s is running in a claude outside corral (pid %d)", req.Resume, pid)
		}
	}
	for _, arg := range req.Args {
		if strings.ContainsRune(arg, 0) {
			return "", "", "", api.Errorf(api.CodeBadRequest, "claude arguments must not contain NUL")
		}
	}
	if kind == api.KindClaude {
		if _, err := a.lookPath(a.cfg.ClaudeBin); err != nil {
			return "", "", "", api.Errorf(api.CodeUnavailable,
				"claude not found (%v): install Claude Code with `npm install -g @anthropic-ai/claude-code`", err)
		}
	}
	return name, dir, kind, nil
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
		if conv == "" || !transcript.Saved(tpath) {
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
	argv := a.panes.paneArgv(s, resume)
	a.mu.Unlock()
	pane, err := a.tmux.RespawnPane(ctx, id, tmux.RespawnOptions{Dir: s.dir, Env: sessionEnv(a.cfg.Env, id), Argv: argv})
	if err != nil {
		return api.Session{}, a.panes.tmuxErr(err)
	}
	a.mu.Lock()
	clear(s.watching)
	s.tr = nil
	s.panePID, s.paneID, s.claudePID = pane.PID, pane.ID, 0
	s.launchedAt = now()
	a.panes.watchPIDLocked(s, pane.PID)
	a.in.applyLocked(s, status.Signal{Kind: status.Launched, ClaudeSessionID: resume})
	out := s.toAPI()
	a.mu.Unlock()
	a.screen.watchStartup(id)
	a.log.Info("session restarted", "id", id, "resume", resume)
	return out, nil
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
		if wt, err = a.git.checkRemoveWorktree(ctx, id, req.Force); err != nil {
			return err
		}
	}
	if err := a.kill(ctx, id); err != nil {
		return err
	}
	if wt != nil {
		return a.git.removeWorktree(wt, req.Force)
	}
	return nil
}

func (a *Agent) kill(ctx context.Context, id string) error {
	a.persist.storeMu.Lock()
	defer a.persist.storeMu.Unlock()
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
	delete(a.persist.dirty, id)
	a.mu.Unlock()
	a.views.streams.CloseSession(id)
	if err := a.tmux.KillSession(ctx, id); err != nil && !errors.Is(err, tmux.ErrNoSession) && !errors.Is(err, tmux.ErrNoServer) {
		a.log.Warn("kill session", "id", id, "err", err)
	}
	a.persist.dropRecord(context.Background(), id)
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
	a.persist.storeMu.Lock()
	defer a.persist.storeMu.Unlock()
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
	a.in.publishLocked(s, s.st.Status, false)
	return s.toAPI(), nil
}

const startWait = 30 * time.Second

// Viewed records that a person looked at a session.
func (a *Agent) Viewed(ctx context.Context, req api.SessionRef) error {
	id := req.ID
	if _, err := a.get(id); err != nil {
		return err
	}
	a.in.personActed(id, status.Viewed, time.Time{})
	return nil
}

const (
	runDefaultTimeout = time.Minute
	runMaxTimeout     = 10 * time.Minute
	// runMaxOutput keeps a result well inside the device link's 1 MiB
	// frame even after JSON escaping.
	runMaxOutput = 256 << 10
	// runWaitDelay bounds the wait for output after the command exited.
	runWaitDelay = time.Second
)

type capped struct {
	buf bytes.Buffer
	max int
	cut bool
}
