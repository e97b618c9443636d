package agent

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/proc"
)

// adopt takes back the sessions of corral's own tmux server that the
// database does not know, as when it was lost or emptied while tmux ran
// on: their panes would otherwise run unseen. A pane is corral's when its
// session is named by a session id and the pane's process carries that id
// as CORRAL_SESSION. The directory is the pane's, the kind claude when
// claude runs in it (its state is then re-verified by the reconciliation
// that follows), else shell.
//
// Only sessions that were there before this agent started are looked at:
// the ones it makes itself are in the table, or about to be.
func (a *reconciler) adopt(ctx context.Context) error {
	up, err := a.tmux.Running(ctx)
	if err != nil || !up {
		return err
	}
	list, err := a.tmux.ListSessions(ctx)
	if err != nil {
		return err
	}
	// tmux gives the creation time in whole seconds.
	before := a.started.Truncate(time.Second)
	// Kill and Create hold storeMu while a session's pane and row change.
	a.persist.storeMu.Lock()
	defer a.persist.storeMu.Unlock()
	for _, info := range list {
		if !validID(info.Name) || !info.Created.Before(before) {
			continue
		}
		a.mu.Lock()
		_, known := a.sessions[info.Name]
		a.mu.Unlock()
		if known {
			continue
		}
		if v, ok, err := proc.Getenv(info.Pane.PID, "CORRAL_SESSION"); err != nil || !ok || v != info.Name {
			continue
		}
		// Still there now that Kill cannot run.
		if ok, err := a.tmux.HasSession(ctx, info.Name); err != nil || !ok {
			continue
		}
		s := &session{
			id: info.Name, dir: info.Pane.Path, kind: api.KindShell, created: info.Created,
			watching: map[int]bool{}, panePID: info.Pane.PID, paneID: info.Pane.ID, launchedAt: time.Now(),
		}
		if s.dir == "" || !filepath.IsAbs(s.dir) {
			s.dir = a.cfg.Home
		}
		s.st.Status = api.StatusIdle
		if p, found, err := proc.FindClaude(info.Pane.PID); err == nil && found {
			// What it is doing is re-verified, as after a restart.
			s.kind, s.claudePID, s.st.Status = api.KindClaude, p.PID, api.StatusUnknown
		}
		s.updated = now()
		a.mu.Lock()
		s.name = a.uniqueNameLocked(sanitizeName(filepath.Base(s.dir)))
		a.sessions[s.id] = s
		a.panes.watchPIDLocked(s, s.panePID)
		a.in.publishLocked(s, "", false) // and to the database, with retries
		a.mu.Unlock()
		a.log.Warn("adopted a session of corral's tmux server that the database did not know",
			"id", s.id, "name", s.name, "dir", s.dir, "kind", s.kind, "claude_pid", s.claudePID)
	}
	return nil
}

// adoptOnce runs adopt until it has succeeded once.
func (a *reconciler) adoptOnce(ctx context.Context) {
	a.mu.Lock()
	done := a.adopted
	a.mu.Unlock()
	if done {
		return
	}
	if err := a.adopt(ctx); err != nil {
		a.log.Warn("looking for sessions the database does not know; trying again later", "err", fmt.Errorf("tmux: %w", err))
		return
	}
	a.mu.Lock()
	a.adopted = true
	a.mu.Unlock()
}
