package agent

import (
	"context"
	"errors"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/proc"
	"github.com/corral-dev/corral/internal/status"
	"github.com/corral-dev/corral/internal/tmux"
)

// panes starts sessions' tmux panes, reaches them, and watches the
// processes in them and the tmux server.
type panes struct{ *Agent }

// launch starts the session's pane: claude (resuming resume if set) or a
// shell. After claude exits the pane drops to a shell, so the terminal and
// any error stay visible and the person can start claude again.
func (a *panes) launch(ctx context.Context, s *session, resume string, cols, rows int) error {
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
func (a *panes) paneArgv(s *session, resume string) []string {
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

// terminal returns the tmux server and target that reach a session's pane.
func (a *panes) terminal(id string) (*tmux.Server, string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, err := a.getLocked(id)
	if err != nil {
		return nil, "", err
	}
	if s.kind != api.KindExternal {
		return a.tmux, s.id, nil
	}
	if s.ext == nil {
		return nil, "", api.Errorf(api.CodeConflict, "this claude runs outside tmux: corral can show its state but not type into it")
	}
	return tmux.New(s.ext.Socket, ""), s.ext.Pane, nil
}

func (a *panes) tmuxErr(err error) error {
	if errors.Is(err, tmux.ErrNoSession) || errors.Is(err, tmux.ErrNoServer) {
		a.rec.kickReconcile()
		return api.Errorf(api.CodeConflict, "the session's terminal is gone (%v)", err)
	}
	return api.Errorf(api.CodeUnavailable, "tmux: %v", err)
}

// watchPIDLocked arranges for a process's exit to trigger a reconciliation.
// Exit notices come from pidfds through Go's netpoller: no polling and no
// thread per process.
func (a *panes) watchPIDLocked(s *session, pid int) {
	if pid <= 0 || s.watching[pid] || a.ctx == nil {
		return
	}
	w, err := proc.OpenExit(pid)
	if err != nil {
		a.log.Debug("cannot watch process", "pid", pid, "err", err)
		return
	}
	id := s.id
	if !a.goLoop("exit-watch", func() {
		if w.Wait(a.ctx) {
			a.onExit(id, pid)
		}
	}) {
		w.Wait(a.ctx) // stopping: a.ctx has ended, this releases the pidfd
		return
	}
	s.watching[pid] = true
}

func (a *panes) onExit(id string, pid int) {
	a.mu.Lock()
	s, ok := a.sessions[id]
	if ok && s.kind == api.KindExternal {
		a.mu.Unlock()
		if pid == s.claudePID {
			a.rec.forget(a.ctx, []string{id}, "ended (claude started outside corral exited)")
		}
		return
	}
	if ok {
		delete(s.watching, pid)
		if pid == s.claudePID {
			s.claudePID = 0
			if !a.in.applyLocked(s, status.Signal{Kind: status.ClaudeExited}) {
				// Publish even when SessionEnd already said exited: the pid changed.
				a.in.publishLocked(s, s.st.Status, false)
			}
		}
	}
	a.mu.Unlock()
	a.rec.kickReconcile()
}

// watchServer watches the tmux server process, so that its death is
// noticed at once and the sessions are brought back.
func (a *panes) watchServer() {
	if a.ctx == nil {
		return
	}
	ctx, cancel := context.WithTimeout(a.ctx, 5*time.Second)
	defer cancel()
	pid, err := a.tmux.ServerPID(ctx)
	if err != nil {
		return
	}
	a.mu.Lock()
	if a.serverPID == pid {
		a.mu.Unlock()
		return
	}
	a.serverPID = pid
	a.mu.Unlock()
	w, err := proc.OpenExit(pid)
	if err != nil {
		return
	}
	if !a.goLoop("server-watch", func() {
		if w.Wait(a.ctx) {
			a.log.Warn("tmux server exited", "pid", pid)
			a.rec.kickReconcile()
		}
	}) {
		w.Wait(a.ctx) // stopping: releases the pidfd
	}
}
