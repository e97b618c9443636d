package agent

import (
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/claude"
	"github.com/corral-dev/corral/internal/claude/hooks"
	"github.com/corral-dev/corral/internal/claude/sessionfile"
	"github.com/corral-dev/corral/internal/hookwire"
	"github.com/corral-dev/corral/internal/metrics"
	"github.com/corral-dev/corral/internal/proc"
	"github.com/corral-dev/corral/internal/status"
)

// claudeSignals turns what Claude itself reports (hook deliveries, the
// status line, its session files) into signals for the intake.
type claudeSignals struct{ *Agent }

// hookSignal maps a hook payload to a status signal.
func hookSignal(p hooks.Payload, at time.Time) (status.Signal, bool) {
	ev := status.Signal{At: at, ClaudeSessionID: p.SessionID, TranscriptPath: p.TranscriptPath, Model: p.Model,
		AgentID: p.AgentID, AgentType: p.AgentType, ToolUseID: p.ToolUseID}
	if p.AgentID != "" {
		// A subagent's transcript is its own; the session's stays.
		ev.TranscriptPath = ""
	}
	switch p.HookEventName {
	case hooks.EventSessionStart:
		ev.Kind, ev.Source = status.HookSessionStart, p.Source
	case hooks.EventSessionEnd:
		ev.Kind, ev.Source = status.HookSessionEnd, p.Reason
	case hooks.EventUserPromptSubmit:
		ev.Kind, ev.Prompt = status.HookPromptSubmit, p.Prompt
	case hooks.EventPreToolUse:
		ev.Kind, ev.Tool, ev.ToolInput = status.HookPreToolUse, p.ToolName, p.ToolInput
	case hooks.EventPostToolUse, hooks.EventPostToolUseFailure:
		ev.Kind, ev.Tool = status.HookPostToolUse, p.ToolName
	case hooks.EventSubagentStart:
		ev.Kind = status.HookSubagentStart
	case hooks.EventSubagentStop:
		ev.Kind = status.HookSubagentStop
	case hooks.EventElicitation:
		ev.Kind, ev.Message, ev.Tool = status.HookElicitation, p.Message, p.MCPServerName
	case hooks.EventElicitationResult:
		ev.Kind = status.HookElicitationResult
	case hooks.EventTaskCreated:
		ev.Kind, ev.TaskID, ev.TaskSubject = status.HookTaskCreated, p.TaskID, p.TaskSubject
	case hooks.EventTaskCompleted:
		ev.Kind, ev.TaskID, ev.TaskSubject = status.HookTaskCompleted, p.TaskID, p.TaskSubject
	case hooks.EventPermissionRequest:
		ev.Kind, ev.Tool, ev.ToolInput, ev.Suggestions = status.HookPermissionRequest, p.ToolName, p.ToolInput, p.PermissionSuggestions
	case hooks.EventNotification:
		ev.Kind, ev.NotificationType, ev.Message = status.HookNotification, p.NotificationType, p.Message
	case hooks.EventStop:
		ev.Kind, ev.Message = status.HookStop, p.LastAssistantMessage
		ev.Background = backgroundOf(p.BackgroundTasks)
	case hooks.EventStopFailure:
		ev.Kind, ev.ErrorKind, ev.Message = status.HookStopFailure, p.Error, p.LastAssistantMessage
	case hooks.EventPreCompact:
		ev.Kind = status.HookPreCompact
	case hooks.EventPostCompact:
		ev.Kind = status.HookPostCompact
	default:
		return ev, false
	}
	return ev, true
}

// maxBackground bounds the background work a session lists.
const maxBackground = 32

// backgroundOf is what still runs of Stop's background_tasks (never nil,
// so that "none" is told from "the hook did not say" only by the payload).
func backgroundOf(tasks []hooks.BackgroundTask) []api.BackgroundTask {
	if tasks == nil {
		return nil
	}
	out := []api.BackgroundTask{}
	for _, t := range tasks {
		if t.Status != "" && t.Status != "running" || len(out) == maxBackground {
			continue
		}
		out = append(out, api.BackgroundTask{Type: t.Type, Description: clip(t.Description, 200), Command: clip(t.Command, 500)})
	}
	return out
}

// tmuxServerPID reads the server pid from $TMUX ("socket,pid,session").
func tmuxServerPID(v string) int {
	_, rest, ok := strings.Cut(v, ",")
	if !ok {
		return 0
	}
	pidStr, _, _ := strings.Cut(rest, ",")
	pid, err := strconv.Atoi(pidStr)
	if err != nil {
		return 0
	}
	return pid
}

func usageEqual(a, b api.Usage) bool {
	return a.Model == b.Model && a.ModelName == b.ModelName && a.ContextPercent == b.ContextPercent &&
		a.ContextSize == b.ContextSize && a.InputTokens == b.InputTokens && a.OutputTokens == b.OutputTokens &&
		a.CacheRead == b.CacheRead && a.CacheCreation == b.CacheCreation && a.CostUSD == b.CostUSD &&
		a.CostToday == b.CostToday && a.CostDay == b.CostDay && a.TodayUnpriced == b.TodayUnpriced &&
		string(a.RateLimits) == string(b.RateLimits)
}

// claudeAncestor is the pid of the nearest claude among a hook process's
// parents (0 if none): the claude that ran the hook.
func claudeAncestor(ppid int) int {
	pid := ppid
	for range 4 {
		if pid <= 1 {
			return 0
		}
		p, err := proc.Stat(pid)
		if err != nil {
			return 0
		}
		if proc.IsClaude(p) {
			return p.PID
		}
		pid = p.PPID
	}
	return 0
}

// paneOf is a session's pane process, for lookups outside the lock.
type paneOf struct {
	id  string
	pid int
}

func isDescendant(pid, ancestor int) bool {
	for range 16 {
		p, err := proc.Stat(pid)
		if err != nil || p.PPID <= 1 {
			return false
		}
		if p.PPID == ancestor {
			return true
		}
		pid = p.PPID
	}
	return false
}

// onDelivery handles one hook or status line delivery. The payload is
// parsed and /proc read before the agent's lock is taken, and the
// transcript is read after it is released: the lock only covers applying
// the signal.
func (a *claudeSignals) onDelivery(h hookwire.Header, payload []byte) {
	if h.Truncated && h.Kind != hookwire.KindHook {
		a.warn("status line input over the size limit was dropped", "session", h.Session)
		a.metrics.HookDelivered(h.Kind, metrics.ResultBad, time.Time{})
		return
	}
	var p hooks.Payload
	var sl hooks.StatusLine
	var err error
	switch h.Kind {
	case hookwire.KindStatusLine:
		sl, err = hooks.ParseStatusLine(payload)
	case hookwire.KindHook:
		if h.Truncated {
			// Cut at the size limit by the sender: the event and its tool,
			// without the tool's input.
			p, err = hooks.ParsePrefix(payload)
		} else {
			p, err = hooks.Parse(payload)
		}
	}
	if err != nil {
		a.warn("bad hook delivery", "session", h.Session, "kind", h.Kind, "truncated", h.Truncated, "err", err)
		a.metrics.HookDelivered(h.Kind, metrics.ResultBad, time.Time{})
		return
	}
	if h.Truncated {
		a.warn("hook payload over the size limit; read without its tool input", "session", h.Session, "event", p.HookEventName, "tool", p.ToolName)
	}
	claudePID := h.ClaudePID
	if claudePID == 0 && h.Kind == hookwire.KindHook {
		claudePID = claudeAncestor(h.PPID)
	}
	extDir := ""
	if h.Session == "" && h.Kind == hookwire.KindHook {
		extDir = externalDir(payload)
	}
	a.mu.Lock()
	s := a.sessionForDeliveryLocked(h)
	if s == nil && h.Session == "" && h.Kind == hookwire.KindHook {
		s = a.externalLocked(h, extDir)
	}
	if s == nil {
		a.mu.Unlock()
		a.log.Debug("delivery from a process corral does not run", "kind", h.Kind, "pid", h.PID, "session", h.Session)
		a.metrics.HookDelivered(h.Kind, metrics.ResultIgnored, time.Time{})
		return
	}
	id := s.id
	if h.Kind == hookwire.KindStatusLine {
		a.absorbStatusLineLocked(s, sl)
		a.mu.Unlock()
		a.metrics.HookDelivered(h.Kind, metrics.ResultOK, h.Time())
		return
	}
	if claudePID > 0 && s.kind != api.KindExternal && s.claudePID != claudePID {
		s.claudePID = claudePID
		a.panes.watchPIDLocked(s, claudePID)
	}
	ev, ok := hookSignal(p, h.Time())
	watch := ""
	if ok {
		if ev.TranscriptPath != "" && !a.claudeFile(ev.TranscriptPath) {
			a.warn("hook names a transcript outside Claude's directory; ignored", "session", id, "path", ev.TranscriptPath)
			ev.TranscriptPath = ""
		}
		a.log.Debug("hook", "session", id, "event", p.HookEventName, "status", s.st.Status, "age", time.Since(h.Time()).Round(time.Microsecond))
		if ev.Kind == status.HookSessionStart && s.st.Status == api.StatusExited {
			// claude started again in the pane's shell.
			a.in.applyLocked(s, status.Signal{Kind: status.ClaudeStarted})
		}
		a.in.applyLocked(s, ev)
		watch = a.trs.ensureTranscriptLocked(s)
	}
	a.mu.Unlock()
	a.metrics.HookDelivered(h.Kind, metrics.ResultOK, h.Time())
	if ok {
		a.trs.watchDir(watch)
		a.trs.readTranscript(id)
		a.git.gitHook(id, p)
	}
}

// claudeFile reports whether path is a transcript in Claude's own project
// folders: a hook payload is untrusted, and corral reads what it names.
func (a *claudeSignals) claudeFile(path string) bool {
	if !filepath.IsAbs(path) || filepath.Ext(path) != ".jsonl" {
		return false
	}
	root := filepath.Join(a.cfg.ClaudeDir, "projects") + string(filepath.Separator)
	return strings.HasPrefix(filepath.Clean(path), root)
}

// sessionForDeliveryLocked finds the session a hook process belongs to:
// by $CORRAL_SESSION, which every pane corral starts carries.
//
// A delivery from an earlier incarnation of the session's pane (a claude
// that was dying when tmux died and the session was recreated) would move
// the new one's state: tmux's variables, which the hook inherits, say which
// server and pane it came from.
func (a *claudeSignals) sessionForDeliveryLocked(h hookwire.Header) *session {
	if h.Session == "" {
		return nil
	}
	s, ok := a.sessions[h.Session]
	if !ok {
		return nil
	}
	if pid := tmuxServerPID(h.Tmux); pid != 0 && a.serverPID != 0 && pid != a.serverPID {
		a.log.Debug("delivery from a previous tmux server ignored", "session", s.id, "server", pid)
		return nil
	}
	if h.Pane != "" && s.paneID != "" && h.Pane != s.paneID {
		a.log.Debug("delivery from a previous pane ignored", "session", s.id, "pane", h.Pane)
		return nil
	}
	return s
}

func (a *claudeSignals) absorbStatusLineLocked(s *session, sl hooks.StatusLine) {
	u := sl.Usage()
	// Token totals and the day's cost come from the transcript; keep them.
	u.InputTokens, u.OutputTokens, u.CacheRead, u.CacheCreation = s.usage.InputTokens, s.usage.OutputTokens, s.usage.CacheRead, s.usage.CacheCreation
	u.CostToday, u.CostDay, u.TodayUnpriced = s.usage.CostToday, s.usage.CostDay, s.usage.TodayUnpriced
	if usageEqual(u, s.usage) {
		return
	}
	s.usage = u
	a.in.publishLocked(s, s.st.Status, false)
}

// onSessionFile handles a change of one of Claude's session files. The
// process checks (/proc) come before the lock, the transcript after it.
func (a *claudeSignals) onSessionFile(ev sessionfile.Event) {
	if ev.Removed {
		a.mu.Lock()
		for _, s := range a.sessions {
			if s.claudePID == ev.PID {
				// Claude removes its file on exit; the process watcher will
				// confirm, but there is no reason to wait for it.
				a.rec.kickReconcile()
			}
		}
		a.mu.Unlock()
		return
	}
	f := ev.File
	if !proc.StartTimeMatches(f.PID, f.ProcStart) {
		return // a file left by a dead process whose pid was reused
	}
	// Which pane is this claude in? Only asked of /proc when no session
	// knows the pid yet.
	a.mu.Lock()
	known := false
	var panes []paneOf
	for _, s := range a.sessions {
		if s.claudePID == f.PID {
			known = true
			break
		}
		if s.panePID != 0 && (s.kind == api.KindClaude || s.st.Status == api.StatusExited) {
			panes = append(panes, paneOf{s.id, s.panePID})
		}
	}
	a.mu.Unlock()
	owner := ""
	if !known {
		for _, p := range panes {
			if isDescendant(f.PID, p.pid) {
				owner = p.id
				break
			}
		}
	}
	a.mu.Lock()
	s := a.sessionForPIDLocked(f.PID, owner)
	if s == nil {
		a.mu.Unlock()
		return
	}
	id := s.id
	a.log.Debug("session file", "session", id, "file_status", f.Status, "status", s.st.Status)
	if s.st.Status == api.StatusExited && s.kind == api.KindClaude {
		// Claude was started again in the pane's shell, by hand: corral
		// follows whatever runs there.
		a.in.applyLocked(s, status.Signal{Kind: status.ClaudeStarted})
	}
	fev := status.Signal{
		Kind: status.FileStatus, At: f.StatusChanged(), FileStatus: f.Status, Message: f.WaitingFor,
		ClaudeSessionID: f.SessionID,
	}
	if !s.st.Hooked && f.CWD != "" && f.SessionID != "" {
		// No hook says where the transcript is: Claude keeps it by cwd.
		fev.TranscriptPath = claude.TranscriptPath(a.cfg.ClaudeDir, f.CWD, f.SessionID)
	}
	a.in.applyLocked(s, fev)
	watch := a.trs.ensureTranscriptLocked(s)
	a.mu.Unlock()
	a.trs.watchDir(watch)
	if fev.TranscriptPath != "" {
		a.trs.readTranscript(id)
	}
}

// sessionForPIDLocked finds the session whose claude has this pid, or
// else the session owner names (found under its pane), learning the pid.
func (a *claudeSignals) sessionForPIDLocked(pid int, owner string) *session {
	for _, s := range a.sessions {
		if s.claudePID == pid {
			return s
		}
	}
	if s, ok := a.sessions[owner]; ok && owner != "" {
		s.claudePID = pid
		a.panes.watchPIDLocked(s, pid)
		return s
	}
	return nil
}
