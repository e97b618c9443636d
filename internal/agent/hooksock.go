package agent

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"github.com/corral-dev/corral/internal/hook"
)

// The hook socket's bounds. Every delivery is read whole into memory (at
// most hook.MaxPayload), so the handlers at work at once bound the memory
// deliveries can take; more connections wait in the socket's backlog (the
// hook gives up after its own timeout, hook.Timeout). A delivery that does
// not arrive within hookReadTimeout is dropped.
const (
	maxHookHandlers = 32
	hookReadTimeout = 5 * time.Second
)

// serveHooks accepts hook deliveries until the listener closes.
func (a *Agent) serveHooks(ln net.Listener) {
	sem := make(chan struct{}, maxHookHandlers)
	for {
		select {
		case sem <- struct{}{}:
		case <-a.ctx.Done():
			return
		}
		c, err := ln.Accept()
		if err != nil {
			<-sem
			if a.ctx.Err() == nil && !errors.Is(err, net.ErrClosed) {
				a.log.Error("hook socket", "err", err)
			}
			return
		}
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			defer func() { <-sem }()
			a.handleHookConn(c)
		}()
	}
}

// handleHookConn reads one delivery, from a process of the agent's own
// user only: the socket's mode already keeps others out, and the peer's
// credentials say so again even if the mode or the directory were changed.
func (a *Agent) handleHookConn(c net.Conn) {
	defer c.Close()
	if err := checkPeer(c); err != nil {
		a.warnDelivery("hook delivery refused", "err", err)
		return
	}
	_ = c.SetReadDeadline(time.Now().Add(hookReadTimeout))
	h, payload, err := hook.Read(c, hook.MaxPayload)
	if err != nil {
		a.warnDelivery("bad hook delivery", "err", err)
		return
	}
	a.onDelivery(h, payload)
}

// checkPeer refuses a connection from another user's process.
func checkPeer(c net.Conn) error {
	uid, err := peerUID(c)
	if err != nil {
		return fmt.Errorf("peer credentials: %w", err)
	}
	if uid != os.Getuid() {
		return fmt.Errorf("from a process of uid %d, not this agent's %d", uid, os.Getuid())
	}
	return nil
}

// warnDelivery logs a warning about a bad delivery, rate-limited: a process
// that sends junk in a loop must not flood the log.
func (a *Agent) warnDelivery(msg string, args ...any) {
	a.hookWarn.warn(a.log, time.Now(), msg, args...)
}

// The rate of warnings about deliveries: deliveryWarnBurst per
// deliveryWarnWindow, then one line saying how many were left out.
const (
	deliveryWarnBurst  = 10
	deliveryWarnWindow = time.Minute
)

// rateLog lets through a burst of warnings per window and counts the rest;
// its zero value is ready.
type rateLog struct {
	mu      sync.Mutex
	start   time.Time // of the current window
	n       int       // warnings logged in it
	dropped int       // and left out
}

func (r *rateLog) warn(log *slog.Logger, now time.Time, msg string, args ...any) {
	r.mu.Lock()
	if now.Sub(r.start) >= deliveryWarnWindow {
		if r.dropped > 0 {
			log.Warn("more warnings about hook deliveries were left out", "count", r.dropped, "in", now.Sub(r.start).Round(time.Second))
		}
		r.start, r.n, r.dropped = now, 0, 0
	}
	ok := r.n < deliveryWarnBurst
	if ok {
		r.n++
	} else {
		r.dropped++
	}
	r.mu.Unlock()
	if ok {
		log.Warn(msg, args...)
	}
}
