package link

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/api"
)

// TestCallCancelReachesThePeer: when a Call's context ends before the
// answer, the other end gets a cancel with the request's id, and the late
// answer is dropped.
func TestCallCancelReachesThePeer(t *testing.T) {
	eachKind(t, func(t *testing.T, kind string) {
		c := newConns(t, kind)
		reqs := make(chan Msg, 1)
		cancels := make(chan Msg, 1)
		var b *Peer
		b = NewPeer(c.b, Options{OnMsg: func(m Msg) {
			switch m.T {
			case TypeReq:
				reqs <- m // never answered in time
			case TypeCancel:
				cancels <- m
				b.Reply(m.ID, api.Empty{}, nil) // too late: dropped
			}
		}})
		a := NewPeer(c.a, Options{})
		ctx, stop := context.WithCancel(context.Background())
		defer stop()
		go a.Run(ctx)
		go b.Run(ctx)

		cctx, cancel := context.WithCancel(ctx)
		errc := make(chan error, 1)
		go func() {
			errc <- a.Call(cctx, "download", api.DownloadRequest{SessionRef: api.SessionRef{ID: "s"}}, nil)
		}()
		var req Msg
		select {
		case req = <-reqs:
		case <-time.After(5 * time.Second):
			t.Fatal("the request never arrived")
		}
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Fatalf("call: %v", err)
		}
		select {
		case m := <-cancels:
			if m.ID != req.ID || !m.Known() {
				t.Fatalf("cancel %+v for request %d", m, req.ID)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no cancel reached the other end")
		}
		// The link carries on.
		if err := a.Send(Msg{T: TypePing, ID: 99}); err != nil {
			t.Fatal(err)
		}
	})
}
