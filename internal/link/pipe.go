package link

import (
	"context"
	"fmt"
	"net"
	"sync"
)

// The most a Pipe holds in each direction before writers wait: bytes
// (each message counts pipeOverhead more than its length) and messages.
const (
	pipeBytes    = 2 << 20
	pipeItems    = 1024
	pipeOverhead = 64
)

// Pipe returns the two ends of an in-memory link, for a hub and an agent in
// one process. It carries the same messages as a WebSocket and behaves
// alike: a message over MaxFrame closes both ends with 1009 (as the
// receiving end of a WebSocket does); Close on one end makes the other's
// Read return, after what was sent before the close, a *CloseError with
// the code and reason; a Read or Write whose context ends drops the
// connection (the other end sees StatusAbnormal). Each direction holds at
// most a few MiB: a writer waits while the reader is that far behind.
// Written bytes are copied, and Read returns bytes the caller owns.
func Pipe() (Conn, Conn) {
	p := &pipe{}
	return &pipeEnd{p: p, me: 0}, &pipeEnd{p: p, me: 1}
}

type pipeMsg struct {
	kind Kind
	b    []byte
}

type pipe struct {
	mu      sync.Mutex
	q       [2]fifo[pipeMsg] // q[i] holds what end i has to read
	changed broadcast        // any change of q or of the state
	closed  bool
	// Once closed: what each end's Read and Write return, and whether its
	// Read first drains what was sent to it before the close.
	err   [2]error
	drain [2]bool
}

type pipeEnd struct {
	p  *pipe
	me int
}

func (e *pipeEnd) Read(ctx context.Context) (Kind, []byte, error) {
	p := e.p
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		q := &p.q[e.me]
		if q.len() > 0 && (!p.closed || p.drain[e.me]) {
			m := q.pop()
			p.changed.signal()
			return m.kind, m.b, nil
		}
		if p.closed {
			return 0, nil, p.err[e.me]
		}
		if err := e.waitLocked(ctx); err != nil {
			return 0, nil, fmt.Errorf("link: read: %w", err)
		}
	}
}

func (e *pipeEnd) Write(ctx context.Context, kind Kind, b []byte) error {
	if kind != Text && kind != Binary {
		return fmt.Errorf("link: write: unknown kind %v", kind)
	}
	p := e.p
	other := 1 - e.me
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(b) > MaxFrame && !p.closed {
		// What the receiving end of a WebSocket does: refuse the message
		// and close with 1009.
		reason := fmt.Sprintf("a message over %d bytes", MaxFrame)
		p.closeLocked(other, &CloseError{Code: StatusTooBig, Reason: reason}, true,
			&CloseError{Code: StatusTooBig, Reason: reason, Remote: true}, true)
	}
	for {
		if p.closed {
			return fmt.Errorf("link: write: %w", p.err[e.me])
		}
		q := &p.q[other]
		if n := len(b) + pipeOverhead; q.fits(n, pipeBytes, pipeItems) {
			q.push(pipeMsg{kind: kind, b: append([]byte(nil), b...)}, n)
			p.changed.signal()
			return nil
		}
		if err := e.waitLocked(ctx); err != nil {
			return fmt.Errorf("link: write: %w", err)
		}
	}
}

func (e *pipeEnd) Close(code int, reason string) error {
	if !validCode(code) {
		code, reason = StatusInternal, fmt.Sprintf("invalid close status %d: %s", code, reason)
	}
	p := e.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return fmt.Errorf("link: close: %w", net.ErrClosed)
	}
	p.closeLocked(e.me, fmt.Errorf("link: %w", net.ErrClosed), false,
		&CloseError{Code: code, Reason: cutReason(reason), Remote: true}, true)
	return nil
}

// waitLocked waits for a change with p.mu held (and released meanwhile).
// When ctx ends first it drops the connection, as a WebSocket does.
func (e *pipeEnd) waitLocked(ctx context.Context) error {
	p := e.p
	ch := p.changed.wait()
	p.mu.Unlock()
	select {
	case <-ch:
		p.mu.Lock()
		return nil
	case <-ctx.Done():
		p.mu.Lock()
		if !p.closed {
			p.closeLocked(e.me, fmt.Errorf("link: %w (%w)", net.ErrClosed, ctx.Err()), false,
				&CloseError{Code: StatusAbnormal, Reason: "the other end dropped the connection", Remote: true}, true)
		}
		return ctx.Err()
	}
}

// closeLocked closes the pipe on behalf of end `by`, which gets byErr (and
// still reads what it was sent if byDrain); the other end gets otherErr.
func (p *pipe) closeLocked(by int, byErr error, byDrain bool, otherErr error, otherDrain bool) {
	p.closed = true
	p.err[by], p.drain[by] = byErr, byDrain
	p.err[1-by], p.drain[1-by] = otherErr, otherDrain
	if !byDrain {
		p.q[by].reset()
	}
	if !otherDrain {
		p.q[1-by].reset()
	}
	p.changed.signal()
}
