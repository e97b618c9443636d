// Package bound keeps corral's servers within limits, so that a flood of
// connections or slow clients costs bounded memory and file descriptors and
// never starves the daemon's owner: a listener with a connection cap, and
// an http.Server with read, write and idle timeouts.
//
// Long responses (event streams, WebSockets) are not cut: a write deadline
// is set before every write of a response, not once per request, and a
// hijacked connection (a WebSocket) has no deadline of the server's; both
// set their own (internal/httpapi, internal/web, internal/link).
package bound

import (
	"log/slog"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"
)

// Limits of one server.
type Limits struct {
	// MaxConns is how many connections may be open at once; one more is
	// closed as soon as it is accepted. It is lowered so that connections
	// alone never exhaust the process's file limit: to three quarters of
	// it divided by ConnFiles, the quarter left for the database, logs and
	// the rest.
	MaxConns int
	// ConnFiles is how many files one connection may hold at most: 3 on a
	// daemon's dashboard, whose terminal viewers each run a PTY (so the
	// cap is a quarter of the limit); 1 on a hub, whose connections hold
	// only their socket (terminals run on the agents). 0 counts as 3.
	ConnFiles int
	// ReadHeader bounds reading a request's headers, Read its headers and
	// body: 200 clients that send a body one byte a minute hold nothing
	// for longer.
	ReadHeader time.Duration
	Read       time.Duration
	// Write bounds each write of a response (the time a client may take
	// to take it), however long the handler ran before.
	Write time.Duration
	// Idle bounds a kept-alive connection waiting for its next request.
	Idle time.Duration
}

// TCP are the limits of the dashboard and the hub: browsers, scripts and
// devices' links.
func TCP() Limits {
	return Limits{MaxConns: 1024, ReadHeader: 10 * time.Second, Read: 30 * time.Second, Write: 30 * time.Second, Idle: 2 * time.Minute}
}

// Unix are the limits of the daemon's API socket, whose only clients are
// its owner's CLI and scripts (each `corral watch` holds one).
func Unix() Limits {
	l := TCP()
	l.MaxConns = 128
	return l
}

// maxHeaderBytes bounds a request's headers (net/http's default is 1 MiB).
const maxHeaderBytes = 64 << 10

// Server makes an http.Server for h within l. Serve it on Listener(ln, ...).
func Server(h http.Handler, l Limits, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           writeDeadlines(h, l.Write),
		ReadHeaderTimeout: l.ReadHeader,
		ReadTimeout:       l.Read,
		IdleTimeout:       l.Idle,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(orDiscard(log).Handler(), slog.LevelDebug),
	}
}

// writeDeadlines sets a write deadline of d before every write of a
// response (http.Server.WriteTimeout would run from the request's start,
// and cut a `run` that answers after ten minutes).
func writeDeadlines(h http.Handler, d time.Duration) http.Handler {
	if d <= 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		dw := &deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w), d: d}
		dw.extend()
		h.ServeHTTP(dw, r)
	})
}

type deadlineWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
	d  time.Duration
}

func (w *deadlineWriter) extend() { _ = w.rc.SetWriteDeadline(time.Now().Add(w.d)) }

func (w *deadlineWriter) WriteHeader(code int) {
	w.extend()
	w.ResponseWriter.WriteHeader(code)
}

func (w *deadlineWriter) Write(b []byte) (int, error) {
	w.extend()
	return w.ResponseWriter.Write(b)
}

// FlushError and Flush flush with a fresh deadline (http.ResponseController
// and http.Flusher find them).
func (w *deadlineWriter) FlushError() error {
	w.extend()
	return w.rc.Flush()
}

func (w *deadlineWriter) Flush() { _ = w.FlushError() }

// Unwrap lets http.ResponseController and coder/websocket reach the
// connection (Hijack, SetReadDeadline).
func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Listener caps ln at l.MaxConns connections open at once (see
// Limits.MaxConns).
// One over the cap is accepted and closed at once, so that its client
// fails fast rather than waits in the kernel's backlog behind connections
// that may never end, and a warning is logged at most once a minute.
//
// golang.org/x/net/netutil.LimitListener blocks Accept instead: the
// connections beyond the cap then wait, unseen and with no timeout of
// ours, and so do the owner's own connections behind them.
func Listener(ln net.Listener, l Limits, log *slog.Logger) net.Listener {
	return &listener{Listener: ln, max: capToFileLimit(l.MaxConns, l.ConnFiles), log: orDiscard(log)}
}

type listener struct {
	net.Listener
	max int
	log *slog.Logger

	mu      sync.Mutex
	open    int
	refused int       // since the last warning
	warned  time.Time // when the last warning went out
}

// Accept returns the next connection within the cap.
func (l *listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		if l.open < l.max {
			l.open++
			l.mu.Unlock()
			return &conn{Conn: c, l: l}, nil
		}
		l.refused++
		warn := time.Since(l.warned) >= time.Minute
		n := l.refused
		if warn {
			l.warned, l.refused = time.Now(), 0
		}
		l.mu.Unlock()
		c.Close()
		if warn {
			l.log.Warn("connection limit reached; refusing connections", "addr", l.Addr().String(), "limit", l.max, "refused", n)
		}
	}
}

// Open is how many connections are open now (tests, metrics).
func (l *listener) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

type conn struct {
	net.Conn
	l    *listener
	once sync.Once
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.mu.Lock()
		c.l.open--
		c.l.mu.Unlock()
	})
	return err
}

// capToFileLimit lowers n to three quarters of the soft limit on open
// files divided by the files a connection may hold.
func capToFileLimit(n, connFiles int) int {
	if connFiles <= 0 {
		connFiles = 3
	}
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err == nil && rl.Cur > 0 {
		n = min(n, int(min(rl.Cur/4*3, 3<<20))/connFiles)
	}
	return max(n, 1)
}

func orDiscard(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}
