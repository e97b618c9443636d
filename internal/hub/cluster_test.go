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
	"github.com/corral-dev/corral/internal/store/postgres"
	"github.com/corral-dev/corral/internal/testkit/natstest"
	"github.com/corral-dev/corral/internal/testkit/testio"
)

// replica is one hub replica of a test, running until the test ends.
func replica(t *testing.T, url, bus string) *linkHub {
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
	acc := NewAccounts(st)
	lb := &testio.SyncBuffer{}
	h, err := New(ctx, Options{Store: st, Accounts: acc, Logger: slog.New(slog.NewTextHandler(lb, nil)), Cluster: &ClusterOptions{Log: el, Conn: nc}})
	if err != nil {
		t.Fatal(err)
	}
	rctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); h.Run(rctx) }()
	lh := newLinkHubFor(t, h, acc, lb)
	t.Cleanup(func() {
		stop()
		<-done
		nc.Close()
	})
	return lh
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
