package hub

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/identity"
	"github.com/corral-dev/corral/internal/link"
)

// seqDevice is a device on the real protocol whose answers and events
// the test sends by hand, in the order it wants.
type seqDevice struct {
	p    *link.Peer
	reqs chan link.Msg
}

func attachSeqDevice(t *testing.T, h *Hub, info DeviceIdentity) *seqDevice {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	hubEnd, devEnd := link.Pipe()
	attached := make(chan struct{})
	go func() { h.ServeLocal(ctx, info, hubEnd); close(attached) }()
	if _, err := link.ClientHello(ctx, devEnd, func(link.Msg) (link.Msg, error) { return link.Msg{Hostname: "seq"}, nil }); err != nil {
		t.Fatal(err)
	}
	d := &seqDevice{reqs: make(chan link.Msg, 10)}
	d.p = link.NewPeer(devEnd, link.Options{OnMsg: func(m link.Msg) {
		if m.T == link.TypeReq {
			d.reqs <- m
		}
	}})
	ran := make(chan struct{})
	go func() { d.p.Run(ctx); close(ran) }()
	t.Cleanup(func() { cancel(); <-ran; <-attached })
	return d
}

func (d *seqDevice) send(t *testing.T, m link.Msg) {
	t.Helper()
	if err := d.p.Send(m); err != nil {
		t.Fatal(err)
	}
}

func (d *seqDevice) req(t *testing.T) link.Msg {
	t.Helper()
	select {
	case m := <-d.reqs:
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("no request reached the device")
	}
	return link.Msg{}
}

// answered replies to a request with the device's sequence number seq,
// and returns once the hub's reader has taken the reply: the ping that
// follows it is answered only after.
func (d *seqDevice) answered(t *testing.T, id, seq uint64, res any) {
	t.Helper()
	if err := d.p.ReplySeq(id, seq, res, nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.p.Ping(ctx); err != nil {
		t.Fatal(err)
	}
}

type served struct {
	res any
	err error
}

func serveAsync(ctx context.Context, h *Hub, op string, req any) chan served {
	done := make(chan served, 1)
	go func() {
		res, err := h.Serve(ctx, op, req)
		done <- served{res, err}
	}()
	return done
}

// notYet fails if the hub answered while the change its answer is about
// was not on the bus yet. (A correct hub cannot answer here at all; the
// window only gives a wrong one the time to show itself.)
func notYet(t *testing.T, done chan served, what string) {
	t.Helper()
	select {
	case r := <-done:
		t.Fatalf("the hub answered %s before folding the device's sequence number: %+v", what, r)
	case <-time.After(200 * time.Millisecond):
	}
}

func wait(t *testing.T, done chan served) served {
	t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("the hub did not answer")
	}
	return served{}
}

// TestSeqRule: a write's answer carries the device's sequence number
// after the change, and the hub answers only once its user's bus holds
// that change, whether the answer came before the events (as here, on
// purpose), the events came as a sync (a forwarder that fell behind), or
// the link went down meanwhile. The answer is the session as the bus
// lists it. (This was TestCallInOrder, when the device held its answers
// until its events were sent and the hub's link waited for its handlers.)
func TestSeqRule(t *testing.T) {
	h, err := New(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	info := DeviceIdentity{ID: "d1", Name: "laptop", Owner: "alice"}
	d := attachSeqDevice(t, h, info)
	bus := h.Bus("alice")
	d.send(t, link.Msg{T: link.TypeSync, Seq: 10, Sessions: []api.Session{evilSession("s1", "old")}})
	waitFor(t, "the sync", func() bool { _, ok := bus.Session("s1"); return ok })
	ctx := identity.With(context.Background(), "alice")
	rename := api.RenameRequest{SessionRef: api.SessionRef{ID: "s1"}}

	// The answer first, the event after.
	done := serveAsync(ctx, h, api.OpRename.Name, rename)
	m := d.req(t)
	d.answered(t, m.ID, 11, evilSession("s1", "from the answer"))
	notYet(t, done, "a rename")
	renamed := evilSession("s1", "new")
	d.send(t, link.Msg{T: link.TypeEvent, Seq: 11, Event: &api.Event{Seq: 11, Type: api.EventSession, Session: &renamed}})
	r := wait(t, done)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if s := r.res.(*api.Session); s.Name != "new" || s.Device != "laptop" {
		t.Errorf("answered %+v, want the session as the bus lists it (new, on laptop)", s)
	}
	if s, _ := bus.Session("s1"); s.Name != "new" {
		t.Errorf("the bus lists %q", s.Name)
	}

	// An event with a number below the answer's is not enough; a sync
	// above it is.
	done = serveAsync(ctx, h, api.OpRename.Name, rename)
	m = d.req(t)
	d.answered(t, m.ID, 13, evilSession("s1", "from the answer"))
	renamed.Name = "newer"
	d.send(t, link.Msg{T: link.TypeEvent, Seq: 12, Event: &api.Event{Seq: 12, Type: api.EventSession, Session: &renamed}})
	notYet(t, done, "after an older event")
	renamed.Name = "newest"
	d.send(t, link.Msg{T: link.TypeSync, Seq: 20, Sessions: []api.Session{renamed}})
	if r := wait(t, done); r.err != nil || r.res.(*api.Session).Name != "newest" {
		t.Errorf("after a sync: %+v", r)
	}

	// The caller gives up: its error, not a hang.
	cctx, cancel := context.WithCancel(ctx)
	done = serveAsync(cctx, h, api.OpKill.Name, api.KillRequest{SessionRef: api.SessionRef{ID: "s1"}})
	m = d.req(t)
	d.answered(t, m.ID, 30, api.Empty{})
	notYet(t, done, "a kill")
	cancel()
	if r := wait(t, done); !errors.Is(r.err, context.Canceled) {
		t.Errorf("a caller that gave up: %+v", r)
	}

	// The link goes down before the change came: answered, and the
	// session is listed offline.
	done = serveAsync(ctx, h, api.OpKill.Name, api.KillRequest{SessionRef: api.SessionRef{ID: "s1"}})
	m = d.req(t)
	d.answered(t, m.ID, 31, api.Empty{})
	notYet(t, done, "a kill")
	d.p.Close(link.StatusGoingAway, "bye")
	if r := wait(t, done); r.err != nil {
		t.Errorf("answered %+v once the link was down", r)
	}
	waitFor(t, "offline", func() bool { s, _ := bus.Session("s1"); return s.Offline })
}

// TestDeviceEvents: a device's state reaches its owner's bus as device
// events (connected, offline), and its owner's device list is the bus's.
func TestDeviceEvents(t *testing.T) {
	h, err := New(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	bus := h.Bus("alice")
	sub := bus.Subscribe(0)
	defer sub.Close()
	next := func() api.Event {
		t.Helper()
		select {
		case ev := <-sub.C():
			return *ev
		case <-time.After(10 * time.Second):
			t.Fatal("no event")
		}
		return api.Event{}
	}
	next() // the snapshot
	d := attachSeqDevice(t, h, DeviceIdentity{ID: "d1", Name: "laptop", Owner: "alice"})
	// Listed from the handshake on (offline), then online.
	if ev := next(); ev.Type != api.EventDevice || ev.Device.Online || ev.Device.Name != "laptop" {
		t.Fatalf("in the handshake: %+v", ev)
	}
	if ev := next(); ev.Type != api.EventDevice || !ev.Device.Online || ev.Device.Hostname != "seq" {
		t.Fatalf("on connect: %+v", ev)
	}
	if l := h.DevicesOf("alice"); len(l) != 1 || !l[0].Online {
		t.Fatalf("devices %+v", l)
	}
	d.p.Close(link.StatusGoingAway, "bye")
	if ev := next(); ev.Type != api.EventDevice || ev.Device.Online {
		t.Fatalf("offline: %+v", ev)
	}
	if l := h.DevicesOf("bob"); len(l) != 0 {
		t.Errorf("bob sees %+v", l)
	}
}
