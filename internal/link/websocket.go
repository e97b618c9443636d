package link

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/coder/websocket"
)

// DefaultWriteTimeout bounds one write: a peer that takes longer to accept
// a message is gone, and the link is closed.
const DefaultWriteTimeout = 30 * time.Second

type wsConn struct {
	c            *websocket.Conn
	writeTimeout time.Duration
}

// NewWebSocket makes a Conn of an accepted or dialed WebSocket. It sets the
// read limit to MaxFrame (a larger message closes the connection with 1009)
// and bounds every write by writeTimeout (0 means DefaultWriteTimeout).
func NewWebSocket(c *websocket.Conn, writeTimeout time.Duration) Conn {
	if writeTimeout <= 0 {
		writeTimeout = DefaultWriteTimeout
	}
	c.SetReadLimit(MaxFrame)
	return &wsConn{c: c, writeTimeout: writeTimeout}
}

func (w *wsConn) Read(ctx context.Context) (Kind, []byte, error) {
	typ, b, err := w.c.Read(ctx)
	if err != nil {
		var ce websocket.CloseError
		switch {
		case errors.As(err, &ce):
			return 0, nil, &CloseError{Code: int(ce.Code), Reason: ce.Reason, Remote: true}
		case errors.Is(err, websocket.ErrMessageTooBig):
			// coder/websocket has sent the close (1009); Close completes
			// the handshake.
			return 0, nil, fmt.Errorf("link: read: %w", &CloseError{Code: StatusTooBig, Reason: fmt.Sprintf("a message over %d bytes", MaxFrame)})
		}
		return 0, nil, fmt.Errorf("link: read: %w", err)
	}
	switch typ {
	case websocket.MessageText:
		return Text, b, nil
	case websocket.MessageBinary:
		return Binary, b, nil
	}
	return 0, nil, fmt.Errorf("link: read: %w: websocket message type %d", ErrInvalid, typ)
}

func (w *wsConn) Write(ctx context.Context, kind Kind, b []byte) error {
	var typ websocket.MessageType
	switch kind {
	case Text:
		typ = websocket.MessageText
	case Binary:
		typ = websocket.MessageBinary
	default:
		return fmt.Errorf("link: write: unknown kind %v", kind)
	}
	ctx, cancel := context.WithTimeout(ctx, w.writeTimeout)
	defer cancel()
	if err := w.c.Write(ctx, typ, b); err != nil {
		return fmt.Errorf("link: write: %w", err)
	}
	return nil
}

func (w *wsConn) Close(code int, reason string) error {
	if !validCode(code) {
		// coder/websocket would drop the connection without a close frame;
		// say something rather than nothing.
		code, reason = StatusInternal, fmt.Sprintf("invalid close status %d: %s", code, reason)
	}
	return w.c.Close(websocket.StatusCode(code), cutReason(reason))
}
