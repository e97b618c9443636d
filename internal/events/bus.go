// Package events is the daemon's event feed (Feed): the latest state of
// every session (and on a hub every device), a global sequence number, a
// ring of recent events for readers that reconnect, and subscriptions that
// start with a consistent snapshot.
//
// A subscriber that cannot keep up is not allowed to slow the publisher or
// to grow memory: its channel is closed with ErrFellBehind, and it
// resubscribes from its last sequence number (replay from the ring if the
// ring still has it, else a fresh snapshot).
package events

import (
	"encoding/json"
	"errors"
	"sort"
	"sync"
	"time"

	"github.com/corral-dev/corral/internal/api"
)

// ErrFellBehind is the reason a subscription ends when its reader was too slow.
var ErrFellBehind = errors.New("event reader fell behind")

// Options tune a Feed.
type Options struct {
	// Ring is how many recent events are kept for catch-up (default 4096).
	Ring int
	// Buffer is each subscriber's channel size, in events (default 1024;
	// a pointer each, the event shared by every subscriber).
	Buffer int
	// FirstSeq is the sequence number before the first event. Starting from
	// the clock makes numbers from an earlier run of the daemon fall before
	// the ring, so a reader that reconnects across a restart gets a snapshot
	// rather than a wrong replay.
	FirstSeq uint64
	// Now is the clock (tests).
	Now func() time.Time
	// OnNotify is told every notification published (Notify), with the
	// feed's lock held: it must not block nor call the feed. A hub of
	// several replicas hands them to its event log (internal/hub).
	OnNotify func(user string, n api.Notification)
	// User names the feed's user for OnNotify.
	User string
}

// Feed holds the latest state (sessions, devices) and fans its changes
// out to subscribers, each in the order of its sequence numbers.
type Feed struct {
	opts Options

	mu       sync.Mutex
	seq      uint64
	ring     []api.Event // circular, len <= opts.Ring
	ringHead int         // index of the oldest event once full
	sessions map[string]api.Session
	devices  map[string]api.Device // by id (a hub's)
	subs     map[*Sub]struct{}
	// snap is the last snapshot made, shared by every subscriber that
	// starts at the same sequence number: with thousands of sessions it is
	// megabytes of JSON, made once rather than once per subscriber.
	snap   api.Event
	snapOK bool
	// fellBehind counts the subscribers dropped for being slow (Stats).
	fellBehind uint64
}

// New makes a feed.
func New(opts Options) *Feed {
	if opts.Ring <= 0 {
		opts.Ring = 4096
	}
	if opts.Buffer <= 0 {
		opts.Buffer = 1024
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.FirstSeq == 0 {
		opts.FirstSeq = uint64(opts.Now().UnixMicro())
	}
	return &Feed{opts: opts, seq: opts.FirstSeq, sessions: map[string]api.Session{}, devices: map[string]api.Device{}, subs: map[*Sub]struct{}{}}
}

// Seq is the sequence number of the last published event.
func (b *Feed) Seq() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.seq
}

// Sessions returns the latest state of every session, ordered by creation.
func (b *Feed) Sessions() []api.Session {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sessionsLocked()
}

// Session returns one session's latest state.
func (b *Feed) Session(id string) (api.Session, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s, ok := b.sessions[id]
	return s, ok
}

func (b *Feed) sessionsLocked() []api.Session {
	out := make([]api.Session, 0, len(b.sessions))
	for _, s := range b.sessions {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// Update records a session's new state and publishes it. prev is the status
// before the change; notify marks a change that should alert a person.
func (b *Feed) Update(s api.Session, prev api.Status, notify bool) api.Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sessions[s.ID] = s
	cp := s
	return b.publishLocked(api.Event{Type: api.EventSession, Session: &cp, Prev: prev, Notify: notify})
}

// Remove forgets a session and publishes its removal.
func (b *Feed) Remove(id string) (api.Event, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.sessions[id]; !ok {
		return api.Event{}, false
	}
	delete(b.sessions, id)
	return b.publishLocked(api.Event{Type: api.EventRemoved, ID: id}), true
}

// Devices returns the latest state of every device, by name.
func (b *Feed) Devices() []api.Device {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.devicesLocked()
}

func (b *Feed) devicesLocked() []api.Device {
	if len(b.devices) == 0 {
		return nil
	}
	out := make([]api.Device, 0, len(b.devices))
	for _, d := range b.devices {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// UpdateDevice records a device's new state and publishes it, unless it
// did not change.
func (b *Feed) UpdateDevice(d api.Device) (api.Event, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if old, ok := b.devices[d.ID]; ok && sameDevice(old, d) {
		return api.Event{}, false
	}
	b.devices[d.ID] = d
	cp := d
	return b.publishLocked(api.Event{Type: api.EventDevice, Device: &cp}), true
}

// PutDevice records a device's state and publishes it, changed or not: a
// feed that applies another's numbered events (a replica applying the
// event log) publishes exactly one event for each.
func (b *Feed) PutDevice(d api.Device) api.Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.devices[d.ID] = d
	cp := d
	return b.publishLocked(api.Event{Type: api.EventDevice, Device: &cp})
}

// LoadDevices sets the initial devices without publishing anything (Load).
func (b *Feed) LoadDevices(list []api.Device) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, d := range list {
		b.devices[d.ID] = d
	}
	b.snapOK = false
}

// sameDevice says whether publishing b after a would tell nothing new.
func sameDevice(a, b api.Device) bool {
	ca, cb := a.Conflict, b.Conflict
	if (ca == nil) != (cb == nil) || ca != nil && (!ca.At.Equal(cb.At) || ca.Count != cb.Count || ca.Address != cb.Address || ca.Hostname != cb.Hostname) {
		return false
	}
	if !a.LastSeen.Equal(b.LastSeen) {
		return false
	}
	a.Conflict, b.Conflict, a.LastSeen, b.LastSeen = nil, nil, time.Time{}, time.Time{}
	return a == b
}

// RemoveDevice forgets a device and publishes its removal.
func (b *Feed) RemoveDevice(id string) (api.Event, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.devices[id]; !ok {
		return api.Event{}, false
	}
	delete(b.devices, id)
	return b.publishLocked(api.Event{Type: api.EventDeviceRemoved, ID: id}), true
}

// Notify publishes a notification. It is news, not state: a snapshot does
// not carry it (the notification log does).
func (b *Feed) Notify(n api.Notification) api.Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.opts.OnNotify != nil {
		b.opts.OnNotify(b.opts.User, n)
	}
	return b.publishLocked(api.Event{Type: api.EventNotification, Notification: &n})
}

// Load sets the initial sessions without publishing anything: the state a
// daemon restores at start is not news.
func (b *Feed) Load(list []api.Session) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, s := range list {
		b.sessions[s.ID] = s
	}
	b.snapOK = false // same seq, other sessions
}

func (b *Feed) publishLocked(ev api.Event) api.Event {
	b.seq++
	ev.Seq = b.seq
	ev.Time = b.opts.Now()
	if len(b.subs) > 0 {
		// Once here instead of once per reader; replays reuse it too.
		ev.JSON, _ = json.Marshal(ev)
	}
	if len(b.ring) < b.opts.Ring {
		b.ring = append(b.ring, ev)
	} else {
		b.ring[b.ringHead] = ev
		b.ringHead = (b.ringHead + 1) % len(b.ring)
	}
	// One copy for every reader: the channels hold pointers, so that a
	// subscriber's buffer of Options.Buffer events is 8 bytes an event,
	// not the event (a hub has two subscribers per user and browser).
	shared := &ev
	for s := range b.subs {
		select {
		case s.ch <- shared:
		default:
			// Never block the publisher on a slow reader.
			s.err = ErrFellBehind
			b.fellBehind++
			delete(b.subs, s)
			close(s.ch)
		}
	}
	return ev
}

// ringSinceLocked returns the events after seq if the ring still holds all
// of them.
func (b *Feed) ringSinceLocked(seq uint64) ([]api.Event, bool) {
	if seq > b.seq {
		return nil, false // from another run of the daemon
	}
	if seq == b.seq {
		return nil, true
	}
	if len(b.ring) == 0 {
		return nil, false
	}
	oldest := b.ring[b.ringHead].Seq
	if seq+1 < oldest {
		return nil, false
	}
	out := make([]api.Event, 0, b.seq-seq)
	for i := 0; i < len(b.ring); i++ {
		ev := b.ring[(b.ringHead+i)%len(b.ring)]
		if ev.Seq > seq {
			out = append(out, ev)
		}
	}
	return out, true
}

// Sub is one subscription.
type Sub struct {
	bus *Feed
	ch  chan *api.Event
	err error // set under bus.mu before ch is closed
}

// C delivers events. It is closed when the subscription ends; Err says why.
// Every subscriber gets the same *api.Event: treat it as read-only.
func (s *Sub) C() <-chan *api.Event { return s.ch }

// Err is ErrFellBehind after the bus dropped a slow reader, nil after Close.
func (s *Sub) Err() error {
	s.bus.mu.Lock()
	defer s.bus.mu.Unlock()
	return s.err
}

// Close ends the subscription.
func (s *Sub) Close() {
	s.bus.mu.Lock()
	defer s.bus.mu.Unlock()
	if _, ok := s.bus.subs[s]; ok {
		delete(s.bus.subs, s)
		close(s.ch)
	}
}

// Subscribe starts a subscription. With since == 0, or when the events after
// since are no longer in the ring, the first event is a snapshot of every
// session (its Seq is the current sequence number); otherwise the missed
// events are replayed first. Registration and the snapshot happen under one
// lock, so no change can fall between them.
func (b *Feed) Subscribe(since uint64) *Sub {
	b.mu.Lock()
	defer b.mu.Unlock()
	var first []api.Event
	replay, ok := b.ringSinceLocked(since)
	if since != 0 && ok {
		first = replay
	} else {
		first = []api.Event{b.snapshotLocked()}
	}
	s := &Sub{bus: b, ch: make(chan *api.Event, max(b.opts.Buffer, len(first)+16))}
	for i := range first {
		s.ch <- &first[i]
	}
	b.subs[s] = struct{}{}
	return s
}

// snapshotLocked returns a snapshot of every session, encoded. It is made
// again only after the sessions changed.
func (b *Feed) snapshotLocked() api.Event {
	if !b.snapOK || b.snap.Seq != b.seq {
		ev := api.Event{Seq: b.seq, Type: api.EventSnapshot, Time: b.opts.Now(), Sessions: b.sessionsLocked(), Devices: b.devicesLocked()}
		ev.JSON, _ = json.Marshal(ev)
		b.snap, b.snapOK = ev, true
	}
	return b.snap
}

// Subscribers counts live subscriptions (metrics, tests).
func (b *Feed) Subscribers() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.subs)
}

// Stats is a bus's state for metrics.
type Stats struct {
	Subscribers int
	// MaxLag is the most events queued for one subscriber, not yet read.
	MaxLag int
	// FellBehind counts the subscribers ever dropped for being slow.
	FellBehind uint64
}

// Stats says how the bus's subscribers keep up.
func (b *Feed) Stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	st := Stats{Subscribers: len(b.subs), FellBehind: b.fellBehind}
	for s := range b.subs {
		st.MaxLag = max(st.MaxLag, len(s.ch))
	}
	return st
}

// Recent returns up to n of the newest events, oldest first.
func (b *Feed) Recent(n int) []api.Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := min(n, len(b.ring))
	out := make([]api.Event, 0, k)
	for i := len(b.ring) - k; i < len(b.ring); i++ {
		out = append(out, b.ring[(b.ringHead+i)%len(b.ring)])
	}
	return out
}
