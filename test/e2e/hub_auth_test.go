package e2e

// Browser logins on a hub (docs/web-protocol.md): a real `corral hub`, a
// real agent, and browsers that are this test, speaking HTTP over
// 127.0.0.1 with a cookie jar as a browser does.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/corral-dev/corral/internal/api"
)

// webBrowser is one browser of the hub's dashboard.
type webBrowser struct {
	t   *testing.T
	hp  *hubProc
	jar *cookiejar.Jar
	c   *http.Client
	xff string // X-Forwarded-For, as a reverse proxy in front would add
}

func newWebBrowser(t *testing.T, hp *hubProc) *webBrowser {
	jar, _ := cookiejar.New(nil)
	return &webBrowser{t: t, hp: hp, jar: jar, c: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *webBrowser) cookie(name string) string {
	u, _ := url.Parse(b.hp.url)
	for _, c := range b.jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// replay is a fresh browser holding only b's session cookie, as someone
// who copied it would.
func (b *webBrowser) replay() *webBrowser {
	r := newWebBrowser(b.t, b.hp)
	u, _ := url.Parse(b.hp.url)
	r.jar.SetCookies(u, []*http.Cookie{{Name: "corral_session", Value: b.cookie("corral_session"), Path: "/"},
		{Name: "corral_csrf", Value: b.cookie("corral_csrf"), Path: "/"}})
	return r
}

// do sends a request as the dashboard's page does: the page's Origin, the
// CSRF header, JSON. ctype overrides the content type ("" for JSON).
func (b *webBrowser) do(method, path, ctype, body string) (int, []byte) {
	b.t.Helper()
	req, _ := http.NewRequest(method, b.hp.url+path, strings.NewReader(body))
	req.Header.Set("Origin", b.hp.url)
	if ctype == "" {
		ctype = "application/json"
	}
	if body != "" || method == "POST" {
		req.Header.Set("Content-Type", ctype)
	}
	if method != "GET" {
		req.Header.Set("X-Corral-CSRF", b.cookie("corral_csrf"))
	}
	if b.xff != "" {
		req.Header.Set("X-Forwarded-For", b.xff)
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

func (b *webBrowser) login(user, password string) int {
	b.t.Helper()
	js, _ := json.Marshal(map[string]string{"user": user, "password": password})
	code, _ := b.do("POST", "/api/v1/auth/login", "", string(js))
	return code
}

func (b *webBrowser) mustLogin(user, password string) *webBrowser {
	b.t.Helper()
	if code := b.login(user, password); code != 200 || b.cookie("corral_session") == "" {
		b.t.Fatalf("%s's login: %d", user, code)
	}
	return b
}

// list is GET /api/v1/sessions with the cookie: the status, and the
// sessions on 200.
func (b *webBrowser) list() (int, []api.Session) {
	b.t.Helper()
	code, out := b.do("GET", "/api/v1/sessions", "", "")
	var l []api.Session
	if code == 200 {
		json.Unmarshal(out, &l)
	}
	return code, l
}

// create starts a shell on the user's machine through the dashboard.
func (b *webBrowser) create(dir string) int {
	b.t.Helper()
	js, _ := json.Marshal(api.CreateRequest{Dir: dir, Shell: true, Name: "from-the-browser"})
	code, _ := b.do("POST", "/api/v1/sessions", "", string(js))
	return code
}

// TestHubBrowserSessions: a hub's browser logins can be taken back. After
// `hub user passwd`, `hub user token` or `hub user rm`, the user's old
// cookie neither lists nor creates sessions; a user added again under a
// removed name does not inherit the old cookie; a cookie copied before a
// logout is dead after it; an open events WebSocket closes when its
// session is revoked; `hub user sessions` lists and revokes; login from
// another site's page (text/plain, a form, a foreign Origin) is refused.
// Other users are not touched by any of it.
func TestHubBrowserSessions(t *testing.T) {
	t.Parallel()
	hp := newHubProc(t, "127.0.0.1:0")
	for _, u := range []string{"alice", "bob", "carol"} {
		hp.adminIn(t, "password of "+u+"\n", "user", "add", u, "--password-stdin")
	}
	agent := newAgent(t, hp.url, hp.addDevice(t, "laptop", "alice"), agentOptions{})
	shell := agent.newShell("one")
	bob := newWebBrowser(t, hp).mustLogin("bob", "password of bob")

	// alice's cookie works: it lists her shell and creates a session.
	a1 := newWebBrowser(t, hp).mustLogin("alice", "password of alice")
	waitFor(t, 15*time.Second, "alice's shell through her cookie", func() bool {
		code, l := a1.list()
		return code == 200 && len(l) == 1 && l[0].ID == shell
	})
	if code := a1.create(agent.proj); code != 201 {
		t.Fatalf("alice creates a session with her cookie: %d", code)
	}

	// A new password ends it.
	hp.adminIn(t, "a new password of alice\n", "user", "passwd", "alice", "--stdin")
	if code, _ := a1.list(); code != 401 {
		t.Errorf("alice's cookie lists sessions after `hub user passwd`: %d", code)
	}
	if code := a1.create(agent.proj); code != 401 && code != 403 {
		t.Errorf("alice's cookie creates a session after `hub user passwd`: %d", code)
	}
	if code := newWebBrowser(t, hp).login("alice", "password of alice"); code != 401 {
		t.Errorf("the old password after passwd: %d", code)
	}

	// A new token ends it too.
	a2 := newWebBrowser(t, hp).mustLogin("alice", "a new password of alice")
	hp.admin(t, "user", "token", "alice")
	if code, _ := a2.list(); code != 401 {
		t.Errorf("alice's cookie after `hub user token`: %d", code)
	}

	// Logging out ends the session on the hub: a copy of the cookie made
	// before is dead.
	a3 := newWebBrowser(t, hp).mustLogin("alice", "a new password of alice")
	copied := a3.replay()
	if code, _ := copied.list(); code != 200 {
		t.Fatalf("the copied cookie before logout: %d", code)
	}
	if code, out := a3.do("POST", "/api/v1/auth/logout", "", "{}"); code != 204 {
		t.Fatalf("logout: %d %s", code, out)
	}
	if code, _ := copied.list(); code != 401 {
		t.Errorf("a cookie copied before logout, after it: %d", code)
	}

	// Removing carol ends her session; a new carol with the same name and
	// password does not get it.
	c1 := newWebBrowser(t, hp).mustLogin("carol", "password of carol")
	hp.admin(t, "user", "rm", "carol")
	if code, _ := c1.list(); code != 401 {
		t.Errorf("carol's cookie after `hub user rm carol`: %d", code)
	}
	hp.adminIn(t, "password of carol\n", "user", "add", "carol", "--password-stdin")
	if code, _ := c1.replay().list(); code != 401 {
		t.Errorf("the removed carol's cookie opens the new carol's account: %d", code)
	}
	newWebBrowser(t, hp).mustLogin("carol", "password of carol")

	// bob was never touched.
	if code, _ := bob.list(); code != 200 {
		t.Errorf("bob's cookie after the changes to alice and carol: %d", code)
	}

	// Login CSRF: a page of another site posts mallory's credentials, to
	// log the visitor's browser into mallory's account.
	hp.adminIn(t, "password of mallory\n", "user", "add", "mallory", "--password-stdin")
	js := `{"user":"mallory","password":"password of mallory"}`
	for _, c := range []struct{ name, ctype, origin, body string }{
		{"text/plain", "text/plain;charset=UTF-8", hp.url, js},
		{"a form", "application/x-www-form-urlencoded", hp.url, "user=mallory&password=password+of+mallory"},
		{"JSON from another site", "application/json", "http://evil.example", js},
	} {
		victim := newWebBrowser(t, hp)
		req, _ := http.NewRequest("POST", hp.url+"/api/v1/auth/login", strings.NewReader(c.body))
		req.Header.Set("Content-Type", c.ctype)
		req.Header.Set("Origin", c.origin)
		resp, err := victim.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == 200 || victim.cookie("corral_session") != "" {
			t.Errorf("login CSRF with %s: %d, the victim's browser got a session", c.name, resp.StatusCode)
		}
	}

	// The admin's view: alice has two live sessions (a fresh one and the
	// one whose events socket is open); revoking one by an id prefix ends
	// it and closes its socket.
	a4 := newWebBrowser(t, hp).mustLogin("alice", "a new password of alice")
	a5 := newWebBrowser(t, hp).mustLogin("alice", "a new password of alice")
	ctx := context.Background()
	ws, _, err := websocket.Dial(ctx, "ws://"+hp.addr+"/api/v1/ws/events",
		&websocket.DialOptions{HTTPClient: a5.c, HTTPHeader: http.Header{"Origin": {hp.url}}})
	if err != nil {
		t.Fatalf("events WebSocket with the cookie: %v", err)
	}
	defer ws.CloseNow()
	ws.SetReadLimit(64 << 20)
	var list []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(hp.admin(t, "user", "sessions", "alice", "--json")), &list); err != nil || len(list) != 2 {
		t.Fatalf("hub user sessions alice --json: %v %+v", err, list)
	}
	// The most recently used first: a5's.
	hp.admin(t, "user", "sessions", "alice", "--revoke", list[0].ID[:8])
	if code, _ := a5.list(); code != 401 {
		t.Errorf("a revoked session: %d", code)
	}
	if code, _ := a4.list(); code != 200 {
		t.Errorf("alice's other session after revoking one: %d", code)
	}
	closed := make(chan error, 1)
	go func() {
		rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		for {
			if _, _, err := ws.Read(rctx); err != nil {
				closed <- rctx.Err()
				return
			}
		}
	}()
	if err := <-closed; err != nil {
		t.Errorf("the revoked session's events WebSocket stayed open: %v", err)
	}
	hp.admin(t, "user", "sessions", "alice", "--revoke-all")
	if code, _ := a4.list(); code != 401 {
		t.Errorf("a session after --revoke-all: %d", code)
	}
	if strings.TrimSpace(hp.admin(t, "user", "sessions", "alice", "--json")) != "[]" {
		t.Errorf("alice's sessions after --revoke-all: %s", hp.admin(t, "user", "sessions", "alice", "--json"))
	}
	// No password and no cookie in the hub's log.
	for _, secret := range []string{"password of", bob.cookie("corral_session")} {
		if strings.Contains(hp.log(), secret) {
			t.Errorf("the hub's log holds a secret (%.12s…)", secret)
		}
	}
}

// TestHubLoginLimitsBehindProxy: behind the documented reverse proxy every
// client is 127.0.0.1. With --trusted-proxy the hub takes the client from
// X-Forwarded-For, so one guesser is held back (and so is the account
// guessed at) while another user logs in from their own address.
func TestHubLoginLimitsBehindProxy(t *testing.T) {
	t.Parallel()
	hp := newHubProc(t, "127.0.0.1:0", "--trusted-proxy", "127.0.0.1/32")
	for _, u := range []string{"alice", "bob"} {
		hp.adminIn(t, "password of "+u+"\n", "user", "add", u, "--password-stdin")
	}
	guesser := newWebBrowser(t, hp)
	guesser.xff = "203.0.113.9"
	// Four guesses at a time, as a guesser would: one bcrypt check can
	// take seconds under the race detector, long enough for a limit to
	// refill between guesses sent one by one.
	held := false
	var codes []int
	for round := 0; round < 10 && !held; round++ {
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				code := guesser.login("alice", fmt.Sprint("guess ", round, i))
				mu.Lock()
				codes = append(codes, code)
				held = held || code == 429
				mu.Unlock()
			}()
		}
		wg.Wait()
	}
	if !held {
		t.Fatalf("40 wrong passwords from one address were all answered: %v", codes)
	}
	bob := newWebBrowser(t, hp)
	bob.xff = "198.51.100.7"
	if code := bob.login("bob", "password of bob"); code != 200 {
		t.Fatalf("bob, from his own address, while someone guesses alice's password: %d", code)
	}
	// (X-Forwarded-For from a peer that is not trusted is ignored: the
	// internal/web tests show a guesser cannot escape the limit with it.)
	if strings.Contains(hp.log(), "password of") {
		t.Error("a password in the hub's log")
	}
}
