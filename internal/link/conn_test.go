package link

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

func TestConnRoundTrip(t *testing.T) {
	eachKind(t, func(t *testing.T, kind string) {
		c := newConns(t, kind)
		ctx := ctxT(t)
		msgs := []struct {
			k Kind
			b []byte
		}{
			{Text, []byte(`{"t":"hello"}`)},
			{Binary, EncodeFrame(OutputFrame(1, 0, []byte("out")))},
			{Binary, nil},
			{Text, bytes.Repeat([]byte("x"), MaxFrame)}, // exactly the limit passes
		}
		go func() {
			for _, m := range msgs {
				if err := c.a.Write(ctx, m.k, m.b); err != nil {
					t.Errorf("write: %v", err)
					return
				}
			}
		}()
		for i, m := range msgs {
			k, b, err := c.b.Read(ctx)
			if err != nil {
				t.Fatalf("read %d: %v", i, err)
			}
			if k != m.k || !bytes.Equal(b, m.b) {
				t.Fatalf("read %d: %v %d bytes, want %v %d bytes", i, k, len(b), m.k, len(m.b))
			}
		}
		if err := c.a.Write(ctx, Kind(9), []byte("x")); err == nil {
			t.Error("unknown kind written")
		}
	})
}

func TestConnCloseCarriesStatus(t *testing.T) {
	eachKind(t, func(t *testing.T, kind string) {
		c := newConns(t, kind)
		ctx := ctxT(t)
		// What was sent before the close still arrives.
		if err := c.b.Write(ctx, Text, []byte(`{"t":"last"}`)); err != nil {
			t.Fatal(err)
		}
		closed := make(chan error, 1)
		go func() { closed <- c.b.Close(StatusReplaced, "replaced") }()
		k, b, err := c.a.Read(ctx)
		if err != nil || k != Text || string(b) != `{"t":"last"}` {
			t.Fatalf("%v %q %v", k, b, err)
		}
		err = readErr(t, c.a, 5*time.Second)
		var ce *CloseError
		if !errors.As(err, &ce) || ce.Code != StatusReplaced || ce.Reason != "replaced" || !ce.Remote {
			t.Fatalf("read after close: %v", err)
		}
		if !strings.Contains(err.Error(), "4001") || !strings.Contains(err.Error(), "replaced") {
			t.Errorf("unclear: %v", err)
		}
		if err := <-closed; err != nil {
			t.Errorf("close: %v", err)
		}
		if err := c.b.Write(ctx, Text, []byte("{}")); err == nil {
			t.Error("write after close succeeded")
		}
		if err := c.b.Close(StatusNormal, ""); !errors.Is(err, net.ErrClosed) {
			t.Errorf("second close: %v", err)
		}
	})
}

// A message over MaxFrame closes the link with 1009, whichever Conn.
func TestConnTooBig(t *testing.T) {
	eachKind(t, func(t *testing.T, kind string) {
		c := newConns(t, kind)
		ctx := ctxT(t)
		// The WebSocket sends it (the receiver refuses it); the Pipe refuses
		// it at once. Either way both ends end up closed with 1009.
		_ = c.a.Write(ctx, Binary, make([]byte, MaxFrame+1))
		if err := readErr(t, c.b, 5*time.Second); CloseStatus(err) != StatusTooBig {
			t.Errorf("receiver: %v", err)
		}
		err := readErr(t, c.a, 5*time.Second)
		var ce *CloseError
		if !errors.As(err, &ce) || ce.Code != StatusTooBig || !ce.Remote {
			t.Errorf("sender: %v", err)
		}
	})
}

// A cancelled Read drops the connection, on both kinds.
func TestConnReadCancelDrops(t *testing.T) {
	eachKind(t, func(t *testing.T, kind string) {
		c := newConns(t, kind)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		if _, _, err := c.a.Read(ctx); !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, net.ErrClosed) {
			t.Fatalf("read: %v", err)
		}
		if err := readErr(t, c.b, 5*time.Second); err == nil {
			t.Fatal("other end still up")
		}
	})
}

func TestInvalidCloseStatus(t *testing.T) {
	eachKind(t, func(t *testing.T, kind string) {
		c := newConns(t, kind)
		go c.b.Close(StatusAbnormal, "may not be sent")
		err := readErr(t, c.a, 5*time.Second)
		if CloseStatus(err) != StatusInternal || !strings.Contains(err.Error(), "1006") {
			t.Errorf("%v", err)
		}
	})
}

func TestLongCloseReason(t *testing.T) {
	eachKind(t, func(t *testing.T, kind string) {
		c := newConns(t, kind)
		go c.b.Close(StatusPolicy, strings.Repeat("why ", 100))
		err := readErr(t, c.a, 5*time.Second)
		var ce *CloseError
		if !errors.As(err, &ce) || ce.Code != StatusPolicy || len(ce.Reason) > maxReason || !strings.HasPrefix(ce.Reason, "why why") {
			t.Errorf("%v", err)
		}
	})
}
