// Package hub is everything about people: it holds the devices (machines
// running an agent) that connect over the device link, the state of their
// sessions, and each user's view of them. It routes every request to the
// device that owns the session, after checking that the asking user owns
// the device, and relays terminal streams between browsers and agents.
// `corral serve` is a hub with one device joined by an in-memory link.
package hub

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/backend"
	"github.com/corral-dev/corral/internal/devicekey"
	"github.com/corral-dev/corral/internal/events"
	"github.com/corral-dev/corral/internal/lifetime"
	"github.com/corral-dev/corral/internal/link"
	"github.com/corral-dev/corral/internal/metrics"
	"github.com/corral-dev/corral/internal/notify"
	"github.com/corral-dev/corral/internal/store"
	"github.com/corral-dev/corral/internal/version"
)

// Heartbeat is how often both ends of a link say they are alive.
const Heartbeat = 15 * time.Second

// DeviceIdentity is who a connected device is, to the hub.
type DeviceIdentity struct {
	ID    string
	Name  string
	Owner string
	// Local: the hub's own in-process device (corral serve); its sessions
	// carry no device name.
	Local bool
}

// Options configure a Hub.
type Options struct {
	Logger *slog.Logger
	// Store keeps the devices' last known sessions (optional).
	Store store.Store
	// Accounts authenticate device links (nil: no remote devices).
	Accounts *Accounts
	// OnUser is called once for every user whose bus comes to life, so the
	// caller can attach notifications to it. It is called with the hub's
	// lock held: it must not block nor call the hub (notify.FollowUser starts a
	// goroutine of the notifier's and returns).
	OnUser func(user string, bus *events.Feed)
	// Notifier keeps the users' push subscriptions and webhooks and their
	// notification log, which the user ops serve (user.go); nil:
	// notifications are off.
	Notifier *notify.Notifier
	// Heartbeat overrides the link heartbeat (tests).
	Heartbeat time.Duration
	// RecheckDevices is how often Run looks in the database for devices
	// revoked or enrolled again behind the hub's back (default a minute):
	// a safety net, since the management commands tell a running hub at
	// once (Revoke, AdminHandler).
	RecheckDevices time.Duration
	// MaxSessions bounds the sessions one device may have listed, and
	// EventRate the events a second it may send (limits.go; zero: the
	// defaults).
	MaxSessions int
	EventRate   float64
	// Metrics counts device links and their round trips (nil: none).
	Metrics *metrics.Metrics
	// Cluster makes the hub one replica of several (cluster.go).
	Cluster *ClusterOptions
}

// hubIDKey is where the hub keeps its id, which devices sign with each
// challenge (docs/protocol.md).
const hubIDKey = "hub_id"

// Hub routes between users and devices.
type Hub struct {
	o   Options
	log *slog.Logger
	id  string

	mu      sync.Mutex
	users   map[string]*events.Feed // by owner
	devices map[string]*device      // by device id
	owner   map[string]string       // session id -> device id
	// synced holds channels closed at a device's next sync.
	synced map[string][]chan struct{}
	// kicked are the devices revoked while the hub runs: a connection of
	// one still in its handshake when it was revoked is refused at the end
	// of it (device ids are random, never reused).
	kicked map[string]bool

	saves saveQueue
	// mux is the table of the operations the hub answers (backend.go).
	mux *backend.Mux
	// cl is the layer of a hub of several replicas (nil: one process).
	cl *cluster

	// g owns the devices' connections (Attach, LinkHandler) and Run's
	// loops; stop ends them when Run's context ends.
	g      lifetime.Group
	stop   context.Context
	stopFn context.CancelFunc
}

// device is one device's state.
type device struct {
	info DeviceIdentity
	peer *link.Peer // nil while offline
	// key is the key peer proved (remote devices); connecting says a
	// connection passed its checks and is becoming peer (claim).
	key        string
	connecting bool
	// conflict is the latest connection refused because peer was live.
	conflict *api.DeviceConflict
	hello    link.Msg
	lastSeen time.Time
	// ids are the device's sessions: its half of the owner index
	// (Hub.owner is the other). Their state is on the owner's bus, the one
	// copy of it.
	ids map[string]bool
	// folded is the agent's sequence number of the last sync or event of
	// peer applied to the owner's bus; foldWake is closed and replaced
	// when it grows. A request's answer waits for it (waitFolded).
	folded   uint64
	foldWake chan struct{}

	streams    map[uint32]*stream
	nextStream uint32

	// limit bounds the current connection's events; capWarned: it was told
	// about MaxSessions (limits.go).
	limit     *limiter
	capWarned bool
}

// New makes a hub and loads the devices' last known sessions.
func New(ctx context.Context, o Options) (*Hub, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = Heartbeat
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.EventRate <= 0 {
		o.EventRate = DefaultEventRate
	}
	if o.RecheckDevices <= 0 {
		o.RecheckDevices = time.Minute
	}
	h := &Hub{o: o, log: o.Logger, users: map[string]*events.Feed{}, devices: map[string]*device{}, owner: map[string]string{}, synced: map[string][]chan struct{}{},
		kicked: map[string]bool{}}
	h.stop, h.stopFn = context.WithCancel(context.Background())
	id, err := loadHubID(ctx, o.Store)
	if err != nil {
		return nil, err
	}
	h.id = id
	h.mux = h.newMux()
	if o.Cluster != nil {
		if h.cl, err = newCluster(ctx, h, *o.Cluster); err != nil {
			return nil, err
		}
	}
	if err := h.load(ctx); err != nil {
		return nil, err
	}
	return h, nil
}

// bus returns a user's event bus, making it on first use. The caller holds
// h.mu.
func (h *Hub) busLocked(user string) *events.Feed {
	b, ok := h.users[user]
	if !ok {
		var o events.Options
		if h.cl != nil {
			// Its notifications are logged for every replica's pages.
			o.User, o.OnNotify = user, h.cl.notified
		}
		b = events.New(o)
		h.users[user] = b
		if h.o.OnUser != nil {
			h.o.OnUser(user, b)
		}
	}
	return b
}

// Bus returns a user's event bus.
func (h *Hub) Bus(user string) *events.Feed {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.busLocked(user)
}

// load restores the last known sessions of the remote devices, offline
// until they connect again.
func (h *Hub) load(ctx context.Context) error {
	if h.o.Store == nil || h.o.Accounts == nil {
		return nil
	}
	devs, err := h.o.Accounts.Devices(ctx, "")
	if err != nil {
		return err
	}
	rows, err := h.o.Store.LoadDeviceSessions(ctx)
	if err != nil {
		return err
	}
	byID := map[string][]api.Session{}
	for _, r := range rows {
		var s api.Session
		if json.Unmarshal(r.Data, &s) == nil {
			s.Offline = true
			byID[r.DeviceID] = append(byID[r.DeviceID], s)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, d := range devs {
		dev := &device{info: DeviceIdentity{ID: d.ID, Name: d.Name, Owner: d.Owner}, lastSeen: d.LastSeen, ids: map[string]bool{}, streams: map[uint32]*stream{}}
		h.devices[d.ID] = dev
		h.deviceChangedLocked(dev)
		var list []api.Session
		for _, s := range byID[d.ID] {
			s, err := cleanSession(s)
			if err != nil || len(dev.ids) >= h.o.MaxSessions || !h.claimLocked(d.ID, s.ID) {
				continue
			}
			dev.ids[s.ID] = true
			list = append(list, s)
		}
		h.busLocked(d.Owner).Load(list)
	}
	return nil
}

// ServeLocal serves one connection of a device on the hub's own process (the
// in-memory link of corral serve) until it ends. Remote devices come in
// through LinkHandler, which proves their key first.
func (h *Hub) ServeLocal(ctx context.Context, info DeviceIdentity, c link.Conn) error {
	return h.attach(ctx, info, c, nil)
}

// attach serves one device connection until it ends: the handshake (the
// challenge, and for a remote device its proof, docs/protocol.md), then
// the link. A device has one connection at a time: a second one is
// refused while the first answers (claim).
func (h *Hub) attach(ctx context.Context, info DeviceIdentity, c link.Conn, auth *linkAuth) error {
	// The connection is the hub's until it ends: Run closes it and waits.
	leave, ok := h.g.Join()
	defer leave()
	if !ok {
		c.Close(link.StatusGoingAway, "the hub is shutting down")
		return errStopped
	}
	ctx, cancelAttach := context.WithCancel(ctx)
	defer cancelAttach()
	defer context.AfterFunc(h.stop, cancelAttach)()
	nonce := devicekey.NewNonce()
	claimed, enrolled := false, false
	hello, err := link.ServerHello(ctx, c, link.Msg{Nonce: base64.RawURLEncoding.EncodeToString(nonce), HubID: h.id},
		func(hello link.Msg) (link.Msg, error) {
			if auth != nil {
				var err error
				if enrolled, err = h.prove(ctx, info, auth, nonce, hello); err != nil {
					return link.Msg{}, err
				}
			}
			if err := h.claim(ctx, info, auth, hello); err != nil {
				return link.Msg{}, err
			}
			claimed = true
			return link.Msg{T: link.TypeWelcome, DeviceID: info.ID, DeviceName: info.Name, HubVersion: version.String(),
				HeartbeatMS: h.o.Heartbeat.Milliseconds(), Enrolled: enrolled}, nil
		})
	if err != nil {
		if claimed {
			h.unclaim(info.ID)
		}
		return fmt.Errorf("handshake: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var peer *link.Peer
	peer = link.NewPeer(c, link.Options{
		OnMsg:     func(m link.Msg) { h.onMsg(info, peer, m) },
		OnFrame:   func(f link.Frame) { h.onFrame(info, peer, f) },
		Heartbeat: h.o.Heartbeat, OnRoundTrip: h.o.Metrics.LinkRoundTrip,
	})
	h.o.Metrics.LinkConnected()

	h.mu.Lock()
	if h.kicked[info.ID] {
		delete(h.devices, info.ID) // claim's
		h.busLocked(info.Owner).RemoveDevice(info.ID)
		h.mu.Unlock()
		peer.Close(link.StatusPolicy, "device revoked")
		return peer.Run(ctx)
	}
	dev := h.devices[info.ID]
	if dev == nil {
		dev = &device{info: info, ids: map[string]bool{}, streams: map[uint32]*stream{}}
		h.devices[info.ID] = dev
	}
	old := dev.peer
	dev.info = info
	dev.peer, dev.hello, dev.lastSeen = peer, hello, time.Now()
	dev.connecting = false
	dev.folded, dev.foldWake = 0, make(chan struct{})
	dev.key = ""
	if auth != nil {
		dev.key = auth.key
	}
	// The machine's own agent (corral serve) is this process: unbounded.
	dev.limit, dev.capWarned = nil, false
	if !info.Local {
		dev.limit = newLimiter(h.o.EventRate)
	}
	h.deviceChangedLocked(dev)
	h.mu.Unlock()
	if old != nil {
		// claim found it dead, or proving a key that is no longer the
		// device's.
		old.Close(link.StatusReplaced, "replaced by a newer connection")
	}
	if h.o.Accounts != nil && !info.Local {
		h.o.Accounts.Seen(ctx, info.ID, hello.Hostname)
	}
	if h.cl != nil {
		if err := h.cl.attached(ctx, info); err != nil {
			h.log.Warn("device refused: its link could not be claimed for this replica", "device", info.Name, "err", err)
			peer.Close(link.StatusGoingAway, "the hub is unavailable")
			peer.Run(ctx)
			h.offline(info.ID, peer)
			return err
		}
	}
	h.log.Info("device connected", "device", info.Name, "owner", info.Owner, "host", hello.Hostname, "version", hello.Version, "enrolled", enrolled)

	err = peer.Run(ctx)
	h.offline(info.ID, peer)
	if h.cl != nil {
		h.cl.detached(info.ID)
	}
	return err
}

// offline marks a device's sessions as last known, if peer is still its
// connection.
func (h *Hub) offline(id string, peer *link.Peer) {
	h.mu.Lock()
	defer h.mu.Unlock()
	dev := h.devices[id]
	if dev == nil || dev.peer != peer {
		return
	}
	dev.peer = nil
	dev.lastSeen = time.Now()
	h.deviceChangedLocked(dev)
	for _, st := range dev.streams {
		st.fail(errOffline)
	}
	dev.streams = map[uint32]*stream{}
	bus := h.busLocked(dev.info.Owner)
	for sid := range dev.ids {
		if s, ok := bus.Session(sid); ok {
			s.Offline = true
			bus.Update(s, s.Status, false)
		}
	}
	h.clDirty(id)
	h.log.Info("device offline", "device", dev.info.Name)
}

var errOffline = api.Errorf(api.CodeUnavailable, "the device went offline")

// onMsg handles a device's messages: its state and its terminals.
func (h *Hub) onMsg(info DeviceIdentity, peer *link.Peer, m link.Msg) {
	switch m.T {
	case link.TypeSync:
		h.sync(info, peer, m.Seq, m.Sessions)
	case link.TypeEvent:
		h.event(info, peer, m.Seq, m.Event)
	case link.TypeTermExit, link.TypeTermRedraw:
		h.mu.Lock()
		dev := h.devices[info.ID]
		var st *stream
		if dev != nil && dev.peer == peer {
			st = dev.streams[m.Stream]
			delete(dev.streams, m.Stream)
		}
		h.mu.Unlock()
		if st != nil {
			if m.T == link.TypeTermRedraw {
				st.end(errRedraw)
			} else {
				st.end(errTermClosed)
			}
		}
	case link.TypeReq:
		// The hub serves no requests to devices: answer at once, so the
		// device's call fails rather than waits for its timeout.
		if m.ID != 0 {
			peer.Reply(m.ID, nil, api.Errorf(api.CodeBadRequest, "unknown op %q: the hub serves no requests to devices", m.Op))
		}
	default:
		if m.ID != 0 && !m.Known() {
			peer.Reply(m.ID, nil, api.Errorf(api.CodeBadRequest, "unknown message type %q", m.T))
		}
	}
}

// claimLocked records that a session id is a device's, unless another
// device holds it. Session ids are random (60 bits): a clash is a device
// naming another's session, which must neither take it over (requests for
// it would go to that device) nor unlist it for its owner. The caller holds
// h.mu.
func (h *Hub) claimLocked(deviceID, sessionID string) bool {
	if cur, ok := h.owner[sessionID]; ok && cur != deviceID {
		return false
	}
	h.owner[sessionID] = deviceID
	return true
}

// claimReportedLocked is claimLocked for a session a connected device
// reports, logging a refusal: that device is misbehaving.
func (h *Hub) claimReportedLocked(info DeviceIdentity, sessionID string) bool {
	if h.claimLocked(info.ID, sessionID) {
		return true
	}
	h.log.Warn("device names another device's session; ignored", "device", info.Name, "owner", info.Owner, "session", sessionID)
	return false
}

// releaseLocked forgets a session id of a device (only if it is that
// device's). The caller holds h.mu.
func (h *Hub) releaseLocked(deviceID, sessionID string) {
	if h.owner[sessionID] == deviceID {
		delete(h.owner, sessionID)
	}
}

// stamp marks a session as one of this device's, as its owner's bus
// lists it: where a device's change is folded in (foldLocked), and on an
// answer the bus does not list (Hub.listed).
func stamp(info DeviceIdentity, s api.Session) api.Session {
	if !info.Local {
		s.Device = info.Name
	}
	s.Offline = false
	return s
}

// foldLocked puts a session a device reported on its owner's bus, the one
// copy of its state, and indexes it as the device's. It returns the
// session as listed. The caller holds h.mu and claimed the id.
func foldLocked(info DeviceIdentity, dev *device, bus *events.Feed, s api.Session, prev api.Status, notify bool) api.Session {
	s = stamp(info, s)
	dev.ids[s.ID] = true
	bus.Update(s, prev, notify)
	return s
}

// foldedLocked records that the device's changes up to seq are on the
// owner's bus (or were refused: either way nothing more will come of
// them), and wakes the answers waiting for them. The caller holds h.mu.
func (dev *device) foldedLocked(seq uint64) {
	if seq > dev.folded {
		dev.folded = seq
		close(dev.foldWake)
		dev.foldWake = make(chan struct{})
	}
}

// waitFolded returns once the owner's bus holds the device's changes up
// to its sequence number seq, which an answer from peer carried: what a
// request changed is listed when its answer reaches the caller (the
// seq rule, docs/protocol.md "Read your writes"). It returns ctx's error
// if the caller gives up first, and nil at once if the connection is no
// longer the device's (its changes will not come, and the device is
// listed offline).
func (h *Hub) waitFolded(ctx context.Context, deviceID string, peer *link.Peer, seq uint64) error {
	for {
		h.mu.Lock()
		dev := h.devices[deviceID]
		if dev == nil || dev.peer != peer || dev.folded >= seq {
			h.mu.Unlock()
			return nil
		}
		w := dev.foldWake
		h.mu.Unlock()
		select {
		case <-w:
		case <-peer.Done():
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// sync replaces everything the hub held for a device.
func (h *Hub) sync(info DeviceIdentity, peer *link.Peer, seq uint64, list []api.Session) {
	h.mu.Lock()
	dev := h.devices[info.ID]
	if dev == nil || dev.peer != peer {
		h.mu.Unlock()
		return
	}
	// Waiters see it only once h.mu is released, with the change applied.
	dev.foldedLocked(seq)
	if !h.admitLocked(info, dev) {
		h.mu.Unlock()
		return
	}
	bus := h.busLocked(info.Owner)
	seen := map[string]bool{}
	var keep []api.Session
	for _, s := range list {
		s, err := cleanSession(s)
		if err != nil {
			h.malformedLocked(info, dev, err)
			continue
		}
		if len(seen) >= h.o.MaxSessions && !seen[s.ID] && !info.Local {
			h.overCapLocked(info, dev)
			break
		}
		if !h.claimReportedLocked(info, s.ID) {
			continue
		}
		seen[s.ID] = true
		var prev api.Status
		if old, ok := bus.Session(s.ID); ok && dev.ids[s.ID] {
			prev = old.Status
		}
		// A reconnect is not news: never notify from a sync.
		keep = append(keep, foldLocked(info, dev, bus, s, prev, false))
	}
	var gone []string
	for id := range dev.ids {
		if !seen[id] {
			gone = append(gone, id)
			delete(dev.ids, id)
			h.releaseLocked(info.ID, id)
			bus.Remove(id)
		}
	}
	for _, c := range h.synced[info.ID] {
		close(c)
	}
	delete(h.synced, info.ID)
	h.mu.Unlock()
	h.clDirty(info.ID)
	h.persist(info.ID, keep, gone, true)
}

// WaitSynced returns a channel closed when a device next syncs its state.
func (h *Hub) WaitSynced(deviceID string) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := make(chan struct{})
	h.synced[deviceID] = append(h.synced[deviceID], c)
	return c
}

// event applies one change of a device.
func (h *Hub) event(info DeviceIdentity, peer *link.Peer, seq uint64, e *api.Event) {
	h.mu.Lock()
	dev := h.devices[info.ID]
	if dev == nil || dev.peer != peer {
		h.mu.Unlock()
		return
	}
	dev.foldedLocked(seq) // seen once h.mu is released, with the change applied
	if e == nil || !h.admitLocked(info, dev) {
		h.mu.Unlock()
		return
	}
	ev := *e
	bus := h.busLocked(info.Owner)
	var keep []api.Session
	var gone []string
	switch ev.Type {
	case api.EventSession:
		if ev.Session == nil {
			break
		}
		s, err := cleanSession(*ev.Session)
		if err != nil {
			h.malformedLocked(info, dev, err)
			break
		}
		if !dev.ids[s.ID] && len(dev.ids) >= h.o.MaxSessions && !info.Local {
			h.overCapLocked(info, dev)
			break
		}
		if !h.claimReportedLocked(info, s.ID) {
			break
		}
		keep = append(keep, foldLocked(info, dev, bus, s, ev.Prev, ev.Notify))
	case api.EventRemoved:
		if !dev.ids[ev.ID] {
			break // not this device's session
		}
		delete(dev.ids, ev.ID)
		h.releaseLocked(info.ID, ev.ID)
		bus.Remove(ev.ID)
		gone = append(gone, ev.ID)
	}
	h.mu.Unlock()
	h.clDirty(info.ID)
	h.persist(info.ID, keep, gone, false)
}

// Kick closes a device's link (after its token was revoked).
func (h *Hub) Kick(deviceID string) { h.kick(deviceID, "", true) }

// kick is Kick; on a replica, with retire, it also removes the device
// from the event log and tells its holder (owner is the device's, when
// this replica may not know it).
func (h *Hub) kick(deviceID, owner string, retire bool) {
	h.mu.Lock()
	h.kicked[deviceID] = true
	dev := h.devices[deviceID]
	var p *link.Peer
	if dev != nil {
		p = dev.peer
		delete(h.devices, deviceID)
		bus := h.busLocked(dev.info.Owner)
		bus.RemoveDevice(deviceID)
		for id := range dev.ids {
			h.releaseLocked(deviceID, id)
			bus.Remove(id)
		}
	}
	h.mu.Unlock()
	h.clDirty(deviceID)
	if dev != nil {
		owner = dev.info.Owner
	}
	if h.cl != nil && retire && owner != "" && (dev == nil || !dev.info.Local) {
		h.cl.retire(owner, deviceID)
	}
	if p != nil {
		p.Close(link.StatusPolicy, "device revoked")
	}
}

// CutRevoked cuts off connected devices that were revoked, or whose key was
// replaced by a new enrolment, behind the hub's back (in the database,
// while no hub answered on the admin socket), looking every
// RecheckDevices until ctx ends. Run runs it: a slow safety net, since the
// management commands ask the running hub, which cuts a link at once.
func (h *Hub) CutRevoked(ctx context.Context) {
	if h.o.Accounts == nil {
		return
	}
	t := time.NewTicker(h.o.RecheckDevices)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		h.expireConflicts()
		type live struct{ id, key string }
		h.mu.Lock()
		var devs []live
		for id, d := range h.devices {
			if !d.info.Local {
				devs = append(devs, live{id, d.key})
			}
		}
		h.mu.Unlock()
		for _, l := range devs {
			d, err := h.o.Accounts.DeviceByID(ctx, l.id)
			switch {
			case errors.Is(err, api.ErrNotFound):
				h.log.Warn("device revoked; cutting it off", "device", l.id)
				h.Kick(l.id)
			case err == nil && l.key != "" && d.PublicKey != l.key:
				h.log.Warn("device enrolled again with another key; cutting off the connection with the old one", "device", d.String())
				h.cut(l.id, l.key)
			}
		}
	}
}

// cut closes a device's connection if it proved key.
func (h *Hub) cut(deviceID, key string) {
	h.mu.Lock()
	var p *link.Peer
	if dev := h.devices[deviceID]; dev != nil && dev.key == key {
		p = dev.peer
	}
	h.mu.Unlock()
	if p != nil {
		p.Close(link.StatusPolicy, errNotKey.Error())
	}
}

// DevicesOf lists a user's devices, as their bus holds them.
func (h *Hub) DevicesOf(user string) []api.Device {
	list := h.Bus(user).Devices()
	if list == nil {
		list = []api.Device{}
	}
	return list
}

// apiDevice is the device as its owner sees it.
func (d *device) apiDevice() api.Device {
	return api.Device{ID: d.info.ID, Name: d.info.Name, Online: d.peer != nil, Hostname: d.hello.Hostname,
		OS: d.hello.OS, Version: d.hello.Version, ClaudeMissing: d.hello.NoClaude, LastSeen: d.lastSeen, Key: fingerprint(d.key), Conflict: d.shownConflict()}
}

// deviceChangedLocked publishes a device's state on its owner's bus (a
// device event), the one copy of it that readers see. The caller holds
// h.mu.
func (h *Hub) deviceChangedLocked(dev *device) {
	h.busLocked(dev.info.Owner).UpdateDevice(dev.apiDevice())
	h.clDirty(dev.info.ID)
}

// expireConflicts publishes the devices whose conflict is no longer shown
// (conflictShown after the latest refusal); the bus drops those that did
// not change.
func (h *Hub) expireConflicts() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, d := range h.devices {
		if d.conflict != nil && d.shownConflict() == nil {
			h.deviceChangedLocked(d)
		}
	}
}
