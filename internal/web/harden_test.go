package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/coder/websocket"

	"github.com/corral-dev/corral/internal/datadir"
	"github.com/corral-dev/corral/internal/hub"
	"github.com/corral-dev/corral/internal/notify"
	"github.com/corral-dev/corral/internal/web"
)

// tmuxOut runs a tmux command on the fixture's private server.
func (f *fixture) tmuxOut(t *testing.T, args ...string) string {
	t.Helper()
	out, err := execCommand("tmux", append([]string{"-S", datadir.Socket(f.dir, datadir.TmuxSocket)}, args...)...).Output()
	if err != nil {
		t.Fatalf("tmux %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

func (f *fixture) clients(t *testing.T) []string {
	out := f.tmuxOut(t, "list-clients", "-F", "#{client_tty}")
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// TestRefusedTerminalSpawnsNothing: a terminal request that is refused (a
// foreign Origin, not a WebSocket at all) attaches no tmux client and does
// not resize the window; the terminal is opened only once the WebSocket is
// accepted.
func TestRefusedTerminalSpawnsNothing(t *testing.T) {
	f := newFixture(t)
	id := f.shell(t)
	size := func() string {
		return f.tmuxOut(t, "display-message", "-p", "-t", "="+id+":", "#{window_width}x#{window_height}")
	}
	before := size()
	wsURL := "ws" + strings.TrimPrefix(f.url("/api/v1/sessions/"+id+"/terminal"), "http") + "?cols=13&rows=7"
	auth := http.Header{"Authorization": {"Bearer " + f.token}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for range 3 {
		// Another site's page, with the person's credential.
		h := auth.Clone()
		h.Set("Origin", "http://evil.example")
		_, resp, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPHeader: h})
		if err == nil || resp == nil || resp.StatusCode != 403 {
			t.Fatalf("foreign origin: %v %v", err, status(resp))
		}
		// A plain GET: no upgrade.
		req, _ := http.NewRequestWithContext(ctx, "GET", f.url("/api/v1/sessions/"+id+"/terminal?cols=13&rows=7"), nil)
		req.Header = auth.Clone()
		r2, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r2.Body.Close()
		if r2.StatusCode != http.StatusUpgradeRequired {
			t.Fatalf("plain GET: %d", r2.StatusCode)
		}
	}
	if got := size(); got != before {
		t.Errorf("refused requests resized the window: %s, was %s", got, before)
	}
	// A real viewer now: once its output flows its own client is attached,
	// and it is the only one.
	tm := f.openTerm(t, id, "", 0)
	tm.input(t, "echo v-$((40+2))\r")
	tm.until(t, "v-42")
	if c := f.clients(t); len(c) != 1 {
		t.Errorf("tmux clients with one viewer: %q", c)
	}
	tm.c.Close(websocket.StatusNormalClosure, "")

	// A session that does not exist: accepted, then closed with 4404.
	c, _, err := websocket.Dial(ctx, strings.Replace(wsURL, id, "nope", 1), &websocket.DialOptions{HTTPHeader: auth})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = c.Read(ctx)
	if st := websocket.CloseStatus(err); st != 4404 {
		t.Fatalf("unknown session: close %v (%v), want 4404", st, err)
	}
}

// TestHSTSUnderTLS: a dashboard that serves HTTPS itself tells browsers to
// stay on it; one on plain HTTP (loopback, or behind a TLS proxy that sets
// its own) does not.
func TestHSTSUnderTLS(t *testing.T) {
	f := newFixture(t)
	for _, tls := range []bool{true, false} {
		h := web.New(f.ag.Backend(), web.Options{Auth: f.auth, Loopback: true, TLS: tls,
			Assets: fstest.MapFS{"index.html": {Data: []byte("x")}}})
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "/", nil)
		req.Host = "127.0.0.1:7777"
		h.ServeHTTP(rec, req)
		got := rec.Header().Get("Strict-Transport-Security")
		if tls && !strings.HasPrefix(got, "max-age=") || !tls && got != "" {
			t.Errorf("TLS %v: Strict-Transport-Security %q", tls, got)
		}
	}
}

// TestPushSubscriptionsScopedToTheirUser: on a hub with two users, bob can
// neither take over alice's push endpoint (409: his browser must make a new
// subscription) nor delete it.
func TestPushSubscriptionsScopedToTheirUser(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	acc := hub.NewAccounts(f.st)
	aliceTok, err := acc.AddUser(ctx, "alice", "")
	if err != nil {
		t.Fatal(err)
	}
	bobTok, err := acc.AddUser(ctx, "bob", "")
	if err != nil {
		t.Fatal(err)
	}
	auth := web.NewAuth(f.st, acc, web.AuthOptions{})
	n, err := notify.New(ctx, f.st, notify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(web.New(withUserOps(t, f.ag.Backend(), n), web.Options{Auth: auth, Loopback: true,
		Assets: fstest.MapFS{"index.html": {Data: []byte("x")}}}))
	defer srv.Close()
	do := func(tok, method string, body any) int {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(method, srv.URL+"/api/v1/push/subscriptions", bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	sub := func(auth string) map[string]any {
		return map[string]any{"endpoint": "https://push.example.com/alice-browser",
			"keys": map[string]string{"p256dh": "BAlicesKey", "auth": auth}}
	}
	if code := do(aliceTok, "POST", sub("alice-secret")); code != 201 {
		t.Fatalf("alice subscribes: %d", code)
	}
	if code := do(aliceTok, "POST", sub("alice-secret-2")); code != 201 {
		t.Fatalf("alice renews her own: %d", code)
	}
	if code := do(bobTok, "POST", sub("bob-secret")); code != http.StatusConflict {
		t.Errorf("bob takes over alice's endpoint: %d, want 409", code)
	}
	if code := do(bobTok, "DELETE", map[string]string{"endpoint": "https://push.example.com/alice-browser"}); code != 204 {
		t.Errorf("bob's delete: %d", code)
	}
	subs, err := f.st.PushSubscriptions(ctx, "alice")
	if err != nil || len(subs) != 1 || subs[0].Auth != "alice-secret-2" {
		t.Fatalf("alice's subscriptions after bob: %+v %v", subs, err)
	}
	if subs, _ := f.st.PushSubscriptions(ctx, "bob"); len(subs) != 0 {
		t.Fatalf("bob holds %+v", subs)
	}
	if code := do(aliceTok, "DELETE", map[string]string{"endpoint": "https://push.example.com/alice-browser"}); code != 204 {
		t.Fatalf("alice's delete: %d", code)
	}
	if subs, _ := f.st.PushSubscriptions(ctx, "alice"); len(subs) != 0 {
		t.Fatalf("alice's own delete left %+v", subs)
	}
}
