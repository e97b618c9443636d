package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/corral-dev/corral/internal/store"
)

// persister writes the sessions' states to the database, in batches, and
// keeps what failed pending. Its maps are guarded by the registry's lock.
type persister struct {
	*Agent
	persistCh chan struct{}
	dirty     map[string]bool
	// deletes are sessions whose database row is still to be deleted.
	deletes map[string]bool
	// persistErr is the last failed database write, since persistFailing;
	// nil once a write succeeds.
	persistErr     error
	persistFailing time.Time
	// storeMu orders database writes, so a late batch of states cannot
	// bring back a session that Kill just deleted.
	storeMu sync.Mutex
}

// Backoff of database writes that fail.

// markDirtyLocked schedules a session's state for the database.
func (a *persister) markDirtyLocked(id string) {
	a.dirty[id] = true
	select {
	case a.persistCh <- struct{}{}:
	default:
	}
}

// persistLoop writes changed states in batches. A status change is
// published first and stored moments later: a reader never waits for the
// disk, and after a crash the states are re-verified anyway. A batch that
// fails stays pending and is retried with backoff, always with each
// session's newest state; the failure is logged and shown by Version.
func (a *persister) persistLoop() {
	for {
		select {
		case <-a.ctx.Done():
			return
		case <-a.persistCh:
		}
		for wait := persistRetryMin; ; wait = min(2*wait, persistRetryMax) {
			err := a.flush(a.ctx)
			if err == nil || a.ctx.Err() != nil {
				break
			}
			a.log.Error("database: saving sessions failed; keeping them pending and retrying", "retry_in", wait, "err", err)
			select {
			case <-a.ctx.Done():
				return
			case <-time.After(wait):
			}
		}
		// Coalesce bursts (a turn fires several hooks in a few ms).
		select {
		case <-a.ctx.Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// flush writes every pending change: the rows of removed sessions go, the
// newest state of each changed one is stored. What fails stays pending.
func (a *persister) flush(ctx context.Context) error {
	a.storeMu.Lock()
	defer a.storeMu.Unlock()
	a.mu.Lock()
	var recs []store.Session
	var ids []string
	for id := range a.dirty {
		if s, ok := a.sessions[id]; ok {
			recs = append(recs, s.record())
			ids = append(ids, id)
		}
	}
	clear(a.dirty)
	var dels []string
	for id := range a.deletes {
		dels = append(dels, id)
	}
	a.mu.Unlock()
	var errs []error
	for _, id := range dels {
		if err := a.store.DeleteSession(ctx, id); err != nil {
			errs = append(errs, fmt.Errorf("delete session %s: %w", id, err))
			continue
		}
		a.mu.Lock()
		delete(a.deletes, id)
		a.mu.Unlock()
	}
	if len(recs) > 0 {
		if err := a.store.PutSessions(ctx, recs); err != nil {
			errs = append(errs, fmt.Errorf("save %d sessions: %w", len(recs), err))
			a.mu.Lock()
			for _, id := range ids {
				// Still pending; the next try takes its state as it is then.
				if _, ok := a.sessions[id]; ok {
					a.dirty[id] = true
				}
			}
			a.mu.Unlock()
		}
	}
	err := errors.Join(errs...)
	a.mu.Lock()
	recovered := err == nil && a.persistErr != nil
	since := a.persistFailing
	if err != nil {
		a.persistFailedLocked(err)
	} else {
		a.persistErr = nil
	}
	a.mu.Unlock()
	if recovered {
		a.log.Info("database: saving works again; every pending change is saved", "failing_since", since)
	}
	return err
}

// dropRecord deletes a removed session's row, now or, if that fails, with
// the next flush. The caller holds a.storeMu, not a.mu.
func (a *persister) dropRecord(ctx context.Context, id string) {
	if err := a.store.DeleteSession(ctx, id); err != nil {
		a.log.Error("database: deleting a session failed; retrying", "id", id, "err", err)
		a.mu.Lock()
		a.deletes[id] = true
		a.persistFailedLocked(err)
		a.mu.Unlock()
		select {
		case a.persistCh <- struct{}{}:
		default:
		}
	}
}

// persistFailedLocked records a failed database write.
func (a *persister) persistFailedLocked(err error) {
	if a.persistErr == nil {
		a.persistFailing = now()
	}
	a.persistErr = err
}

// persistProblem describes pending database writes, "" when there are none.
func (a *persister) persistProblem() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.persistErr == nil {
		return ""
	}
	return fmt.Sprintf("database: %d session changes not saved since %s, retrying: %v",
		len(a.dirty)+len(a.deletes), a.persistFailing.Format(time.DateTime), a.persistErr)
}
