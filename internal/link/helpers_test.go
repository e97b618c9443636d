package link

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// conns are the two ends of a link: a dials (the agent), b accepts (the
// hub). kill drops b without a close, as a crash or a lost network would.
type conns struct {
	a, b Conn
	kill func()
}

var connKinds = []string{"pipe", "websocket"}

// eachKind runs f once over a Pipe and once over a loopback WebSocket.
func eachKind(t *testing.T, f func(t *testing.T, kind string)) {
	for _, k := range connKinds {
		t.Run(k, func(t *testing.T) {
			t.Parallel()
			f(t, k)
		})
	}
}

func newConns(t testing.TB, kind string) conns {
	t.Helper()
	switch kind {
	case "pipe":
		a, b := Pipe()
		t.Cleanup(func() { a.Close(StatusNormal, ""); b.Close(StatusNormal, "") })
		return conns{a: a, b: b, kill: func() { b.(*pipeEnd).kill() }}
	case "websocket":
		return wsConns(t)
	}
	t.Fatalf("unknown kind %q", kind)
	return conns{}
}

// kill drops the pipe as a cancelled read would: the other end sees
// StatusAbnormal.
func (e *pipeEnd) kill() {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := e.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		_ = e.waitLocked(ctx)
	}
}

func wsConns(t testing.TB) conns {
	t.Helper()
	accepted := make(chan *websocket.Conn, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
		if err != nil {
			t.Errorf("accept: %v", err)
			return
		}
		accepted <- c
	}))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	url := "ws" + strings.TrimPrefix(srv.URL, "http") + "/api/v1/link?v=1"
	ac, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		t.Fatal(err)
	}
	var bc *websocket.Conn
	select {
	case bc = <-accepted:
	case <-ctx.Done():
		t.Fatal("no connection accepted")
	}
	t.Cleanup(func() { ac.CloseNow(); bc.CloseNow() })
	return conns{
		a:    NewWebSocket(ac, 5*time.Second),
		b:    NewWebSocket(bc, 5*time.Second),
		kill: func() { bc.CloseNow() },
	}
}

// ctxT is a context that ends with the test, or after a while.
func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// running is a Peer whose Run goes on in the background.
type running struct {
	*Peer
	done chan error
}

func run(t testing.TB, c Conn, o Options) running {
	t.Helper()
	p := NewPeer(c, o)
	r := running{Peer: p, done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { r.done <- p.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-r.done
	})
	return r
}

// wait returns Run's error, failing the test if it takes longer than d.
func (r running) wait(t testing.TB, d time.Duration) error {
	t.Helper()
	select {
	case err := <-r.done:
		r.done <- err // for the cleanup
		return err
	case <-time.After(d):
		t.Fatalf("Run still going after %v", d)
		return nil
	}
}

// readErr reads c until it fails and returns the error.
func readErr(t testing.TB, c Conn, d time.Duration) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	for {
		_, _, err := c.Read(ctx)
		if err != nil {
			if ctx.Err() != nil {
				t.Fatalf("the conn did not fail within %v", d)
			}
			return err
		}
	}
}

// readMsg reads the next text message of c.
func readMsg(t testing.TB, c Conn) Msg {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		kind, b, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if kind != Text {
			continue
		}
		m, err := DecodeMsg(b)
		if err != nil {
			t.Fatalf("decode %q: %v", b, err)
		}
		return m
	}
}

func writeMsg(t testing.TB, c Conn, m Msg) {
	t.Helper()
	b, err := EncodeMsg(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Write(context.Background(), Text, b); err != nil {
		t.Fatalf("write: %v", err)
	}
}
