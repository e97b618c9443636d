package agent

import (
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/corral-dev/corral/internal/hookwire"
	"github.com/corral-dev/corral/internal/metrics"
)

// hookListener serves the hook socket: it reads deliveries and hands them
// to the signal sources (claudeSignals.onDelivery).
type hookListener struct{ *Agent }

// The hook socket's bounds. Every delivery is read whole into memory (at
// most hookwire.MaxPayload), so the handlers at work at once bound the memory
// deliveries can take; more connections wait in the socket's backlog (the
// hook gives up after its own timeout, hookwire.Timeout). A delivery that does
// not arrive within hookReadTimeout is dropped.
const (
	maxHookHandlers = 32
	hookReadTimeout = 5 * time.Second
)

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

// serveHooks accepts hook deliveries until the listener closes.
func (a *hookListener) serveHooks(ln net.Listener) {
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
		if !a.g.Go(func() {
			defer func() { <-sem }()
			a.handleHookConn(c)
		}) {
			c.Close() // stopping
			return
		}
	}
}

// handleHookConn reads one delivery, from a process of the agent's own
// user only: the socket's mode already keeps others out, and the peer's
// credentials say so again even if the mode or the directory were changed.
func (a *hookListener) handleHookConn(c net.Conn) {
	defer c.Close()
	if err := checkPeer(c); err != nil {
		a.warn("hook delivery refused", "err", err)
		a.metrics.HookDelivered(metrics.KindUnknown, metrics.ResultRefused, time.Time{})
		return
	}
	_ = c.SetReadDeadline(time.Now().Add(hookReadTimeout))
	h, payload, err := hookwire.Read(c, hookwire.MaxPayload)
	if err != nil {
		a.warn("bad hook delivery", "err", err)
		a.metrics.HookDelivered(metrics.KindUnknown, metrics.ResultBad, time.Time{})
		return
	}
	a.sig.onDelivery(h, payload)
}

// listenHooks opens the hook socket at path (mode 0600), removing a stale
// socket file left by a daemon that died. The caller holds the data
// directory's lock, so nothing alive can own the old file.
func listenHooks(path string) (*net.UnixListener, error) {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, err
	}
	l.SetUnlinkOnClose(true)
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}
