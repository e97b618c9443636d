package web_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/coder/websocket"

	"github.com/corral-dev/corral/internal/agent"
	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/backend"
	"github.com/corral-dev/corral/internal/events"
	"github.com/corral-dev/corral/internal/hub"
	"github.com/corral-dev/corral/internal/identity"
	"github.com/corral-dev/corral/internal/notify"
	"github.com/corral-dev/corral/internal/store"
	"github.com/corral-dev/corral/internal/web"
)

type fixture struct {
	dir   string
	srv   *httptest.Server
	ag    *agent.Agent
	auth  *web.Auth
	st    *store.SQLite
	acc   *hub.Accounts
	token string // the API token
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	if _, err := os.Stat("/usr/bin/tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	dir, err := os.MkdirTemp("", "corral-web-")
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(filepath.Join(dir, "corral.db"))
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	env := []string{"HOME=" + home, "PATH=/usr/bin:/bin", "SHELL=/bin/sh", "PS1=$ "}
	ag, err := agent.New(agent.Config{DataDir: dir, Store: st, Env: env, Home: home, Bus: events.New(events.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	if err := ag.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	accounts, err := hub.LocalAccounts(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	token, err := accounts.RotateToken(context.Background(), identity.Local)
	if err != nil {
		t.Fatal(err)
	}
	auth := web.NewAuth(st, accounts, web.AuthOptions{Recheck: 50 * time.Millisecond})
	n, err := notify.New(context.Background(), st, notify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	assets := fstest.MapFS{"index.html": {Data: []byte("<!doctype html><title>corral</title>")}, "app.js": {Data: []byte("console.log(1)")}}
	h := web.New(withUserOps(t, ag.Backend(), n), web.Options{Auth: auth, Loopback: true, Assets: assets})
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.Close()
		ag.Close()
		run(t, "tmux", "-S", filepath.Join(dir, "tmux.sock"), "kill-server")
		st.Close()
		os.RemoveAll(dir)
	})
	return &fixture{dir: dir, srv: srv, ag: ag, auth: auth, st: st, acc: accounts, token: token}
}

// withUserOps is b with the user ops (config, notifications, settings,
// push) answered by a hub whose notifier is n, as corral serve has them.
func withUserOps(t *testing.T, b backend.Backend, n *notify.Notifier) backend.Backend {
	t.Helper()
	hb, err := hub.New(context.Background(), hub.Options{Notifier: n})
	if err != nil {
		t.Fatal(err)
	}
	user := map[string]bool{}
	for _, op := range api.Ops() {
		user[op.Name] = op.Scope == api.ScopeUser
	}
	return userOps{Backend: b, hub: hb, user: user}
}

type userOps struct {
	backend.Backend
	hub  *hub.Hub
	user map[string]bool
}

func (u userOps) Serve(ctx context.Context, op string, req any) (any, error) {
	if u.user[op] {
		return u.hub.Serve(ctx, op, req)
	}
	return u.Backend.Serve(ctx, op, req)
}

func (f *fixture) url(p string) string { return f.srv.URL + p }

func (f *fixture) do(t *testing.T, method, p, token string, body any) (*http.Response, []byte) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, f.url(p), r)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func (f *fixture) shell(t *testing.T) string {
	t.Helper()
	resp, b := f.do(t, "POST", "/api/v1/sessions", f.token, api.CreateRequest{Dir: os.TempDir(), Shell: true, Cols: 100, Rows: 30})
	if resp.StatusCode != 201 {
		t.Fatalf("create: %d %s", resp.StatusCode, b)
	}
	var s api.Session
	json.Unmarshal(b, &s)
	return s.ID
}

// TestEverythingNeedsAuth: without the cookie or token every API route and
// WebSocket is refused, and a WebSocket from another origin too.
func TestEverythingNeedsAuth(t *testing.T) {
	f := newFixture(t)
	id := f.shell(t)
	jar := f.login(t) // before the guessing below blocks this address
	routes := []struct{ method, path string }{
		{"GET", "/api/v1/sessions"}, {"POST", "/api/v1/sessions"}, {"GET", "/api/v1/sessions/" + id},
		{"DELETE", "/api/v1/sessions/" + id}, {"PATCH", "/api/v1/sessions/" + id}, {"POST", "/api/v1/sessions/" + id + "/input"},
		{"POST", "/api/v1/sessions/" + id + "/keys"}, {"GET", "/api/v1/sessions/" + id + "/screen"},
		{"POST", "/api/v1/sessions/" + id + "/run"}, {"POST", "/api/v1/sessions/" + id + "/viewed"},
		{"GET", "/api/v1/sessions/" + id + "/timeline"}, {"GET", "/api/v1/dirs"}, {"GET", "/api/v1/resumable?dir=/"},
		{"GET", "/api/v1/events"}, {"GET", "/api/v1/version"}, {"GET", "/api/v1/web/config"},
		{"POST", "/api/v1/push/subscriptions"}, {"PUT", "/api/v1/settings"}, {"GET", "/api/v1/notifications"},
		{"GET", "/api/v1/ws/events"}, {"GET", "/api/v1/sessions/" + id + "/terminal"}, {"GET", "/api/v1/nope"},
	}
	for _, r := range routes {
		for _, tok := range []string{"", "wrong-token"} {
			resp, b := f.do(t, r.method, r.path, tok, nil)
			if resp.StatusCode != 401 && resp.StatusCode != 429 {
				t.Errorf("%s %s with token %q: %d %s", r.method, r.path, tok, resp.StatusCode, b)
			}
		}
	}
	// WebSockets: no credential, then a credential but another origin.
	ctx := context.Background()
	for _, p := range []string{"/api/v1/ws/events", "/api/v1/sessions/" + id + "/terminal"} {
		_, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(f.url(p), "http"), nil)
		if err == nil || resp == nil || resp.StatusCode != 401 {
			t.Errorf("%s without auth: %v %v", p, err, status(resp))
		}
		_, resp, err = websocket.Dial(ctx, "ws"+strings.TrimPrefix(f.url(p), "http"), &websocket.DialOptions{
			HTTPClient: &http.Client{Jar: jar}, HTTPHeader: http.Header{"Origin": {"http://evil.example"}},
		})
		if err == nil || resp == nil || resp.StatusCode != 403 {
			t.Errorf("%s from another origin: %v %v", p, err, status(resp))
		}
	}
	// The page itself loads without auth (it shows the login screen).
	if resp, _ := f.do(t, "GET", "/", "", nil); resp.StatusCode != 200 {
		t.Errorf("index: %d", resp.StatusCode)
	}
}

func status(r *http.Response) any {
	if r == nil {
		return nil
	}
	return r.StatusCode
}

// login trades a fresh login link for cookies, as a browser does.
func (f *fixture) login(t *testing.T) http.CookieJar {
	t.Helper()
	link, err := f.acc.NewLoginLink(context.Background(), identity.Local, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(f.url("/?token=" + url.QueryEscape(link)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		t.Fatalf("token login: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	return jar
}

func TestCookieLoginAndCSRF(t *testing.T) {
	f := newFixture(t)
	jar := f.login(t)
	u, _ := url.Parse(f.srv.URL)
	var csrf string
	for _, c := range jar.Cookies(u) {
		if c.Name == "corral_csrf" {
			csrf = c.Value
		}
	}
	if csrf == "" {
		t.Fatal("no CSRF cookie")
	}
	c := &http.Client{Jar: jar}
	resp, err := c.Get(f.url("/api/v1/sessions"))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET with the cookie: %v %v", err, status(resp))
	}
	body := `{"dir":"` + os.TempDir() + `","shell":true}`
	for _, tc := range []struct {
		header string
		want   int
	}{{"", 403}, {"forged", 403}, {csrf, 201}} {
		req, _ := http.NewRequest("POST", f.url("/api/v1/sessions"), strings.NewReader(body))
		if tc.header != "" {
			req.Header.Set("X-Corral-CSRF", tc.header)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("POST with CSRF %q: %d, want %d", tc.header, resp.StatusCode, tc.want)
		}
	}
	// A password change logs every browser out.
	if err := f.acc.SetPassword(context.Background(), identity.Local, "correct horse"); err != nil {
		t.Fatal(err)
	}
	resp, _ = c.Get(f.url("/api/v1/sessions"))
	if resp.StatusCode != 401 {
		t.Fatalf("old cookie after a password change: %d", resp.StatusCode)
	}
	// Password login.
	for _, tc := range []struct {
		pw   string
		want int
	}{{"wrong", 401}, {"correct horse", 200}} {
		resp, b := postLogin(t, f.srv.URL, nil, map[string]string{"password": tc.pw})
		if resp.StatusCode != tc.want {
			t.Errorf("login %q: %d %s", tc.pw, resp.StatusCode, b)
		}
	}
}

func TestLoginIsRateLimited(t *testing.T) {
	// Limits that do not refill within the test: under load and the race
	// detector one bcrypt check can take seconds.
	f := newAuthFixture(t, false, web.AuthOptions{AccountLimit: web.Limit{Burst: 3, Every: time.Hour}})
	codes := ""
	for range 5 {
		resp, _ := postLogin(t, f.srv.URL, nil, map[string]string{"password": "guess"})
		codes += fmt.Sprint(resp.StatusCode, " ")
		if resp.StatusCode == 429 && resp.Header.Get("Retry-After") == "" {
			t.Error("429 without Retry-After")
		}
	}
	if !strings.Contains(codes, "429") {
		t.Fatalf("5 failed logins in a row were all answered: %s", codes)
	}
}

// A login body that is too large or not JSON gets an error that says so,
// and counts as no login.
func TestLoginBadBodies(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		name string
		body any
		want int
		says string
	}{
		{"oversized", map[string]string{"password": strings.Repeat("x", 5000)}, 413, "over 4096 bytes"},
		{"not an object", "hunter2", 400, "bad JSON"},
		{"empty", nil, 400, "empty request body"},
	} {
		resp, b := postLogin(t, f.srv.URL, nil, tc.body)
		if resp.StatusCode != tc.want || !strings.Contains(string(b), tc.says) {
			t.Errorf("%s: %d %s, want %d saying %q", tc.name, resp.StatusCode, b, tc.want, tc.says)
		}
	}
}

func TestDNSRebindingRefused(t *testing.T) {
	f := newFixture(t)
	req, _ := http.NewRequest("GET", f.url("/api/v1/sessions"), nil)
	req.Host = "attacker.example:80"
	req.Header.Set("Authorization", "Bearer "+f.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Fatalf("foreign Host: %d", resp.StatusCode)
	}
	// A reverse proxy's public name can be allowed explicitly.
	h := web.New(f.ag.Backend(), web.Options{Auth: f.auth, Loopback: true, AllowedHosts: []string{"hub.example.com"},
		Assets: fstest.MapFS{"index.html": {Data: []byte("x")}}})
	for host, want := range map[string]int{"hub.example.com": 200, "hub.example.com:443": 200, "evil.example.com": 403} {
		req := httptest.NewRequest("GET", "/api/v1/sessions", nil)
		req.Host = host
		req.Header.Set("Authorization", "Bearer "+f.token)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("Host %s: %d, want %d", host, rec.Code, want)
		}
	}
}

// term is a terminal WebSocket client speaking docs/web-protocol.md.
type term struct {
	c      *websocket.Conn
	stream string
	off    uint64
	reset  bool
	out    bytes.Buffer
}

func (f *fixture) openTerm(t *testing.T, id, stream string, offset uint64) *term {
	t.Helper()
	u := "ws" + strings.TrimPrefix(f.url("/api/v1/sessions/"+id+"/terminal"), "http") + "?cols=100&rows=30"
	if stream != "" {
		u += fmt.Sprintf("&stream=%s&offset=%d", stream, offset)
	}
	c, _, err := websocket.Dial(context.Background(), u, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + f.token}}})
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadLimit(1 << 20)
	tm := &term{c: c, off: offset}
	_, b, err := c.Read(context.Background())
	if err != nil || len(b) < 2 || b[0] != web.FrameHello {
		t.Fatalf("hello: %v %q", err, b)
	}
	tm.stream = string(b[1:])
	return tm
}

// until reads output frames until the text seen so far contains want.
func (tm *term) until(t *testing.T, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for !strings.Contains(tm.out.String(), want) {
		_, b, err := tm.c.Read(ctx)
		if err != nil {
			t.Fatalf("waiting for %q: %v; got %q", want, err, tm.out.String())
		}
		switch b[0] {
		case web.FrameReset:
			tm.reset = true
			tm.out.Reset()
			tm.off = 0
		case web.FrameOutput:
			off := binary.BigEndian.Uint64(b[1:9])
			if off != tm.off {
				t.Fatalf("output at offset %d, expected %d (lost or repeated bytes)", off, tm.off)
			}
			tm.out.Write(b[9:])
			tm.off += uint64(len(b) - 9)
		}
	}
}

func (tm *term) input(t *testing.T, s string) {
	t.Helper()
	if err := tm.c.Write(context.Background(), websocket.MessageBinary, append([]byte{web.FrameInput}, s...)); err != nil {
		t.Fatal(err)
	}
}

func TestTerminalEchoAndResume(t *testing.T) {
	f := newFixture(t)
	id := f.shell(t)
	tm := f.openTerm(t, id, "", 0)
	tm.input(t, "echo one-$((40+2))\r")
	tm.until(t, "one-42")
	// Resize is accepted.
	tm.c.Write(context.Background(), websocket.MessageBinary, []byte{web.FrameResize, 0, 90, 0, 25})
	// Ping, pong.
	tm.c.Write(context.Background(), websocket.MessageBinary, []byte{web.FramePing})

	// The connection drops; output goes on meanwhile.
	stream, off := tm.stream, tm.off
	tm.c.CloseNow()
	resp, b := f.do(t, "POST", "/api/v1/sessions/"+id+"/input", f.token, api.InputRequest{Text: "echo two-$((40+2))", Enter: true})
	if resp.StatusCode != 204 {
		t.Fatalf("input: %d %s", resp.StatusCode, b)
	}
	// Coming back at the same stream and offset: no reset, and the
	// output that happened while away arrives, in order.
	tm2 := f.openTerm(t, id, stream, off)
	if tm2.stream != stream {
		t.Fatalf("resumed into a new stream %s (was %s)", tm2.stream, stream)
	}
	tm2.until(t, "two-42")
	if tm2.reset {
		t.Fatal("resume sent a reset")
	}
	tm2.c.CloseNow()

	// A stream that is gone: the client is told to start over.
	tm3 := f.openTerm(t, id, "no-such-stream", 5)
	tm3.until(t, "two-42") // the scrollback or the screen shows it
	if !tm3.reset {
		t.Fatal("no reset for an unknown stream")
	}
	tm3.c.CloseNow()
}

func TestEventsWebSocket(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	u := "ws" + strings.TrimPrefix(f.url("/api/v1/ws/events"), "http")
	c, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + f.token}}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	read := func() api.Event {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		for {
			_, b, err := c.Read(rctx)
			if err != nil {
				t.Fatal(err)
			}
			var ev api.Event
			json.Unmarshal(b, &ev)
			if ev.Type != "ping" {
				return ev
			}
		}
	}
	snap := read()
	if snap.Type != api.EventSnapshot {
		t.Fatalf("first event %+v", snap)
	}
	id := f.shell(t)
	ev := read()
	if ev.Type != api.EventSession || ev.Session.ID != id || ev.Seq != snap.Seq+1 {
		t.Fatalf("event %+v after snapshot %d", ev, snap.Seq)
	}
	// Reconnecting with since= replays what came after.
	c2, _, err := websocket.Dial(ctx, u+fmt.Sprintf("?since=%d", snap.Seq), &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + f.token}}})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.CloseNow()
	_, b, err := c2.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var replay api.Event
	json.Unmarshal(b, &replay)
	if replay.Seq != ev.Seq || replay.Type != api.EventSession {
		t.Fatalf("replay %+v, want seq %d", replay, ev.Seq)
	}
}

func TestAssetsAndConfig(t *testing.T) {
	f := newFixture(t)
	resp, b := f.do(t, "GET", "/some/app/route", "", nil)
	if resp.StatusCode != 200 || !strings.Contains(string(b), "<title>corral") {
		t.Fatalf("SPA route: %d %q", resp.StatusCode, b)
	}
	if resp.Header.Get("Content-Security-Policy") == "" || resp.Header.Get("X-Frame-Options") != "DENY" {
		t.Error("security headers missing")
	}
	resp, _ = f.do(t, "GET", "/missing.js", "", nil)
	if resp.StatusCode != 404 {
		t.Errorf("missing asset: %d", resp.StatusCode)
	}
	resp, b = f.do(t, "GET", "/api/v1/web/config", f.token, nil)
	var cfg map[string]string
	json.Unmarshal(b, &cfg)
	if resp.StatusCode != 200 || len(cfg["vapid_public_key"]) < 80 {
		t.Fatalf("config: %d %s", resp.StatusCode, b)
	}
	resp, b = f.do(t, "PUT", "/api/v1/settings", f.token, map[string]string{"webhook_url": "not a url"})
	if resp.StatusCode != 400 {
		t.Errorf("bad webhook: %d %s", resp.StatusCode, b)
	}
}

func run(t *testing.T, name string, args ...string) {
	execCommand(name, args...).Run()
}
