package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/agent"
	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/datadir"
	"github.com/corral-dev/corral/internal/events"
	"github.com/corral-dev/corral/internal/httpapi"
	"github.com/corral-dev/corral/internal/store"
	"github.com/corral-dev/corral/internal/testkit/testio"
)

// server is the API of a real agent (real tmux, real SQLite) on a unix
// socket, as the daemon serves it.
type server struct {
	t       *testing.T
	dataDir string
	home    string
	proj    string
	ag      *agent.Agent
	bus     *events.Feed
	st      *store.SQLite
	hc      *http.Client
}

type serverOptions struct {
	api httpapi.Options
	bus events.Options
}

func newServer(t *testing.T, o serverOptions) *server {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	s := &server{t: t}
	s.dataDir = testio.TempDir(t, "corral-")
	s.home = testio.TempDir(t, "corral-home-")
	s.proj = filepath.Join(s.home, "proj")
	if err := os.Mkdir(s.proj, 0o755); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(filepath.Join(s.dataDir, datadir.Database))
	if err != nil {
		t.Fatal(err)
	}
	s.st = st
	s.bus = events.New(o.bus)
	ag, err := agent.New(agent.Config{
		DataDir:   s.dataDir,
		Home:      s.home,
		Env:       []string{"PATH=" + os.Getenv("PATH"), "HOME=" + s.home, "SHELL=/bin/sh", "PS1=$ "},
		ClaudeBin: "/nonexistent/claude",
		Store:     st,
		Bus:       s.bus,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := ag.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.ag = ag
	sock := datadir.Socket(s.dataDir, datadir.APISocket)
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: httpapi.New(ag.Backend(), o.api)}
	go srv.Serve(ln)
	s.hc = &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
	}}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.hc.CloseIdleConnections()
		srv.Close()
		ag.Close()
		ag.Tmux().KillServer(ctx)
		st.Close()
	})
	return s
}

func (s *server) request(method, path string, body io.Reader, hdr ...string) *http.Response {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	s.t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, method, "http://corral"+path, body)
	if err != nil {
		s.t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := s.hc.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp
}

// call makes a request and reads the whole answer.
func (s *server) call(method, path, body string, hdr ...string) (int, http.Header, []byte) {
	s.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	resp := s.request(method, path, r, hdr...)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

// ok calls and decodes a successful answer into out.
func (s *server) ok(method, path, body string, want int, out any) {
	s.t.Helper()
	code, hdr, b := s.call(method, path, body)
	if code != want {
		s.t.Fatalf("%s %s: status %d, want %d: %s", method, path, code, want, b)
	}
	if out == nil {
		if len(b) != 0 {
			s.t.Errorf("%s %s: unexpected body %q", method, path, b)
		}
		return
	}
	if ct := hdr.Get("Content-Type"); ct != "application/json" {
		s.t.Errorf("%s %s: Content-Type %q", method, path, ct)
	}
	if err := json.Unmarshal(b, out); err != nil {
		s.t.Fatalf("%s %s: %v in %s", method, path, err, b)
	}
}

// apiErr calls and checks a JSON error answer.
func (s *server) apiErr(method, path, body string, wantStatus int, wantCode, wantMsg string, hdr ...string) api.Error {
	s.t.Helper()
	code, h, b := s.call(method, path, body, hdr...)
	if code != wantStatus {
		s.t.Errorf("%s %s: status %d, want %d: %s", method, path, code, wantStatus, b)
	}
	if ct := h.Get("Content-Type"); ct != "application/json" {
		s.t.Errorf("%s %s: error Content-Type %q, want application/json (body %q)", method, path, ct, b)
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		s.t.Errorf("%s %s: error body is not JSON: %q", method, path, b)
		return api.Error{}
	}
	if _, ok := raw["code"]; !ok {
		s.t.Errorf("%s %s: error body has no code: %s", method, path, b)
	}
	if _, ok := raw["error"]; !ok {
		s.t.Errorf("%s %s: error body has no error message: %s", method, path, b)
	}
	var e api.Error
	json.Unmarshal(b, &e)
	if e.Code != wantCode {
		s.t.Errorf("%s %s: code %q, want %q (%s)", method, path, e.Code, wantCode, e.Message)
	}
	if !strings.Contains(e.Message, wantMsg) {
		s.t.Errorf("%s %s: message %q does not mention %q", method, path, e.Message, wantMsg)
	}
	return e
}

func (s *server) shell(name string) api.Session {
	s.t.Helper()
	var out api.Session
	body, _ := json.Marshal(api.CreateRequest{Dir: s.proj, Name: name, Shell: true})
	s.ok("POST", "/api/v1/sessions", string(body), http.StatusCreated, &out)
	return out
}

// stream is an open event stream, read line by line in the background.
type stream struct {
	t     *testing.T
	resp  *http.Response
	lines chan string
	err   chan error
	done  chan struct{}
	once  sync.Once
}

func (s *server) stream(path string, hdr ...string) *stream {
	s.t.Helper()
	resp := s.request("GET", path, nil, hdr...)
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		s.t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	// Unbuffered, with a small read buffer: while the test reads nothing,
	// nothing more is taken off the socket, as with a stalled client.
	st := &stream{t: s.t, resp: resp, lines: make(chan string), err: make(chan error, 1), done: make(chan struct{})}
	go func() {
		br := bufio.NewReader(resp.Body)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				st.err <- err
				close(st.lines)
				return
			}
			select {
			case st.lines <- strings.TrimSuffix(line, "\n"):
			case <-st.done:
				return
			}
		}
	}()
	s.t.Cleanup(st.close)
	return st
}

func (st *stream) close() {
	st.once.Do(func() {
		close(st.done)
		st.resp.Body.Close()
	})
}

// line returns the next line, failing after timeout.
func (st *stream) line(timeout time.Duration) string {
	st.t.Helper()
	select {
	case l, ok := <-st.lines:
		if !ok {
			st.t.Fatalf("event stream ended: %v", <-st.err)
		}
		return l
	case <-time.After(timeout):
		st.t.Fatalf("no line on the event stream within %v", timeout)
	}
	return ""
}

// event returns the next NDJSON event, skipping keepalive lines.
func (st *stream) event(timeout time.Duration) api.Event {
	st.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		l := st.line(time.Until(deadline))
		if strings.TrimSpace(l) == "" {
			continue
		}
		var ev api.Event
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			st.t.Fatalf("bad event line %q: %v", l, err)
		}
		return ev
	}
}

func waitUntil(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
