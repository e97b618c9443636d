package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/agent"
	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/client"
	"github.com/corral-dev/corral/internal/datadir"
	"github.com/corral-dev/corral/internal/events"
	"github.com/corral-dev/corral/internal/hookwire"
	"github.com/corral-dev/corral/internal/httpapi"
	"github.com/corral-dev/corral/internal/store"
	"github.com/corral-dev/corral/internal/testkit/testio"
)

// daemon is a real agent served on a unix socket, as `corral serve` runs it.
type daemon struct {
	dataDir string
	home    string
	proj    string
	sock    string
	ag      *agent.Agent
	bus     *events.Feed
	handler http.Handler
	srv     *http.Server
	c       *client.Client
	// keepalives counts NDJSON keepalive chunks written to clients.
	keepalives *counter
}

type counter struct {
	mu sync.Mutex
	n  int
}

func (c *counter) get() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// countingListener counts the keepalive chunks the server writes: an
// empty NDJSON line is the chunk "1\r\n\n\r\n".
type countingListener struct {
	net.Listener
	n *counter
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, n: l.n}, nil
}

type countingConn struct {
	net.Conn
	n *counter
}

func (c *countingConn) Write(p []byte) (int, error) {
	if k := strings.Count(string(p), "\r\n1\r\n\n\r\n") + b2i(strings.HasPrefix(string(p), "1\r\n\n\r\n")); k > 0 {
		c.n.mu.Lock()
		c.n.n += k
		c.n.mu.Unlock()
	}
	return c.Conn.Write(p)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// waitKeepalives waits until n more keepalives have been written.
func waitKeepalives(t *testing.T, d *daemon, n int) {
	t.Helper()
	want := d.keepalives.get() + n
	deadline := time.Now().Add(10 * time.Second)
	for d.keepalives.get() < want {
		if time.Now().After(deadline) {
			t.Fatalf("fewer than %d keepalives in 10 s", n)
		}
		time.Sleep(time.Millisecond)
	}
}

func newDaemon(t *testing.T, opts httpapi.Options) *daemon {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	d := &daemon{dataDir: testio.TempDir(t, "corral-"), home: testio.TempDir(t, "corral-home-")}
	d.proj = filepath.Join(d.home, "proj")
	if err := os.Mkdir(d.proj, 0o755); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(filepath.Join(d.dataDir, datadir.Database))
	if err != nil {
		t.Fatal(err)
	}
	d.bus = events.New(events.Options{})
	d.ag, err = agent.New(agent.Config{
		DataDir:   d.dataDir,
		Home:      d.home,
		Env:       []string{"PATH=" + os.Getenv("PATH"), "HOME=" + d.home, "SHELL=/bin/sh", "PS1=$ "},
		ClaudeBin: "/nonexistent/claude",
		Store:     st,
		Bus:       d.bus,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.ag.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	d.sock = datadir.Socket(d.dataDir, datadir.APISocket)
	ln, err := net.Listen("unix", d.sock)
	if err != nil {
		t.Fatal(err)
	}
	d.keepalives = &counter{}
	ln = &countingListener{Listener: ln, n: d.keepalives}
	d.handler = httpapi.New(d.ag.Backend(), opts)
	d.srv = &http.Server{Handler: d.handler}
	go d.srv.Serve(ln)
	d.c = client.Unix(d.sock)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		d.srv.Close()
		d.ag.Close()
		d.ag.Tmux().KillServer(ctx)
		st.Close()
	})
	return d
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestEveryCall(t *testing.T) {
	t.Parallel()
	d := newDaemon(t, httpapi.Options{})
	c, ctx := d.c, ctxT(t)

	v, err := c.Version(ctx)
	if err != nil || v.DataDir != d.dataDir || v.PID != os.Getpid() {
		t.Fatalf("Version = %+v, %v", v, err)
	}
	list, err := c.Sessions(ctx)
	if err != nil || list == nil || len(list) != 0 {
		t.Errorf("Sessions on an empty daemon = %#v, %v; want an empty, non-nil list", list, err)
	}
	s, err := c.Create(ctx, api.CreateRequest{Dir: d.proj, Name: "cli", Shell: true, Cols: 80, Rows: 24})
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "cli" || s.Kind != api.KindShell {
		t.Errorf("Create = %+v", s)
	}
	if got, err := c.Session(ctx, s.ID); err != nil || got.ID != s.ID {
		t.Errorf("Session = %+v, %v", got, err)
	}
	if got, err := c.Rename(ctx, s.ID, "renamed"); err != nil || got.Name != "renamed" {
		t.Errorf("Rename = %+v, %v", got, err)
	}
	if err := c.SendText(ctx, s.ID, "echo client-$((4*4))", true); err != nil {
		t.Fatal(err)
	}
	if err := c.SendText(ctx, s.ID, "echo keys-$((3*3))", false); err != nil {
		t.Fatal(err)
	}
	if err := c.SendKeys(ctx, s.ID, "Enter"); err != nil {
		t.Fatal(err)
	}
	var scr api.Screen
	deadline := time.Now().Add(10 * time.Second)
	for {
		scr, err = c.Capture(ctx, s.ID, 50)
		if err == nil && strings.Contains(scr.Text, "client-16") && strings.Contains(scr.Text, "keys-9") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("screen never showed both echoes: %v\n%s", err, scr.Text)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if scr.Cols != 80 || scr.Rows != 24 {
		t.Errorf("screen %dx%d", scr.Cols, scr.Rows)
	}
	res, err := c.Run(ctx, s.ID, api.RunRequest{Argv: []string{"sh", "-c", "echo $CORRAL_SESSION; exit 4"}})
	if err != nil || res.ExitCode != 4 || res.Output != s.ID+"\n" {
		t.Errorf("Run = %+v, %v", res, err)
	}
	if err := c.Viewed(ctx, s.ID); err != nil {
		t.Errorf("Viewed: %v", err)
	}
	l, err := c.ListDir(ctx, "", d.home)
	if err != nil || l.Path != d.home || len(l.Entries) != 1 || l.Entries[0].Name != "proj" {
		t.Errorf("ListDir = %+v, %v", l, err)
	}
	// A path with characters that need escaping in a query.
	odd := filepath.Join(d.home, "a b&c=d#e?f")
	if err := os.Mkdir(odd, 0o755); err != nil {
		t.Fatal(err)
	}
	if l, err := c.ListDir(ctx, "", odd); err != nil || l.Path != odd {
		t.Errorf("ListDir(%q) = %+v, %v", odd, l, err)
	}
	r, err := c.Resumable(ctx, "", d.proj)
	if err != nil || r == nil || len(r) != 0 {
		t.Errorf("Resumable = %#v, %v", r, err)
	}
	if err := c.Kill(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	if list, _ := c.Sessions(ctx); len(list) != 0 {
		t.Errorf("after Kill: %+v", list)
	}
}

func TestErrorsAreTyped(t *testing.T) {
	t.Parallel()
	d := newDaemon(t, httpapi.Options{})
	c, ctx := d.c, ctxT(t)
	s, err := c.Create(ctx, api.CreateRequest{Dir: d.proj, Shell: true})
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, err, want error, msg string) {
		t.Helper()
		if !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", what, err, want.(*api.Error).Code)
			return
		}
		var e *api.Error
		if !errors.As(err, &e) || !strings.Contains(e.Message, msg) || err.Error() != e.Message {
			t.Errorf("%s: %#v, want an *api.Error mentioning %q", what, err, msg)
		}
		for _, other := range []error{api.ErrNotFound, api.ErrBadRequest, api.ErrForbidden, api.ErrTooLarge, api.ErrUnavailable, api.ErrConflict} {
			if other != want && errors.Is(err, other) {
				t.Errorf("%s: %v also matches %v", what, err, other.(*api.Error).Code)
			}
		}
	}
	_, err = c.Session(ctx, "nosuchsession")
	check("Session", err, api.ErrNotFound, "nosuchsession")
	check("Kill", c.Kill(ctx, "nosuchsession"), api.ErrNotFound, "no session")
	// Ids are path-escaped: a hostile id is just an unknown session.
	for _, id := range []string{"../version", "a/b", "x?y=z", "%2e%2e", ".."} {
		_, err = c.Session(ctx, id)
		if !errors.Is(err, api.ErrNotFound) {
			t.Errorf("Session(%q) = %v, want not found", id, err)
		}
		if err := c.Kill(ctx, id); !errors.Is(err, api.ErrNotFound) {
			t.Errorf("Kill(%q) = %v, want not found", id, err)
		}
	}
	_, err = c.Create(ctx, api.CreateRequest{Dir: "relative", Shell: true})
	check("Create relative", err, api.ErrBadRequest, "absolute")
	_, err = c.Create(ctx, api.CreateRequest{Dir: d.proj})
	check("Create without claude", err, api.ErrUnavailable, "claude")
	check("SendKeys", c.SendKeys(ctx, s.ID, "Bogus"), api.ErrBadRequest, "Bogus")
	check("SendText too large", c.SendText(ctx, s.ID, strings.Repeat("a", httpapi.MaxBody), false), api.ErrTooLarge, "over")
	_, err = c.ListDir(ctx, "", "/etc")
	check("ListDir outside", err, api.ErrForbidden, "outside")
	_, err = c.Capture(ctx, s.ID, -1)
	check("Capture negative history", err, api.ErrBadRequest, "history")
	_, err = c.Run(ctx, s.ID, api.RunRequest{})
	check("Run nothing", err, api.ErrBadRequest, "no command")
	// The session is still there and untouched.
	if got, err := c.Session(ctx, s.ID); err != nil || got.Name != s.Name {
		t.Errorf("after the errors: %+v, %v", got, err)
	}
}

func TestErrorsWithoutJSONBody(t *testing.T) {
	t.Parallel()
	d := newDaemon(t, httpapi.Options{})
	// The API behind a path prefix it does not serve: ServeMux's own plain
	// "404 page not found".
	hs := httptest.NewServer(d.handler)
	defer hs.Close()
	c := client.HTTP(hs.URL+"/prefix/", "tok")
	_, err := c.Sessions(ctxT(t))
	var e *api.Error
	if !errors.Is(err, api.ErrNotFound) || !errors.As(err, &e) || !strings.Contains(e.Message, "404 page not found") {
		t.Errorf("plain-text 404: %#v", err)
	}
	if err := c.StreamEvents(ctxT(t), 0, func(api.Event) error { return nil }); !errors.Is(err, api.ErrNotFound) {
		t.Errorf("Watch of a plain-text 404: %v", err)
	}

	// A reverse proxy whose daemon is gone answers 502 with an empty body.
	dead, _ := url.Parse("http://127.0.0.1:1")
	proxy := httptest.NewServer(&httputil.ReverseProxy{
		Rewrite:  func(r *httputil.ProxyRequest) { r.SetURL(dead) },
		ErrorLog: log.New(io.Discard, "", 0),
	})
	defer proxy.Close()
	_, err = client.HTTP(proxy.URL, "tok").Version(ctxT(t))
	if !errors.As(err, &e) || e.Code != api.CodeInternal || !strings.Contains(e.Message, "502") {
		t.Errorf("502 with an empty body: %#v", err)
	}
}

func TestHTTPClientSendsToken(t *testing.T) {
	t.Parallel()
	d := newDaemon(t, httpapi.Options{})
	var mu sync.Mutex
	var auth []string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		d.handler.ServeHTTP(w, r)
	}))
	defer hs.Close()
	c := client.HTTP(hs.URL+"/", "s3cret")
	if _, err := c.Version(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctxT(t))
	err := c.StreamEvents(ctx, 0, func(ev api.Event) error { cancel(); return nil })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Watch over HTTP: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(auth) != 2 || auth[0] != "Bearer s3cret" || auth[1] != "Bearer s3cret" {
		t.Errorf("Authorization headers %q", auth)
	}
	// The unix client sends none.
	if _, err := d.c.Version(ctxT(t)); err != nil {
		t.Fatal(err)
	}
}

func TestNoDaemon(t *testing.T) {
	t.Parallel()
	dir := testio.TempDir(t, "corral-")
	missing := client.Unix(filepath.Join(dir, "nothing.sock"))

	// A socket file nobody listens on (a daemon killed -9).
	stale := filepath.Join(dir, "stale.sock")
	ln, err := net.Listen("unix", stale)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	if _, err := os.Stat(stale); err != nil {
		t.Fatal(err)
	}

	for name, c := range map[string]*client.Client{"missing socket": missing, "stale socket": client.Unix(stale)} {
		start := time.Now()
		_, err := c.Sessions(ctxT(t))
		if !errors.Is(err, client.ErrNoDaemon) {
			t.Errorf("%s: %v, want ErrNoDaemon", name, err)
			continue
		}
		if !strings.Contains(err.Error(), "corral serve") {
			t.Errorf("%s: %q does not say to run corral serve", name, err)
		}
		if took := time.Since(start); took > time.Second {
			t.Errorf("%s: took %v to fail", name, took)
		}
		if err := c.StreamEvents(ctxT(t), 0, func(api.Event) error { return nil }); !errors.Is(err, client.ErrNoDaemon) {
			t.Errorf("%s: Watch: %v, want ErrNoDaemon", name, err)
		}
	}
}

func TestWatch(t *testing.T) {
	t.Parallel()
	// Keepalives every millisecond: Watch must skip them all.
	d := newDaemon(t, httpapi.Options{Heartbeat: time.Millisecond})
	c := d.c
	pre, err := c.Create(ctxT(t), api.CreateRequest{Dir: d.proj, Name: "pre", Shell: true})
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	got := make(chan api.Event, 100)
	done := make(chan error, 1)
	go func() {
		done <- c.StreamEvents(ctx, 0, func(ev api.Event) error {
			got <- ev
			return nil
		})
	}()
	next := func() api.Event {
		t.Helper()
		select {
		case ev := <-got:
			return ev
		case err := <-done:
			t.Fatalf("Watch ended: %v", err)
		case <-time.After(10 * time.Second):
			t.Fatal("no event within 10 s")
		}
		return api.Event{}
	}
	snap := next()
	if snap.Type != api.EventSnapshot || len(snap.Sessions) != 1 || snap.Sessions[0].ID != pre.ID {
		t.Fatalf("first event %+v", snap)
	}
	// Let keepalives through before the next change: count them on the
	// server's side of the connection.
	waitKeepalives(t, d, 3)
	if _, err := c.Rename(ctxT(t), pre.ID, "renamed"); err != nil {
		t.Fatal(err)
	}
	ev := next()
	if ev.Type != api.EventSession || ev.Seq != snap.Seq+1 || ev.Session.Name != "renamed" || ev.Prev != api.StatusIdle {
		t.Errorf("change = %+v", ev)
	}
	if err := c.Kill(ctxT(t), pre.ID); err != nil {
		t.Fatal(err)
	}
	if ev := next(); ev.Type != api.EventRemoved || ev.ID != pre.ID || ev.Seq != snap.Seq+2 {
		t.Errorf("removal = %+v", ev)
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Watch after cancel: %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Watch did not return after its context ended")
	}

	// since replays; fn's error ends the watch and comes back.
	stop := errors.New("seen enough")
	var replay []api.Event
	err = c.StreamEvents(ctxT(t), snap.Seq, func(ev api.Event) error {
		replay = append(replay, ev)
		if len(replay) == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Errorf("Watch returned %v, want fn's error", err)
	}
	if len(replay) != 2 || replay[0].Type != api.EventSession || replay[1].Type != api.EventRemoved {
		t.Errorf("replay since %d = %+v", snap.Seq, replay)
	}
}

func TestWatchServerGoes(t *testing.T) {
	t.Parallel()
	d := newDaemon(t, httpapi.Options{})
	done := make(chan error, 1)
	first := make(chan struct{})
	go func() {
		var once sync.Once
		done <- d.c.StreamEvents(context.Background(), 0, func(api.Event) error {
			once.Do(func() { close(first) })
			return nil
		})
	}()
	select {
	case <-first:
	case <-time.After(10 * time.Second):
		t.Fatal("no snapshot")
	}
	d.srv.Close() // the daemon stops
	select {
	case err := <-done:
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("Watch after the server closed: %v, want io.ErrUnexpectedEOF", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Watch did not notice the server going away")
	}
}

func TestWatchBigEvent(t *testing.T) {
	t.Parallel()
	d := newDaemon(t, httpapi.Options{})
	s, err := d.c.Create(ctxT(t), api.CreateRequest{Dir: d.proj, Shell: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	var sizes []int
	err = d.c.StreamEvents(ctx, 0, func(ev api.Event) error {
		switch ev.Type {
		case api.EventSnapshot:
			// A 512 KiB prompt through the hook socket (deliveries are
			// capped at 1 MiB): one event line far over bufio.Scanner's
			// default 64 KiB.
			prompt := strings.Repeat("p", 512<<10)
			b, _ := json.Marshal(map[string]any{"session_id": "c", "hook_event_name": "UserPromptSubmit", "prompt": prompt})
			h := hookwire.Header{Kind: hookwire.KindHook, At: time.Now().UnixNano(), PID: os.Getpid(), PPID: os.Getppid(), Session: s.ID}
			if err := hookwire.Send(datadir.Socket(d.dataDir, datadir.HookSocket), h, b, 5*time.Second); err != nil {
				return err
			}
		case api.EventSession:
			sizes = append(sizes, len(ev.Session.LastPrompt))
			if ev.Session.Status == api.StatusBusy {
				return fmt.Errorf("done")
			}
		}
		return nil
	})
	if err == nil || err.Error() != "done" {
		t.Fatalf("Watch: %v", err)
	}
	if len(sizes) == 0 || sizes[len(sizes)-1] != 512<<10 {
		t.Errorf("prompt sizes seen: %v", sizes)
	}
}

func TestHubUnreachableIsNotNoDaemon(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	_, err = client.HTTP("http://"+addr, "tok").Version(ctxT(t))
	if err == nil {
		t.Fatal("no error from an unreachable hub")
	}
	if strings.Contains(err.Error(), "corral serve") {
		t.Errorf("unreachable hub: %q advises corral serve", err)
	}
}

// TestTokenNotSentInClear: a token goes over plain http only to this
// machine. Anywhere else every call fails at once, before any connection,
// with an error that names https://; a redirect there fails too.
func TestTokenNotSentInClear(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"http://hub.example:8080", "http://192.0.2.1", "http://[2001:db8::1]:80", "ws://hub.example", "ftp://hub.example"} {
		c := client.HTTP(u, "s3cret")
		if c.Err() == nil {
			t.Errorf("%s: accepted", u)
			continue
		}
		_, err := c.Version(ctxT(t))
		if err == nil || !strings.Contains(err.Error(), "https://") {
			t.Errorf("%s: Version = %v, want a refusal naming https://", u, err)
		}
		if err := c.StreamEvents(ctxT(t), 0, func(api.Event) error { return nil }); err == nil || err.Error() != c.Err().Error() {
			t.Errorf("%s: Watch = %v", u, err)
		}
	}
	for _, u := range []string{"https://hub.example", "http://127.0.0.1:1", "http://[::1]:1", "http://localhost:1", "http://127.0.0.2"} {
		if err := client.HTTP(u, "s3cret").Err(); err != nil {
			t.Errorf("%s: refused: %v", u, err)
		}
	}

	// A hub on this machine that redirects elsewhere over http: the token
	// must not follow.
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://192.0.2.1/api/v1/version", http.StatusFound)
	}))
	defer hs.Close()
	_, err := client.HTTP(hs.URL, "s3cret").Version(ctxT(t))
	if err == nil || !strings.Contains(err.Error(), "https://") {
		t.Errorf("redirect to plain http elsewhere: %v", err)
	}
}
