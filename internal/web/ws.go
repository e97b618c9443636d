package web

import (
	"context"
	"encoding/binary"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/backend"
	"github.com/corral-dev/corral/internal/httpapi"
)

// Terminal frame types (docs/web-protocol.md).
const (
	FrameOutput = 0x01
	FrameHello  = 0x02
	FrameReset  = 0x03
	FramePong   = 0x04
	FrameExit   = 0x05
	FrameInput  = 0x11
	FrameResize = 0x12
	FramePing   = 0x13
)

const (
	wsPing         = 15 * time.Second
	wsWriteTimeout = 30 * time.Second
	// maxInputFrame bounds what a browser may send in one frame: a paste.
	maxInputFrame = 1 << 20
	outputChunk   = 64 << 10
)

// accept upgrades to a WebSocket. coder/websocket refuses an Origin whose
// host is not the request's Host, so another site cannot open our sockets
// with the person's cookie.
func accept(w http.ResponseWriter, r *http.Request) (*websocket.Conn, error) {
	return websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
}

// eventsWS streams events as JSON text frames (docs/web-protocol.md).
func (s *Server) eventsWS(w http.ResponseWriter, r *http.Request) {
	var since uint64
	if v := r.URL.Query().Get("since"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			httpapi.WriteError(w, api.Errorf(api.CodeBadRequest, "since must be a sequence number"))
			return
		}
		since = n
	}
	c, err := accept(w, r)
	if err != nil {
		return // accept wrote the error
	}
	defer c.CloseNow()
	ctx := c.CloseRead(r.Context())
	sub, err := s.b.Subscribe(ctx, since)
	if err != nil {
		c.Close(websocket.StatusInternalError, "subscribe failed")
		return
	}
	defer func() { sub.Close() }()
	writeText := func(b []byte) error {
		wctx, cancel := context.WithTimeout(ctx, wsWriteTimeout)
		defer cancel()
		return c.Write(wctx, websocket.MessageText, b)
	}
	write := func(ev api.Event) error {
		// Usually encoded once by the bus for every reader (api.Event.JSON).
		b, err := ev.Encode()
		if err != nil {
			return err
		}
		return writeText(b)
	}
	ping := time.NewTicker(wsPing)
	defer ping.Stop()
	var last uint64
	for {
		select {
		case <-ctx.Done():
			c.Close(websocket.StatusNormalClosure, "")
			return
		case <-ping.C:
			if writeText([]byte(`{"type":"ping"}`)) != nil {
				return
			}
		case ev, ok := <-sub.C():
			if !ok {
				if sub.Err() == nil {
					c.Close(websocket.StatusNormalClosure, "")
					return
				}
				// Too slow: say so, then carry on from what was sent.
				if write(api.Event{Seq: last, Type: api.EventResync, Time: time.Now()}) != nil {
					return
				}
				next, err := s.b.Subscribe(ctx, 0) // a snapshot follows
				if err != nil {
					return
				}
				sub = next
				continue
			}
			last = ev.Seq
			if write(*ev) != nil {
				return
			}
		}
	}
}

// terminalWS connects a browser to a session's terminal.
func (s *Server) terminalWS(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	cols, _ := strconv.Atoi(q.Get("cols"))
	rows, _ := strconv.Atoi(q.Get("rows"))
	offset, _ := strconv.ParseUint(q.Get("offset"), 10, 64)
	// Accept (which checks the Origin and that this is a WebSocket at
	// all) before anything is spawned or resized: a refused request must
	// leave no tmux client behind (docs/web-protocol.md).
	c, err := accept(w, r)
	if err != nil {
		return
	}
	defer c.CloseNow()
	c.SetReadLimit(maxInputFrame + 16)
	t, from, reset, err := s.b.OpenTerminal(r.Context(), r.PathValue("id"), cols, rows, q.Get("stream"), offset)
	if err != nil {
		closeWithError(c, err)
		return
	}
	t.AddViewer()
	defer func() { t.DropViewer() }()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()

	write := func(b []byte) error {
		wctx, wcancel := context.WithTimeout(ctx, wsWriteTimeout)
		defer wcancel()
		return c.Write(wctx, websocket.MessageBinary, b)
	}
	if write(append([]byte{FrameHello}, t.StreamID()...)) != nil {
		return
	}
	if reset && write([]byte{FrameReset}) != nil {
		return
	}

	// The terminal can be replaced by a fresh one (a redraw): input goes to
	// whichever is current.
	var mu sync.Mutex
	size := [2]int{cols, rows}
	current := func() backend.Terminal {
		mu.Lock()
		defer mu.Unlock()
		return t
	}

	// Input: keystrokes, resizes and pings from the browser, on a
	// goroutine of this handler's that it waits for: cancel and the close
	// end its read.
	input := make(chan struct{})
	defer func() {
		cancel()
		c.CloseNow()
		<-input
	}()
	go func() {
		defer close(input)
		defer cancel()
		for {
			typ, b, err := c.Read(ctx)
			if err != nil {
				return
			}
			if typ != websocket.MessageBinary || len(b) == 0 {
				continue
			}
			switch b[0] {
			case FrameInput:
				if _, err := current().Write(b[1:]); err != nil {
					return
				}
			case FrameResize:
				if len(b) == 5 {
					cc, rr := int(binary.BigEndian.Uint16(b[1:3])), int(binary.BigEndian.Uint16(b[3:5]))
					mu.Lock()
					size = [2]int{cc, rr}
					mu.Unlock()
					current().Resize(cc, rr)
				}
			case FramePing:
				if write([]byte{FramePong}) != nil {
					return
				}
			}
		}
	}()

	// Output: from the stream's ring, in order, each frame carrying its
	// offset so the browser can resume exactly.
	off := from
	for {
		data, err := t.Read(ctx, off, outputChunk)
		if errors.Is(err, backend.ErrTermRedraw) {
			// The viewer fell behind a flood and may have missed lines:
			// replace its terminal with a fresh one (complete scrollback,
			// then the live screen).
			mu.Lock()
			cols, rows := size[0], size[1]
			mu.Unlock()
			next, _, _, oerr := s.b.OpenTerminal(ctx, r.PathValue("id"), cols, rows, "", 0)
			if oerr != nil {
				err = oerr
			} else {
				t.DropViewer()
				t.Close()
				next.AddViewer()
				mu.Lock()
				t = next
				mu.Unlock()
				off = 0
				if write(append([]byte{FrameHello}, next.StreamID()...)) != nil || write([]byte{FrameReset}) != nil {
					return
				}
				continue
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			reason := "the terminal closed"
			if !errors.Is(err, backend.ErrTermClosed) {
				reason = err.Error()
			}
			write(append([]byte{FrameExit}, reason...))
			c.Close(websocket.StatusNormalClosure, "")
			return
		}
		frame := make([]byte, 9+len(data))
		frame[0] = FrameOutput
		binary.BigEndian.PutUint64(frame[1:9], off)
		copy(frame[9:], data)
		if write(frame) != nil {
			return
		}
		off += uint64(len(data))
	}
}

// closeWithError ends an accepted terminal WebSocket that could not open its
// terminal: the close code is 4000 plus the HTTP status the error would have
// had (4404 no such session, 4409 not attachable, 4503 the machine is
// offline), the reason its message (docs/web-protocol.md).
func closeWithError(c *websocket.Conn, err error) {
	e := api.AsError(err)
	reason := e.Message
	if len(reason) > 120 { // a close reason holds at most 123 bytes
		reason = reason[:120]
		for !utf8.ValidString(reason) {
			reason = reason[:len(reason)-1]
		}
	}
	c.Close(websocket.StatusCode(4000+api.HTTPStatus(e.Code)), reason)
}
