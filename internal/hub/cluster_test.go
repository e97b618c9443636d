package hub

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/identity"
	"github.com/corral-dev/corral/internal/link"
	"github.com/corral-dev/corral/internal/notify"
	"github.com/corral-dev/corral/internal/store/postgres"
	"github.com/corral-dev/corral/internal/testkit/natstest"
	"github.com/corral-dev/corral/internal/testkit/testio"
)

// replica is one hub replica of a test, running until the test ends.
func replica(t *testing.T, url, bus string) *linkHub {
	t.Helper()
	return replicaParts(t, url, bus).lh
}

// replicaRun is a replica and its connections to PostgreSQL and NATS.
type replicaRun struct {
	lh *linkHub
	st *postgres.Store
	nc *nats.Conn
}

// replicaParts starts a replica with a real notifier on the shared
// database (the notifications of the devices it holds are raised here).
func replicaParts(t *testing.T, url, bus string) *replicaRun {
	t.Helper()
	ctx := context.Background()
	st, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	el, err := st.EventLog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(bus)
	if err != nil {
		t.Fatal(err)
	}
	n, err := notify.New(ctx, st, notify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	acc := NewAccounts(st)
	lb := &testio.SyncBuffer{}
	h, err := New(ctx, Options{Store: st, Accounts: acc, Logger: slog.New(slog.NewTextHandler(lb, nil)), Cluster: &ClusterOptions{Log: el, Conn: nc},
		OnUser: n.FollowUser, Notifier: n})
	if err != nil {
		t.Fatal(err)
	}
	rctx, stop := context.WithCancel(ctx)
	nctx, nstop := context.WithCancel(ctx)
	done, ndone := make(chan struct{}), make(chan struct{})
	go func() { defer close(done); h.Run(rctx) }()
	go func() { defer close(ndone); n.Run(nctx) }()
	lh := newLinkHubFor(t, h, acc, lb)
	t.Cleanup(func() {
		stop()
		<-done
		nstop()
		<-ndone
		nc.Close()
	})
	return &replicaRun{lh: lh, st: st, nc: nc}
}

// TestClusterRoutes: two replicas on one PostgreSQL and one NATS. A device
// connects to A; on B, its owner lists its session (the log's order, the
// same numbers on both replicas) and renames it (the request goes over
// NATS to A, and to the device); another user gets "not found" on B as on
// A. When the device's link ends, both show the session offline.
func TestClusterRoutes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pg.Database(t)
	ns := natstest.Start(t)
	a := replica(t, url, ns.URL())
	b := replica(t, url, ns.URL())
	if _, err := a.acc.AddUser(ctx, "alice", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := a.acc.AddUser(ctx, "bob", ""); err != nil {
		t.Fatal(err)
	}
	_, tok, err := a.acc.AddDevice(ctx, "alice", "laptop", 0)
	if err != nil {
		t.Fatal(err)
	}
	d := &dev{t: t, key: testKeyIn(t), token: tok}
	c, _, _, err := d.dial(a)
	if err != nil {
		t.Fatal(err)
	}
	s := api.Session{ID: "abcdef123456", Name: "one", Kind: api.KindShell, Status: api.StatusIdle, CreatedAt: time.Now().UTC()}
	var p *link.Peer
	p = link.NewPeer(c, link.Options{OnMsg: func(m link.Msg) {
		if m.T == link.TypeReq && m.Op == api.OpRename.Name {
			var r api.RenameRequest
			json.Unmarshal(m.Args, &r)
			renamed := s
			renamed.Name = r.Name
			p.Reply(m.ID, renamed, nil)
			p.Send(link.Msg{T: link.TypeEvent, Event: &api.Event{Type: api.EventSession, Session: &renamed, Prev: s.Status}})
			return
		}
		if m.T == link.TypeReq {
			p.Reply(m.ID, nil, api.Errorf(api.CodeBadRequest, "no"))
		}
	}})
	pctx, pstop := context.WithCancel(ctx)
	pdone := make(chan struct{})
	go func() { defer close(pdone); p.Run(pctx) }()
	t.Cleanup(func() { pstop(); <-pdone })
	if err := p.Send(link.Msg{T: link.TypeSync, Sessions: []api.Session{s}}); err != nil {
		t.Fatal(err)
	}

	alice := identity.With(ctx, "alice")
	list := func(h *Hub, who context.Context) []api.Session {
		res, err := h.Serve(who, api.OpSessions.Name, api.Empty{})
		if err != nil {
			t.Fatal(err)
		}
		return res.([]api.Session)
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("no %s within 10 s", what)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitFor("session on B", func() bool {
		l := list(b.h, alice)
		return len(l) == 1 && l[0].Name == "one" && l[0].Device == "laptop"
	})

	res, err := b.h.Serve(alice, api.OpRename.Name, &api.RenameRequest{SessionRef: api.SessionRef{ID: s.ID}, Name: "two"})
	if err != nil {
		t.Fatalf("rename through B: %v", err)
	}
	if got := res.(*api.Session); got.Name != "two" {
		t.Fatalf("rename through B answered %+v", got)
	}
	for _, h := range []*Hub{a.h, b.h} {
		waitFor("the new name", func() bool { l := list(h, alice); return len(l) == 1 && l[0].Name == "two" })
	}
	ba, _ := a.h.viewBus(ctx, "alice")
	bb, _ := b.h.viewBus(ctx, "alice")
	waitFor("the same seq on both", func() bool { return ba.Seq() == bb.Seq() })

	bob := identity.With(ctx, "bob")
	if _, err := b.h.Serve(bob, api.OpRename.Name, &api.RenameRequest{SessionRef: api.SessionRef{ID: s.ID}, Name: "mine"}); api.AsError(err).Code != api.CodeNotFound {
		t.Fatalf("bob renaming alice's session through B: %v", err)
	}
	if l := list(b.h, bob); len(l) != 0 {
		t.Fatalf("bob lists %+v", l)
	}

	pstop()
	<-pdone
	for _, h := range []*Hub{a.h, b.h} {
		waitFor("the session offline", func() bool { l := list(h, alice); return len(l) == 1 && l[0].Offline })
	}
}

// testDevice is a device of a test connected to a replica, answering no
// requests; stop ends its connection and waits.
type testDevice struct {
	p    *link.Peer
	stop func()
	done chan struct{}
}

func connectDevice(t *testing.T, d *dev, to *linkHub, sessions []api.Session) *testDevice {
	t.Helper()
	c, _, _, err := d.dial(to)
	if err != nil {
		t.Fatal(err)
	}
	td := &testDevice{done: make(chan struct{})}
	var p *link.Peer
	p = link.NewPeer(c, link.Options{OnMsg: func(m link.Msg) {
		if m.T == link.TypeReq {
			p.Reply(m.ID, nil, api.Errorf(api.CodeBadRequest, "no"))
		}
	}})
	td.p = p
	ctx, stop := context.WithCancel(context.Background())
	go func() { defer close(td.done); p.Run(ctx) }()
	td.stop = func() { stop(); <-td.done }
	t.Cleanup(td.stop)
	if err := p.Send(link.Msg{T: link.TypeSync, Sessions: sessions}); err != nil {
		t.Fatal(err)
	}
	return td
}

// TestClusterDevicesAndNews: the device events and the notifications of a
// device whose link is on one replica reach every replica's pages, in the
// log's order. A device on C shows online on A and B; a notification C
// raises for it shows on B's feed (and in the shared log); C dies (its
// database and bus gone at once, as with SIGKILL: no last write) and the
// device shows offline on A and B within the lease; it reconnects to B
// and shows online on both; revoked on A, it is gone from both and B cuts
// its link.
func TestClusterDevicesAndNews(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pg.Database(t)
	ns := natstest.Start(t)
	a := replica(t, url, ns.URL())
	b := replica(t, url, ns.URL())
	c := replicaParts(t, url, ns.URL())
	if _, err := a.acc.AddUser(ctx, "alice", ""); err != nil {
		t.Fatal(err)
	}
	_, tok, err := a.acc.AddDevice(ctx, "alice", "laptop", 0)
	if err != nil {
		t.Fatal(err)
	}
	alice := identity.With(ctx, "alice")
	waitFor := func(within time.Duration, what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(within)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("no %s within %v", what, within)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	laptop := func(h *Hub) (api.Device, bool) {
		res, err := h.Serve(alice, api.OpDevices.Name, api.Empty{})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range res.([]api.Device) {
			if d.Name == "laptop" {
				return d, true
			}
		}
		return api.Device{}, false
	}
	online := func(h *Hub, on bool) func() bool {
		return func() bool { d, ok := laptop(h); return ok && d.Online == on }
	}
	// What B's pages get, from now on.
	feedB, err := b.h.viewBus(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	sub := feedB.Subscribe(feedB.Seq())
	defer sub.Close()

	d := &dev{t: t, key: testKeyIn(t), token: tok}
	s := api.Session{ID: "abcdef654321", Name: "work", Kind: api.KindClaude, Status: api.StatusBusy, CreatedAt: time.Now().UTC()}
	onC := connectDevice(t, d, c.lh, []api.Session{s})
	for name, h := range map[string]*Hub{"A": a.h, "B": b.h} {
		waitFor(10*time.Second, "the laptop online on "+name, online(h, true))
	}

	// The session needs its person: C's notifier raises it.
	waiting := s
	waiting.Status = api.StatusNeedsInput
	if err := onC.p.Send(link.Msg{T: link.TypeEvent, Event: &api.Event{Type: api.EventSession, Session: &waiting, Prev: s.Status, Notify: true}}); err != nil {
		t.Fatal(err)
	}
	var sawDevice bool
	var bell *api.Notification
	timeout := time.After(10 * time.Second)
	for bell == nil {
		select {
		case ev, ok := <-sub.C():
			if !ok {
				t.Fatalf("B's feed ended: %v", sub.Err())
			}
			switch {
			case ev.Type == api.EventDevice && ev.Device != nil && ev.Device.Name == "laptop" && ev.Device.Online:
				sawDevice = true
			case ev.Type == api.EventNotification:
				bell = ev.Notification
			}
		case <-timeout:
			t.Fatal("no notification on B's feed within 10 s")
		}
	}
	if !sawDevice || bell.SessionID != s.ID || bell.Reason != string(api.StatusNeedsInput) || bell.ID == 0 {
		t.Fatalf("B's feed: device event %v, notification %+v", sawDevice, bell)
	}
	res, err := b.h.Serve(alice, api.OpNotifications.Name, api.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	if l := res.([]api.LoggedNotification); len(l) != 1 || l[0].ID != bell.ID {
		t.Fatalf("B's notification log: %+v", l)
	}

	// C dies: no lease, no last write. Its link ends with it.
	c.nc.Close()
	c.st.Close()
	onC.stop()
	died := time.Now()
	for name, h := range map[string]*Hub{"A": a.h, "B": b.h} {
		waitFor(leaseTTL+2*reapEvery+5*time.Second, "the laptop offline on "+name, online(h, false))
		t.Logf("the laptop offline on %s %v after its replica died", name, time.Since(died).Round(time.Millisecond))
		bus, _ := h.viewBus(ctx, "alice")
		if got, ok := bus.Session(s.ID); !ok || !got.Offline {
			t.Fatalf("the laptop's session on %s after its replica died: %+v", name, got)
		}
	}

	// It reconnects, to B.
	d.token = ""
	onB := connectDevice(t, d, b, []api.Session{waiting})
	for name, h := range map[string]*Hub{"A": a.h, "B": b.h} {
		waitFor(10*time.Second, "the laptop online again on "+name, online(h, true))
	}

	// Revoked on A: gone everywhere; B, its holder, cuts it off.
	if _, err := a.h.RevokeDevice(ctx, "alice", "laptop"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-onB.done:
	case <-time.After(10 * time.Second):
		t.Fatal("B kept the revoked device's link")
	}
	for name, h := range map[string]*Hub{"A": a.h, "B": b.h} {
		waitFor(10*time.Second, "the laptop gone on "+name, func() bool {
			_, ok := laptop(h)
			bus, _ := h.viewBus(ctx, "alice")
			_, has := bus.Session(s.ID)
			return !ok && !has
		})
	}
}
