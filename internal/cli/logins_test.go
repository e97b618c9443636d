package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/datadir"
	"github.com/corral-dev/corral/internal/store"
)

var openRe = regexp.MustCompile(`corral: open (http://\S+)`)

// web is a browser of the dashboard: a cookie jar, no redirects.
type webClient struct {
	t   *testing.T
	c   *http.Client
	jar *cookiejar.Jar
}

func newWebClient(t *testing.T) *webClient {
	jar, _ := cookiejar.New(nil)
	return &webClient{t: t, jar: jar, c: &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (w *webClient) get(u, bearer string) int {
	w.t.Helper()
	req, _ := http.NewRequest("GET", u, nil)
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := w.c.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func (w *webClient) postJSON(base, path, body string) int {
	w.t.Helper()
	req, _ := http.NewRequest("POST", base+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", base)
	resp, err := w.c.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestLoginsOfOneMachine: corral serve prints a one-time link (and logs no
// secret); corral login-link makes more; corral sessions lists and revokes
// browsers; corral token rotate makes an API token that a second rotation
// takes back; an older data directory's plain-text token is hashed and its
// URL stops working.
func TestLoginsOfOneMachine(t *testing.T) {
	in := newInstall(t)
	// An older corral serve left its token in plain text.
	const oldToken = "b2xkLXBsYWluLXRleHQtdG9rZW4tb2YtYW4tb2xkZXItY29ycmFs"
	datadir.Ensure(in.dataDir)
	st, err := store.Open(filepath.Join(in.dataDir, datadir.Database))
	if err != nil {
		t.Fatal(err)
	}
	st.Set(context.Background(), "web.access_token", []byte(oldToken))
	st.Close()

	in.serveArgs = []string{"--listen", "127.0.0.1:0"}
	in.startDaemon()
	var printed string
	waitUntil(t, 10*time.Second, "the login link on stdout", func() bool {
		m := openRe.FindStringSubmatch(in.log.String())
		if m != nil {
			printed = m[1]
		}
		return m != nil
	})
	u, _ := url.Parse(printed)
	base := u.Scheme + "://" + u.Host
	api := base + "/api/v1/sessions"
	secrets := []string{u.Query().Get("token")}

	// The old token: an API token still, a login link no more.
	if code := newWebClient(t).get(api, oldToken); code != 200 {
		t.Errorf("the old token as a bearer token: %d", code)
	}
	if code := newWebClient(t).get(base+"/?token="+oldToken, ""); code != 401 {
		t.Errorf("the old login URL: %d", code)
	}

	laptop := newWebClient(t)
	if code := laptop.get(printed, ""); code != http.StatusSeeOther {
		t.Fatalf("the printed link: %d", code)
	}
	if code := newWebClient(t).get(printed, ""); code != 401 {
		t.Fatalf("the printed link used twice: %d", code)
	}
	link := strings.TrimSpace(in.must("login-link"))
	if !strings.HasPrefix(link, base+"/?token=cl_") {
		t.Fatalf("corral login-link printed %q (the dashboard is %s)", link, base)
	}
	lu, _ := url.Parse(link)
	secrets = append(secrets, lu.Query().Get("token"))
	phone := newWebClient(t)
	if code := phone.get(link, ""); code != http.StatusSeeOther {
		t.Fatalf("corral login-link's link: %d", code)
	}
	// A link past its lifetime.
	short := strings.TrimSpace(in.must("login-link", "--expires", "1s"))
	for deadline := time.Now().Add(1100 * time.Millisecond); time.Now().Before(deadline); {
		time.Sleep(time.Until(deadline))
	}
	if code := newWebClient(t).get(short, ""); code != 401 {
		t.Fatalf("a login link after its lifetime: %d", code)
	}
	if r := in.run("login-link", "--expires", "2h"); r.code == 0 {
		t.Errorf("a two-hour login link: %+v", r)
	}
	for _, w := range []*webClient{laptop, phone} {
		if code := w.get(api, ""); code != 200 {
			t.Fatalf("a logged-in browser: %d", code)
		}
	}

	var list []store.WebSession
	if err := json.Unmarshal([]byte(in.must("sessions", "--json")), &list); err != nil || len(list) != 2 {
		t.Fatalf("corral sessions --json: %v %+v", err, list)
	}
	table := in.must("sessions")
	if !strings.Contains(table, list[0].ID[:8]) || !strings.Contains(table, "127.0.0.1") || strings.Count(table, "\n") != 3 {
		t.Errorf("corral sessions:\n%s", table)
	}
	// The most recently used first: the phone. Sign it out by a prefix.
	if r := in.run("sessions", "--revoke", list[0].ID[:6]); r.code != 0 {
		t.Fatalf("--revoke: %+v", r)
	}
	if code := phone.get(api, ""); code != 401 {
		t.Errorf("the revoked phone: %d", code)
	}
	if code := laptop.get(api, ""); code != 200 {
		t.Errorf("the laptop after revoking the phone: %d", code)
	}
	if r := in.run("sessions", "--revoke", "zz"); r.code == 0 || !strings.Contains(r.stderr, "no browser session") {
		t.Errorf("--revoke of nothing: %+v", r)
	}

	// The API token.
	tok1 := strings.TrimSpace(in.must("token", "rotate"))
	if code := newWebClient(t).get(api, tok1); code != 200 {
		t.Fatalf("the new API token: %d", code)
	}
	if code := newWebClient(t).get(api, oldToken); code != 401 {
		t.Errorf("the old token after a rotation: %d", code)
	}
	if code := laptop.get(api, ""); code != 401 {
		t.Errorf("a browser after the token rotation: %d", code)
	}
	tok2 := strings.TrimSpace(in.must("token", "rotate"))
	if code := newWebClient(t).get(api, tok1); code != 401 {
		t.Errorf("the rotated-out API token: %d", code)
	}
	if code := newWebClient(t).get(api, tok2); code != 200 {
		t.Errorf("the newest API token: %d", code)
	}
	secrets = append(secrets, tok1, tok2)

	// A password, and --revoke-all.
	if r := in.runIn("correct horse battery\n", "passwd", "--stdin"); r.code != 0 {
		t.Fatalf("passwd: %+v", r)
	}
	pw := newWebClient(t)
	if code := pw.postJSON(base, "/api/v1/auth/login", `{"password":"correct horse battery"}`); code != 200 {
		t.Fatalf("password login: %d", code)
	}
	in.must("sessions", "--revoke-all")
	if code := pw.get(api, ""); code != 401 {
		t.Errorf("a browser after --revoke-all: %d", code)
	}

	for _, s := range append(secrets, oldToken) {
		if s != "" && strings.Count(in.log.String(), s) > boolInt(s == secrets[0]) {
			t.Errorf("a secret (%.6s…) is in the daemon's output beyond the one printed link", s)
		}
	}
	if r := in.run("--hub", "http://127.0.0.1:1", "sessions"); r.code == 0 || !strings.Contains(r.stderr, "hub user") {
		t.Errorf("corral sessions with --hub: %+v", r)
	}
	in.stopDaemon()
	if r := in.run("login-link"); r.code == 0 || !strings.Contains(r.stderr, "corral serve") {
		t.Errorf("login-link without a daemon: %+v", r)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
