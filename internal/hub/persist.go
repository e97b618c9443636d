package hub

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/corral-dev/corral/internal/api"
)

// saveQueue batches the writes of devices' sessions. Each device's link
// reader hands its changes over and goes back to its link; a writer
// goroutine, started when changes wait and none runs, writes everything
// pending in one transaction, then what came in meanwhile, and ends when
// nothing is left (group commit). A lone change is written at once, as
// before; many devices at once share transactions instead of queueing for
// one each, and no link waits for the disk. Pending changes are merged per
// session, so the queue never holds more than one copy of each.
//
// A transaction that fails loses nothing: its changes go back under the
// ones that came since (newer wins), and the writer tries again with
// backoff until it succeeds; the failure is logged and shown by Version.
type saveQueue struct {
	mu      sync.Mutex
	pending map[string]*deviceSave // by device id
	writing bool
	// done is closed when the running writer ends.
	done chan struct{}
	// wake cuts a writer's backoff short (Flush).
	wake chan struct{}
	// closing: Flush gave up waiting; the writer stops at its next failure.
	closing bool
	// err is the last failed write, since failing; nil after a success.
	err     error
	failing time.Time
	// flushWait bounds Flush (default 10 s).
	flushWait time.Duration
	// txs counts transactions (tests).
	txs int
}

// Backoff of failed writes.
const (
	saveRetryMin = 100 * time.Millisecond
	saveRetryMax = 5 * time.Second
)

// deviceSave is what is left to write for one device, merged: the newest
// copy of each changed session, the ids removed, and whether its earlier
// rows go first (a full sync).
type deviceSave struct {
	replace bool
	keep    map[string]api.Session
	gone    map[string]bool
}

// add merges a change into the pending ones.
func (q *saveQueue) add(deviceID string, keep []api.Session, gone []string, replace bool) {
	if q.pending == nil {
		q.pending = map[string]*deviceSave{}
	}
	d := q.pending[deviceID]
	if d == nil || replace {
		d = &deviceSave{keep: map[string]api.Session{}, gone: map[string]bool{}}
		q.pending[deviceID] = d
	}
	d.replace = d.replace || replace
	for _, id := range gone {
		delete(d.keep, id)
		d.gone[id] = true
	}
	for _, s := range keep {
		delete(d.gone, s.ID)
		d.keep[s.ID] = s
	}
}

// persist keeps a device's sessions for when it is offline and the hub
// restarts. The local device's sessions are the agent's own, in the same
// database: nothing to keep.
func (h *Hub) persist(deviceID string, keep []api.Session, gone []string, replace bool) {
	if h.o.Store == nil || deviceID == "" || (len(keep) == 0 && len(gone) == 0 && !replace) {
		return
	}
	h.mu.Lock()
	local := h.devices[deviceID] != nil && h.devices[deviceID].info.Local
	h.mu.Unlock()
	if local {
		return
	}
	q := &h.saves
	q.mu.Lock()
	defer q.mu.Unlock()
	q.add(deviceID, keep, gone, replace)
	if !q.writing {
		q.writing = true
		q.done = make(chan struct{})
		if q.wake == nil {
			q.wake = make(chan struct{}, 1)
		}
		go h.drain(q.done)
	}
}

// requeue puts a batch that failed back under what came since: the newer
// changes are applied on top, as if they had come after it.
func (q *saveQueue) requeue(batch map[string]*deviceSave) {
	newer := q.pending
	q.pending = batch
	for id, d := range newer {
		keep := make([]api.Session, 0, len(d.keep))
		for _, s := range d.keep {
			keep = append(keep, s)
		}
		gone := make([]string, 0, len(d.gone))
		for g := range d.gone {
			gone = append(gone, g)
		}
		q.add(id, keep, gone, d.replace)
	}
}

// count is the number of session changes pending.
func (q *saveQueue) count() int {
	n := 0
	for _, d := range q.pending {
		n += len(d.keep) + len(d.gone)
		if d.replace {
			n++
		}
	}
	return n
}

// problem describes unsaved changes, "" when there are none.
func (q *saveQueue) problem() string {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.err == nil {
		return ""
	}
	return fmt.Sprintf("database: %d device session changes not saved since %s, retrying: %v",
		q.count(), q.failing.Format(time.DateTime), q.err)
}

// drain writes pending changes until none are left, retrying a failed
// write with backoff.
func (h *Hub) drain(done chan struct{}) {
	q := &h.saves
	q.mu.Lock()
	wait := saveRetryMin
	for len(q.pending) > 0 {
		batch := q.pending
		q.pending = nil
		q.txs++
		q.mu.Unlock()
		err := h.write(batch)
		q.mu.Lock()
		if err == nil {
			if q.err != nil {
				h.log.Info("database: saving device sessions works again", "failing_since", q.failing)
			}
			q.err, wait = nil, saveRetryMin
			continue
		}
		q.requeue(batch)
		if q.err == nil {
			q.failing = time.Now()
		}
		q.err = err
		if q.closing {
			h.log.Error("database: device session changes not saved", "count", q.count(), "err", err)
			break
		}
		h.log.Error("database: saving device sessions failed; keeping them pending and retrying",
			"count", q.count(), "retry_in", wait, "err", err)
		q.mu.Unlock()
		select {
		case <-time.After(wait):
		case <-q.wake:
		}
		wait = min(2*wait, saveRetryMax)
		q.mu.Lock()
	}
	q.writing = false
	close(done)
	q.mu.Unlock()
}

// Flush waits until every change handed over so far is written, or, while
// the database fails, at most flushWait (10 s); then it gives up and
// returns what is not saved. The hub calls it before its database closes.
func (h *Hub) Flush() error {
	q := &h.saves
	q.mu.Lock()
	if !q.writing {
		q.mu.Unlock()
		return nil
	}
	done, wait := q.done, q.flushWait
	if wait <= 0 {
		wait = 10 * time.Second
	}
	select {
	case q.wake <- struct{}{}: // retry now
	default:
	}
	q.mu.Unlock()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-done:
		return nil
	case <-t.C:
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closing = true
	if q.err == nil {
		return fmt.Errorf("database: %d device session changes not saved after %v", q.count(), wait)
	}
	return fmt.Errorf("database: %d device session changes not saved: %w", q.count(), q.err)
}

// write stores a batch in one transaction.
func (h *Hub) write(batch map[string]*deviceSave) error {
	ctx := context.Background()
	return h.o.Store.Tx(ctx, func(tx *sql.Tx) error {
		for deviceID, d := range batch {
			if d.replace {
				if _, err := tx.ExecContext(ctx, `DELETE FROM device_sessions WHERE device_id = ?`, deviceID); err != nil {
					return err
				}
			}
			for id := range d.gone {
				if _, err := tx.ExecContext(ctx, `DELETE FROM device_sessions WHERE device_id = ? AND session_id = ?`, deviceID, id); err != nil {
					return err
				}
			}
			for _, s := range d.keep {
				b, _ := json.Marshal(s)
				if _, err := tx.ExecContext(ctx, `INSERT INTO device_sessions (device_id, session_id, session) VALUES (?, ?, ?)
				ON CONFLICT(device_id, session_id) DO UPDATE SET session = excluded.session`, deviceID, s.ID, string(b)); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
