package hub

// A hub of several replicas (docs/hub.md, "Several replicas"). The hub's
// core stays one process's: it holds the links that land on it and its
// own buses. This layer adds, when Options.Cluster is set:
//
//   - each device's sessions and its own state (online, offline, its
//     name), as this replica holds them, written to the event log
//     (PostgreSQL, store.EventLog) by a worker, each change with its
//     user's next number; the log refuses a replica whose claim on the
//     device is no longer the newest (a replica that lost the link, or
//     was thought dead), so only the device's current holder writes;
//   - a device whose replica died shown offline by the replica that reaps
//     its lapsed lease, through the log too; a device revoked on any
//     replica removed through the log, its holder told to cut it off;
//   - the notifications raised on this replica (by the notifier, which
//     follows the sessions of the devices held here) logged with their
//     user's next number too, so every replica's bell shows them;
//   - every logged change published on NATS (corral.ev.USER) and applied
//     by every replica, in number order, to the user's cluster bus, what
//     browsers see (a gap is read back from the log); the numbers are the
//     log's, the same on every replica, so a browser resumes its events on
//     any of them;
//   - requests and terminals for a device whose link is on another replica
//     sent to it over NATS (cluster_route.go, cluster_term.go).

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/events"
	"github.com/corral-dev/corral/internal/lifetime"
	"github.com/corral-dev/corral/internal/store"
)

// ClusterOptions make a hub one replica of several.
type ClusterOptions struct {
	// Log orders every user's changes (postgres.Store.EventLog).
	Log store.EventLog
	// Conn is the connection to NATS; the caller closes it after Run.
	Conn *nats.Conn
	// Replica names this process (default: random).
	Replica string
}

// Limits of the cluster layer.
const (
	// pendingMsgs and pendingBytes bound each NATS subscription: a replica
	// that cannot keep up loses messages (NATS drops them), never memory;
	// events are then read back from the log, terminal output resumed.
	pendingMsgs  = 65536
	pendingBytes = 64 << 20
	// maxNews bounds the notifications waiting to be logged; beyond it
	// the newest are dropped, and said so (a database away for long).
	maxNews = 4096
	// maxInFlight bounds the requests from other replicas served at once.
	maxInFlight = 1024
	// catchUpEvery: every cluster bus checks the log this often, for the
	// last events of a burst NATS dropped (nothing after them shows a gap).
	catchUpEvery = 5 * time.Second
	// logBatch bounds the events read back from the log at once.
	logBatch = 1024
	// writers write devices' changes to the log at once (each change is
	// a round trip or two to PostgreSQL; a replica that takes over
	// thousands of links has that many syncs to write).
	writers = 8
	// A replica renews its lease every leaseEvery, for leaseTTL; the
	// others look for lapsed leases every reapEvery and show the links of
	// a replica without one offline (their agents reconnect elsewhere).
	leaseEvery = 2 * time.Second
	leaseTTL   = 10 * time.Second
	reapEvery  = 5 * time.Second
)

const (
	subjEvents = "corral.ev."  // + user: logged changes
	subjDevice = "corral.dev." // + device id: requests for its holder
	subjTerm   = "corral.term."
)

type cluster struct {
	h   *Hub
	o   ClusterOptions
	log store.EventLog
	nc  *nats.Conn

	g lifetime.Group

	mu sync.Mutex
	// links are the devices whose link this replica holds (or held, until
	// their last state is written).
	links map[string]*clusterLink
	// dirty and wake are per writer: a device is always written by the
	// same one (by a hash of its id), so its changes stay in order while
	// writers write different devices at once.
	dirty [writers]map[string]bool
	wake  [writers]chan struct{}
	buses map[string]*clusterBus
	slots chan struct{}
	term  termSeq
	evSub *nats.Subscription
	// news are the notifications raised here, waiting to be logged
	// (newsLoop), in order; newsWake wakes their writer.
	news     []userNews
	newsWake chan struct{}
	// newsDropped counts the notifications beyond maxNews since the last
	// were logged (newsLoop says so, not the caller: it holds a lock).
	newsDropped int
}

// userNews is a notification of a user's, waiting to be logged.
type userNews struct {
	user string
	ev   []byte
}

// clusterLink is this replica's claim on one device's link.
type clusterLink struct {
	user    string
	epoch   int64
	written map[string][]byte // session id -> JSON, as the log has it
	// dev is the device's state (api.Device JSON) as the log has it; nil
	// after a claim: written again, and the log drops it if the same.
	dev  []byte
	live bool // false once the link ended
	sub  *nats.Subscription
}

// clusterBus is one user's events as the log orders them.
type clusterBus struct {
	user  string
	bus   *events.Feed
	ready chan struct{}
	err   error
	mu    sync.Mutex // serialises apply and catch-up
}

func newCluster(ctx context.Context, h *Hub, o ClusterOptions) (*cluster, error) {
	if o.Log == nil || o.Conn == nil {
		return nil, errors.New("cluster: a log and a NATS connection are needed")
	}
	if o.Replica == "" {
		b := make([]byte, 6)
		rand.Read(b)
		o.Replica = "r" + hex.EncodeToString(b)
	}
	c := &cluster{h: h, o: o, log: o.Log, nc: o.Conn, links: map[string]*clusterLink{},
		buses: map[string]*clusterBus{}, slots: make(chan struct{}, maxInFlight), newsWake: make(chan struct{}, 1)}
	for i := range writers {
		c.dirty[i], c.wake[i] = map[string]bool{}, make(chan struct{}, 1)
	}
	// Alive before any claim: a replica without a lease is reaped.
	if err := c.log.Alive(ctx, o.Replica, leaseTTL); err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	sub, err := c.nc.Subscribe(subjEvents+"*", c.onEvents)
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	sub.SetPendingLimits(pendingMsgs, pendingBytes)
	c.evSub = sub
	return c, nil
}

// run writes the devices' changes until ctx ends, then what is left (a
// few seconds at most), and returns once every goroutine of the layer has.
func (c *cluster) run(ctx context.Context) {
	c.g.Go(func() { c.catchUpLoop(ctx) })
	c.g.Go(func() { c.leaseLoop(ctx) })
	c.g.Go(func() {
		c.newsLoop(ctx)
		fctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c.flushNews(fctx)
		cancel()
	})
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			c.writeLoop(ctx, i)
			// The last states (the devices offline) are written before
			// the replica goes: a few seconds, then the next holder's
			// claim wins.
			fctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			c.flush(fctx, i)
			cancel()
		})
	}
	wg.Wait()
	c.evSub.Unsubscribe()
	c.mu.Lock()
	for _, l := range c.links {
		if l.sub != nil {
			l.sub.Unsubscribe()
		}
	}
	c.mu.Unlock()
	c.g.Close()
	c.g.Wait()
}

// attached claims a device's link in the log; the hub calls it when a
// connection of the device is established, before it syncs.
func (c *cluster) attached(ctx context.Context, info DeviceIdentity) error {
	if info.Local {
		return nil
	}
	epoch, written, err := c.log.ClaimLink(ctx, info.ID, c.o.Replica)
	if err != nil {
		return fmt.Errorf("cluster: claiming the link: %w", err)
	}
	l := &clusterLink{user: info.Owner, epoch: epoch, written: written, live: true}
	sub, err := c.nc.Subscribe(subjDevice+info.ID, c.onDeviceRequest(info.ID))
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	sub.SetPendingLimits(pendingMsgs, pendingBytes)
	l.sub = sub
	c.mu.Lock()
	old := c.links[info.ID]
	c.links[info.ID] = l
	c.mu.Unlock()
	if old != nil && old.sub != nil {
		old.sub.Unsubscribe()
	}
	c.markDirty(info.ID)
	return nil
}

// detached: the device's connection ended (its sessions are offline in
// the core); the worker writes that, then lets the link go.
func (c *cluster) detached(deviceID string) {
	c.h.mu.Lock()
	dev := c.h.devices[deviceID]
	live := dev != nil && dev.peer != nil // a newer connection, here
	c.h.mu.Unlock()
	if live {
		return
	}
	c.mu.Lock()
	if l := c.links[deviceID]; l != nil {
		l.live = false
	}
	c.mu.Unlock()
	c.markDirty(deviceID)
}

// markDirty asks the worker to write a device's sessions. It never
// blocks: a device is dirty or not, whatever the number of changes.
func (c *cluster) markDirty(deviceID string) {
	w := writerOf(deviceID)
	c.mu.Lock()
	c.dirty[w][deviceID] = true
	c.mu.Unlock()
	select {
	case c.wake[w] <- struct{}{}:
	default:
	}
}

// writerOf is the writer of a device (FNV-1a of its id).
func writerOf(deviceID string) int {
	h := uint32(2166136261)
	for i := 0; i < len(deviceID); i++ {
		h = (h ^ uint32(deviceID[i])) * 16777619
	}
	return int(h % writers)
}

func (c *cluster) writeLoop(ctx context.Context, w int) {
	c.flushLoop(ctx, c.wake[w], "sessions", func(ctx context.Context) error { return c.flush(ctx, w) })
}

// flushLoop runs flush each time wake is signalled, until ctx ends. A
// flush that fails leaves its work pending (each flush keeps what it could
// not write) and is tried again after a backoff of 100 ms doubling to 5 s.
func (c *cluster) flushLoop(ctx context.Context, wake chan struct{}, what string, flush func(context.Context) error) {
	backoff := 100 * time.Millisecond
	for {
		select {
		case <-ctx.Done():
			return
		case <-wake:
		}
		if err := flush(ctx); err != nil && ctx.Err() == nil {
			c.h.log.Warn("cluster: writing "+what+" to the event log failed; retrying", "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 5*time.Second)
			select {
			case wake <- struct{}{}:
			default:
			}
			continue
		}
		backoff = 100 * time.Millisecond
	}
}

// flush writes every dirty device of writer w; one that fails stays
// dirty.
func (c *cluster) flush(ctx context.Context, w int) error {
	c.mu.Lock()
	ids := make([]string, 0, len(c.dirty[w]))
	for id := range c.dirty[w] {
		ids = append(ids, id)
	}
	clear(c.dirty[w])
	c.mu.Unlock()
	var first error
	for _, id := range ids {
		if err := c.write(ctx, id); err != nil {
			if first == nil {
				first = err
			}
			c.mu.Lock()
			c.dirty[w][id] = true
			c.mu.Unlock()
		}
	}
	return first
}

// write brings the log's copy of a device's sessions to the core's.
func (c *cluster) write(ctx context.Context, deviceID string) error {
	c.mu.Lock()
	l := c.links[deviceID]
	live := l != nil && l.live
	c.mu.Unlock()
	if l == nil {
		return nil
	}
	// The core's sessions of the device, as browsers should see them.
	now := map[string][]byte{}
	var nowS = map[string]api.Session{}
	var nowD *api.Device // nil: gone (revoked)
	c.h.mu.Lock()
	if dev := c.h.devices[deviceID]; dev != nil {
		d := dev.apiDevice()
		nowD = &d
		// The one copy of a session's state is on its owner's feed; the
		// device's ids are the owner index (foldLocked).
		if bus := c.h.users[dev.info.Owner]; bus != nil {
			for id := range dev.ids {
				if s, ok := bus.Session(id); ok {
					nowS[id] = s
				}
			}
		}
	}
	c.h.mu.Unlock()
	for id, s := range nowS {
		now[id], _ = json.Marshal(s)
	}
	var changes []store.Change
	var devB []byte
	if nowD != nil {
		devB, _ = json.Marshal(nowD)
	}
	if l.dev == nil || string(l.dev) != string(devB) {
		ch := store.Change{Device: true, Session: devB}
		if nowD != nil {
			ch.Event, _ = json.Marshal(api.Event{Type: api.EventDevice, Device: nowD})
		} else {
			ch.Event, _ = json.Marshal(api.Event{Type: api.EventDeviceRemoved, ID: deviceID})
		}
		changes = append(changes, ch)
	}
	for id, b := range now {
		old, ok := l.written[id]
		if ok && string(old) == string(b) {
			continue
		}
		var prev api.Status
		if ok {
			var o api.Session
			if json.Unmarshal(old, &o) == nil {
				prev = o.Status
			}
		}
		s := nowS[id]
		ev, _ := json.Marshal(api.Event{Type: api.EventSession, Session: &s, Prev: prev})
		changes = append(changes, store.Change{SessionID: id, Session: b, Event: ev})
	}
	for id := range l.written {
		if _, ok := now[id]; !ok {
			ev, _ := json.Marshal(api.Event{Type: api.EventRemoved, ID: id})
			changes = append(changes, store.Change{SessionID: id, Event: ev})
		}
	}
	if len(changes) > 0 {
		logged, err := c.log.Append(ctx, l.user, deviceID, l.epoch, changes)
		if errors.Is(err, store.ErrConflict) && live {
			// Reaped while still here (this replica's lease lapsed: a slow
			// database): claim it back, unless another replica has it.
			epoch, written, ok, rerr := c.log.Reclaim(ctx, deviceID, c.o.Replica)
			if rerr != nil {
				return rerr
			}
			if ok {
				c.mu.Lock()
				l.epoch, l.written, l.dev = epoch, written, nil
				c.mu.Unlock()
				return c.write(ctx, deviceID)
			}
		}
		if errors.Is(err, store.ErrConflict) {
			// Another replica holds the device now: its writes win.
			c.drop(deviceID, l)
			return nil
		}
		if err != nil {
			return err
		}
		for _, ch := range changes {
			if ch.Device {
				l.dev = ch.Session
				continue
			}
			if ch.Session == nil {
				delete(l.written, ch.SessionID)
			} else {
				l.written[ch.SessionID] = ch.Session
			}
		}
		if len(logged) > 0 {
			c.publish(l.user, logged)
		}
	}
	if !live {
		c.mu.Lock()
		stillOff := c.links[deviceID] == l && !l.live
		c.mu.Unlock()
		if stillOff {
			if err := c.log.ReleaseLink(ctx, deviceID, l.epoch); err != nil {
				return err
			}
			c.drop(deviceID, l)
		}
	}
	return nil
}

func (c *cluster) drop(deviceID string, l *clusterLink) {
	c.mu.Lock()
	if c.links[deviceID] == l {
		delete(c.links, deviceID)
	}
	c.mu.Unlock()
	if l.sub != nil {
		l.sub.Unsubscribe()
	}
}

// evMsg is what corral.ev.USER carries: logged events, in order.
type evMsg struct {
	User   string              `json:"user"`
	Events []store.LoggedEvent `json:"events"`
}

func (c *cluster) publish(user string, evs []store.LoggedEvent) {
	b, _ := json.Marshal(evMsg{User: user, Events: evs})
	// A publish that fails (NATS away) loses nothing: the others read the
	// events back from the log at their next gap or catch-up.
	if err := c.nc.Publish(subjEvents+subjectToken(user), b); err != nil {
		c.h.log.Debug("cluster: publishing events", "err", err)
	}
}

// subjectToken makes a user name one NATS subject token (names may hold
// anything a subject reserves).
func subjectToken(s string) string { return hex.EncodeToString([]byte(s)) }

// onEvents applies events another replica (or this one) logged.
func (c *cluster) onEvents(m *nats.Msg) {
	var em evMsg
	if json.Unmarshal(m.Data, &em) != nil || len(em.Events) == 0 {
		return
	}
	c.mu.Lock()
	cb := c.buses[em.User]
	c.mu.Unlock()
	if cb == nil {
		return // nobody here watches this user
	}
	select {
	case <-cb.ready:
	default:
		return // the snapshot being read will include these, or catch up
	}
	if cb.err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cb.apply(ctx, c, em.Events)
}

// apply takes events in order; on a gap it reads the missing ones from the
// log first.
func (cb *clusterBus) apply(ctx context.Context, c *cluster, evs []store.LoggedEvent) {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	for _, le := range evs {
		cur := cb.bus.Seq()
		if le.Seq <= cur {
			continue
		}
		if le.Seq != cur+1 {
			cb.catchUpLocked(ctx, c)
			if le.Seq <= cb.bus.Seq() {
				continue
			}
			if le.Seq != cb.bus.Seq()+1 {
				return // the log had none of it yet: the next catch-up
			}
		}
		cb.applyOneLocked(le)
	}
}

func (cb *clusterBus) applyOneLocked(le store.LoggedEvent) {
	var ev api.Event
	if json.Unmarshal(le.Event, &ev) != nil {
		return
	}
	switch ev.Type {
	case api.EventSession:
		if ev.Session != nil {
			cb.bus.Update(*ev.Session, ev.Prev, false)
		}
	case api.EventRemoved:
		cb.bus.Remove(ev.ID)
	case api.EventDevice:
		if ev.Device != nil {
			cb.bus.PutDevice(*ev.Device)
		}
	case api.EventDeviceRemoved:
		cb.bus.RemoveDevice(ev.ID)
	case api.EventNotification:
		if ev.Notification != nil {
			cb.bus.Notify(*ev.Notification)
		}
	}
}

// catchUpLocked reads from the log what the bus lacks. When the log no
// longer has it (the bus was far behind), the bus is made again from a
// snapshot: its readers resubscribe and get one.
func (cb *clusterBus) catchUpLocked(ctx context.Context, c *cluster) {
	for {
		evs, ok, err := c.log.Since(ctx, cb.user, cb.bus.Seq(), logBatch)
		if err != nil {
			return
		}
		if !ok {
			if len(evs) == 0 {
				return // nothing after: up to date
			}
			c.h.log.Warn("cluster: a user's events fell behind the log; a snapshot follows", "user", cb.user)
			c.reload(ctx, cb)
			return
		}
		for _, le := range evs {
			cb.applyOneLocked(le)
		}
		if len(evs) < logBatch {
			return
		}
	}
}

// reload replaces a user's bus with one made from a snapshot; readers of
// the old one end (ErrFellBehind) and resubscribe to the new one.
func (c *cluster) reload(ctx context.Context, cb *clusterBus) {
	seq, list, devs, err := c.log.Snapshot(ctx, cb.user)
	if err != nil {
		return
	}
	cb.bus.Close()
	cb.bus = newClusterEventsBus(seq, list, devs)
	c.loadUnlogged(cb.bus, cb.user)
}

func (c *cluster) catchUpLoop(ctx context.Context) {
	t := time.NewTicker(catchUpEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		c.mu.Lock()
		list := make([]*clusterBus, 0, len(c.buses))
		for _, cb := range c.buses {
			list = append(list, cb)
		}
		c.mu.Unlock()
		for _, cb := range list {
			select {
			case <-cb.ready:
			default:
				continue
			}
			if cb.err != nil {
				continue
			}
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			cb.mu.Lock()
			cb.catchUpLocked(cctx, c)
			cb.mu.Unlock()
			cancel()
		}
	}
}

func newClusterEventsBus(seq uint64, list, devs [][]byte) *events.Feed {
	b := events.New(events.Options{FirstSeq: seq})
	b.Load(decodeRows[api.Session](list))
	b.LoadDevices(decodeRows[api.Device](devs))
	return b
}

// decodeRows decodes a snapshot's rows, leaving out any that do not
// decode: one bad row must not keep a user's page from loading.
func decodeRows[T any](rows [][]byte) []T {
	var out []T
	for _, raw := range rows {
		var v T
		if json.Unmarshal(raw, &v) == nil {
			out = append(out, v)
		}
	}
	return out
}

// userBus is a user's cluster bus, made from the log's snapshot at first
// use (the subscription to corral.ev.* is already there, so nothing
// falls between the snapshot and the first event applied after it).
func (c *cluster) userBus(ctx context.Context, user string) (*events.Feed, error) {
	c.mu.Lock()
	cb := c.buses[user]
	mine := cb == nil
	if mine {
		cb = &clusterBus{user: user, ready: make(chan struct{})}
		c.buses[user] = cb
	}
	c.mu.Unlock()
	if mine {
		seq, list, devs, err := c.log.Snapshot(ctx, user)
		if err != nil {
			c.mu.Lock()
			delete(c.buses, user)
			c.mu.Unlock()
			cb.err = err
			close(cb.ready)
			return nil, fmt.Errorf("cluster: reading %s's sessions: %w", user, err)
		}
		cb.bus = newClusterEventsBus(seq, list, devs)
		c.loadUnlogged(cb.bus, user)
		close(cb.ready)
		// What was published while the snapshot was read.
		cb.mu.Lock()
		cb.catchUpLocked(ctx, c)
		cb.mu.Unlock()
	}
	select {
	case <-cb.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if cb.err != nil {
		return nil, cb.err
	}
	cb.mu.Lock()
	defer cb.mu.Unlock()
	return cb.bus, nil
}

// clDirty is the core's hook: a device's sessions changed. It never
// blocks (the caller may hold h.mu).
func (h *Hub) clDirty(deviceID string) {
	if h.cl != nil {
		h.cl.markDirty(deviceID)
	}
}

// viewBus is the bus a user's browsers read: the hub's own, or on a
// replica the cluster's, which holds every replica's devices.
func (h *Hub) viewBus(ctx context.Context, u string) (*events.Feed, error) {
	if h.cl == nil {
		return h.Bus(u), nil
	}
	return h.cl.userBus(ctx, u)
}

// runCluster starts the cluster layer's writer; the function it returns
// stops it (after the links have ended) and waits for it.
func (h *Hub) runCluster() func() {
	if h.cl == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.cl.run(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}

// leaseLoop keeps this replica's lease, and takes over the links of
// replicas whose lease lapsed: their sessions are written offline (the
// state shown is the truth) until the agents reconnect somewhere.
func (c *cluster) leaseLoop(ctx context.Context) {
	renew := time.NewTicker(leaseEvery)
	defer renew.Stop()
	reap := time.NewTicker(reapEvery)
	defer reap.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-renew.C:
			cctx, cancel := context.WithTimeout(ctx, leaseEvery)
			if err := c.log.Alive(cctx, c.o.Replica, leaseTTL); err != nil && ctx.Err() == nil {
				c.h.log.Warn("cluster: renewing this replica's lease failed", "err", err)
			}
			cancel()
		case <-reap.C:
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			c.reap(cctx)
			cancel()
		}
	}
}

func (c *cluster) reap(ctx context.Context) {
	taken, err := c.log.Reap(ctx, c.o.Replica)
	if err != nil {
		c.h.log.Debug("cluster: looking for dead replicas", "err", err)
		return
	}
	for _, r := range taken {
		c.h.log.Warn("cluster: a replica holding a device's link is gone; its sessions are offline until it reconnects", "device", r.DeviceID)
		var changes []store.Change
		var d api.Device
		if r.Device != nil && json.Unmarshal(r.Device, &d) == nil && d.Online {
			// Seen last about when its replica's lease lapsed.
			d.Online, d.LastSeen = false, time.Now()
			b, _ := json.Marshal(d)
			ev, _ := json.Marshal(api.Event{Type: api.EventDevice, Device: &d})
			changes = append(changes, store.Change{Device: true, Session: b, Event: ev})
		}
		for id, raw := range r.Sessions {
			var s api.Session
			if json.Unmarshal(raw, &s) != nil || s.Offline {
				continue
			}
			prev := s.Status
			s.Offline = true
			b, _ := json.Marshal(s)
			ev, _ := json.Marshal(api.Event{Type: api.EventSession, Session: &s, Prev: prev})
			changes = append(changes, store.Change{SessionID: id, Session: b, Event: ev})
		}
		if len(changes) == 0 {
			continue
		}
		logged, err := c.log.Append(ctx, r.User, r.DeviceID, r.Epoch, changes)
		if err != nil {
			continue // it reconnected meanwhile: its holder writes
		}
		c.publish(r.User, logged)
	}
}

// notified is the core's feeds' OnNotify: a notification raised here, to
// log for every replica. It never blocks (the feed's lock is held).
func (c *cluster) notified(user string, n api.Notification) {
	ev, _ := json.Marshal(api.Event{Type: api.EventNotification, Notification: &n})
	c.mu.Lock()
	if len(c.news) >= maxNews {
		c.newsDropped++
	} else {
		c.news = append(c.news, userNews{user, ev})
	}
	c.mu.Unlock()
	select {
	case c.newsWake <- struct{}{}:
	default:
	}
}

// newsLoop logs the notifications raised here until ctx ends; one that
// fails stays first in line and is tried again.
func (c *cluster) newsLoop(ctx context.Context) {
	c.flushLoop(ctx, c.newsWake, "notifications", c.flushNews)
}

// flushNews logs what waits, a user's in one transaction, in order.
func (c *cluster) flushNews(ctx context.Context) error {
	for {
		c.mu.Lock()
		if n := c.newsDropped; n > 0 {
			c.newsDropped = 0
			c.mu.Unlock()
			c.h.log.Warn("cluster: too many notifications waited for the event log; some were sent but are not shown in the pages", "count", n)
			c.mu.Lock()
		}
		if len(c.news) == 0 {
			c.mu.Unlock()
			return nil
		}
		user := c.news[0].user
		var evs [][]byte
		for _, n := range c.news {
			if n.user == user && len(evs) < logBatch {
				evs = append(evs, n.ev)
			}
		}
		c.mu.Unlock()
		logged, err := c.log.Publish(ctx, user, evs)
		if err != nil {
			return err
		}
		c.mu.Lock()
		// Drop what was logged: the first len(evs) of user's, in order
		// (only this loop takes from the list).
		k, rest := len(evs), c.news[:0:0]
		for _, n := range c.news {
			if n.user == user && k > 0 {
				k--
				continue
			}
			rest = append(rest, n)
		}
		c.news = rest
		c.mu.Unlock()
		c.publish(user, logged)
	}
}

// retire removes a revoked device from the log, whichever replica holds
// it, and tells its holder, if another, to cut it off now (it would by
// itself, at its next look in the database: Hub.CutRevoked).
func (c *cluster) retire(user, deviceID string) {
	ctx, cancel := context.WithTimeout(c.h.stop, 10*time.Second)
	defer cancel()
	logged, err := c.log.Retire(ctx, user, deviceID, func(id string) []byte {
		var ev []byte
		if id == "" {
			ev, _ = json.Marshal(api.Event{Type: api.EventDeviceRemoved, ID: deviceID})
		} else {
			ev, _ = json.Marshal(api.Event{Type: api.EventRemoved, ID: id})
		}
		return ev
	})
	if err != nil {
		c.h.log.Warn("cluster: removing a revoked device from the event log failed; the other replicas show it until its holder cuts it off", "device", deviceID, "err", err)
	} else if len(logged) > 0 {
		c.publish(user, logged)
	}
	b, _ := json.Marshal(devReq{Kind: "kick", User: user})
	c.nc.Publish(subjDevice+deviceID, b)
}

// loadUnlogged lists on a user's cluster bus the devices the log has never
// had (enrolled, not connected since the hub ran as replicas), offline, as
// the database has them: as a single hub lists them.
func (c *cluster) loadUnlogged(bus *events.Feed, user string) {
	have := map[string]bool{}
	for _, d := range bus.Devices() {
		have[d.ID] = true
	}
	var add []api.Device
	for _, d := range c.h.DevicesOf(user) {
		if !have[d.ID] {
			d.Online = false
			add = append(add, d)
		}
	}
	bus.LoadDevices(add)
}
