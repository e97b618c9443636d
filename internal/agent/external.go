package agent

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/hookwire"
	"github.com/corral-dev/corral/internal/proc"
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

// externalDir is the folder a delivery of an external claude names, ""
// if none. The payload is parsed before the lock is taken.
func externalDir(payload []byte) string {
	var p struct {
		Cwd       string `json:"cwd"`
		Workspace struct {
			CurrentDir string `json:"current_dir"`
		} `json:"workspace"`
	}
	_ = json.Unmarshal(payload, &p)
	if p.Cwd != "" {
		return p.Cwd
	}
	return p.Workspace.CurrentDir
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

// externalLocked finds or creates the external session of the claude that
// sent a delivery; dir is the folder the delivery named (externalDir). The
// caller holds a.mu.
func (a *claudeSignals) externalLocked(h hookwire.Header, dir string) *session {
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
	a.panes.watchPIDLocked(s, s.claudePID)
	a.in.publishLocked(s, "", false)
	a.log.Info("watching a claude started outside corral", "id", s.id, "pid", s.claudePID, "dir", s.dir)
	return s
}
