package bound

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/goleak"
)

// Serve's shutdown: streams (a flushed response, a WebSocket) end at once,
// a request in progress finishes within the grace, and Serve returns only
// once every handler has, leaving no goroutine behind. (http.Server alone
// neither ends nor waits for a WebSocket, and Shutdown waits for a stream
// until its deadline.)
func TestServeShutdown(t *testing.T) {
	before := goleak.IgnoreCurrent()
	var running atomic.Int32
	slowStarted := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/stream", func(w http.ResponseWriter, r *http.Request) {
		running.Add(1)
		defer running.Add(-1)
		io.WriteString(w, "hello\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		running.Add(1)
		defer running.Add(-1)
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		c.Write(r.Context(), websocket.MessageText, []byte("hi"))
		c.Read(r.Context()) // until the request's context ends
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		running.Add(1)
		defer running.Add(-1)
		close(slowStarted)
		time.Sleep(100 * time.Millisecond)
		io.WriteString(w, "done")
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	srv := Server(mux, TCP(), nil)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, srv, Listener(ln, Limits{MaxConns: 16}, nil), TLS{}, 2*time.Second) }()

	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	resp, err := hc.Get("http://" + addr + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if line, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil || line != "hello\n" {
		t.Fatalf("stream: %q %v", line, err)
	}
	wctx, wcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer wcancel()
	wc, _, err := websocket.Dial(wctx, "ws://"+addr+"/ws", &websocket.DialOptions{HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	defer wc.CloseNow()
	if _, b, err := wc.Read(wctx); err != nil || string(b) != "hi" {
		t.Fatalf("ws: %q %v", b, err)
	}
	slow := make(chan string, 1)
	go func() {
		resp, err := hc.Get("http://" + addr + "/slow")
		if err != nil {
			slow <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		slow <- string(b)
	}()
	<-slowStarted

	start := time.Now()
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return")
	}
	// The streams did not hold it up for the grace (2 s): only the slow
	// request did, for what was left of its 100 ms.
	if d := time.Since(start); d > time.Second {
		t.Errorf("Serve took %v", d)
	}
	if n := running.Load(); n != 0 {
		t.Errorf("%d handlers still running after Serve returned", n)
	}
	if got := <-slow; got != "done" {
		t.Errorf("the request in progress: %q", got)
	}
	if _, _, err := wc.Read(wctx); err == nil || wctx.Err() != nil {
		t.Errorf("the WebSocket stayed open: %v", err)
	}
	io.ReadAll(resp.Body) // returns: the stream ended
	resp.Body.Close()
	tr.CloseIdleConnections()
	wc.CloseNow()
	goleak.VerifyNone(t, before)
}

// A request that runs past the grace has its context ended, and Serve
// returns.
func TestServeCutsAfterGrace(t *testing.T) {
	started := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-r.Context().Done()
		http.Error(w, "cut", http.StatusServiceUnavailable)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := Server(h, TCP(), nil)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, srv, ln, TLS{}, 50*time.Millisecond) }()
	go func() {
		resp, err := http.Get("http://" + ln.Addr().String() + "/")
		if err == nil {
			resp.Body.Close()
		}
	}()
	<-started
	cancel()
	select {
	case err := <-served:
		if err != nil && !strings.Contains(err.Error(), "closed") {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after the grace")
	}
}
