package bound

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/corral-dev/corral/internal/lifetime"
)

// ShutdownGrace is how long Serve lets requests in progress finish once
// its context ends.
const ShutdownGrace = 500 * time.Millisecond

// TLS names a certificate and key for Serve (both empty: plain HTTP).
type TLS struct{ Cert, Key string }

// Serve serves srv on ln until ctx ends, then shuts it down and returns
// once every handler has returned: those of hijacked connections
// (WebSockets) included, which http.Server neither closes nor waits for.
//
// At the end new connections are refused at once. A request that streams
// (it flushed its response, or hijacked the connection: an event stream, a
// WebSocket, a terminal) would never finish by itself: its context ends at
// once. The others get grace to finish; then every request's context ends
// and every connection is closed. Serve returns nil after a shutdown, or
// the error that stopped the server. It takes srv over: it sets its
// BaseContext and wraps its Handler.
func Serve(ctx context.Context, srv *http.Server, ln net.Listener, tls TLS, grace time.Duration) error {
	base, cut := context.WithCancel(context.WithoutCancel(ctx))
	defer cut()
	srv.BaseContext = func(net.Listener) context.Context { return base }
	t := &tracker{reqs: map[*request]bool{}}
	srv.Handler = t.wrap(srv.Handler)
	errc := make(chan error, 1)
	go func() {
		if tls.Cert != "" || tls.Key != "" {
			errc <- srv.ServeTLS(ln, tls.Cert, tls.Key)
		} else {
			errc <- srv.Serve(ln)
		}
	}()
	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
	}
	// Refuse new requests on connections already open, and end the
	// streams; Shutdown closes the listener and the idle connections and
	// waits (at most grace) for the requests in progress.
	t.stop()
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	_ = srv.Shutdown(sctx)
	cancel()
	cut()
	srv.Close()
	t.handlers.Wait()
	if err == nil {
		err = <-errc
	}
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// tracker knows the requests in progress and which of them stream.
type tracker struct {
	handlers lifetime.Group

	mu       sync.Mutex
	reqs     map[*request]bool
	stopping bool
}

type request struct {
	cancel    context.CancelFunc
	mu        sync.Mutex
	streaming bool
}

func (r *request) stream() {
	r.mu.Lock()
	r.streaming = true
	r.mu.Unlock()
}

func (t *tracker) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leave, ok := t.handlers.Join()
		defer leave()
		if !ok {
			w.Header().Set("Connection", "close")
			http.Error(w, "shutting down", http.StatusServiceUnavailable)
			return
		}
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		req := &request{cancel: cancel}
		t.mu.Lock()
		if t.stopping {
			t.mu.Unlock()
			w.Header().Set("Connection", "close")
			http.Error(w, "shutting down", http.StatusServiceUnavailable)
			return
		}
		t.reqs[req] = true
		t.mu.Unlock()
		defer func() {
			t.mu.Lock()
			delete(t.reqs, req)
			t.mu.Unlock()
		}()
		h.ServeHTTP(&streamWriter{ResponseWriter: w, req: req, t: t}, r.WithContext(ctx))
	})
}

// stop refuses new requests and ends the streams in progress; a request
// that starts streaming later is ended as it does.
func (t *tracker) stop() {
	t.handlers.Close()
	t.mu.Lock()
	t.stopping = true
	var streams []*request
	for r := range t.reqs {
		r.mu.Lock()
		if r.streaming {
			streams = append(streams, r)
		}
		r.mu.Unlock()
	}
	t.mu.Unlock()
	for _, r := range streams {
		r.cancel()
	}
}

func (t *tracker) isStopping() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stopping
}

// streamWriter marks its request as a stream when it flushes or hijacks.
type streamWriter struct {
	http.ResponseWriter
	req *request
	t   *tracker
}

func (w *streamWriter) streams() {
	w.req.stream()
	if w.t.isStopping() {
		w.req.cancel()
	}
}

// FlushError and Flush flush (http.ResponseController and http.Flusher
// find them).
func (w *streamWriter) FlushError() error {
	w.streams()
	return http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *streamWriter) Flush() { _ = w.FlushError() }

// Hijack hands the connection over (coder/websocket finds it).
func (w *streamWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	w.streams()
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

// Unwrap lets http.ResponseController reach the connection's deadlines.
func (w *streamWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
