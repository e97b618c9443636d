package agent

import (
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/status"
)

// intake is where every signal about a session goes: it takes the
// registry's lock only to fold a signal into the state (session.track,
// the one caller of status.Apply) and publish what changed. The sources do
// their I/O before, without the lock; the ones below that end in Locked
// run with it held, the others take it.
type intake struct{ *Agent }

// applyLocked folds one signal into a session's state and publishes the
// result, if it changed (reported). The caller holds a.mu.
func (a *intake) applyLocked(s *session, ev status.Signal) (changed bool) {
	prev, out := s.track(ev)
	ns := s.st
	// A held signal, or a dialog a hook announced, is settled by the screen.
	if out.Recheck || out.Changed && ns.Status == api.StatusNeedsInput && ns.OnScreen == "" {
		a.screen.recheck(s)
	}
	if out.Wake > 0 {
		a.wakeAfter(s.id, out.Wake)
	}
	if !out.Changed {
		return false
	}
	if prev != ns.Status {
		a.log.Debug("status", "session", s.id, "from", prev, "to", ns.Status, "by", ev.Kind)
		a.metrics.StatusChanged(ev.Kind.String(), string(ns.Status))
	}
	a.publishLocked(s, prev, out.Notify)
	return true
}

// wakeAfter sends the session a Tick after d, as the engine asked.
func (a *intake) wakeAfter(id string, d time.Duration) {
	if a.ctx == nil {
		return
	}
	a.goLoop("wake", func() {
		select {
		case <-a.ctx.Done():
			return
		case <-time.After(d):
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		if s, ok := a.sessions[id]; ok {
			a.applyLocked(s, status.Signal{Kind: status.Tick})
		}
	})
}

// publishLocked publishes a session's current state. The caller holds a.mu.
func (a *intake) publishLocked(s *session, prev api.Status, notify bool) {
	s.updated = now()
	a.bus.Update(s.toAPI(), prev, notify)
	a.persist.markDirtyLocked(s.id)
}

// personActed records a person's act on a session, begun at `at` (zero:
// now): it clears a review that came before it.
func (a *intake) personActed(id string, k status.Kind, at time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s, ok := a.sessions[id]; ok {
		a.applyLocked(s, status.Signal{Kind: k, At: at})
	}
}
