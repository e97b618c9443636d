package agent

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/hookwire"
	"github.com/corral-dev/corral/internal/proc"
	"github.com/corral-dev/corral/internal/tmux"
)

// External sessions are claude processes corral did not start, which report
// through the hooks of `corral hooks install --global`. corral shows their
// state like any other; it types into them only when they run in a tmux
// pane (their hooks carry $TMUX and $TMUX_PANE), and it never ends them.

// extTarget is where an external claude's terminal is, if in tmux.
type extTarget struct {
	Socket string `json:"socket"`
	Pane   string `json:"pane"`
}

// externalLocked finds or creates the external session of the claude that
// sent a delivery. The caller holds a.mu.
func (a *Agent) externalLocked(h hookwire.Header, payload []byte) *session {
	if h.ClaudePID <= 0 {
		return nil
	}
	target := extTargetOf(h)
	for _, s := range a.sessions {
		if s.kind == api.KindExternal && s.claudePID == h.ClaudePID && (s.claudeStart == 0 || s.claudeStart == h.ClaudeStart) {
			if target != nil {
				s.ext = target
			}
			return s
		}
	}
	var p struct {
		Cwd       string `json:"cwd"`
		Workspace struct {
			CurrentDir string `json:"current_dir"`
		} `json:"workspace"`
	}
	_ = json.Unmarshal(payload, &p)
	dir := p.Cwd
	if dir == "" {
		dir = p.Workspace.CurrentDir
	}
	if dir == "" || !filepath.IsAbs(dir) {
		return nil
	}
	s := &session{
		id: newID(), name: a.uniqueNameLocked(sanitizeName(filepath.Base(dir))), dir: filepath.Clean(dir), kind: api.KindExternal,
		created: now(), watching: map[int]bool{}, claudePID: h.ClaudePID, claudeStart: h.ClaudeStart, ext: target,
	}
	s.updated = s.created
	s.st.Status = api.StatusIdle
	a.sessions[s.id] = s
	a.watchPIDLocked(s, s.claudePID)
	a.publishLocked(s, "", false)
	a.log.Info("watching a claude started outside corral", "id", s.id, "pid", s.claudePID, "dir", s.dir)
	return s
}

func extTargetOf(h hookwire.Header) *extTarget {
	if h.Tmux == "" || h.Pane == "" {
		return nil
	}
	sock, _, _ := strings.Cut(h.Tmux, ",")
	if !filepath.IsAbs(sock) {
		return nil
	}
	return &extTarget{Socket: sock, Pane: h.Pane}
}

// externalAlive reports whether an external session's claude still runs.
func externalAlive(s *session) bool {
	p, err := proc.Stat(s.claudePID)
	return err == nil && proc.IsClaude(p) && (s.claudeStart == 0 || p.StartTime == s.claudeStart) && p.State != "Z"
}

// forget drops sessions that are gone for good (a closed pane, an external
// claude that exited): from memory, the database and the event stream.
func (a *Agent) forget(ctx context.Context, ids []string, why string) {
	if len(ids) == 0 {
		return
	}
	a.storeMu.Lock()
	defer a.storeMu.Unlock()
	for _, id := range ids {
		a.mu.Lock()
		s, ok := a.sessions[id]
		delete(a.sessions, id)
		delete(a.dirty, id)
		a.mu.Unlock()
		if !ok {
			continue
		}
		a.dropRecord(ctx, id)
		a.bus.Remove(id)
		a.log.Info("session "+why, "id", id, "name", s.name)
	}
}

// terminal returns the tmux server and target that reach a session's pane.
func (a *Agent) terminal(id string) (*tmux.Server, string, error) {
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
