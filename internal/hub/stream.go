package hub

import (
	"context"
	"errors"
	"sync"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/backend"
	"github.com/corral-dev/corral/internal/link"
)

// Errors a hub stream ends with: the same values the agent's terminals
// end with, so the servers treat both alike.
var (
	errRedraw     = backend.ErrTermRedraw
	errTermClosed = backend.ErrTermClosed
	// errGap: a viewer asked for bytes the stream no longer holds.
	errGap = errors.New("term: output no longer available")
)

// ackEvery is how much output a stream passes to its viewer before it tells
// the agent (it also tells when the viewer has caught up).
const ackEvery = 32 << 10

// stream is a terminal stream relayed from a device: output frames from the
// agent land in a window-sized buffer (the agent never sends more than
// agentlink.Window beyond what was acknowledged), the viewer reads them by
// offset, and what it read is acknowledged so the agent sends more.
type stream struct {
	h      *Hub
	dev    string
	num    uint32
	id     string // the agent's stream id
	peer   *link.Peer
	closed bool

	mu    sync.Mutex
	buf   []byte // bytes from start on
	start uint64
	acked uint64
	err   error // set when the stream ended; returned once drained
	wake  chan struct{}
	// ready is set once term_open answered; output that comes before (the
	// agent starts sending right after it answers) waits in early.
	ready bool
	early []link.Frame
}

// newStream registers a stream before it is opened, so no output is lost.
func newStream(h *Hub, dev string, num uint32, peer *link.Peer) *stream {
	return &stream{h: h, dev: dev, num: num, peer: peer, wake: make(chan struct{})}
}

// opened records term_open's answer and applies what came before it.
func (s *stream) opened(res api.TermOpenResult) {
	s.mu.Lock()
	s.id, s.start, s.acked, s.ready = res.StreamID, res.Offset, res.Offset, true
	early := s.early
	s.early = nil
	s.mu.Unlock()
	for _, f := range early {
		s.output(f.Offset, f.Data)
	}
}

func (s *stream) wakeLocked() {
	close(s.wake)
	s.wake = make(chan struct{})
}

// output takes a frame from the agent. Frames arrive in order; a frame that
// overlaps what is held (a resend) is trimmed, a gap would be a protocol
// error and ends the stream.
func (s *stream) output(off uint64, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return
	}
	if !s.ready {
		s.early = append(s.early, link.Frame{Offset: off, Data: append([]byte(nil), data...)})
		return
	}
	end := s.start + uint64(len(s.buf))
	switch {
	case off > end:
		s.err = api.Errorf(api.CodeInternal, "terminal stream gap: got offset %d, expected %d", off, end)
	case off+uint64(len(data)) <= end:
		return
	default:
		s.buf = append(s.buf, data[end-off:]...)
	}
	s.wakeLocked()
}

// end finishes the stream with err, after what is buffered.
func (s *stream) end(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.wakeLocked()
	s.mu.Unlock()
}

// fail ends the stream at once (the device went away).
func (s *stream) fail(err error) { s.end(err) }

func (s *stream) StreamID() string { return s.id }

// Read returns output from offset on (backend.Terminal).
func (s *stream) Read(ctx context.Context, offset uint64, max int) ([]byte, error) {
	s.mu.Lock()
	for {
		end := s.start + uint64(len(s.buf))
		if offset < s.start || offset > end {
			s.mu.Unlock()
			return nil, errGap
		}
		if offset < end {
			i := int(offset - s.start)
			n := min(max, len(s.buf)-i)
			out := append([]byte(nil), s.buf[i:i+n]...)
			next := offset + uint64(n)
			// What the viewer took no longer needs keeping.
			drop := int(next - s.start)
			s.buf = append(s.buf[:0], s.buf[drop:]...)
			s.start = next
			ack := next-s.acked >= ackEvery || len(s.buf) == 0
			if ack {
				s.acked = next
			}
			s.mu.Unlock()
			if ack {
				s.peer.Send(link.Msg{T: link.TypeTermAck, Stream: s.num, Offset: next})
			}
			return out, nil
		}
		if s.err != nil {
			err := s.err
			s.mu.Unlock()
			return nil, err
		}
		w := s.wake
		s.mu.Unlock()
		select {
		case <-w:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		s.mu.Lock()
	}
}

// Write sends keystrokes to the terminal.
func (s *stream) Write(p []byte) (int, error) {
	total := len(p)
	for len(p) > 0 {
		n := min(len(p), link.MaxOutputChunk)
		if err := s.peer.SendFrame(link.InputFrame(s.num, p[:n])); err != nil {
			return total - len(p), err
		}
		p = p[n:]
	}
	return total, nil
}

// Resize resizes the terminal.
func (s *stream) Resize(cols, rows int) error {
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	_, err := link.Call(ctx, s.peer, api.OpTermResize, api.TermResizeRequest{Stream: s.num, Cols: cols, Rows: rows})
	return err
}

func (s *stream) AddViewer() {}

// DropViewer: the viewer left; the agent stops sending (it keeps the terminal
// a while for a viewer that comes back).
func (s *stream) DropViewer() { s.Close() }

// Close ends the relay.
func (s *stream) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	if s.err == nil {
		s.err = errTermClosed
	}
	s.wakeLocked()
	s.mu.Unlock()
	s.h.dropStream(s.dev, s.num, s)
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	link.Call(ctx, s.peer, api.OpTermClose, api.TermCloseRequest{Stream: s.num})
	return nil
}

// onFrame routes output frames to their stream.
func (h *Hub) onFrame(info DeviceIdentity, peer *link.Peer, f link.Frame) {
	if f.Type != link.FrameOutput {
		return
	}
	h.mu.Lock()
	dev := h.devices[info.ID]
	var st *stream
	if dev != nil && dev.peer == peer {
		st = dev.streams[f.Stream]
	}
	h.mu.Unlock()
	if st != nil {
		st.output(f.Offset, f.Data)
	}
}

func (h *Hub) dropStream(dev string, num uint32, s *stream) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if d := h.devices[dev]; d != nil && d.streams[num] == s {
		delete(d.streams, num)
	}
}
