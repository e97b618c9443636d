package hub

// Terminals across replicas. The replica holding the device's link opens
// the terminal there (its own relayed stream, acknowledged windows to the
// agent) and pumps its output to the viewer's replica on a NATS subject of
// the viewer's, within a window the viewer acknowledges, with a heartbeat
// when idle; keystrokes, resizes, acks and the close go back on a subject
// of the holder's. On the viewer's side every terminal roams: when the
// device's connection or its replica goes away, it opens the agent's
// stream again, where the device is now, from the next byte the viewer
// needs (the agent keeps 256 KiB), so the viewer sees nothing lost or
// repeated.

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/backend"
)

const (
	// termWindow is how far the holder sends beyond what the viewer's
	// replica acknowledged.
	termWindow = 256 << 10
	termChunk  = 32 << 10
	// termBeat: the holder says it is there this often when idle; a viewer
	// that hears nothing for termLost takes its holder for dead.
	termBeat = time.Second
	termLost = 4 * time.Second
	// termIdle: a holder that hears nothing from the viewer's replica this
	// long (no ack, no keepalive) closes the terminal.
	termIdle = 30 * time.Second
	// roamFor is how long a terminal looks for its device after losing
	// it: longer than the agent's largest backoff (30 s and jitter).
	roamFor = 45 * time.Second
)

// errLost: the replica relaying a terminal went silent.
var errLost = api.Errorf(api.CodeUnavailable, "the hub replica relaying the terminal went away")

type termSeq struct{ n atomic.Uint64 }

func (c *cluster) subject(kind string) string {
	return fmt.Sprintf("%s%s.%s.%d", subjTerm, c.o.Replica, kind, c.term.n.Add(1))
}

// termOpen asks the holder to open a terminal.
type termOpen struct {
	Session string `json:"session"`
	Cols    int    `json:"cols"`
	Rows    int    `json:"rows"`
	Resume  string `json:"resume,omitempty"`
	Offset  uint64 `json:"offset"`
	Out     string `json:"out"`
}

// termOpened is its answer.
type termOpened struct {
	Stream string `json:"stream"`
	From   uint64 `json:"from"`
	Reset  bool   `json:"reset"`
	Ctl    string `json:"ctl"`
}

// termEnd is how a stream ended, on the out subject.
type termEnd struct {
	Kind string     `json:"kind"` // "redraw", "closed" or "error"
	Err  *api.Error `json:"err,omitempty"`
}

// serveTerm opens a terminal here for another replica's viewer and pumps
// it until it ends, the viewer closes it, or the viewer goes silent.
func (c *cluster) serveTerm(ctx context.Context, r termOpen) (termOpened, error) {
	t, from, reset, err := c.h.OpenTerminal(ctx, r.Session, r.Cols, r.Rows, r.Resume, r.Offset)
	if err != nil {
		return termOpened{}, err
	}
	p := &pump{c: c, t: t, out: r.Out, acked: from, heard: time.Now(), wake: make(chan struct{}, 1)}
	p.ctx, p.cancel = context.WithCancel(c.h.stop)
	ctl := c.subject("ctl")
	sub, err := c.nc.Subscribe(ctl, p.onCtl)
	if err != nil {
		p.cancel()
		t.Close()
		return termOpened{}, err
	}
	sub.SetPendingLimits(pendingMsgs, pendingBytes)
	if !c.g.Go(func() {
		defer sub.Unsubscribe()
		p.run(from)
	}) {
		sub.Unsubscribe()
		p.cancel()
		t.Close()
		return termOpened{}, errStopped
	}
	return termOpened{Stream: t.StreamID(), From: from, Reset: reset, Ctl: ctl}, nil
}

// pump is the holder's end of a terminal viewed on another replica.
type pump struct {
	c   *cluster
	t   backend.Terminal
	out string

	mu    sync.Mutex
	acked uint64
	heard time.Time
	wake  chan struct{}
	// ctx ends the pump: the viewer closed the terminal, or the hub stops.
	ctx    context.Context
	cancel context.CancelFunc
}

func (p *pump) onCtl(m *nats.Msg) {
	if len(m.Data) == 0 {
		return
	}
	p.mu.Lock()
	p.heard = time.Now()
	p.mu.Unlock()
	switch m.Data[0] {
	case 'i':
		p.t.Write(m.Data[1:])
	case 'r':
		if len(m.Data) == 5 {
			cols, rows := int(binary.BigEndian.Uint16(m.Data[1:3])), int(binary.BigEndian.Uint16(m.Data[3:5]))
			// Off the NATS reader: a resize is a call to the agent.
			p.c.g.Go(func() { p.t.Resize(cols, rows) })
		}
	case 'a':
		if len(m.Data) == 9 {
			off := binary.BigEndian.Uint64(m.Data[1:])
			p.mu.Lock()
			if off > p.acked {
				p.acked = off
			}
			p.mu.Unlock()
			select {
			case p.wake <- struct{}{}:
			default:
			}
		}
	case 'c':
		p.cancel()
	}
}

func (p *pump) run(off uint64) {
	defer p.t.Close()
	defer p.cancel()
	ctx := p.ctx
	for {
		p.mu.Lock()
		acked, heard := p.acked, p.heard
		p.mu.Unlock()
		if time.Since(heard) > termIdle {
			return
		}
		if off-acked >= termWindow {
			select {
			case <-ctx.Done():
				return
			case <-p.wake:
			case <-time.After(termBeat):
				p.c.nc.Publish(p.out, []byte{'h'})
			}
			continue
		}
		rctx, rcancel := context.WithTimeout(ctx, termBeat)
		data, err := p.t.Read(rctx, off, termChunk)
		rcancel()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if errors.Is(err, context.DeadlineExceeded) {
				p.c.nc.Publish(p.out, []byte{'h'})
				continue
			}
			end := termEnd{Kind: "error", Err: api.AsError(err)}
			switch {
			case errors.Is(err, errRedraw):
				end = termEnd{Kind: "redraw"}
			case errors.Is(err, errTermClosed):
				end = termEnd{Kind: "closed"}
			}
			b, _ := json.Marshal(end)
			p.c.nc.Publish(p.out, append([]byte{'e'}, b...))
			return
		}
		msg := make([]byte, 9+len(data))
		msg[0] = 'o'
		binary.BigEndian.PutUint64(msg[1:9], off)
		copy(msg[9:], data)
		if err := p.c.nc.Publish(p.out, msg); err != nil {
			return
		}
		off += uint64(len(data))
	}
}

// remoteTerm is the viewer's end: a backend.Terminal fed from the holder.
type remoteTerm struct {
	c   *cluster
	id  string
	ctl string
	sub *nats.Subscription

	mu    sync.Mutex
	buf   []byte
	start uint64
	acked uint64
	heard time.Time
	err   error
	wake  chan struct{}
	done  bool
}

func (c *cluster) openRemote(ctx context.Context, u, id string, cols, rows int, resume string, offset uint64) (backend.Terminal, uint64, bool, error) {
	dev, err := c.deviceOfSession(ctx, u, id)
	if err != nil {
		return nil, 0, false, err
	}
	rt := &remoteTerm{c: c, heard: time.Now(), wake: make(chan struct{})}
	out := c.subject("out")
	sub, err := c.nc.Subscribe(out, rt.onOut)
	if err != nil {
		return nil, 0, false, err
	}
	sub.SetPendingLimits(pendingMsgs, pendingBytes)
	rt.sub = sub
	res, err := c.ask(ctx, dev.ID, dev.Name, devReq{Kind: "term", User: u, Term: &termOpen{Session: id, Cols: cols, Rows: rows, Resume: resume, Offset: offset, Out: out}}, requestTimeout)
	if err != nil || res.Term == nil {
		sub.Unsubscribe()
		if err == nil {
			err = api.Errorf(api.CodeInternal, "no terminal in the answer")
		}
		return nil, 0, false, err
	}
	rt.mu.Lock()
	rt.id, rt.ctl = res.Term.Stream, res.Term.Ctl
	if len(rt.buf) == 0 || rt.start > res.Term.From {
		rt.start = res.Term.From
		rt.buf = rt.buf[:0]
	}
	rt.acked = res.Term.From
	rt.mu.Unlock()
	return rt, res.Term.From, res.Term.Reset, nil
}

func (rt *remoteTerm) wakeLocked() {
	close(rt.wake)
	rt.wake = make(chan struct{})
}

func (rt *remoteTerm) onOut(m *nats.Msg) {
	if len(m.Data) == 0 {
		return
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.heard = time.Now()
	if rt.err != nil {
		return
	}
	switch m.Data[0] {
	case 'o':
		if len(m.Data) < 9 {
			return
		}
		off, data := binary.BigEndian.Uint64(m.Data[1:9]), m.Data[9:]
		if len(rt.buf) == 0 && rt.start == 0 {
			rt.start = off // before term_open's answer
		}
		end := rt.start + uint64(len(rt.buf))
		switch {
		case off > end:
			// NATS dropped a message: resume from what is held.
			rt.err = errLost
		case off+uint64(len(data)) <= end:
			return
		default:
			rt.buf = append(rt.buf, data[end-off:]...)
		}
	case 'e':
		var e termEnd
		json.Unmarshal(m.Data[1:], &e)
		switch e.Kind {
		case "redraw":
			rt.err = errRedraw
		case "closed":
			rt.err = errTermClosed
		default:
			if e.Err != nil {
				rt.err = e.Err
			} else {
				rt.err = errLost
			}
		}
	case 'h':
	}
	rt.wakeLocked()
}

func (rt *remoteTerm) send(b []byte) error {
	rt.mu.Lock()
	ctl := rt.ctl
	rt.mu.Unlock()
	if ctl == "" {
		return errLost
	}
	return rt.c.nc.Publish(ctl, b)
}

func (rt *remoteTerm) ack(off uint64) {
	b := make([]byte, 9)
	b[0] = 'a'
	binary.BigEndian.PutUint64(b[1:], off)
	rt.send(b)
}

func (rt *remoteTerm) StreamID() string {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.id
}

func (rt *remoteTerm) Read(ctx context.Context, offset uint64, max int) ([]byte, error) {
	rt.mu.Lock()
	for {
		end := rt.start + uint64(len(rt.buf))
		if offset < rt.start || offset > end {
			rt.mu.Unlock()
			return nil, errGap
		}
		if offset < end {
			i := int(offset - rt.start)
			n := min(max, len(rt.buf)-i)
			out := append([]byte(nil), rt.buf[i:i+n]...)
			next := offset + uint64(n)
			rt.buf = append(rt.buf[:0], rt.buf[next-rt.start:]...)
			rt.start = next
			ack := next-rt.acked >= ackEvery || len(rt.buf) == 0
			if ack {
				rt.acked = next
			}
			rt.mu.Unlock()
			if ack {
				rt.ack(next)
			}
			return out, nil
		}
		if rt.err != nil {
			err := rt.err
			rt.mu.Unlock()
			return nil, err
		}
		if time.Since(rt.heard) > termLost {
			rt.err = errLost
			continue
		}
		w, acked := rt.wake, rt.acked
		rt.mu.Unlock()
		select {
		case <-w:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(termBeat):
			rt.ack(acked) // a keepalive
		}
		rt.mu.Lock()
	}
}

func (rt *remoteTerm) Write(p []byte) (int, error) {
	total := len(p)
	for len(p) > 0 {
		n := min(len(p), termChunk)
		if err := rt.send(append([]byte{'i'}, p[:n]...)); err != nil {
			return total - len(p), err
		}
		p = p[n:]
	}
	return total, nil
}

func (rt *remoteTerm) Resize(cols, rows int) error {
	b := make([]byte, 5)
	b[0] = 'r'
	binary.BigEndian.PutUint16(b[1:3], uint16(cols))
	binary.BigEndian.PutUint16(b[3:5], uint16(rows))
	return rt.send(b)
}

func (rt *remoteTerm) AddViewer()  {}
func (rt *remoteTerm) DropViewer() { rt.Close() }

func (rt *remoteTerm) Close() error {
	rt.mu.Lock()
	if rt.done {
		rt.mu.Unlock()
		return nil
	}
	rt.done = true
	if rt.err == nil {
		rt.err = errTermClosed
	}
	rt.wakeLocked()
	rt.mu.Unlock()
	rt.send([]byte{'c'})
	rt.sub.Unsubscribe()
	return nil
}

// openTerminal is Hub.OpenTerminal on a replica: the terminal wherever its
// device is, roaming with it.
func (c *cluster) openTerminal(ctx context.Context, id string, cols, rows int, resume string, offset uint64) (backend.Terminal, uint64, bool, error) {
	u, err := user(ctx)
	if err != nil {
		return nil, 0, false, err
	}
	t, from, reset, err := c.openAnywhere(ctx, u, id, cols, rows, resume, offset)
	if err != nil {
		return nil, 0, false, err
	}
	return &roamTerm{c: c, u: u, id: id, cols: cols, rows: rows, cur: t, sid: t.StreamID()}, from, reset, nil
}

func (c *cluster) openAnywhere(ctx context.Context, u, id string, cols, rows int, resume string, offset uint64) (backend.Terminal, uint64, bool, error) {
	t, from, reset, err := c.h.OpenTerminal(context.WithValue(ctx, fromClusterKey{}, true), id, cols, rows, resume, offset)
	if err == nil {
		return t, from, reset, nil
	}
	if code := api.AsError(err).Code; code != api.CodeNotFound && code != api.CodeUnavailable {
		return nil, 0, false, err
	}
	rt, from, reset, rerr := c.openRemote(ctx, u, id, cols, rows, resume, offset)
	if rerr != nil {
		if api.AsError(rerr).Code == api.CodeNotFound {
			return nil, 0, false, err
		}
		return nil, 0, false, rerr
	}
	return rt, from, reset, nil
}

// roamTerm is a viewer's terminal on a replica: when the device (or the
// replica relaying it) goes away, it opens the same agent stream again
// from the viewer's next byte, wherever the device reconnected.
type roamTerm struct {
	c          *cluster
	u, id      string
	cols, rows int
	sid        string

	mu  sync.Mutex
	cur backend.Terminal
}

func (r *roamTerm) current() backend.Terminal {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cur
}

func (r *roamTerm) StreamID() string { return r.sid }

func (r *roamTerm) Read(ctx context.Context, offset uint64, max int) ([]byte, error) {
	for {
		data, err := r.current().Read(ctx, offset, max)
		if err == nil || ctx.Err() != nil || api.AsError(err).Code != api.CodeUnavailable {
			return data, err
		}
		if err := r.reopen(ctx, offset); err != nil {
			return nil, err
		}
	}
}

// reopen finds the device again, polling until roamFor has passed.
func (r *roamTerm) reopen(ctx context.Context, offset uint64) error {
	deadline := time.Now().Add(roamFor)
	for {
		uctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		r.mu.Lock()
		cols, rows := r.cols, r.rows
		r.mu.Unlock()
		t, from, reset, err := r.c.openAnywhere(uctx, r.u, r.id, cols, rows, r.sid, offset)
		cancel()
		if err == nil {
			if reset || from != offset || t.StreamID() != r.sid {
				// The agent no longer has those bytes: a fresh stream.
				t.Close()
				return errRedraw
			}
			r.mu.Lock()
			old := r.cur
			r.cur = t
			r.mu.Unlock()
			old.Close()
			return nil
		}
		if api.AsError(err).Code != api.CodeUnavailable || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func (r *roamTerm) Write(p []byte) (int, error) { return r.current().Write(p) }

func (r *roamTerm) Resize(cols, rows int) error {
	r.mu.Lock()
	r.cols, r.rows = cols, rows
	r.mu.Unlock()
	return r.current().Resize(cols, rows)
}

func (r *roamTerm) AddViewer()   { r.current().AddViewer() }
func (r *roamTerm) DropViewer()  { r.current().DropViewer() }
func (r *roamTerm) Close() error { return r.current().Close() }
