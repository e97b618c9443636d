package link

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/api"
)

// agent answers requests as a test agent would, each on a goroutine of its
// own (as the package doc asks of slow work):
//
//	echo      returns its args
//	capture   returns an api.Screen
//	missing   fails with not_found
//	never     never answers
//	anything else: bad_request
type agent struct {
	p    **Peer
	msgs chan Msg
}

func newAgent() *agent { return &agent{p: new(*Peer), msgs: make(chan Msg, 100)} }

func (a *agent) onMsg(m Msg) {
	if m.T != TypeReq {
		a.msgs <- m
		return
	}
	go func() {
		p := *a.p
		switch m.Op {
		case "echo":
			p.Reply(m.ID, m.Args, nil)
		case "capture":
			var args api.CaptureRequest
			if err := m.DecodeArgs(&args); err != nil {
				p.Reply(m.ID, nil, err)
				return
			}
			p.Reply(m.ID, api.Screen{Text: "screen of " + args.ID, Cols: 80, Rows: 24, Cursor: [2]int{3, args.History}}, nil)
		case "missing":
			p.Reply(m.ID, nil, api.Errorf(api.CodeNotFound, "no session %q", "x"))
		case "never":
		case "write": // the answer with its seq, then the events
			p.ReplySeq(m.ID, 3, api.Empty{}, nil)
			for i := 1; i <= 3; i++ {
				p.Send(Msg{T: TypeEvent, Seq: uint64(i), Event: &api.Event{Seq: uint64(i), Type: api.EventSession, Session: &api.Session{ID: "s1"}}})
			}
		case "fail_write":
			p.ReplySeq(m.ID, 7, nil, api.Errorf(api.CodeConflict, "half done"))
		case "big":
			p.Reply(m.ID, strings.Repeat("x", MaxFrame), nil)
		default:
			p.Reply(m.ID, nil, api.Errorf(api.CodeBadRequest, "unknown op %q", m.Op))
		}
	}()
}

// pair runs a hub Peer on the dialing... no: hub on b, agent on a.
func pair(t *testing.T, kind string, hubOpts Options) (hub running, ag running, ga *agent, c conns) {
	t.Helper()
	c = newConns(t, kind)
	ga = newAgent()
	ag = run(t, c.a, Options{OnMsg: ga.onMsg})
	*ga.p = ag.Peer
	hub = run(t, c.b, hubOpts)
	return hub, ag, ga, c
}

func TestCall(t *testing.T) {
	eachKind(t, func(t *testing.T, kind string) {
		hub, _, _, _ := pair(t, kind, Options{})
		ctx := ctxT(t)

		var scr api.Screen
		if err := hub.Call(ctx, "capture", api.CaptureRequest{SessionRef: api.SessionRef{ID: "s1"}, History: 5}, &scr); err != nil {
			t.Fatal(err)
		}
		if scr != (api.Screen{Text: "screen of s1", Cols: 80, Rows: 24, Cursor: [2]int{3, 5}}) {
			t.Errorf("%+v", scr)
		}

		err := hub.Call(ctx, "missing", api.SessionRef{ID: "x"}, &scr)
		var ae *api.Error
		if !errors.Is(err, api.ErrNotFound) || !errors.As(err, &ae) || ae.Message != `no session "x"` {
			t.Errorf("typed error: %#v", err)
		}
		if api.AsError(err).Code != api.CodeNotFound {
			t.Errorf("AsError: %v", api.AsError(err))
		}
		if err := hub.Call(ctx, "frobnicate", nil, nil); !errors.Is(err, api.ErrBadRequest) {
			t.Errorf("unknown op: %v", err)
		}
		if err := hub.Call(ctx, "capture", json.RawMessage(`{"id":5}`), &scr); !errors.Is(err, api.ErrBadRequest) {
			t.Errorf("bad args: %v", err)
		}
		var n int
		if err := hub.Call(ctx, "capture", api.CaptureRequest{SessionRef: api.SessionRef{ID: "s"}}, &n); err == nil || errors.Is(err, ErrClosed) {
			t.Errorf("result of the wrong type: %v", err)
		}
		// A result over the limit comes back as too_large; the link lives.
		if err := hub.Call(ctx, "big", nil, nil); !errors.Is(err, api.ErrTooLarge) {
			t.Errorf("big result: %v", err)
		}
		var echo map[string]string
		if err := hub.Call(ctx, "echo", map[string]string{"still": "up"}, &echo); err != nil || echo["still"] != "up" {
			t.Errorf("after all that: %v %v", echo, err)
		}
	})
}

// TestCallSeq: an answer carries the other end's sequence number, failed
// or not, and may arrive before the events up to it (the caller waits for
// those: the hub's seq rule, tested in internal/hub).
func TestCallSeq(t *testing.T) {
	eachKind(t, func(t *testing.T, kind string) {
		hub, _, _, _ := pair(t, kind, Options{})
		ctx := ctxT(t)
		seq, err := hub.CallSeq(ctx, "write", api.Empty{}, &api.Empty{})
		if err != nil || seq != 3 {
			t.Fatalf("seq %d, %v; want 3", seq, err)
		}
		seq, err = hub.CallSeq(ctx, "fail_write", api.Empty{}, nil)
		if !errors.Is(err, api.ErrConflict) || seq != 7 {
			t.Fatalf("failed write: seq %d, %v; want 7 and conflict", seq, err)
		}
		if seq, err := hub.CallSeq(ctx, "echo", api.Empty{}, nil); err != nil || seq != 0 {
			t.Fatalf("a plain Reply: seq %d, %v", seq, err)
		}
	})
}

func TestConcurrentCalls(t *testing.T) {
	eachKind(t, func(t *testing.T, kind string) {
		hub, _, _, _ := pair(t, kind, Options{})
		ctx := ctxT(t)
		var wg sync.WaitGroup
		for g := range 32 {
			wg.Go(func() {
				for i := range 50 {
					want := fmt.Sprintf("%d/%d/%s", g, i, strings.Repeat("z", i*37))
					var got struct{ V string }
					if err := hub.Call(ctx, "echo", struct{ V string }{want}, &got); err != nil {
						t.Error(err)
						return
					}
					if got.V != want {
						t.Errorf("asked %q, got %q", want[:10], got.V[:min(10, len(got.V))])
						return
					}
				}
			})
		}
		wg.Wait()
	})
}

func TestCallCancel(t *testing.T) {
	eachKind(t, func(t *testing.T, kind string) {
		hub, _, _, _ := pair(t, kind, Options{})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancel()
		start := time.Now()
		err := hub.Call(ctx, "never", nil, nil)
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "never") {
			t.Fatalf("%v", err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("took %v", d)
		}
		hub.mu.Lock()
		left := len(hub.pending)
		hub.mu.Unlock()
		if left != 0 {
			t.Errorf("%d pending calls left after cancellation", left)
		}
		// A cancelled context before the call: nothing is sent.
		cancelled, c2 := context.WithCancel(context.Background())
		c2()
		if err := hub.Call(cancelled, "echo", nil, nil); !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled before: %v", err)
		}
		// The link is fine.
		if err := hub.Call(ctxT(t), "echo", nil, nil); err != nil {
			t.Error(err)
		}
		if hub.Err() != nil {
			t.Error(hub.Err())
		}
	})
}

// Pending calls fail promptly when the other end goes: closed cleanly, or
// dropped without a word.
func TestPeerDiesMidCall(t *testing.T) {
	for _, how := range []string{"close", "drop"} {
		t.Run(how, func(t *testing.T) {
			eachKind(t, func(t *testing.T, kind string) {
				hub, ag, _, c := pair(t, kind, Options{})
				ctx := ctxT(t)
				const n = 10
				errs := make(chan error, n)
				for range n {
					go func() { errs <- hub.Call(ctx, "never", nil, nil) }()
				}
				waitFor(t, func() bool {
					hub.mu.Lock()
					defer hub.mu.Unlock()
					return len(hub.pending) == n
				})
				time.Sleep(10 * time.Millisecond) // let the requests reach the agent
				start := time.Now()
				if how == "close" {
					ag.Close(StatusGoingAway, "agent stopping")
				} else {
					c.kill()
				}
				for range n {
					select {
					case err := <-errs:
						if !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), "never") {
							t.Errorf("pending call: %v", err)
						}
					case <-time.After(5 * time.Second):
						t.Fatal("a pending call did not fail")
					}
				}
				if d := time.Since(start); d > 2*time.Second {
					t.Errorf("pending calls failed after %v", d)
				}
				err := hub.wait(t, 5*time.Second)
				if !errors.Is(err, ErrClosed) {
					t.Errorf("Run: %v", err)
				}
				if how == "close" {
					var ce *CloseError
					if !errors.As(err, &ce) || ce.Code != StatusGoingAway || ce.Reason != "agent stopping" || !ce.Remote {
						t.Errorf("Run: %v", err)
					}
				}
				// Later calls fail at once.
				if err := hub.Call(ctx, "echo", nil, nil); !errors.Is(err, ErrClosed) {
					t.Errorf("call after: %v", err)
				}
				if err := hub.Send(Msg{T: TypePing}); !errors.Is(err, ErrClosed) {
					t.Errorf("send after: %v", err)
				}
			})
		})
	}
}

func TestPeerClose(t *testing.T) {
	eachKind(t, func(t *testing.T, kind string) {
		hub, ag, _, _ := pair(t, kind, Options{})
		hub.Close(StatusReplaced, "replaced")
		err := ag.wait(t, 5*time.Second)
		var ce *CloseError
		if !errors.Is(err, ErrClosed) || !errors.As(err, &ce) || ce.Code != StatusReplaced || ce.Reason != "replaced" {
			t.Errorf("agent: %v", err)
		}
		if err := hub.wait(t, 5*time.Second); CloseStatus(err) != StatusReplaced {
			t.Errorf("hub: %v", err)
		}
	})
}

func TestRunContextEnds(t *testing.T) {
	eachKind(t, func(t *testing.T, kind string) {
		c := newConns(t, kind)
		ag := run(t, c.a, Options{})
		p := NewPeer(c.b, Options{})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- p.Run(ctx) }()
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) || !errors.Is(err, ErrClosed) {
				t.Errorf("%v", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Run did not return")
		}
		if err := ag.wait(t, 5*time.Second); CloseStatus(err) != StatusGoingAway {
			t.Errorf("other end: %v", err)
		}
		if err := p.Run(context.Background()); err == nil {
			t.Error("second Run")
		}
	})
}

// A peer that says nothing for three intervals is closed as dead.
func TestHeartbeatSilentPeer(t *testing.T) {
	eachKind(t, func(t *testing.T, kind string) {
		c := newConns(t, kind) // c.b never writes; it only counts what it gets
		// The silent end reads from the start: a pipe's write waits for
		// its reader, and a ping still waiting when the link is closed as
		// dead would never be seen.
		type seen struct {
			pings int
			err   error
		}
		got := make(chan seen, 1)
		go func() {
			var s seen
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			for {
				_, b, err := c.b.Read(ctx)
				if err != nil {
					s.err = err
					got <- s
					return
				}
				if m, _ := DecodeMsg(b); m.T == TypePing {
					s.pings++
				}
			}
		}()
		p := run(t, c.a, Options{})
		const every = 20 * time.Millisecond
		start := time.Now()
		hb := make(chan error, 1)
		go func() { hb <- p.Heartbeat(ctxT(t), every) }()
		err := p.wait(t, 5*time.Second)
		if d := time.Since(start); d < 3*every || d > 2*time.Second {
			t.Errorf("declared dead after %v", d)
		}
		if !errors.Is(err, ErrDead) || !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), "silent") {
			t.Errorf("Run: %v", err)
		}
		if err := <-hb; !errors.Is(err, ErrDead) {
			t.Errorf("Heartbeat: %v", err)
		}
		// The silent end saw pings, then the close.
		s := <-got
		if CloseStatus(s.err) != StatusGoingAway {
			t.Errorf("silent end: %v", s.err)
		}
		if s.pings < 1 {
			t.Errorf("%d pings", s.pings)
		}
	})
}

// Pongs (sent by Run on its own) keep a link with heartbeats alive.
func TestHeartbeatKeepsAlive(t *testing.T) {
	eachKind(t, func(t *testing.T, kind string) {
		hub, ag, _, _ := pair(t, kind, Options{})
		const every = 150 * time.Millisecond // generous: tests run in parallel, with -race
		ctx, cancel := context.WithTimeout(context.Background(), 10*every)
		defer cancel()
		if err := hub.Heartbeat(ctx, every); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("heartbeat: %v", err)
		}
		if hub.Err() != nil || ag.Err() != nil {
			t.Errorf("link ended: %v / %v", hub.Err(), ag.Err())
		}
	})
}

// Malformed input closes the link with 1007.
func TestMalformed(t *testing.T) {
	for _, c := range []struct {
		name string
		kind Kind
		b    string
	}{
		{"json", Text, `{"t":"event",`},
		{"not an object", Text, `[1,2]`},
		{"no type", Text, `{"id":1}`},
		{"mistyped field", Text, `{"t":"sync","seq":"one"}`},
		{"short frame", Binary, "\x01\x00\x00"},
		{"short output frame", Binary, "\x01\x00\x00\x00\x01\x00"},
	} {
		t.Run(c.name, func(t *testing.T) {
			eachKind(t, func(t *testing.T, kind string) {
				cs := newConns(t, kind)
				got := make(chan Msg, 1)
				p := run(t, cs.a, Options{OnMsg: func(m Msg) { got <- m }})
				if err := cs.b.Write(ctxT(t), c.kind, []byte(c.b)); err != nil {
					t.Fatal(err)
				}
				err := p.wait(t, 5*time.Second)
				if !errors.Is(err, ErrInvalid) || !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), "1007") {
					t.Errorf("Run: %v", err)
				}
				if err := readErr(t, cs.b, 5*time.Second); CloseStatus(err) != StatusInvalidData {
					t.Errorf("sender: %v", err)
				}
				select {
				case m := <-got:
					t.Errorf("handler got %+v", m)
				default:
				}
			})
		})
	}
}

// A frame over the limit closes the Peer's link with 1009; one the Peer is
// asked to send is refused and the link stays.
func TestPeerTooBig(t *testing.T) {
	eachKind(t, func(t *testing.T, kind string) {
		cs := newConns(t, kind)
		p := run(t, cs.a, Options{})
		if err := p.Send(Msg{T: TypeTermExit, Reason: strings.Repeat("x", MaxFrame)}); !errors.Is(err, ErrTooBig) {
			t.Errorf("Send: %v", err)
		}
		if err := p.SendFrame(OutputFrame(1, 0, make([]byte, MaxFrame))); !errors.Is(err, ErrTooBig) {
			t.Errorf("SendFrame: %v", err)
		}
		if p.Err() != nil {
			t.Fatalf("link ended: %v", p.Err())
		}
		_ = cs.b.Write(ctxT(t), Text, []byte(`{"t":"x","pad":"`+strings.Repeat("x", MaxFrame)+`"}`))
		if err := p.wait(t, 5*time.Second); CloseStatus(err) != StatusTooBig || !errors.Is(err, ErrClosed) {
			t.Errorf("Run: %v", err)
		}
		if err := readErr(t, cs.b, 5*time.Second); CloseStatus(err) != StatusTooBig {
			t.Errorf("sender: %v", err)
		}
	})
}

// Types this version does not know reach OnMsg, with their id and bytes.
func TestUnknownTypes(t *testing.T) {
	eachKind(t, func(t *testing.T, kind string) {
		cs := newConns(t, kind)
		var p running
		got := make(chan Msg, 10)
		p = run(t, cs.a, Options{OnMsg: func(m Msg) {
			got <- m
			if !m.Known() && m.ID != 0 {
				p.Reply(m.ID, nil, api.Errorf(api.CodeBadRequest, "unknown message type %q", m.T))
			}
		}})
		writeMsg(t, cs.b, Msg{T: "future", ID: 41})
		if err := cs.b.Write(ctxT(t), Text, []byte(`{"t":"future2","shape":{"x":[1]},"id":"not a number"}`)); err != nil {
			t.Fatal(err)
		}
		m := <-got
		if m.T != "future" || m.ID != 41 || m.Known() {
			t.Errorf("%+v", m)
		}
		res := readMsg(t, cs.b)
		if res.T != TypeRes || res.ID != 41 || res.OK || !errors.Is(res.Err(), api.ErrBadRequest) {
			t.Errorf("answer: %+v", res)
		}
		m = <-got
		var raw struct{ Shape struct{ X []int } }
		if m.T != "future2" || json.Unmarshal(m.Raw, &raw) != nil || len(raw.Shape.X) != 1 {
			t.Errorf("%+v", m)
		}
		if p.Err() != nil {
			t.Error(p.Err())
		}
	})
}

// Without OnMsg, requests and unknown types with an id get bad_request.
func TestNoHandler(t *testing.T) {
	eachKind(t, func(t *testing.T, kind string) {
		hub, ag, _, _ := pair(t, kind, Options{})
		_ = hub
		if err := ag.Call(ctxT(t), "kill", api.SessionRef{ID: "s"}, nil); !errors.Is(err, api.ErrBadRequest) {
			t.Errorf("req: %v", err)
		}
		// An event without a handler is dropped, the link stays.
		if err := ag.Send(Msg{T: TypeEvent, Seq: 1, Event: &api.Event{Seq: 1}}); err != nil {
			t.Fatal(err)
		}
		if err := ag.Call(ctxT(t), "later", nil, nil); !errors.Is(err, api.ErrBadRequest) {
			t.Errorf("req: %v", err)
		}
	})
}

// Output frames with their offsets, input frames and control messages
// arrive in the order they were sent.
func TestFramesAndOrder(t *testing.T) {
	eachKind(t, func(t *testing.T, kind string) {
		cs := newConns(t, kind)
		type got struct {
			m Msg
			f Frame
		}
		hubGot := make(chan got, 1000)
		hub := run(t, cs.b, Options{
			OnMsg:   func(m Msg) { hubGot <- got{m: m} },
			OnFrame: func(f Frame) { hubGot <- got{f: f} },
		})
		agGot := make(chan Frame, 10)
		ag := run(t, cs.a, Options{OnFrame: func(f Frame) { agGot <- f }})

		var off uint64
		var sent [][]byte
		for i := range 200 {
			data := []byte(strings.Repeat(string(rune('a'+i%26)), 1+i*300%MaxOutputChunk))
			if i == 100 {
				if err := ag.Send(Msg{T: TypeTermRedraw, Stream: 1, NewStream: 2}); err != nil {
					t.Fatal(err)
				}
				off = 0
			}
			stream := uint32(1 + i/100)
			if err := ag.SendFrame(OutputFrame(stream, off, data)); err != nil {
				t.Fatal(err)
			}
			sent = append(sent, data)
			off += uint64(len(data))
		}
		if err := ag.Send(Msg{T: TypeTermExit, Stream: 2, Reason: "exited"}); err != nil {
			t.Fatal(err)
		}
		var want uint64
		for i := range 200 {
			if i == 100 {
				g := <-hubGot
				if g.m.T != TypeTermRedraw || g.m.NewStream != 2 {
					t.Fatalf("redraw expected, got %+v", g)
				}
				want = 0
			}
			g := <-hubGot
			f := g.f
			if f.Type != FrameOutput || f.Stream != uint32(1+i/100) || f.Offset != want || string(f.Data) != string(sent[i]) {
				t.Fatalf("frame %d: type %v stream %d offset %d (%d bytes), want offset %d", i, f.Type, f.Stream, f.Offset, len(f.Data), want)
			}
			want += uint64(len(f.Data))
		}
		if g := <-hubGot; g.m.T != TypeTermExit || g.m.Reason != "exited" {
			t.Errorf("exit expected, got %+v", g)
		}

		// Input the other way, and a frame type from the future.
		if err := hub.SendFrame(InputFrame(2, []byte("ls\r"))); err != nil {
			t.Fatal(err)
		}
		if err := hub.SendFrame(Frame{Type: 0x7f, Stream: 2, Data: []byte("?")}); err != nil {
			t.Fatal(err)
		}
		if f := <-agGot; f.Type != FrameInput || f.Stream != 2 || string(f.Data) != "ls\r" {
			t.Errorf("input: %+v", f)
		}
		if f := <-agGot; f.Type != 0x7f || string(f.Data) != "?" {
			t.Errorf("unknown frame: %+v", f)
		}
	})
}

// A handler may Call the other end: answers are dispatched by the reader,
// not by the handler's goroutine.
func TestHandlerMayCall(t *testing.T) {
	eachKind(t, func(t *testing.T, kind string) {
		cs := newConns(t, kind)
		ga := newAgent()
		ag := run(t, cs.a, Options{OnMsg: ga.onMsg})
		*ga.p = ag.Peer
		answers := make(chan error, 1)
		var hub running
		hub = run(t, cs.b, Options{OnMsg: func(m Msg) {
			if m.T == TypeSync {
				var scr api.Screen
				answers <- hub.Call(ctxT(t), "capture", api.CaptureRequest{SessionRef: api.SessionRef{ID: "s"}}, &scr)
			}
		}})
		if err := ag.Send(Msg{T: TypeSync}); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-answers:
			if err != nil {
				t.Error(err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a Call from a handler deadlocked")
		}
	})
}

// A handler that never returns cannot wedge the link forever: once the
// reader's buffer is full, the link is closed after StallTimeout, and not
// as dead, though the reader stopped reading.
func TestStalledHandler(t *testing.T) {
	eachKind(t, func(t *testing.T, kind string) {
		cs := newConns(t, kind)
		release := make(chan struct{})
		defer close(release)
		const stall = time.Second
		hub := run(t, cs.b, Options{
			OnFrame:      func(Frame) { <-release },
			StallTimeout: stall,
		})
		ag := run(t, cs.a, Options{})
		go func() {
			chunk := make([]byte, MaxOutputChunk)
			for i := uint64(0); ; i++ {
				if ag.SendFrame(OutputFrame(1, i*MaxOutputChunk, chunk)) != nil {
					return
				}
			}
		}()
		waitFor(t, hub.blocked.Load)
		start := time.Now()
		// Would call the agent dead after 150ms, were it not for the
		// handlers.
		go hub.Heartbeat(ctxT(t), 50*time.Millisecond)
		err := hub.wait(t, 10*time.Second)
		if !errors.Is(err, ErrStalled) || !errors.Is(err, ErrClosed) {
			t.Errorf("Run: %v", err)
		}
		if d := time.Since(start); d < stall/2 {
			t.Errorf("closed after %v", d)
		}
		if err := ag.wait(t, 10*time.Second); CloseStatus(err) != StatusInternal {
			t.Errorf("other end: %v", err)
		}
	})
}

// waitFor polls cond for a few seconds.
func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not met")
}

// Ping: a live peer answers at once; a silent one does not, and Ping gives
// up with its context (the link stays up: only the caller decides it is
// dead); a closed link says why.
func TestPing(t *testing.T) {
	eachKind(t, func(t *testing.T, kind string) {
		hub, ag, _, _ := pair(t, kind, Options{})
		for range 3 { // several in a row: one pong at a time is enough
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if err := hub.Ping(ctx); err != nil {
				t.Fatalf("ping of a live peer: %v", err)
			}
			cancel()
		}
		ag.Close(StatusNormal, "bye")
		if err := hub.Ping(ctxT(t)); !errors.Is(err, ErrClosed) {
			t.Errorf("ping of a closed link: %v", err)
		}

		c := newConns(t, kind) // c.b stays silent
		p := run(t, c.a, Options{})
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		if err := p.Ping(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("ping of a silent peer: %v", err)
		}
		if p.Err() != nil {
			t.Errorf("a ping that got no answer ended the link: %v", p.Err())
		}
	})
}
