package agent

import (
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/claude"
	"github.com/corral-dev/corral/internal/hook"
	"github.com/corral-dev/corral/internal/proc"
	"github.com/corral-dev/corral/internal/status"
)

// hookEvent maps a hook payload to a status event.
func hookEvent(p claude.HookPayload, at time.Time) (status.Event, bool) {
	ev := status.Event{At: at, ClaudeSessionID: p.SessionID, TranscriptPath: p.TranscriptPath, Model: p.Model}
	switch p.HookEventName {
	case claude.EventSessionStart:
		ev.Kind, ev.Source = status.HookSessionStart, p.Source
	case claude.EventSessionEnd:
		ev.Kind, ev.Source = status.HookSessionEnd, p.Reason
	case claude.EventUserPromptSubmit:
		ev.Kind, ev.Prompt = status.HookPromptSubmit, p.Prompt
	case claude.EventPreToolUse:
		ev.Kind, ev.Tool, ev.ToolInput = status.HookPreToolUse, p.ToolName, p.ToolInput
	case claude.EventPostToolUse, claude.EventPostToolUseFailure:
		ev.Kind, ev.Tool = status.HookPostToolUse, p.ToolName
	case claude.EventPermissionRequest:
		ev.Kind, ev.Tool, ev.ToolInput, ev.Suggestions = status.HookPermissionRequest, p.ToolName, p.ToolInput, p.PermissionSuggestions
	case claude.EventNotification:
		ev.Kind, ev.NotificationType, ev.Message = status.HookNotification, p.NotificationType, p.Message
	case claude.EventStop:
		ev.Kind, ev.Message = status.HookStop, p.LastAssistantMessage
	case claude.EventStopFailure:
		ev.Kind, ev.ErrorKind, ev.Message = status.HookStopFailure, p.Error, p.LastAssistantMessage
	case claude.EventPreCompact:
		ev.Kind = status.HookPreCompact
	case claude.EventPostCompact:
		ev.Kind = status.HookPostCompact
	default:
		return ev, false
	}
	return ev, true
}

// onDelivery handles one hook or status line delivery.
func (a *Agent) onDelivery(h hook.Header, payload []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.sessionForDeliveryLocked(h)
	if s == nil && h.Session == "" && h.Kind == hook.KindHook {
		s = a.externalLocked(h, payload)
	}
	if s == nil {
		a.log.Debug("delivery from a process corral does not run", "kind", h.Kind, "pid", h.PID, "session", h.Session)
		return
	}
	if h.Truncated && h.Kind != hook.KindHook {
		a.warnDelivery("status line input over the size limit was dropped", "session", s.id)
		return
	}
	switch h.Kind {
	case hook.KindStatusLine:
		sl, err := claude.ParseStatusLine(payload)
		if err != nil {
			a.warnDelivery("bad status line input", "session", s.id, "err", err)
			return
		}
		a.absorbStatusLineLocked(s, sl)
	case hook.KindHook:
		parse := claude.ParseHook
		if h.Truncated {
			// Cut at the limit: the event and its tool, without the input.
			parse = claude.ParseHookPrefix
		}
		p, err := parse(payload)
		if err != nil {
			a.warnDelivery("bad hook payload", "session", s.id, "truncated", h.Truncated, "err", err)
			return
		}
		if h.Truncated {
			a.warnDelivery("hook payload over the size limit; read without its tool input", "session", s.id, "event", p.HookEventName, "tool", p.ToolName)
		}
		if h.ClaudePID > 0 && s.kind != api.KindExternal && s.claudePID != h.ClaudePID {
			s.claudePID = h.ClaudePID
			a.watchPIDLocked(s, h.ClaudePID)
		} else if h.ClaudePID == 0 {
			a.noteClaudeLocked(s, h.PPID)
		}
		ev, ok := hookEvent(p, h.Time())
		if !ok {
			return
		}
		a.log.Debug("hook", "session", s.id, "event", p.HookEventName, "status", s.st.Status, "age", time.Since(h.Time()).Round(time.Microsecond))
		if ev.Kind == status.HookSessionStart && s.st.Status == api.StatusExited {
			// claude started again in the pane's shell.
			a.applyLocked(s, status.Event{Kind: status.ClaudeStarted})
		}
		a.applyLocked(s, ev)
		a.ensureTranscriptLocked(s)
		a.readTranscriptLocked(s)
	}
}

// sessionForDeliveryLocked finds the session a hook process belongs to:
// by $CORRAL_SESSION, which every pane corral starts carries.
//
// A delivery from an earlier incarnation of the session's pane (a claude
// that was dying when tmux died and the session was recreated) would move
// the new one's state: tmux's variables, which the hook inherits, say which
// server and pane it came from.
func (a *Agent) sessionForDeliveryLocked(h hook.Header) *session {
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

func (a *Agent) absorbStatusLineLocked(s *session, sl claude.StatusLine) {
	u := sl.Usage()
	// Token totals come from the transcript; keep them.
	u.InputTokens, u.OutputTokens, u.CacheRead, u.CacheCreation = s.usage.InputTokens, s.usage.OutputTokens, s.usage.CacheRead, s.usage.CacheCreation
	if usageEqual(u, s.usage) {
		return
	}
	s.usage = u
	a.publishLocked(s, s.st.Status, false)
}

func usageEqual(a, b api.Usage) bool {
	return a.Model == b.Model && a.ModelName == b.ModelName && a.ContextPercent == b.ContextPercent &&
		a.ContextSize == b.ContextSize && a.InputTokens == b.InputTokens && a.OutputTokens == b.OutputTokens &&
		a.CacheRead == b.CacheRead && a.CacheCreation == b.CacheCreation && a.CostUSD == b.CostUSD &&
		string(a.RateLimits) == string(b.RateLimits)
}

// noteClaudeLocked learns claude's pid from a hook process's parent: the
// nearest ancestor that is claude.
func (a *Agent) noteClaudeLocked(s *session, ppid int) {
	if ppid <= 1 || (s.claudePID != 0 && s.claudePID == ppid) {
		return
	}
	pid := ppid
	for range 4 {
		p, err := proc.Stat(pid)
		if err != nil {
			return
		}
		if proc.IsClaude(p) {
			if s.claudePID != p.PID {
				s.claudePID = p.PID
				a.watchPIDLocked(s, p.PID)
			}
			return
		}
		pid = p.PPID
		if pid <= 1 {
			return
		}
	}
}

// onSessionFile handles a change of one of Claude's session files.
func (a *Agent) onSessionFile(ev claude.SessionFileEvent) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ev.Removed {
		for _, s := range a.sessions {
			if s.claudePID == ev.PID {
				// Claude removes its file on exit; the process watcher will
				// confirm, but there is no reason to wait for it.
				a.kickReconcile()
			}
		}
		return
	}
	f := ev.File
	s := a.sessionForPIDLocked(f.PID)
	if s == nil {
		return
	}
	if !proc.StartTimeMatches(f.PID, f.ProcStart) {
		return // a file left by a dead process whose pid was reused
	}
	a.log.Debug("session file", "session", s.id, "file_status", f.Status, "status", s.st.Status)
	a.applyLocked(s, status.Event{
		Kind: status.FileStatus, At: f.StatusChanged(), FileStatus: f.Status, Message: f.WaitingFor,
		ClaudeSessionID: f.SessionID,
	})
}

// sessionForPIDLocked finds the session whose claude has this pid, learning
// the pid from the process tree the first time.
func (a *Agent) sessionForPIDLocked(pid int) *session {
	for _, s := range a.sessions {
		if s.claudePID == pid {
			return s
		}
	}
	for _, s := range a.sessions {
		if s.panePID == 0 || s.kind != api.KindClaude && s.st.Status != api.StatusExited {
			continue
		}
		if isDescendant(pid, s.panePID) {
			s.claudePID = pid
			a.watchPIDLocked(s, pid)
			return s
		}
	}
	return nil
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

// ensureTranscriptLocked starts following a session's transcript once its
// path is known, and watches its directory.
func (a *Agent) ensureTranscriptLocked(s *session) {
	path := s.transcript(a.cfg.ClaudeDir)
	if path == "" {
		return
	}
	if s.tail == nil || s.tail.Path() != path {
		s.tail = claude.NewTailer(path, claude.Position{})
		s.tailPrimed = false
		s.tokens.Reset()
	}
	dir := filepath.Dir(path)
	if !a.tdirs[dir] && a.twatch != nil {
		if err := a.twatch.Add(dir); err == nil {
			a.tdirs[dir] = true
		}
	}
}

// readTranscriptLocked reads what is new in a session's transcript. The
// first read of a transcript only gathers metadata (usage, last message):
// old interruptions are history, not signals.
func (a *Agent) readTranscriptLocked(s *session) {
	if s.tail == nil {
		return
	}
	for {
		b, err := s.tail.Read()
		if err != nil {
			return
		}
		if b.Reset {
			s.tokens.Reset()
		}
		if len(b.Entries) == 0 {
			break
		}
		prev := s.st.Status
		changed := false
		for _, e := range b.Entries {
			s.tokens.Add(e)
			for _, sig := range claude.Signals(e) {
				ev, ok := transcriptEvent(sig)
				if !ok {
					continue
				}
				if !s.tailPrimed && ev.Kind == status.Interrupt {
					continue
				}
				if ev.Kind == status.Interrupt {
					a.log.Debug("transcript interrupt", "session", s.id, "status", s.st.Status)
				}
				ns, out := status.Apply(s.st, ev, now())
				s.st = ns
				if out.Changed {
					changed = true
					if out.Notify {
						a.publishLocked(s, prev, true)
						prev = s.st.Status
						changed = false
					}
				}
			}
		}
		u := s.usage
		s.tokens.Fill(&u)
		if !usageEqual(u, s.usage) {
			s.usage = u
			changed = true
		}
		if changed {
			a.publishLocked(s, prev, false)
		}
		if !b.More {
			break
		}
	}
	s.tailPrimed = true
}

func transcriptEvent(sig claude.Signal) (status.Event, bool) {
	switch v := sig.(type) {
	case claude.Interrupt:
		return status.Event{Kind: status.Interrupt, At: v.At}, true
	case claude.ToolUse:
		return status.Event{Kind: status.ToolSeen, Tool: v.Name}, true
	case claude.AssistantText:
		return status.Event{Kind: status.AssistantText, Message: v.Text}, true
	}
	return status.Event{}, false
}

// watchTranscripts reads transcripts as Claude writes them.
func (a *Agent) watchTranscripts() {
	for {
		select {
		case <-a.ctx.Done():
			return
		case err, ok := <-a.twatch.Errors:
			if !ok {
				return
			}
			a.log.Warn("transcript watcher", "err", err)
		case ev, ok := <-a.twatch.Events:
			if !ok {
				return
			}
			if !ev.Has(fsnotify.Write) && !ev.Has(fsnotify.Create) {
				continue
			}
			a.mu.Lock()
			for _, s := range a.sessions {
				if s.tail != nil && s.tail.Path() == ev.Name {
					a.readTranscriptLocked(s)
				}
			}
			a.mu.Unlock()
		}
	}
}
