package link

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/lifetime"
)

// Errors that end a link. Every error Run returns wraps ErrClosed, and so
// does every call that fails because the link is down.
var (
	ErrClosed = errors.New("link closed")
	// ErrDead: the peer sent nothing for three heartbeat intervals.
	ErrDead = errors.New("peer dead")
	// ErrStalled: the handlers took no message for Options.StallTimeout
	// while the reader waited to hand them more.
	ErrStalled = errors.New("handlers stalled")
)

// DefaultStallTimeout is Options.StallTimeout when it is zero.
const DefaultStallTimeout = 30 * time.Second

// What the reader buffers for the handlers before it stops reading: bytes
// (each message counts its raw length twice, decoded and raw, plus
// handlerOverhead) and messages.
const (
	handlerBytes    = 4 << 20
	handlerItems    = 1024
	handlerOverhead = 256
)

// Options configure a Peer.
type Options struct {
	// OnMsg receives every control message but res, ping and pong
	// (which the Peer handles): events, syncs, requests, and types this
	// version does not know (Msg.Known). It and OnFrame run one at a time,
	// in arrival order, on a goroutine of their own; see the package doc.
	// When OnMsg is nil, a req or an unknown type with an id is answered
	// with bad_request and everything else is dropped.
	OnMsg func(Msg)
	// OnFrame receives every binary frame, including frames of unknown
	// types (their Type says so). Data is the caller's to keep.
	OnFrame func(Frame)
	// WriteTimeout bounds each write; a write that takes longer closes the
	// link. Zero means DefaultWriteTimeout.
	WriteTimeout time.Duration
	// StallTimeout is how long the reader waits for the handlers to take a
	// message when its buffer is full before it closes the link, and how
	// long Run waits for a handler in progress when the link ends. Zero
	// means DefaultStallTimeout.
	StallTimeout time.Duration
	// Heartbeat, when positive, makes Run send a ping every Heartbeat and
	// close the link as dead after three silent intervals (see the method
	// Heartbeat), on a goroutine of its own that ends with it.
	Heartbeat time.Duration
	// OnRoundTrip, when set, is told how long each answered Call took,
	// from sending the request to its answer (metrics). It must be quick.
	OnRoundTrip func(time.Duration)
}

// closeWait is how long Run gives the close handshake, once the link is
// down, before it cuts the connection: a peer that does not answer the
// close holds up its owner's shutdown no longer than this.
const closeWait = time.Second

// Peer is one end of a device link over a Conn: it sends requests and
// waits for their answers, answers the other end's requests (through
// OnMsg and Reply), sends and receives messages and frames, and keeps the
// link alive. All its methods are safe for concurrent use; writes go out
// one at a time.
type Peer struct {
	conn  Conn
	opts  Options
	start time.Time

	nextID   atomic.Uint64
	wsem     chan struct{} // held by the one writer
	lastRecv atomic.Int64  // when the last message arrived, as time since start
	blocked  atomic.Bool   // the reader waits for room in the handlers' queue
	ponging  atomic.Bool
	// pongWanted: a ping waits for its pong; pongID is the newest ping's id.
	pongWanted atomic.Bool
	pongID     atomic.Uint64
	pinging    atomic.Bool
	running    atomic.Bool

	// g owns every goroutine the Peer starts besides the handlers' and the
	// close's (pongs, pings, cancels; Run itself reads); Run waits for them.
	g lifetime.Group
	// closed is closed when the conn's Close has returned.
	closed chan struct{}

	// probeCh is closed when the next message arrives, for Ping; nil
	// while nobody waits (probing says whether someone does, so the
	// reader takes no lock for it otherwise).
	probeMu sync.Mutex
	probeCh chan struct{}
	probing atomic.Bool

	mu      sync.Mutex
	pending map[uint64]chan Msg // nil once the link is down
	err     error
	// cutRead cuts Run's read; cutTimer, armed by fail, calls it
	// closeWait after the link went down.
	cutRead  func()
	cutTimer *time.Timer
	// writeErr is the first failed write: why the link ended, unless the
	// reader learns better (the peer's close status).
	writeErr error
	done     chan struct{}

	qmu      sync.Mutex
	q        fifo[inbound]
	qchanged broadcast
	// handling is closed when the handlers' goroutine, started when
	// the queue stops being empty, has emptied it and ended; nil while
	// none runs. stopped: Run has ended, no handler starts.
	handling chan struct{}
	stopped  bool
}

// inbound is a message or a frame on its way to the handlers.
type inbound struct {
	msg     Msg
	frame   Frame
	isFrame bool
}

// NewPeer makes a Peer over c, which it owns from now on: the Peer closes
// it when the link ends. Start it with Run.
func NewPeer(c Conn, o Options) *Peer {
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.StallTimeout <= 0 {
		o.StallTimeout = DefaultStallTimeout
	}
	return &Peer{
		conn:    c,
		opts:    o,
		start:   time.Now(),
		wsem:    make(chan struct{}, 1),
		pending: make(map[uint64]chan Msg),
		done:    make(chan struct{}),
		closed:  make(chan struct{}),
	}
}

// Run reads the link until it ends, and returns why: an error wrapping
// ErrClosed and the cause (a *CloseError when the peer closed, ErrDead,
// ErrInvalid for malformed input, ErrStalled, or ctx's error when ctx
// ended, in which case the link is closed with 1001). Every pending Call
// fails when the link ends. Run returns once every goroutine the Peer
// started has returned: the reader (the close handshake gets closeWait,
// then the connection is cut), the heartbeat, pings, pongs and cancels on
// their way out, and the handler in progress, if any (waiting at most
// StallTimeout for it: a handler stuck longer is its owner's bug); no
// handler starts after that. Call Run once.
func (p *Peer) Run(ctx context.Context) error {
	if !p.running.CompareAndSwap(false, true) {
		return errors.New("link: Run called twice")
	}
	p.touch()
	// The reader is stopped by closing the conn, not by ctx: on a
	// WebSocket a cancelled read drops the connection before the close
	// frame with its status could be sent. readCtx cuts it only when the
	// close handshake takes too long: closeWait after the link went down
	// (fail arms the timer).
	readCtx, cut := context.WithCancel(context.WithoutCancel(ctx))
	defer cut()
	p.mu.Lock()
	p.cutRead = cut
	if p.err != nil { // closed before Run
		p.cutTimer = time.AfterFunc(closeWait, cut)
	}
	p.mu.Unlock()
	failed := make(chan struct{})
	stopCtx := context.AfterFunc(ctx, func() {
		defer close(failed)
		p.fail(fmt.Errorf("%w: %w", ErrClosed, context.Cause(ctx)), StatusGoingAway, "shutting down")
	})
	stopHeartbeat := func() {}
	if p.opts.Heartbeat > 0 {
		// Timers, not a goroutine: an idle link of a hub of thousands
		// then holds only its reader, on Run's own goroutine.
		stopHeartbeat = p.heartbeat(p.opts.Heartbeat)
	}
	// Read here, not on a goroutine of its own (one stack fewer per
	// link); the read ends only once the link is down.
	p.readLoop(readCtx)
	// coder/websocket's Close can outlast any cut: skipping the rest of a
	// message it stopped reading (one too big) has no deadline. Such a
	// close is left to end with the connection.
	ct := time.NewTimer(closeWait)
	defer ct.Stop()
	select {
	case <-p.closed:
	case <-ct.C:
	}
	if !stopCtx() && ctx.Err() != nil {
		<-failed
	}
	p.mu.Lock()
	p.cutRead = nil
	if p.cutTimer != nil {
		p.cutTimer.Stop()
	}
	p.mu.Unlock()
	stopHeartbeat()
	p.g.Wait()
	// No handler starts from now on; wait for the one in progress.
	p.qmu.Lock()
	p.stopped = true
	handling := p.handling
	p.qmu.Unlock()
	if handling != nil {
		t := time.NewTimer(p.opts.StallTimeout)
		defer t.Stop()
		select {
		case <-handling:
		case <-t.C:
		}
	}
	return p.Err()
}

// Done is closed when the link has ended.
func (p *Peer) Done() <-chan struct{} { return p.done }

// Err returns why the link ended, or nil while it is up.
func (p *Peer) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Close ends the link with a WebSocket status and reason (StatusReplaced
// for a device's older connection, StatusGoingAway on shutdown). The close
// goes out in the background; Run returns an error wrapping ErrClosed and
// a *CloseError with this code.
func (p *Peer) Close(code int, reason string) error {
	p.fail(fmt.Errorf("%w: %w", ErrClosed, &CloseError{Code: code, Reason: reason}), code, reason)
	return nil
}

// Call sends a request and waits for its answer, decoding the result into
// result (a pointer, or nil to ignore it). A failed request returns the
// peer's *api.Error, so errors.Is(err, api.ErrNotFound) works. When ctx
// ends first Call returns its error and a late answer is dropped; when the
// link ends first Call returns an error wrapping ErrClosed.
func (p *Peer) Call(ctx context.Context, op string, args, result any) error {
	_, err := p.CallSeq(ctx, op, args, result)
	return err
}

// Call sends op's request over p and waits for its answer (Peer.Call),
// with the types the op declares.
func Call[Req, Res any](ctx context.Context, p *Peer, op api.Op[Req, Res], req Req) (Res, error) {
	var res Res
	err := p.Call(ctx, op.Name, req, &res)
	return res, err
}

// CallSeq is Call, also returning the seq the answer carries (ReplySeq):
// the other end's event sequence number once the request was done. Its
// caller answers when it has applied the other end's events up to that
// number, not before (docs/protocol.md, "Read your writes"); zero means
// the answer carries none.
func (p *Peer) CallSeq(ctx context.Context, op string, args, result any) (uint64, error) {
	// A call already cancelled is not sent: a quick answer could win the
	// race below against ctx.Done, and the caller gave up on it.
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("link: %s: %w", op, err)
	}
	id := p.nextID.Add(1)
	m, err := NewReq(id, op, args)
	if err != nil {
		return 0, err
	}
	b, err := EncodeMsg(m)
	if err != nil {
		return 0, err
	}
	ch := make(chan Msg, 1)
	p.mu.Lock()
	if p.err != nil {
		err := p.err
		p.mu.Unlock()
		return 0, fmt.Errorf("link: %s: %w", op, err)
	}
	p.pending[id] = ch
	p.mu.Unlock()
	defer p.forget(id)

	sent := time.Now()
	if err := p.write(ctx, Text, b); err != nil {
		return 0, fmt.Errorf("link: %s: %w", op, err)
	}
	select {
	case res := <-ch:
		if p.opts.OnRoundTrip != nil {
			p.opts.OnRoundTrip(time.Since(sent))
		}
		return res.Seq, p.result(op, res, result)
	case <-ctx.Done():
		p.cancel(id)
		return 0, fmt.Errorf("link: %s: %w", op, ctx.Err())
	case <-p.done:
		select {
		case res := <-ch: // it made it just in time
			return res.Seq, p.result(op, res, result)
		default:
		}
		return 0, fmt.Errorf("link: %s: %w", op, p.Err())
	}
}

func (p *Peer) result(op string, res Msg, v any) error {
	if err := res.Err(); err != nil {
		return err // the peer's *api.Error, as it is
	}
	if err := res.DecodeResult(v); err != nil {
		return fmt.Errorf("link: %s: %w", op, err)
	}
	return nil
}

// cancel tells the other end that the caller of request id gave up, so it
// can stop the work (a download, a command). It goes out in the background,
// like a pong: the caller returns at once, and the write is bounded by
// WriteTimeout and the link's life. An answer that still comes is dropped.
func (p *Peer) cancel(id uint64) {
	p.g.Go(func() { _ = p.Send(Msg{T: TypeCancel, ID: id}) })
}

func (p *Peer) forget(id uint64) {
	p.mu.Lock()
	delete(p.pending, id)
	p.mu.Unlock()
}

// Reply answers request id: with err when it is not nil (its *api.Error,
// or an internal error with its text), else with result (nil is {}). A
// result too big for the link is answered with a too_large error instead.
func (p *Peer) Reply(id uint64, result any, err error) error {
	return p.ReplySeq(id, 0, result, err)
}

// ReplySeq is Reply with seq, the sequence number of this end's events
// once the request was done (its write included), which the answer
// carries to CallSeq; a failure carries it too, since a failed request
// may have changed something.
func (p *Peer) ReplySeq(id, seq uint64, result any, err error) error {
	m, encErr := NewRes(id, result, err)
	if encErr != nil {
		m, _ = NewRes(id, nil, api.Errorf(api.CodeInternal, "encoding the result: %v", encErr))
	}
	m.Seq = seq
	b, encErr := EncodeMsg(m)
	if encErr != nil {
		m, _ = NewRes(id, nil, api.Errorf(api.CodeTooLarge, "the answer is over the link's limit of %d bytes", MaxFrame))
		m.Seq = seq
		if b, encErr = EncodeMsg(m); encErr != nil {
			return encErr
		}
	}
	return p.write(context.Background(), Text, b)
}

// Send sends a control message. One over MaxFrame is refused with an error
// wrapping ErrTooBig, and the link stays up.
func (p *Peer) Send(m Msg) error {
	b, err := EncodeMsg(m)
	if err != nil {
		return err
	}
	return p.write(context.Background(), Text, b)
}

// SendFrame sends a terminal frame. One over MaxFrame is refused with an
// error wrapping ErrTooBig, and the link stays up.
func (p *Peer) SendFrame(f Frame) error {
	b := EncodeFrame(f)
	if len(b) > MaxFrame {
		return fmt.Errorf("link: frame: %w: %d bytes, the limit is %d", ErrTooBig, len(b), MaxFrame)
	}
	return p.write(context.Background(), Binary, b)
}

// Heartbeat sends a ping every interval and closes the link as dead when
// the peer has sent nothing at all (no message of any kind) for three
// intervals; Run then returns an error wrapping ErrDead. Heartbeat returns
// when ctx ends or the link is down: ctx's error, or why the link ended.
// (Pongs are sent by Run whether or not Heartbeat runs.)
func (p *Peer) Heartbeat(ctx context.Context, every time.Duration) error {
	if every <= 0 {
		return errors.New("link: heartbeat interval must be positive")
	}
	stop := p.heartbeat(every)
	defer stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-p.done:
		return p.Err()
	}
}

// heartbeat arms Heartbeat's two timers, a ping every interval and the
// silence check, and returns what stops them. Their callbacks run in p.g
// and do not re-arm once the link is down.
func (p *Peer) heartbeat(every time.Duration) (stop func()) {
	limit := 3 * every
	var mu sync.Mutex // the timers, set once below
	var tick, check *time.Timer
	arm := func(t **time.Timer, d time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		if *t != nil && !p.isDone() {
			(*t).Reset(d)
		}
	}
	inGroup := func(f func()) func() {
		return func() {
			leave, ok := p.g.Join()
			if !ok {
				return // Run is done
			}
			defer leave()
			if !p.isDone() {
				f()
			}
		}
	}
	onTick := inGroup(func() {
		// In the background: a ping stuck behind a slow write must not
		// delay the check.
		if p.pinging.CompareAndSwap(false, true) {
			if !p.g.Go(func() {
				defer p.pinging.Store(false)
				_ = p.Send(Msg{T: TypePing, ID: p.nextID.Add(1)})
			}) {
				return
			}
		}
		arm(&tick, every)
	})
	onCheck := inGroup(func() {
		silent := p.sinceRecv()
		switch {
		case p.blocked.Load():
			// Not reading is our handlers' fault, not the peer's;
			// StallTimeout deals with it.
			arm(&check, limit)
		case silent < limit:
			arm(&check, limit-silent)
		default:
			p.fail(fmt.Errorf("%w: %w: silent for %v (3 heartbeat intervals of %v)", ErrClosed, ErrDead, silent.Round(time.Millisecond), every),
				StatusGoingAway, "heartbeat timeout")
		}
	})
	mu.Lock()
	tick = time.AfterFunc(every, onTick)
	check = time.AfterFunc(limit, onCheck)
	mu.Unlock()
	return func() {
		mu.Lock()
		defer mu.Unlock()
		tick.Stop()
		check.Stop()
	}
}

func (p *Peer) touch() { p.lastRecv.Store(int64(time.Since(p.start))) }

// heard wakes a Ping waiting for the next message: one just arrived.
func (p *Peer) heard() {
	if p.probing.Load() {
		p.probeMu.Lock()
		if p.probeCh != nil {
			close(p.probeCh)
			p.probeCh = nil
		}
		p.probing.Store(false)
		p.probeMu.Unlock()
	}
}

// Ping asks whether the other end is alive: it sends a ping and returns
// nil as soon as anything at all arrives from the other end (its pong, or
// any other message: the other end sends one pong at a time, and any
// message proves it is there). It returns ctx's error when nothing came in
// time, or why the link ended. The hub uses it to tell a device's healthy
// connection from a dead one that has not timed out yet.
func (p *Peer) Ping(ctx context.Context) error {
	p.probeMu.Lock()
	if p.probeCh == nil {
		p.probeCh = make(chan struct{})
	}
	ch := p.probeCh
	p.probing.Store(true)
	p.probeMu.Unlock()
	b, err := EncodeMsg(Msg{T: TypePing, ID: p.nextID.Add(1)})
	if err != nil {
		return err
	}
	// In the background, like Heartbeat's pings: a write stuck behind a
	// slow one must not hide an answer; the write gives up with ctx (or
	// after WriteTimeout once it started).
	p.g.Go(func() { _ = p.write(ctx, Text, b) })
	select {
	case <-ch:
		return nil
	case <-p.done:
		return p.Err()
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *Peer) sinceRecv() time.Duration {
	return time.Since(p.start) - time.Duration(p.lastRecv.Load())
}

// fail ends the link once: records why, fails the pending calls (they wait
// on done) and closes the conn in the background, sending code and reason.
func (p *Peer) fail(err error, code int, reason string) {
	p.mu.Lock()
	if p.err != nil {
		p.mu.Unlock()
		return
	}
	p.err = err
	p.pending = nil
	close(p.done)
	if p.cutRead != nil {
		p.cutTimer = time.AfterFunc(closeWait, p.cutRead)
	}
	p.mu.Unlock()
	go func() {
		defer close(p.closed)
		_ = p.conn.Close(code, reason)
	}()
}

func (p *Peer) isDone() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// write sends one message, one writer at a time. ctx bounds only the wait
// for the turn: once started, a write is bounded by WriteTimeout, and a
// failed write ends the link.
func (p *Peer) write(ctx context.Context, kind Kind, b []byte) error {
	select {
	case p.wsem <- struct{}{}:
	case <-p.done:
		return p.Err()
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-p.wsem }()
	if p.isDone() {
		return p.Err()
	}
	wctx, cancel := context.WithTimeout(context.Background(), p.opts.WriteTimeout)
	defer cancel()
	if err := p.conn.Write(wctx, kind, b); err != nil {
		// A write fails when the conn is gone, often because the peer
		// closed it: its close, which the reader is about to see, says
		// more than "use of closed connection". Give the reader a moment.
		err = fmt.Errorf("%w: %w", ErrClosed, err)
		p.mu.Lock()
		if p.writeErr == nil {
			p.writeErr = err
		}
		p.mu.Unlock()
		t := time.NewTimer(writeFailGrace)
		defer t.Stop()
		select {
		case <-p.done:
		case <-t.C:
			p.fail(err, StatusInternal, "write failed")
		}
		return p.Err()
	}
	return nil
}

// writeFailGrace is how long a failed write waits for the reader to report
// why the conn is gone.
const writeFailGrace = time.Second

// readLoop reads until the conn fails, handling pings and answers itself
// and queueing the rest for the handlers.
func (p *Peer) readLoop(ctx context.Context) {
	for {
		kind, b, err := p.conn.Read(ctx)
		if err != nil {
			code, reason := StatusInternal, "read failed"
			err = fmt.Errorf("%w: %w", ErrClosed, err)
			var ce *CloseError
			switch {
			case errors.As(err, &ce) && !ce.Remote:
				code, reason = ce.Code, ce.Reason // a message too big
			case errors.As(err, &ce):
			default:
				// Not the peer's close: our failed write (a timeout, say)
				// closed the conn under the reader and says more.
				p.mu.Lock()
				if p.writeErr != nil {
					err = p.writeErr
				}
				p.mu.Unlock()
			}
			p.fail(err, code, reason)
			p.drain(ctx)
			return
		}
		p.touch()
		p.heard()
		if !p.dispatch(kind, b) {
			p.drain(ctx)
			return
		}
	}
}

// drain reads and drops what still comes once the link is down, until the
// conn is closed: on a WebSocket the close handshake needs a reader, and
// Run cuts a read that outlasts closeWait (ctx), which closes the conn.
func (p *Peer) drain(ctx context.Context) {
	for {
		if _, _, err := p.conn.Read(ctx); err != nil {
			return
		}
	}
}

// dispatch handles one message; false means the link is down.
func (p *Peer) dispatch(kind Kind, b []byte) bool {
	switch kind {
	case Binary:
		f, err := DecodeFrame(b)
		if err != nil && !errors.Is(err, ErrUnknownFrame) {
			p.fail(fmt.Errorf("%w: the peer sent an %w; closed with 1007", ErrClosed, err), StatusInvalidData, "invalid frame")
			return false
		}
		return p.enqueue(inbound{frame: f, isFrame: true}, len(b)+handlerOverhead)
	case Text:
		m, err := DecodeMsg(b)
		if err != nil {
			p.fail(fmt.Errorf("%w: the peer sent an %w; closed with 1007", ErrClosed, err), StatusInvalidData, "invalid message")
			return false
		}
		switch m.T {
		case TypePing:
			p.pong(m.ID)
		case TypePong:
		case TypeRes:
			p.resolve(m)
		default:
			return p.enqueue(inbound{msg: m}, 2*len(b)+handlerOverhead)
		}
		return true
	}
	p.fail(fmt.Errorf("%w: the peer sent a message of %v kind; closed with 1003", ErrClosed, kind), 1003, "unsupported data")
	return false
}

// pong answers a ping in the background (the reader never writes: two
// readers each stuck writing to the other would never read again). One
// pong at a time is enough, any message proving we are alive; but a ping
// that arrives while a pong is on its way still gets one after it (its
// sender may wait for it: Ping), so the sender goes on while pings wait.
func (p *Peer) pong(id uint64) {
	p.pongID.Store(id)
	p.pongWanted.Store(true)
	if !p.ponging.CompareAndSwap(false, true) {
		return // the running sender will see pongWanted
	}
	if !p.g.Go(func() {
		for {
			if p.pongWanted.Swap(false) {
				_ = p.Send(Msg{T: TypePong, ID: p.pongID.Load()})
				continue
			}
			p.ponging.Store(false)
			// A ping between the Swap and the Store found ponging set and
			// left its pong to us: take it back, unless another sender did.
			if !p.pongWanted.Load() || !p.ponging.CompareAndSwap(false, true) {
				return
			}
		}
	}) {
		p.ponging.Store(false)
	}
}

// resolve hands a res to the Call waiting for it; a late answer (the call
// gave up) or a stray one is dropped.
func (p *Peer) resolve(m Msg) {
	p.mu.Lock()
	ch := p.pending[m.ID]
	delete(p.pending, m.ID)
	p.mu.Unlock()
	if ch != nil {
		ch <- m // buffered, and sent to once
	}
}

// enqueue queues an item for the handlers, waiting while the queue is
// full; false means the link is down (or ended because the handlers made
// no progress for StallTimeout).
func (p *Peer) enqueue(it inbound, size int) bool {
	p.qmu.Lock()
	if !p.q.fits(size, handlerBytes, handlerItems) {
		p.blocked.Store(true)
		defer func() {
			p.touch() // the peer was not silent, we were not listening
			p.blocked.Store(false)
		}()
		var t *time.Timer
		for !p.q.fits(size, handlerBytes, handlerItems) {
			ch := p.qchanged.wait()
			p.qmu.Unlock()
			if t == nil {
				t = time.NewTimer(p.opts.StallTimeout)
				defer t.Stop()
			} else {
				t.Reset(p.opts.StallTimeout)
			}
			select {
			case <-ch: // a handler took one: progress
			case <-p.done:
				return false
			case <-t.C:
				p.fail(fmt.Errorf("%w: %w: no message taken for %v with %d waiting", ErrClosed, ErrStalled, p.opts.StallTimeout, p.queued()),
					StatusInternal, "handlers stalled")
				return false
			}
			p.qmu.Lock()
		}
	}
	p.q.push(it, size)
	p.qchanged.signal()
	if p.handling == nil && !p.stopped {
		// A goroutine only while there is work: an idle link of a hub
		// of thousands holds no handler and no stack for it.
		ch := make(chan struct{})
		p.handling = ch
		go p.handle(ch)
	}
	p.qmu.Unlock()
	return true
}

func (p *Peer) queued() int {
	p.qmu.Lock()
	defer p.qmu.Unlock()
	return p.q.len()
}

// handle runs the handlers, one item at a time, until the queue is empty
// or the link has ended, then closes done. One runs at a time (enqueue
// starts it, Run waits for it), so items are handled in order.
func (p *Peer) handle(done chan struct{}) {
	for {
		p.qmu.Lock()
		if p.q.len() == 0 || p.isDone() {
			p.handling = nil
			close(done)
			p.qmu.Unlock()
			return
		}
		it := p.q.pop()
		p.qchanged.signal()
		p.qmu.Unlock()
		p.deliver(it)
	}
}

func (p *Peer) deliver(it inbound) {
	if it.isFrame {
		if p.opts.OnFrame != nil {
			p.opts.OnFrame(it.frame)
		}
		return
	}
	if p.opts.OnMsg != nil {
		p.opts.OnMsg(it.msg)
		return
	}
	m := it.msg
	if m.ID != 0 && (m.T == TypeReq || !m.Known()) {
		what := "message type " + m.T
		if m.T == TypeReq {
			what = "request " + m.Op
		}
		_ = p.Reply(m.ID, nil, api.Errorf(api.CodeBadRequest, "unsupported %s", what))
	}
}
