// Package agentlink is the agent's end of the device link (docs/protocol.md):
// it answers the hub's requests with the local agent, streams the agent's
// events and terminals to the hub, and, when the hub is remote, keeps a
// connection up by itself. The agent goes on running everything while the
// hub is away; every reconnect starts with a full state sync, and terminal
// streams resume from the byte the hub last saw.
package agentlink

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/corral-dev/corral/internal/agent"
	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/backend"
	"github.com/corral-dev/corral/internal/devicekey"
	"github.com/corral-dev/corral/internal/lifetime"
	"github.com/corral-dev/corral/internal/link"
	"github.com/corral-dev/corral/internal/metrics"
	"github.com/corral-dev/corral/internal/term"
	"github.com/corral-dev/corral/internal/version"
)

// Window is how far a terminal stream may run ahead of what the hub
// acknowledged it delivered. It is below the agent's replay ring, so what a
// lost connection dropped can always be resumed.
const Window = 128 << 10

// Options configure the agent's end.
type Options struct {
	Agent  *agent.Agent
	Logger *slog.Logger
	// Key is the machine's identity, which signs the hub's challenge (a
	// remote hub); nil on the in-memory link of corral serve.
	Key *devicekey.Key
	// Host is the hub's host as the agent dialed it: what the signature
	// names (Run sets it).
	Host string
	// Policy is what the hub may ask (see Policy).
	Policy Policy
	// Metrics counts reconnects and round trips (nil: none).
	Metrics *metrics.Metrics
}

// Hello describes this machine to the hub.
func Hello() link.Msg {
	host, _ := os.Hostname()
	return link.Msg{
		T: link.TypeHello, Protocol: link.Protocol, Hostname: host, OS: runtime.GOOS, Arch: runtime.GOARCH,
		Version: version.String(),
	}
}

// Answer returns what answers a hub's challenge for link.ClientHello: hello,
// signed by key for the hub at host (unsigned when key is nil).
func Answer(key *devicekey.Key, host string, hello link.Msg) func(link.Msg) (link.Msg, error) {
	return func(ch link.Msg) (link.Msg, error) {
		if key == nil {
			return hello, nil
		}
		nonce, err := base64.RawURLEncoding.DecodeString(ch.Nonce)
		if err != nil {
			return link.Msg{}, fmt.Errorf("the hub's challenge: bad nonce: %w", err)
		}
		sig, err := key.Sign(devicekey.Challenge{Host: host, Hub: ch.HubID, Nonce: nonce})
		if err != nil {
			return link.Msg{}, fmt.Errorf("the hub's challenge: %w", err)
		}
		hello.Host = devicekey.NormalHost(host)
		hello.Sig = base64.RawURLEncoding.EncodeToString(sig)
		return hello, nil
	}
}

// conn is one connection's state.
type conn struct {
	o    Options
	log  *slog.Logger
	peer *link.Peer
	ctx  context.Context
	mux  *backend.Mux
	// g owns the connection's goroutines: the event forwarder, the
	// requests in progress and the terminal pumps.
	g lifetime.Group

	mu      sync.Mutex
	streams map[uint32]*linkStream
	// reqs cancels the requests in progress, by id, when the hub says
	// their caller gave up (cancel).
	reqs map[uint64]*request
}

// linkStream is one terminal stream sent over the link.
type linkStream struct {
	num     uint32
	session string
	st      *term.Stream
	cancel  context.CancelFunc

	mu    sync.Mutex
	acked uint64
	wake  chan struct{}
}

// Serve speaks the protocol on one connection until it ends: handshake,
// sync, events, requests and terminals. It returns why the connection
// ended, once every goroutine it started has returned (requests in
// progress are cancelled).
func Serve(ctx context.Context, c link.Conn, o Options) error {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	hello := Hello()
	// Whether this machine can start Claude, for the dashboard's banner.
	hello.NoClaude = o.Agent != nil && !o.Agent.ClaudeInstalled()
	welcome, err := link.ClientHello(ctx, c, Answer(o.Key, o.Host, hello))
	if err != nil {
		c.Close(link.StatusProtocolError, "handshake failed")
		return fmt.Errorf("handshake: %w", err)
	}
	if welcome.Enrolled {
		o.Logger.Info("enrolled with the hub: it knows this machine by its key now, and the enrolment token is spent (remove it from --token-file or $CORRAL_DEVICE_TOKEN)",
			"device", welcome.DeviceName)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cn := &conn{o: o, log: o.Logger.With("hub_device", welcome.DeviceName), ctx: ctx, streams: map[uint32]*linkStream{}, reqs: map[uint64]*request{}}
	cn.mux = cn.ops()
	cn.peer = link.NewPeer(c, link.Options{OnMsg: cn.onMsg, OnFrame: cn.onFrame,
		Heartbeat: time.Duration(welcome.HeartbeatMS) * time.Millisecond, OnRoundTrip: o.Metrics.LinkRoundTrip})
	cn.g.Go(func() { cn.forwardEvents(ctx) })
	err = cn.peer.Run(ctx)
	cancel()
	cn.stopStreams()
	cn.g.Wait()
	return err
}

// forwardEvents sends the full state, then every change. A subscription
// that fell behind starts over with a full state: the hub replaces what it
// held.
func (cn *conn) forwardEvents(ctx context.Context) {
	bus := cn.o.Agent.Bus()
	for ctx.Err() == nil {
		sub := bus.Subscribe(0)
		stop := context.AfterFunc(ctx, sub.Close)
		for ev := range sub.C() {
			var m link.Msg
			if ev.Type == api.EventSnapshot {
				m = link.Msg{T: link.TypeSync, Seq: ev.Seq, Sessions: ev.Sessions}
			} else {
				e := *ev
				m = link.Msg{T: link.TypeEvent, Seq: ev.Seq, Event: &e}
			}
			if err := cn.peer.Send(m); err != nil {
				stop()
				sub.Close()
				return
			}
		}
		stop()
		sub.Close()
	}
}

func (cn *conn) onMsg(m link.Msg) {
	switch m.T {
	case link.TypeReq:
		// Requests may take a while (create, run, download): each runs on
		// its own goroutine, so they never hold up the link, with a context
		// that a cancel for its id ends. It is registered here, in arrival
		// order, so a cancel that follows at once finds it.
		ctx, cancel := context.WithCancel(cn.ctx)
		req := &request{cancel: cancel}
		cn.mu.Lock()
		cn.reqs[m.ID] = req
		cn.mu.Unlock()
		if !cn.g.Go(func() {
			defer cn.endReq(m.ID, req)
			res, err := cn.handle(ctx, m)
			if ctx.Err() != nil && cn.ctx.Err() == nil {
				cn.log.Debug("request cancelled by the hub", "op", m.Op, "id", m.ID)
			}
			// The answer carries the bus's sequence number now that the
			// request is done: the hub answers its caller once it has
			// applied the events up to it, which forwardEvents sends on
			// their own (docs/protocol.md, "Read your writes").
			if rerr := cn.peer.ReplySeq(m.ID, cn.o.Agent.Bus().Seq(), res, err); rerr != nil && cn.ctx.Err() == nil {
				cn.log.Debug("reply", "op", m.Op, "err", rerr)
			}
		}) {
			cn.endReq(m.ID, req) // the connection is ending: no answer
		}
	case link.TypeCancel:
		cn.mu.Lock()
		req := cn.reqs[m.ID]
		cn.mu.Unlock()
		if req != nil {
			req.cancel()
		}
	case link.TypeTermAck:
		cn.mu.Lock()
		ls := cn.streams[m.Stream]
		cn.mu.Unlock()
		if ls != nil {
			ls.ack(m.Offset)
		}
	default:
		if !m.Known() {
			cn.log.Debug("unknown message from the hub", "t", m.T)
			// One that expects an answer gets bad_request (docs/protocol.md).
			if m.ID != 0 {
				cn.peer.Reply(m.ID, nil, api.Errorf(api.CodeBadRequest, "unknown message type %q", m.T))
			}
		}
	}
}

// request is a request in progress.
type request struct{ cancel context.CancelFunc }

// endReq forgets a finished request (unless its id was reused since).
func (cn *conn) endReq(id uint64, req *request) {
	req.cancel()
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if cn.reqs[id] == req {
		delete(cn.reqs, id)
	}
}

func (cn *conn) onFrame(f link.Frame) {
	if f.Type != link.FrameInput {
		return
	}
	cn.mu.Lock()
	ls := cn.streams[f.Stream]
	cn.mu.Unlock()
	if ls != nil {
		ls.st.Write(f.Data)
		// Keys typed in a terminal may answer a dialog on its screen.
		cn.o.Agent.TerminalInput(ls.session)
	}
}

// sessionDir is a session's directory, for the policy.
func (cn *conn) sessionDir(ctx context.Context, id string) (string, bool) {
	s, err := cn.o.Agent.Session(ctx, api.SessionRef{ID: id})
	return s.Dir, err == nil
}

// ops is this connection's table: the agent's operations, and the link's
// own, which act on this connection's terminal streams.
func (cn *conn) ops() *backend.Mux {
	m := cn.o.Agent.Mux().Clone()
	backend.Handle(m, api.OpTermOpen, cn.openStream)
	backend.HandleNone(m, api.OpTermClose, func(_ context.Context, r api.TermCloseRequest) error {
		cn.closeStream(r.Stream, false)
		return nil
	})
	backend.HandleNone(m, api.OpTermResize, func(_ context.Context, r api.TermResizeRequest) error {
		cn.mu.Lock()
		ls := cn.streams[r.Stream]
		cn.mu.Unlock()
		if ls == nil {
			return api.Errorf(api.CodeNotFound, "no terminal stream %d", r.Stream)
		}
		return ls.st.Resize(r.Cols, r.Rows)
	})
	return m
}

// handle runs one request: its args decoded strictly, then checked against
// the policy (which denies every op it does not name), then served.
func (cn *conn) handle(ctx context.Context, m link.Msg) (any, error) {
	req, err := cn.mux.Decode(m.Op, m.Args)
	if err != nil {
		return nil, err
	}
	if err := cn.o.Policy.check(ctx, cn, m.Op, req); err != nil {
		if errors.Is(err, api.ErrPolicyDenied) {
			cn.log.Warn("the hub asked for what this machine's policy does not allow; refused", "op", m.Op, "err", err)
		}
		return nil, err
	}
	return cn.mux.Serve(ctx, m.Op, req)
}

// openStream attaches a terminal and starts sending its output.
func (cn *conn) openStream(ctx context.Context, a api.TermOpenRequest) (api.TermOpenResult, error) {
	if a.Stream == 0 {
		return api.TermOpenResult{}, api.Errorf(api.CodeBadRequest, "stream number 0")
	}
	st, from, reset, err := cn.o.Agent.OpenTerminal(ctx, a.ID, a.Cols, a.Rows, a.Resume, a.Offset)
	if err != nil {
		return api.TermOpenResult{}, err
	}
	if err := ctx.Err(); err != nil {
		// The hub gave up on it: nobody will read it. Never attached, the
		// stream goes with the agent's sweep after the grace period.
		return api.TermOpenResult{}, err
	}
	sctx, cancel := context.WithCancel(cn.ctx)
	ls := &linkStream{num: a.Stream, session: a.ID, st: st, cancel: cancel, acked: from, wake: make(chan struct{})}
	cn.mu.Lock()
	if old := cn.streams[a.Stream]; old != nil {
		old.cancel()
		old.st.DropViewer()
	}
	cn.streams[a.Stream] = ls
	cn.mu.Unlock()
	st.AddViewer()
	if !cn.g.Go(func() { cn.pump(sctx, ls, from) }) {
		cn.closeStream(a.Stream, false)
		return api.TermOpenResult{}, api.Errorf(api.CodeUnavailable, "the link is closing")
	}
	return api.TermOpenResult{StreamID: st.StreamID(), Offset: from, Reset: reset}, nil
}

// pump sends a stream's output, never more than Window beyond what the hub
// acknowledged: a slow viewer holds back this stream (and through it
// tmux), not the link.
func (cn *conn) pump(ctx context.Context, ls *linkStream, off uint64) {
	for {
		if !ls.waitWindow(ctx, off) {
			return
		}
		data, err := ls.st.Read(ctx, off, link.MaxOutputChunk)
		switch {
		case errors.Is(err, term.ErrRedraw):
			// The viewer fell behind a flood: the hub opens a fresh stream,
			// which replaces this one once it is attached. Until the hub
			// closes this number, keystrokes sent to it still reach the
			// terminal.
			cn.log.Debug("terminal redraw", "stream", ls.num, "offset", off)
			cn.peer.Send(link.Msg{T: link.TypeTermRedraw, Stream: ls.num})
			return
		case errors.Is(err, term.ErrClosed):
			cn.closeStream(ls.num, true)
			cn.peer.Send(link.Msg{T: link.TypeTermExit, Stream: ls.num, Reason: "the terminal closed"})
			return
		case err != nil:
			return // the link or the stream went away
		}
		if err := cn.peer.SendFrame(link.OutputFrame(ls.num, off, data)); err != nil {
			return
		}
		off += uint64(len(data))
	}
}

func (ls *linkStream) waitWindow(ctx context.Context, off uint64) bool {
	for {
		ls.mu.Lock()
		if off-ls.acked < Window {
			ls.mu.Unlock()
			return true
		}
		w := ls.wake
		ls.mu.Unlock()
		select {
		case <-w:
		case <-ctx.Done():
			return false
		}
	}
}

func (ls *linkStream) ack(off uint64) {
	ls.mu.Lock()
	if off > ls.acked {
		ls.acked = off
		close(ls.wake)
		ls.wake = make(chan struct{})
	}
	ls.mu.Unlock()
}

// closeStream stops sending a stream. The terminal itself stays in the
// agent for a while (a viewer may come back to it) unless it is done.
func (cn *conn) closeStream(num uint32, done bool) {
	cn.mu.Lock()
	ls := cn.streams[num]
	delete(cn.streams, num)
	cn.mu.Unlock()
	if ls == nil {
		return
	}
	ls.cancel()
	ls.st.DropViewer()
	if done {
		ls.st.Close()
	}
}

func (cn *conn) stopStreams() {
	cn.mu.Lock()
	nums := make([]uint32, 0, len(cn.streams))
	for n := range cn.streams {
		nums = append(nums, n)
	}
	cn.mu.Unlock()
	for _, n := range nums {
		cn.closeStream(n, false)
	}
}
