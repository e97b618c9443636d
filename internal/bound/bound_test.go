package bound

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// serve runs h within l on a loopback port and returns its address and
// listener.
func serve(t *testing.T, h http.Handler, l Limits) (string, *listener) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	bl := Listener(ln, l, nil)
	srv := Server(h, l, nil)
	go srv.Serve(bl)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String(), bl.(*listener)
}

// waitClosed reads c until the server closes it, at most within d.
func waitClosed(c net.Conn, d time.Duration) error {
	c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return errors.New("still open")
	}
	return nil
}

func waitOpen(t *testing.T, l *listener, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for l.Open() != want {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections open, want %d", l.Open(), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSlowBodies: 200 clients that send their headers and then a body one
// byte at a time (or never) are cut off once the read timeout passes; none
// holds a connection, or a handler, past it.
func TestSlowBodies(t *testing.T) {
	var inHandler atomic.Int32
	l := Limits{MaxConns: 1000, ReadHeader: time.Second, Read: time.Second, Write: time.Second, Idle: time.Second}
	addr, bl := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inHandler.Add(1)
		defer inHandler.Add(-1)
		io.Copy(io.Discard, r.Body)
	}), l)
	const n = 200
	conns := make([]net.Conn, n)
	for i := range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n{")
		conns[i] = c
	}
	start := time.Now()
	for i, c := range conns {
		// The read timeout plus a margin for a loaded machine.
		if err := waitClosed(c, l.Read+5*time.Second-time.Since(start)); err != nil {
			t.Fatalf("slow body %d: %v %v after the start", i, err, time.Since(start).Round(time.Millisecond))
		}
	}
	waitOpen(t, bl, 0)
	if n := inHandler.Load(); n != 0 {
		t.Fatalf("%d handlers still reading", n)
	}
}

// TestConnectionCap: connections beyond the cap are closed at once, the
// ones within it are served, and a slot that frees up is used again.
func TestConnectionCap(t *testing.T) {
	l := Limits{MaxConns: 8, ReadHeader: time.Minute, Read: time.Minute, Write: time.Minute, Idle: time.Minute}
	addr, bl := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }), l)
	var idle []net.Conn
	for range l.MaxConns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		idle = append(idle, c)
	}
	waitOpen(t, bl, l.MaxConns)
	for i := range 20 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			continue // refused is fine too
		}
		if err := waitClosed(c, 5*time.Second); err != nil {
			t.Fatalf("connection %d beyond the cap: %v", i, err)
		}
		c.Close()
	}
	// The idle ones are still there, and usable.
	c := idle[0]
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("a connection within the cap: %v", err)
	}
	resp.Body.Close()
	// One goes: a newcomer gets its place.
	idle[1].Close()
	waitOpen(t, bl, l.MaxConns-1)
	r2, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatalf("after a slot freed up: %v", err)
	}
	r2.Body.Close()
}

// TestWriteDeadlinePerWrite: a handler that answers after longer than the
// write timeout still answers (the deadline runs from each write), and a
// client that stops reading a large answer frees the handler within it.
func TestWriteDeadlinePerWrite(t *testing.T) {
	l := Limits{MaxConns: 10, ReadHeader: time.Second, Read: time.Second, Write: 300 * time.Millisecond, Idle: time.Second}
	writeErr := make(chan error, 1)
	addr, _ := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/late":
			time.Sleep(3 * l.Write)
			io.WriteString(w, "late but whole")
		case "/flood":
			chunk := make([]byte, 64<<10)
			for {
				if _, err := w.Write(chunk); err != nil {
					writeErr <- err
					return
				}
			}
		}
	}), l)
	resp, err := http.Get("http://" + addr + "/late")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "late but whole" {
		t.Fatalf("late answer: %q", b)
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET /flood HTTP/1.1\r\nHost: x\r\n\r\n") // and never read
	select {
	case err := <-writeErr:
		if !errors.Is(err, context.DeadlineExceeded) && !strings.Contains(err.Error(), "timeout") {
			t.Logf("write ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a client that stopped reading held the handler")
	}
}

// TestWebSocketOutlivesDeadlines: a hijacked connection keeps no deadline
// of the server's: a WebSocket lives past the read and write timeouts.
func TestWebSocketOutlivesDeadlines(t *testing.T) {
	l := Limits{MaxConns: 10, ReadHeader: 200 * time.Millisecond, Read: 200 * time.Millisecond, Write: 200 * time.Millisecond, Idle: 200 * time.Millisecond}
	addr, _ := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		for {
			typ, b, err := c.Read(r.Context())
			if err != nil {
				return
			}
			c.Write(r.Context(), typ, b)
		}
	}), l)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws://"+addr+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	// Past every timeout, the socket still echoes.
	time.Sleep(4 * l.Read) // the point of the test: let the server's deadlines pass
	if err := c.Write(ctx, websocket.MessageText, []byte("hi")); err != nil {
		t.Fatal(err)
	}
	if _, b, err := c.Read(ctx); err != nil || string(b) != "hi" {
		t.Fatalf("echo after the timeouts: %q %v", b, err)
	}
}

func TestCapToFileLimit(t *testing.T) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		t.Fatal(err)
	}
	if n := capToFileLimit(1<<30, 0); n <= 0 || n >= 1<<30 || uint64(n) > rl.Cur/4 {
		t.Fatalf("cap %d not lowered to a quarter of the file limit %d", n, rl.Cur)
	}
	if n := capToFileLimit(1<<30, 1); n <= 0 || uint64(n) > rl.Cur/4*3 || uint64(n) < rl.Cur/2 {
		t.Fatalf("cap %d of one-file connections not three quarters of the file limit %d", n, rl.Cur)
	}
	if n := capToFileLimit(3, 1); n != 3 {
		t.Fatalf("a small cap changed: %d", n)
	}
}
