package hub

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/backend"
	"github.com/corral-dev/corral/internal/events"
	"github.com/corral-dev/corral/internal/identity"
	"github.com/corral-dev/corral/internal/link"
	"github.com/corral-dev/corral/internal/version"
)

// requestTimeout bounds a request to a device; long ones (run, download)
// declare their own (api.OpInfo.Timeout).
const requestTimeout = 30 * time.Second

// The hub serves the API and the dashboard for the user the request
// carries.
var _ backend.Backend = (*Hub)(nil)

func user(ctx context.Context) (string, error) {
	u := identity.User(ctx)
	if u == "" {
		return "", api.Errorf(api.CodeUnauthorized, "no user")
	}
	return u, nil
}

// route finds the live device that owns a session of the asking user. A
// session of another user is "not found", exactly like one that does not
// exist.
func (h *Hub) route(ctx context.Context, id string) (*device, *link.Peer, error) {
	u, err := user(ctx)
	if err != nil {
		return nil, nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	dev := h.devices[h.owner[id]]
	if dev == nil || dev.info.Owner != u {
		return nil, nil, api.Errorf(api.CodeNotFound, "no session %q", id)
	}
	if dev.peer == nil {
		return nil, nil, api.Errorf(api.CodeUnavailable, "device %s is offline", dev.info.Name)
	}
	return dev, dev.peer, nil
}

// pick finds a live device of the asking user by name; an empty name picks
// the user's only online device.
func (h *Hub) pick(ctx context.Context, name string) (*device, *link.Peer, error) {
	u, err := user(ctx)
	if err != nil {
		return nil, nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var online []*device
	for _, d := range h.devices {
		if d.info.Owner != u {
			continue
		}
		if name != "" && d.info.Name == name {
			if d.peer == nil {
				return nil, nil, api.Errorf(api.CodeUnavailable, "device %s is offline", name)
			}
			return d, d.peer, nil
		}
		if d.peer != nil {
			online = append(online, d)
		}
	}
	if name != "" {
		return nil, nil, api.Errorf(api.CodeNotFound, "no device %q", name)
	}
	switch len(online) {
	case 0:
		return nil, nil, api.Errorf(api.CodeUnavailable, "no device is online")
	case 1:
		return online[0], online[0].peer, nil
	}
	names := make([]string, len(online))
	for i, d := range online {
		names[i] = d.info.Name
	}
	sort.Strings(names)
	return nil, nil, api.Errorf(api.CodeBadRequest, "say which device: %s", strings.Join(names, ", "))
}

// newMux is the hub's table of operations: every session op forwarded to
// the device that owns the session, every device op to the device it
// names, and the local and user ops answered here. A new op of internal/api needs
// no line here unless it is local or the user's.
func (h *Hub) newMux() *backend.Mux {
	m := backend.NewMux()
	for _, op := range api.Ops() {
		switch op.Scope {
		case api.ScopeSession:
			m.HandleAny(op, h.forwardSession)
		case api.ScopeDevice:
			m.HandleAny(op, h.forwardDevice)
		}
	}
	backend.Handle(m, api.OpVersion, func(ctx context.Context, _ api.Empty) (api.VersionInfo, error) { return h.Version(ctx), nil })
	backend.Handle(m, api.OpSessions, h.sessions)
	backend.Handle(m, api.OpSession, h.session)
	backend.Handle(m, api.OpDevices, h.devicesOf)
	h.addUserOps(m)
	return m
}

// Serve answers an operation for the user the request carries.
func (h *Hub) Serve(ctx context.Context, op string, req any) (any, error) {
	return h.mux.Serve(ctx, op, req)
}

// forwardSession sends a request about a session to the device that owns
// it, once the asking user is known to own that device.
func (h *Hub) forwardSession(ctx context.Context, op api.OpInfo, req any) (any, error) {
	dev, p, err := h.route(ctx, req.(api.SessionRequest).SessionID())
	if err != nil {
		if h.cl != nil && !fromCluster(ctx) {
			return h.cl.forwardSession(ctx, op, req, err)
		}
		return nil, err
	}
	return h.call(ctx, dev, p, op, req)
}

// forwardDevice sends a request to the device it names, or the asking
// user's only online device.
func (h *Hub) forwardDevice(ctx context.Context, op api.OpInfo, req any) (any, error) {
	dev, p, err := h.pick(ctx, req.(api.DeviceRequest).DeviceName())
	if err != nil {
		if h.cl != nil && !fromCluster(ctx) {
			return h.cl.forwardDevice(ctx, op, req, err)
		}
		return nil, err
	}
	return h.call(ctx, dev, p, op, req)
}

// call sends a request to a device and waits for its answer, then for the
// owner's bus to hold the device's changes up to the sequence number the
// answer carries (waitFolded): after a rename the hub lists the new name.
// A session in the answer is the one on the bus.
func (h *Hub) call(ctx context.Context, dev *device, p *link.Peer, op api.OpInfo, req any) (any, error) {
	var cancel context.CancelFunc = func() {}
	if op.Timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, op.Timeout)
	} else if _, ok := ctx.Deadline(); !ok {
		ctx, cancel = context.WithTimeout(ctx, requestTimeout)
	}
	defer cancel()
	res := reflect.New(op.Result).Interface()
	seq, err := p.CallSeq(ctx, op.Name, req, res)
	if werr := h.waitFolded(ctx, dev.info.ID, p, seq); werr != nil && err == nil {
		err = werr
	}
	if err != nil {
		return nil, err
	}
	if s, ok := res.(*api.Session); ok {
		if seq > 0 {
			*s = h.listed(dev.info, *s)
		} else {
			// An agent from before the seq rule: its events may still
			// be on the way, so its answer is newer than the bus.
			*s = stamp(dev.info, *s)
		}
	}
	return res, nil
}

// listed is a session a device answered with, as its owner's bus lists
// it: one copy of a session's state, whatever the hop. One the bus does
// not list (over the device's cap, or removed since) is the answer
// stamped as the bus would have it.
func (h *Hub) listed(info DeviceIdentity, s api.Session) api.Session {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.owner[s.ID] == info.ID {
		if b, ok := h.busLocked(info.Owner).Session(s.ID); ok {
			return b
		}
	}
	return stamp(info, s)
}

func (h *Hub) sessions(ctx context.Context, _ api.Empty) ([]api.Session, error) {
	u, err := user(ctx)
	if err != nil {
		return nil, err
	}
	bus, err := h.viewBus(ctx, u)
	if err != nil {
		return nil, err
	}
	return bus.Sessions(), nil
}

func (h *Hub) session(ctx context.Context, req api.SessionRef) (api.Session, error) {
	u, err := user(ctx)
	if err != nil {
		return api.Session{}, err
	}
	bus, err := h.viewBus(ctx, u)
	if err != nil {
		return api.Session{}, err
	}
	s, ok := bus.Session(req.ID)
	if !ok {
		return api.Session{}, api.Errorf(api.CodeNotFound, "no session %q", req.ID)
	}
	return s, nil
}

func (h *Hub) devicesOf(ctx context.Context, _ api.Empty) ([]api.Device, error) {
	u, err := user(ctx)
	if err != nil {
		return nil, err
	}
	if h.cl != nil {
		bus, err := h.viewBus(ctx, u)
		if err != nil {
			return nil, err
		}
		return bus.Devices(), nil
	}
	return h.DevicesOf(u), nil
}

// Subscribe streams the asking user's events.
func (h *Hub) Subscribe(ctx context.Context, since uint64) (backend.Subscription, error) {
	u, err := user(ctx)
	if err != nil {
		return nil, err
	}
	bus, err := h.viewBus(ctx, u)
	if err != nil {
		return nil, err
	}
	return bus.Subscribe(since), nil
}

// Version describes the hub.
func (h *Hub) Version(ctx context.Context) api.VersionInfo {
	b := version.Get()
	v := api.VersionInfo{Version: b.Version, Commit: b.Commit, BuildDate: b.Date, PID: os.Getpid()}
	if p := h.saves.problem(); p != "" {
		v.Problems = append(v.Problems, p)
	}
	return v
}

// OpenTerminal relays a session's terminal from its device (web.Backend).
func (h *Hub) OpenTerminal(ctx context.Context, id string, cols, rows int, resume string, offset uint64) (backend.Terminal, uint64, bool, error) {
	if h.cl != nil && !fromCluster(ctx) {
		return h.cl.openTerminal(ctx, id, cols, rows, resume, offset)
	}
	u, err := user(ctx)
	if err != nil {
		return nil, 0, false, err
	}
	h.mu.Lock()
	dev := h.devices[h.owner[id]]
	if dev == nil || dev.info.Owner != u {
		h.mu.Unlock()
		return nil, 0, false, api.Errorf(api.CodeNotFound, "no session %q", id)
	}
	p := dev.peer
	if p == nil {
		h.mu.Unlock()
		return nil, 0, false, api.Errorf(api.CodeUnavailable, "device %s is offline", dev.info.Name)
	}
	dev.nextStream++
	num := dev.nextStream
	devID := dev.info.ID
	st := newStream(h, devID, num, p)
	dev.streams[num] = st
	h.mu.Unlock()

	cctx, cancel := ctx, context.CancelFunc(func() {})
	if _, ok := ctx.Deadline(); !ok {
		cctx, cancel = context.WithTimeout(ctx, requestTimeout)
	}
	var res api.TermOpenResult
	// Output that comes before the answer waits in the stream (opened).
	err = p.Call(cctx, api.OpTermOpen.Name, api.TermOpenRequest{SessionRef: api.SessionRef{ID: id}, Stream: num, Cols: cols, Rows: rows, Resume: resume, Offset: offset}, &res)
	cancel()
	if err != nil {
		h.dropStream(devID, num, st)
		if ctx.Err() != nil {
			// The agent may have opened it before the cancel reached it:
			// nobody will read it, so let it go at once.
			cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			link.Call(cctx, p, api.OpTermClose, api.TermCloseRequest{Stream: num})
			cancel()
		}
		return nil, 0, false, err
	}
	st.opened(res)
	return st, res.Offset, res.Reset, nil
}

// BusOf is for callers that attach to one user's events (notifications).
func (h *Hub) BusOf(user string) *events.Feed { return h.Bus(user) }

// String names a device for messages.
func (d *device) String() string { return fmt.Sprintf("%s/%s", d.info.Owner, d.info.Name) }
