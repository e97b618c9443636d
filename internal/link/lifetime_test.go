package link

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// When its context ends, Run closes the link and returns only once every
// goroutine the Peer started has: here the other end never answers the
// close (nor anything else), the heartbeat runs, a cancel is on its way, and Run
// still returns within about closeWait, leaving nothing behind. (Before,
// Run returned at once and left the close, waiting 5 s for an answer, and
// the reader behind.)
func TestRunLeavesNothingBehind(t *testing.T) {
	before := goleak.IgnoreCurrent()
	cs := wsConns(t) // cs.b is never read: the close gets no answer
	p := NewPeer(cs.a, Options{Heartbeat: time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	// A call that gives up sends a cancel in the background.
	cctx, ccancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	if err := p.Call(cctx, "slow", nil, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Call: %v", err)
	}
	ccancel()
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, ErrClosed) || !errors.Is(err, context.Canceled) {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(closeWait + 2*time.Second):
		t.Fatal("Run did not return")
	}
	if d := time.Since(start); d > closeWait+time.Second {
		t.Errorf("Run took %v to return", d)
	}
	// Only the test's own connections (closed at cleanup) may remain.
	goleak.VerifyNone(t, before, goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"), goleak.IgnoreAnyFunction("net/http.(*conn).serve"),
		goleak.IgnoreAnyFunction("net/http/httptest.(*Server).goServe.func1"))
}
