package agent

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/claude/sessionfile"
	"github.com/corral-dev/corral/internal/claude/transcript"
	"github.com/corral-dev/corral/internal/proc"
	"github.com/corral-dev/corral/internal/status"
	"github.com/corral-dev/corral/internal/tmux"
)

// reconciler compares what corral believes with what tmux and /proc say,
// brings back what a dead tmux server lost, restores sessions at start and
// takes in panes the database does not know (adopt.go).
type reconciler struct {
	*Agent
	reconcile chan struct{}
	// adopted: the tmux sessions the database did not know were taken in.
	adopted bool
}

// startGrace is how long a freshly launched claude may take before a pane
// without a claude process counts as exited.
const startGrace = 15 * time.Second

// probesLocked sorts the sessions by what tmux listed (alive, at
// listedAt): the ones whose pane is gone, the ones lost with their server,
// and the ones to look at. The caller holds a.mu.
func (a *reconciler) probesLocked(alive map[string]tmux.SessionInfo, listedAt time.Time) (gone []string, lost []*session, probes []probe) {
	for _, s := range a.sessions {
		if s.kind == api.KindExternal {
			probes = append(probes, probe{id: s.id, external: true, s: *s})
			continue
		}
		info, ok := alive[s.id]
		if !ok && s.launchedAt.After(listedAt) {
			continue
		}
		if !ok {
			if s.lost {
				// Its server died and bringing it back failed: try again
				// rather than take it for closed.
				lost = append(lost, s)
			} else {
				gone = append(gone, s.id)
			}
			continue
		}
		if info.Pane.PID != s.panePID && info.Pane.PID > 0 {
			s.panePID = info.Pane.PID
			a.panes.watchPIDLocked(s, info.Pane.PID)
		}
		s.paneID = info.Pane.ID
		if s.kind == api.KindClaude {
			probes = append(probes, probe{id: s.id, s: *s})
		}
	}
	return gone, lost, probes
}

// probe is what reconciliation found out about one session, away from the
// agent's lock.
type probe struct {
	id       string
	external bool
	// s is a copy of the session when it was looked at.
	s session
	// running: claude lives in the pane (pid its pid); check is what
	// re-verification needs; verify: the state needs it.
	running bool
	pid     int
	verify  bool
	check   verifyCheck
	// screen is a read of the screen, for a state a dialog may explain.
	screen   screenView
	screened bool
	// read: the transcript should be read (claude found, none followed).
	read bool
}

// verifyCheck is a status.Check and the conversation id the file named.
type verifyCheck struct {
	status.Check
	SessionID string
}

// withoutResume drops a --resume/-r/--continue/-c from extra claude
// arguments: a recreated session resumes its own conversation.
func withoutResume(args []string) []string {
	out := args[:0:0]
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "--resume", "-r":
			if i+1 < len(args) && len(args[i+1]) > 0 && args[i+1][0] != '-' {
				i++
			}
			continue
		case "--continue", "-c":
			continue
		}
		out = append(out, args[i])
	}
	return out
}

func (a *reconciler) kickReconcile() {
	select {
	case a.reconcile <- struct{}{}:
	default:
	}
}

// reconcileLoop compares what corral believes with what tmux and /proc say:
// on every process exit, and once every SafetyPoll as a safety net.
func (a *reconciler) reconcileLoop() {
	t := time.NewTicker(a.cfg.SafetyPoll)
	defer t.Stop()
	for {
		select {
		case <-a.ctx.Done():
			return
		case <-a.reconcile:
		case <-t.C:
		}
		if err := a.reconcileOnce(); err != nil && a.ctx.Err() == nil {
			a.log.Warn("reconcile", "err", err)
		}
		a.rollDay()
	}
}

// rollDay zeroes, once the agent's local day has changed, the cost today
// of the sessions whose transcripts wrote nothing since (readTranscript
// counts the new day's as they come), so that a dashboard stops showing
// yesterday's figure within a SafetyPoll of midnight.
func (a *reconciler) rollDay() {
	today := transcript.DayKey(now(), nil)
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, s := range a.sessions {
		if u := s.usage; u.CostDay != "" && u.CostDay != today {
			s.usage.CostDay, s.usage.CostToday, s.usage.TodayUnpriced = today, 0, 0
			a.in.publishLocked(s, s.st.Status, false)
		}
	}
}

func (a *reconciler) reconcileOnce() error {
	ctx, cancel := context.WithTimeout(a.ctx, 30*time.Second)
	defer cancel()
	// Only tmux's own "no server" means the sessions are gone. Any other
	// failure (tmux out of file descriptors, a timeout) leaves every
	// session as it is, to be looked at again on the next round.
	up, err := a.tmux.Running(ctx)
	if err != nil {
		return fmt.Errorf("tmux did not answer; sessions left as they are, retrying: %w", err)
	}
	var list []tmux.SessionInfo
	// A pane made after the listing is not in it, and is not gone.
	listedAt := now()
	if up {
		list, err = a.tmux.ListSessions(ctx)
		if err != nil {
			return fmt.Errorf("tmux did not answer; sessions left as they are, retrying: %w", err)
		}
		if len(list) == 0 {
			// ListSessions says nothing for a server that died in between:
			// ask again before calling every pane closed.
			if up, err = a.tmux.Running(ctx); err != nil {
				return fmt.Errorf("tmux did not answer; sessions left as they are, retrying: %w", err)
			}
		}
	}
	if !up {
		return a.recreateAll(ctx)
	}
	a.panes.watchServer()
	// Panes the database does not know (it was lost): taken in before the
	// round below verifies them; they are in the list already.
	a.adoptOnce(ctx)
	alive := make(map[string]tmux.SessionInfo, len(list))
	for _, info := range list {
		alive[info.Name] = info
	}

	// What to look at, under the lock; the looking (/proc, Claude's files,
	// the screen) without it; what it found, under the lock again.
	a.mu.Lock()
	gone, lost, probes := a.probesLocked(alive, listedAt)
	a.mu.Unlock()
	for i := range probes {
		a.look1(ctx, &probes[i])
	}
	a.mu.Lock()
	var ended, watch []string
	for i := range probes {
		p := &probes[i] // settleLocked marks what to read once the lock is released
		s, ok := a.sessions[p.id]
		if !ok {
			continue
		}
		if p.external {
			if !p.running {
				ended = append(ended, p.id)
			} else if p.verify {
				a.panes.watchPIDLocked(s, s.claudePID)
				a.in.applyLocked(s, status.Signal{Kind: status.Verified, Check: p.check.Check})
			}
			continue
		}
		watch = append(watch, a.settleLocked(s, p))
	}
	a.mu.Unlock()
	for _, d := range watch {
		a.trs.watchDir(d)
	}
	for _, p := range probes {
		if p.read {
			a.trs.readTranscript(p.id)
		}
	}
	// A pane that ended while the server lives was closed by the person.
	a.forget(ctx, gone, "closed")
	a.forget(ctx, ended, "ended (claude started outside corral exited)")
	if len(lost) > 0 {
		return a.recreate(ctx, lost)
	}
	return nil
}

// look1 finds claude in a session's pane and, for states that could not be
// trusted, what its session file, transcript and screen say.
func (a *reconciler) look1(ctx context.Context, p *probe) {
	s := &p.s
	if p.external {
		p.running = externalAlive(s)
		p.pid = s.claudePID
	} else {
		if s.claudePID != 0 {
			if pr, err := proc.Stat(s.claudePID); err == nil && proc.IsClaude(pr) {
				p.running, p.pid = true, s.claudePID
			}
		}
		if !p.running && s.panePID != 0 {
			if pr, found, err := proc.FindClaude(s.panePID); err == nil && found {
				p.running, p.pid = true, pr.PID
			}
		}
	}
	switch s.st.Status {
	case api.StatusUnknown, api.StatusNeedsInput, api.StatusStarting:
		p.verify = s.st.Status != api.StatusStarting
		if p.running {
			p.check = a.checkOf(s, p.pid)
		}
		p.check.ClaudeRunning = p.running
		// A dialog explains needs-input, and startup dialogs come before
		// any file: look before trusting the files.
		if p.running && s.kind != api.KindExternal || s.ext != nil {
			if v, err := a.screen.look(ctx, s.id); err == nil {
				p.screen, p.screened = v, true
			}
		}
	}
}

// settleLocked applies what a probe found, and returns a transcript
// directory to watch (transcripts.watchDir). The caller holds a.mu.
func (a *reconciler) settleLocked(s *session, p *probe) (watch string) {
	if !p.running {
		if s.claudePID != 0 && s.claudePID == p.s.claudePID {
			s.claudePID = 0
		}
	} else if s.claudePID != p.pid {
		s.claudePID = p.pid
		if s.st.Status == api.StatusExited {
			a.in.applyLocked(s, status.Signal{Kind: status.ClaudeStarted})
		}
	}
	if p.running {
		a.panes.watchPIDLocked(s, s.claudePID)
		if s.tr == nil {
			watch = a.trs.ensureTranscriptLocked(s)
			p.read = s.tr != nil
		}
	}
	if p.screened && s.st.Status != api.StatusExited {
		a.screen.observeLocked(s, p.screen)
	}
	switch s.st.Status {
	case api.StatusUnknown, api.StatusNeedsInput:
		if p.check.SessionID != "" {
			s.st.ClaudeSessionID = p.check.SessionID
		}
		a.in.applyLocked(s, status.Signal{Kind: status.Verified, Check: p.check.Check})
	case api.StatusStarting:
		switch {
		case p.running:
			// Claude is up, but the signal that it came up may be lost (a
			// hook that failed, a session file changed before corral knew
			// the pid, a claude that was there before this launch). Leave
			// starting once its session file has a status, or once the
			// grace is over.
			switch p.check.FileStatus {
			case sessionfile.Busy, sessionfile.Idle, sessionfile.Waiting:
			default:
				if time.Since(s.launchedAt) <= startGrace {
					return
				}
			}
			if p.check.SessionID != "" {
				s.st.ClaudeSessionID = p.check.SessionID
			}
			a.in.applyLocked(s, status.Signal{Kind: status.Verified, Check: p.check.Check})
		case time.Since(s.launchedAt) > startGrace:
			a.in.applyLocked(s, status.Signal{Kind: status.ClaudeExited})
		}
	case api.StatusExited:
	default:
		if !p.running {
			a.in.applyLocked(s, status.Signal{Kind: status.ClaudeExited})
		}
	}
	return watch
}

// checkOf gathers what re-verification needs of a live claude: what its
// session file says, and whether the transcript's last turn ended.
func (a *reconciler) checkOf(s *session, pid int) verifyCheck {
	var c verifyCheck
	c.ClaudeRunning = true
	path := filepath.Join(sessionfile.Dir(a.cfg.ClaudeDir), strconv.Itoa(pid)+".json")
	if f, err := sessionfile.Read(path); err == nil && proc.StartTimeMatches(f.PID, f.ProcStart) {
		c.FileStatus, c.FileWaitingFor = f.Status, f.WaitingFor
		c.SessionID = f.SessionID
	}
	if tp := s.transcript(a.cfg.ClaudeDir); tp != "" {
		if ts, err := transcript.LastTurnState(tp); err == nil {
			c.TurnEnded = ts.Status == transcript.TurnDone
		}
	}
	return c
}

// recreateAll brings sessions back after the tmux server died or the
// machine rebooted: each in its directory, Claude resuming its conversation.
func (a *reconciler) recreateAll(ctx context.Context) error {
	a.mu.Lock()
	var todo []*session
	var ended []string
	for _, s := range a.sessions {
		if s.kind == api.KindExternal {
			if !externalAlive(s) {
				ended = append(ended, s.id)
			}
			continue
		}
		todo = append(todo, s)
	}
	a.mu.Unlock()
	a.forget(ctx, ended, "ended (claude started outside corral exited)")
	if len(todo) == 0 {
		return nil
	}
	a.log.Warn("tmux server is gone; recreating sessions", "count", len(todo))
	return a.recreate(ctx, todo)
}

// recreate starts sessions again whose panes died with their server. A
// session whose launch fails keeps its state and is marked lost, so the
// next round tries again instead of taking it for closed.
func (a *reconciler) recreate(ctx context.Context, todo []*session) error {
	// A server that cannot be started now fails every launch alike.
	if err := a.tmux.EnsureRunning(ctx); err != nil {
		a.mu.Lock()
		for _, s := range todo {
			s.lost = true
		}
		a.mu.Unlock()
		return fmt.Errorf("recreating %d sessions: %w", len(todo), err)
	}
	var errs []error
	for _, s := range todo {
		a.mu.Lock()
		resume := ""
		if s.kind == api.KindClaude {
			resume = s.st.ClaudeSessionID
			// Claude can resume only a conversation it saved: one cut
			// off before Claude wrote it down starts afresh, rather
			// than ending at "No conversation found".
			if tp := s.transcript(a.cfg.ClaudeDir); resume != "" && !transcript.Saved(tp) {
				a.log.Warn("no transcript to resume; starting a new conversation", "id", s.id, "claude_session", resume, "transcript", tp)
				resume = ""
			}
			// The old pids and transcript reader are about the old pane.
			clear(s.watching)
			s.tr = nil
			s.claudePID, s.panePID, s.paneID = 0, 0, ""
		}
		// Starting before the pane exists, so that no hook of the new
		// claude can come before it.
		prev := s.st
		if s.kind == api.KindClaude {
			a.in.applyLocked(s, status.Signal{Kind: status.Launched, ClaudeSessionID: resume})
		}
		s.args = withoutResume(s.args)
		a.mu.Unlock()
		if err := a.panes.launch(ctx, s, resume, 0, 0); err != nil {
			// No pane, no new claude: the session keeps the state it had.
			a.mu.Lock()
			s.lost = true
			if s.kind == api.KindClaude {
				cur := s.st.Status
				s.st = prev
				a.in.publishLocked(s, cur, false)
			}
			a.mu.Unlock()
			errs = append(errs, fmt.Errorf("session %s: %w", s.id, err))
			continue
		}
		a.mu.Lock()
		s.lost = false
		a.mu.Unlock()
		if s.kind == api.KindClaude {
			a.screen.watchStartup(s.id)
		}
		if s.kind == api.KindShell {
			// Its terminal was replaced: viewers should know.
			a.mu.Lock()
			a.in.publishLocked(s, s.st.Status, false)
			a.mu.Unlock()
		}
		a.log.Info("session recreated", "id", s.id, "resume", resume)
	}
	return errors.Join(errs...)
}

// restore loads sessions from the database at start. A session that was
// busy becomes unknown until reconciliation verifies it; nothing here
// notifies anyone.
func (a *reconciler) restore(ctx context.Context) error {
	recs, err := a.store.Sessions(ctx)
	if err != nil {
		return fmt.Errorf("load sessions: %w", err)
	}
	a.mu.Lock()
	list := make([]api.Session, 0, len(recs))
	var dead []string
	for _, r := range recs {
		s := fromRecord(r)
		if s.kind == api.KindExternal && !externalAlive(s) {
			dead = append(dead, s.id)
			continue
		}
		s.track(status.Signal{Kind: status.Restored})
		s.launchedAt = time.Now()
		a.sessions[s.id] = s
		list = append(list, s.toAPI())
		a.persist.markDirtyLocked(s.id)
	}
	a.bus.Load(list)
	a.mu.Unlock()
	for _, id := range dead {
		a.persist.dropRecord(ctx, id)
	}
	if len(recs) > 0 {
		a.log.Info("sessions restored", "count", len(recs))
	}
	return nil
}

// forget drops sessions that are gone for good (a closed pane, an external
// claude that exited): from memory, the database and the event stream.
func (a *reconciler) forget(ctx context.Context, ids []string, why string) {
	if len(ids) == 0 {
		return
	}
	a.persist.storeMu.Lock()
	defer a.persist.storeMu.Unlock()
	for _, id := range ids {
		a.mu.Lock()
		s, ok := a.sessions[id]
		delete(a.sessions, id)
		delete(a.persist.dirty, id)
		a.mu.Unlock()
		if !ok {
			continue
		}
		a.persist.dropRecord(ctx, id)
		a.bus.Remove(id)
		a.log.Info("session "+why, "id", id, "name", s.name)
	}
}
