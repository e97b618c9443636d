package hub

import (
	"context"
	"database/sql"
	"encoding/json"
	"sync"

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
type saveQueue struct {
	mu      sync.Mutex
	pending map[string]*deviceSave // by device id
	writing bool
	idle    *sync.Cond // signalled when the writer ends
	// txs counts transactions (tests).
	txs int
}

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
		go h.drain()
	}
}

// drain writes pending changes until none are left.
func (h *Hub) drain() {
	q := &h.saves
	q.mu.Lock()
	for len(q.pending) > 0 {
		batch := q.pending
		q.pending = nil
		q.txs++
		q.mu.Unlock()
		if err := h.write(batch); err != nil {
			h.log.Error("persist device sessions", "devices", len(batch), "err", err)
		}
		q.mu.Lock()
	}
	q.writing = false
	if q.idle != nil {
		q.idle.Broadcast()
	}
	q.mu.Unlock()
}

// Flush waits until every change handed over so far is written. The hub
// calls it before its database closes.
func (h *Hub) Flush() {
	q := &h.saves
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.idle == nil {
		q.idle = sync.NewCond(&q.mu)
	}
	for q.writing {
		q.idle.Wait()
	}
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
