package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/coder/websocket"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/backend"
	"github.com/corral-dev/corral/internal/hub"
	"github.com/corral-dev/corral/internal/identity"
	"github.com/corral-dev/corral/internal/store"
	"github.com/corral-dev/corral/internal/web"
)

// stubBackend answers the session list, so that a request shows whether
// its credential passed; the auth tests need no machine.
type stubBackend struct{ backend.Backend }

func (stubBackend) Serve(_ context.Context, op string, _ any) (any, error) {
	if op == api.OpSessions.Name {
		return []api.Session{}, nil
	}
	return nil, api.Errorf(api.CodeNotFound, "the stub serves only the session list")
}

// clock is a settable clock for session lifetimes.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// authFixture is a dashboard with a hub's users (multi) or the one user
// of corral serve, and no machine behind it.
type authFixture struct {
	srv  *httptest.Server
	st   *store.SQLite
	acc  *hub.Accounts
	auth *web.Auth
}

func newAuthFixture(t *testing.T, multi bool, o web.AuthOptions) *authFixture {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(filepath.Join(t.TempDir(), "corral.db"))
	if err != nil {
		t.Fatal(err)
	}
	acc := hub.NewAccounts(st)
	if !multi {
		if acc, err = hub.LocalAccounts(ctx, st); err != nil {
			t.Fatal(err)
		}
	}
	auth := web.NewAuth(st, acc, o)
	h := web.New(stubBackend{}, web.Options{Auth: auth, Loopback: true,
		Assets: fstest.MapFS{"index.html": {Data: []byte("<!doctype html><title>corral</title>")}}})
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.Close()
		st.Close()
	})
	return &authFixture{srv: srv, st: st, acc: acc, auth: auth}
}

// browser is a cookie jar that does not follow redirects.
type browser struct {
	t   *testing.T
	c   *http.Client
	jar *cookiejar.Jar
	ua  string
	xff string
}

func (f *authFixture) browser(t *testing.T) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, jar: jar, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *browser) cookie(base, name string) string {
	u, _ := url.Parse(base)
	for _, c := range b.jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// send makes a request as the page would: JSON, same Origin, and the CSRF
// header on state-changing requests.
func (b *browser) send(method, u string, body any) (*http.Response, []byte) {
	b.t.Helper()
	var rd io.Reader
	if body != nil {
		js, _ := json.Marshal(body)
		rd = bytes.NewReader(js)
	}
	req, _ := http.NewRequest(method, u, rd)
	pu, _ := url.Parse(u)
	req.Header.Set("Origin", pu.Scheme+"://"+pu.Host)
	if body != nil || method == "POST" {
		req.Header.Set("Content-Type", "application/json")
	}
	if method != "GET" {
		req.Header.Set("X-Corral-CSRF", b.cookie(u, "corral_csrf"))
	}
	if b.ua != "" {
		req.Header.Set("User-Agent", b.ua)
	}
	if b.xff != "" {
		req.Header.Set("X-Forwarded-For", b.xff)
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp, out
}

func (b *browser) get(u string) int {
	b.t.Helper()
	resp, _ := b.send("GET", u, nil)
	return resp.StatusCode
}

// postLogin posts a login body as the dashboard's own page does (client
// nil: no cookie jar).
func postLogin(t *testing.T, base string, c *http.Client, body any) (*http.Response, []byte) {
	t.Helper()
	if c == nil {
		c = http.DefaultClient
	}
	var rd io.Reader = strings.NewReader("")
	if body != nil {
		js, _ := json.Marshal(body)
		rd = bytes.NewReader(js)
	}
	req, _ := http.NewRequest("POST", base+"/api/v1/auth/login", rd)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", base)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp, out
}

func (f *authFixture) loginPassword(t *testing.T, b *browser, user, pw string) {
	t.Helper()
	resp, out := b.send("POST", f.srv.URL+"/api/v1/auth/login", map[string]string{"user": user, "password": pw})
	if resp.StatusCode != 200 || b.cookie(f.srv.URL, "corral_session") == "" {
		t.Fatalf("%s's login: %d %s", user, resp.StatusCode, out)
	}
}

// as logs a new browser in as user with a login link (no bcrypt: fast
// under the race detector).
func (f *authFixture) as(t *testing.T, user string) *browser {
	t.Helper()
	link, err := f.acc.NewLoginLink(context.Background(), user, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	b := f.browser(t)
	if code := f.linkLogin(t, b, link); code != http.StatusSeeOther {
		t.Fatalf("%s's login link: %d", user, code)
	}
	return b
}

func (f *authFixture) linkLogin(t *testing.T, b *browser, link string) int {
	t.Helper()
	resp, _ := b.send("GET", f.srv.URL+"/?token="+url.QueryEscape(link), nil)
	return resp.StatusCode
}

func (f *authFixture) sessionsURL() string { return f.srv.URL + "/api/v1/sessions" }

// TestLoginLinkOnceAndShortLived: the printed link logs one browser in,
// once, and not after its lifetime; an API token is no login link.
func TestLoginLinkOnceAndShortLived(t *testing.T) {
	ctx := context.Background()
	f := newAuthFixture(t, false, web.AuthOptions{})
	link, err := f.acc.NewLoginLink(ctx, identity.Local, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	first := f.browser(t)
	if code := f.linkLogin(t, first, link); code != http.StatusSeeOther {
		t.Fatalf("the link, first use: %d", code)
	}
	if code := first.get(f.sessionsURL()); code != 200 {
		t.Fatalf("the cookie the link gave: %d", code)
	}
	second := f.browser(t)
	if code := f.linkLogin(t, second, link); code != http.StatusUnauthorized || second.cookie(f.srv.URL, "corral_session") != "" {
		t.Fatalf("the link used twice: %d, cookie %q", code, second.cookie(f.srv.URL, "corral_session"))
	}
	// In the login form's token field it is spent too.
	if resp, _ := postLogin(t, f.srv.URL, nil, map[string]string{"token": link}); resp.StatusCode != 401 {
		t.Fatalf("the spent link in the login form: %d", resp.StatusCode)
	}

	short, err := f.acc.NewLoginLink(ctx, identity.Local, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(25 * time.Millisecond); time.Now().Before(deadline); {
		time.Sleep(time.Until(deadline))
	}
	late := f.browser(t)
	if code := f.linkLogin(t, late, short); code != http.StatusUnauthorized {
		t.Fatalf("the link after its lifetime: %d", code)
	}
	if _, err := f.acc.NewLoginLink(ctx, identity.Local, 2*time.Hour); err == nil {
		t.Fatal("a login link for two hours was made")
	}

	// The long-lived API token logs nobody in through a GET: any page can
	// make one.
	tok, err := f.acc.RotateToken(ctx, identity.Local)
	if err != nil {
		t.Fatal(err)
	}
	if code := f.linkLogin(t, f.browser(t), tok); code != http.StatusUnauthorized {
		t.Fatalf("an API token as a login link: %d", code)
	}
	// The login form takes a link, or the API token.
	fresh, _ := f.acc.NewLoginLink(ctx, identity.Local, time.Minute)
	for _, tk := range []string{fresh, tok} {
		if resp, b := postLogin(t, f.srv.URL, nil, map[string]string{"token": tk}); resp.StatusCode != 200 {
			t.Errorf("login form with %.3s…: %d %s", tk, resp.StatusCode, b)
		}
	}
}

// TestAccountChangesEndSessions: on a hub, a new password, a new token or
// removing the user ends the user's browser sessions at once; a new user
// under an old name never gets the old one's sessions; other users keep
// theirs.
func TestAccountChangesEndSessions(t *testing.T) {
	ctx := context.Background()
	f := newAuthFixture(t, true, web.AuthOptions{})
	for _, u := range []string{"alice", "bob", "carol"} {
		if _, err := f.acc.AddUser(ctx, u, ""); err != nil {
			t.Fatal(err)
		}
	}
	bob := f.as(t, "bob")

	steps := []struct {
		name   string
		user   string
		change func() error
	}{
		{"hub user passwd", "alice", func() error { return f.acc.SetPassword(ctx, "alice", "password of alice") }},
		{"hub user token", "alice", func() error { _, err := f.acc.RotateToken(ctx, "alice"); return err }},
		{"hub user rm", "carol", func() error { return f.acc.RemoveUser(ctx, "carol") }},
	}
	for _, s := range steps {
		b := f.as(t, s.user)
		if code := b.get(f.sessionsURL()); code != 200 {
			t.Fatalf("%s's cookie before %s: %d", s.user, s.name, code)
		}
		if err := s.change(); err != nil {
			t.Fatal(err)
		}
		if code := b.get(f.sessionsURL()); code != 401 {
			t.Errorf("%s's cookie after %s: %d, want 401", s.user, s.name, code)
		}
		if code := bob.get(f.sessionsURL()); code != 200 {
			t.Errorf("bob's cookie after %s of %s: %d", s.name, s.user, code)
		}
	}

	// carol again: a new user with the old name. The old cookie, replayed
	// by hand, does not open the new account.
	if _, err := f.acc.AddUser(ctx, "carol", ""); err != nil {
		t.Fatal(err)
	}
	secret := f.as(t, "carol").cookie(f.srv.URL, "corral_session")
	if err := f.acc.RemoveUser(ctx, "carol"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.acc.AddUser(ctx, "carol", "password of carol"); err != nil {
		t.Fatal(err)
	}
	replay := f.browser(t)
	u, _ := url.Parse(f.srv.URL)
	replay.jar.SetCookies(u, []*http.Cookie{{Name: "corral_session", Value: secret, Path: "/"}})
	if code := replay.get(f.sessionsURL()); code != 401 {
		t.Fatalf("the removed carol's cookie on the new carol: %d", code)
	}
	if resp, b := replay.send("GET", f.srv.URL+"/api/v1/auth/me", nil); resp.StatusCode != 401 {
		t.Fatalf("me with the removed carol's cookie: %d %s", resp.StatusCode, b)
	}
	f.loginPassword(t, f.browser(t), "carol", "password of carol")
}

// TestServeAccountChangesEndSessions: on one machine too, `corral passwd`
// and `corral token rotate` log every browser out.
func TestServeAccountChangesEndSessions(t *testing.T) {
	ctx := context.Background()
	f := newAuthFixture(t, false, web.AuthOptions{})
	for _, change := range []func() error{
		func() error { return f.acc.SetPassword(ctx, identity.Local, "correct horse") },
		func() error { _, err := f.acc.RotateToken(ctx, identity.Local); return err },
	} {
		link, _ := f.acc.NewLoginLink(ctx, identity.Local, time.Minute)
		b := f.browser(t)
		if code := f.linkLogin(t, b, link); code != 303 {
			t.Fatalf("login: %d", code)
		}
		if err := change(); err != nil {
			t.Fatal(err)
		}
		if code := b.get(f.sessionsURL()); code != 401 {
			t.Errorf("cookie after the change: %d", code)
		}
	}
}

// TestLogoutEndsTheSession: after logging out, the cookie (kept by an
// attacker who copied it) no longer works.
func TestLogoutEndsTheSession(t *testing.T) {
	ctx := context.Background()
	f := newAuthFixture(t, false, web.AuthOptions{})
	link, _ := f.acc.NewLoginLink(ctx, identity.Local, time.Minute)
	b := f.browser(t)
	f.linkLogin(t, b, link)
	secret := b.cookie(f.srv.URL, "corral_session")
	if resp, out := b.send("POST", f.srv.URL+"/api/v1/auth/logout", map[string]any{}); resp.StatusCode != 204 {
		t.Fatalf("logout: %d %s", resp.StatusCode, out)
	}
	if b.cookie(f.srv.URL, "corral_session") != "" {
		t.Error("logout left the cookie in the browser")
	}
	replay := f.browser(t)
	u, _ := url.Parse(f.srv.URL)
	replay.jar.SetCookies(u, []*http.Cookie{{Name: "corral_session", Value: secret, Path: "/"}})
	if code := replay.get(f.sessionsURL()); code != 401 {
		t.Fatalf("the cookie after logout: %d", code)
	}
}

// TestLoginCSRF: a hostile page cannot log the person's browser in (into
// the attacker's account) or out: text/plain, form and multipart bodies
// and requests from another Origin or none are refused, and no session is
// made.
func TestLoginCSRF(t *testing.T) {
	ctx := context.Background()
	f := newAuthFixture(t, true, web.AuthOptions{})
	if _, err := f.acc.AddUser(ctx, "mallory", "mallory's password"); err != nil {
		t.Fatal(err)
	}
	js := `{"user":"mallory","password":"mallory's password"}`
	cases := []struct {
		name, ctype, origin, body string
	}{
		{"text/plain", "text/plain", f.srv.URL, js},
		{"text/plain with charset", "text/plain;charset=UTF-8", f.srv.URL, js},
		{"a form", "application/x-www-form-urlencoded", f.srv.URL, `user=mallory&password=mallory%27s+password`},
		{"multipart", "multipart/form-data; boundary=x", f.srv.URL, "--x\r\nContent-Disposition: form-data; name=\"user\"\r\n\r\nmallory\r\n--x--\r\n"},
		{"no content type", "", f.srv.URL, js},
		{"JSON from another site", "application/json", "http://evil.example", js},
		{"JSON from another port", "application/json", "http://127.0.0.1:1", js},
		{"JSON with Origin null", "application/json", "null", js},
		{"JSON without Origin", "application/json", "", js},
	}
	for _, c := range cases {
		req, _ := http.NewRequest("POST", f.srv.URL+"/api/v1/auth/login", strings.NewReader(c.body))
		if c.ctype != "" {
			req.Header.Set("Content-Type", c.ctype)
		}
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 && resp.StatusCode != 403 {
			t.Errorf("login with %s: %d %s", c.name, resp.StatusCode, out)
		}
		if len(resp.Cookies()) > 0 {
			t.Errorf("login with %s set cookies %v", c.name, resp.Cookies())
		}
	}
	if list, _ := f.acc.WebSessions(ctx, "mallory"); len(list) != 0 {
		t.Fatalf("refused logins made sessions: %+v", list)
	}

	// Logout: a cross-site one does not end the session.
	if _, err := f.acc.AddUser(ctx, "alice", ""); err != nil {
		t.Fatal(err)
	}
	alice := f.as(t, "alice")
	for _, c := range []struct{ ctype, origin string }{{"text/plain", f.srv.URL}, {"application/json", "http://evil.example"}} {
		req, _ := http.NewRequest("POST", f.srv.URL+"/api/v1/auth/logout", strings.NewReader("{}"))
		req.Header.Set("Content-Type", c.ctype)
		req.Header.Set("Origin", c.origin)
		resp, err := alice.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 400 && resp.StatusCode != 403 {
			t.Errorf("logout %s from %s: %d", c.ctype, c.origin, resp.StatusCode)
		}
	}
	if code := alice.get(f.sessionsURL()); code != 200 {
		t.Fatalf("alice's session after cross-site logouts: %d", code)
	}
}

// TestOneGuesserCannotLockOutOthers: behind a reverse proxy every client
// comes from 127.0.0.1. With the proxy trusted, a guesser at one address
// is held back, and so is the account guessed at, but another user logs
// in; without it, X-Forwarded-For is ignored, so a guesser cannot escape
// the limit by making addresses up.
func TestOneGuesserCannotLockOutOthers(t *testing.T) {
	ctx := context.Background()
	proxy := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	// Small limits that do not refill during the test: bcrypt is slow
	// under the race detector.
	limits := web.AuthOptions{AddressLimit: web.Limit{Burst: 6, Every: time.Hour}, AccountLimit: web.Limit{Burst: 3, Every: time.Hour}}
	o := limits
	o.TrustedProxies = proxy
	f := newAuthFixture(t, true, o)
	for _, u := range []string{"alice", "bob"} {
		if _, err := f.acc.AddUser(ctx, u, "password of "+u); err != nil {
			t.Fatal(err)
		}
	}
	guesser := f.browser(t)
	guesser.xff = "203.0.113.9"
	codes := map[int]int{}
	for i := range 8 {
		resp, _ := guesser.send("POST", f.srv.URL+"/api/v1/auth/login", map[string]string{"user": "alice", "password": fmt.Sprint("guess ", i)})
		codes[resp.StatusCode]++
	}
	if codes[429] == 0 {
		t.Fatalf("8 wrong passwords were all answered: %v", codes)
	}
	bob := f.browser(t)
	bob.xff = "198.51.100.7"
	f.loginPassword(t, bob, "bob", "password of bob")
	// The guessed account waits, even from another address.
	other := f.browser(t)
	other.xff = "192.0.2.44"
	if resp, out := other.send("POST", f.srv.URL+"/api/v1/auth/login", map[string]string{"user": "alice", "password": "password of alice"}); resp.StatusCode != 429 {
		t.Errorf("alice while her account is being guessed: %d %s", resp.StatusCode, out)
	}

	// Not trusted: made-up X-Forwarded-For values are all one address.
	g := newAuthFixture(t, true, limits)
	blocked := false
	for i := range 8 {
		b := g.browser(t)
		b.xff = fmt.Sprintf("203.0.113.%d", i)
		resp, _ := b.send("POST", g.srv.URL+"/api/v1/auth/login", map[string]string{"user": fmt.Sprint("user", i), "password": "guess"})
		if resp.StatusCode == 429 {
			blocked = true
			break
		}
	}
	if !blocked {
		t.Fatal("a guesser escaped the address limit with made-up X-Forwarded-For values")
	}
}

// TestSignedInDevices: the dashboard lists the user's browser sessions and
// signs one out; another user's are out of reach.
func TestSignedInDevices(t *testing.T) {
	ctx := context.Background()
	proxy := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	f := newAuthFixture(t, true, web.AuthOptions{TrustedProxies: proxy})
	for _, u := range []string{"alice", "bob"} {
		f.acc.AddUser(ctx, u, "")
	}
	laptop, phone := f.browser(t), f.browser(t)
	// A C1 CSI and a bidi override: not printable, not kept.
	laptop.ua, phone.ua = "Laptop/1.0", "Phone/2.0 \u009b31m\u202egnp.exe"
	// Entries further left are the client's word; the nearest untrusted
	// hop is the client.
	laptop.xff = "10.9.9.9, 203.0.113.5"
	for _, b := range []*browser{laptop, phone} {
		link, _ := f.acc.NewLoginLink(ctx, "alice", time.Minute)
		if code := f.linkLogin(t, b, link); code != 303 {
			t.Fatalf("alice's login: %d", code)
		}
	}
	bob := f.as(t, "bob")

	resp, out := laptop.send("GET", f.srv.URL+"/api/v1/auth/sessions", nil)
	var list []struct {
		ID        string `json:"id"`
		UserAgent string `json:"user_agent"`
		Address   string `json:"address"`
		Current   bool   `json:"current"`
		LastSeen  time.Time
	}
	if resp.StatusCode != 200 || json.Unmarshal(out, &list) != nil || len(list) != 2 {
		t.Fatalf("alice's sessions: %d %s", resp.StatusCode, out)
	}
	var phoneID string
	for _, s := range list {
		switch s.UserAgent {
		case "Laptop/1.0":
			if !s.Current || s.Address != "203.0.113.5" {
				t.Errorf("the laptop's entry: %+v", s)
			}
		case "Phone/2.0 31mgnp.exe":
			if s.Current || s.Address != "127.0.0.1" {
				t.Errorf("the phone's entry: %+v", s)
			}
			phoneID = s.ID
		default:
			t.Errorf("an entry with user agent %q (controls must go)", s.UserAgent)
		}
	}
	// bob cannot sign alice's phone out.
	if resp, _ := bob.send("DELETE", f.srv.URL+"/api/v1/auth/sessions/"+phoneID, nil); resp.StatusCode != 404 {
		t.Errorf("bob signing out alice's phone: %d", resp.StatusCode)
	}
	// Without the CSRF header, nothing happens.
	req, _ := http.NewRequest("DELETE", f.srv.URL+"/api/v1/auth/sessions/"+phoneID, nil)
	if resp, err := laptop.c.Do(req); err != nil || resp.StatusCode != 403 {
		t.Errorf("sign out without the CSRF header: %v %v", err, resp.StatusCode)
	}
	if code := phone.get(f.sessionsURL()); code != 200 {
		t.Fatalf("the phone before it was signed out: %d", code)
	}
	if resp, out := laptop.send("DELETE", f.srv.URL+"/api/v1/auth/sessions/"+phoneID, nil); resp.StatusCode != 204 {
		t.Fatalf("sign the phone out: %d %s", resp.StatusCode, out)
	}
	if code := phone.get(f.sessionsURL()); code != 401 {
		t.Fatalf("the phone after it was signed out: %d", code)
	}
	if code := laptop.get(f.sessionsURL()); code != 200 {
		t.Fatalf("the laptop after signing the phone out: %d", code)
	}
}

// TestSessionLifetimes: a session not used for SessionIdle ends, and so
// does one older than SessionLife however much it is used; last seen is
// written at most once a minute.
func TestSessionLifetimes(t *testing.T) {
	ctx := context.Background()
	clk := &clock{now: time.Now()}
	f := newAuthFixture(t, false, web.AuthOptions{Now: clk.Now})
	login := func() *browser {
		link, _ := f.acc.NewLoginLink(ctx, identity.Local, time.Minute)
		b := f.browser(t)
		if code := f.linkLogin(t, b, link); code != 303 {
			t.Fatalf("login: %d", code)
		}
		return b
	}
	lastSeen := func() time.Time {
		list, err := f.acc.WebSessions(ctx, identity.Local)
		if err != nil || len(list) == 0 {
			t.Fatalf("sessions %v %v", list, err)
		}
		return list[0].LastSeen
	}
	b := login()
	t0 := lastSeen()
	clk.add(30 * time.Second)
	b.get(f.sessionsURL())
	if !lastSeen().Equal(t0) {
		t.Error("last seen was written on a request within the minute")
	}
	clk.add(time.Minute)
	b.get(f.sessionsURL())
	if !lastSeen().After(t0) {
		t.Error("last seen not written after a minute")
	}
	clk.add(web.SessionIdle + time.Second)
	if code := b.get(f.sessionsURL()); code != 401 {
		t.Fatalf("after a week unused: %d", code)
	}

	b = login()
	for used := time.Duration(0); used < web.SessionLife; used += 24 * time.Hour {
		clk.add(24 * time.Hour)
		b.get(f.sessionsURL())
	}
	if code := b.get(f.sessionsURL()); code != 401 {
		t.Fatalf("a session used daily, after %v: %d", web.SessionLife, code)
	}
}

// TestOpenSocketsEndWithTheirCredential: an events WebSocket opened with a
// cookie closes when the session is revoked, and one opened with the API
// token when the token is rotated.
func TestOpenSocketsEndWithTheirCredential(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	wsURL := "ws" + strings.TrimPrefix(f.url("/api/v1/ws/events"), "http")
	open := func(opts *websocket.DialOptions) *websocket.Conn {
		c, _, err := websocket.Dial(ctx, wsURL, opts)
		if err != nil {
			t.Fatal(err)
		}
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if _, _, err := c.Read(rctx); err != nil { // the snapshot
			t.Fatal(err)
		}
		return c
	}
	closes := func(c *websocket.Conn, what string) {
		t.Helper()
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		for {
			if _, _, err := c.Read(rctx); err != nil {
				if rctx.Err() != nil {
					t.Fatalf("%s: the socket stayed open", what)
				}
				return
			}
		}
	}
	jar := f.login(t)
	byCookie := open(&websocket.DialOptions{HTTPClient: &http.Client{Jar: jar}, HTTPHeader: http.Header{"Origin": {f.srv.URL}}})
	defer byCookie.CloseNow()
	byToken := open(&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + f.token}}})
	defer byToken.CloseNow()

	// The NDJSON event stream, with the token.
	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(sctx, "GET", f.url("/api/v1/events"), nil)
	req.Header.Set("Authorization", "Bearer "+f.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("event stream: %v %v", err, status(resp))
	}
	defer resp.Body.Close()

	if _, err := f.acc.EndWebSessions(ctx, identity.Local); err != nil {
		t.Fatal(err)
	}
	closes(byCookie, "the cookie's socket after its session was revoked")
	if _, err := f.acc.RotateToken(ctx, identity.Local); err != nil {
		t.Fatal(err)
	}
	closes(byToken, "the token's socket after the token was rotated")
	io.Copy(io.Discard, resp.Body)
	if sctx.Err() != nil {
		t.Fatal("the token's event stream stayed open after the token was rotated")
	}
}

// BenchmarkCookieRequest: what a request with a session cookie costs,
// now that the cookie names a row that is read on every request.
func BenchmarkCookieRequest(b *testing.B) {
	ctx := context.Background()
	st, err := store.Open(filepath.Join(b.TempDir(), "corral.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	acc, err := hub.LocalAccounts(ctx, st)
	if err != nil {
		b.Fatal(err)
	}
	h := web.New(stubBackend{}, web.Options{Auth: web.NewAuth(st, acc, web.AuthOptions{}), Loopback: true,
		Assets: fstest.MapFS{"index.html": {Data: []byte("x")}}})
	link, _ := acc.NewLoginLink(ctx, identity.Local, time.Minute)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.1/?token="+link, nil))
	var cookies []*http.Cookie
	for _, c := range rec.Result().Cookies() {
		if c.Name == "corral_session" {
			cookies = append(cookies, c)
		}
	}
	if len(cookies) != 1 {
		b.Fatalf("login: %d", rec.Code)
	}
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest("GET", "http://127.0.0.1/api/v1/sessions", nil)
		req.AddCookie(cookies[0])
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatalf("%d", rec.Code)
		}
	}
}
