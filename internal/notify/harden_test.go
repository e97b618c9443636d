package notify

import (
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/store"
	"github.com/corral-dev/corral/internal/testkit/testio"
)

func notifierWith(t *testing.T, o Options) (*Notifier, *store.Store) {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	n, err := New(context.Background(), st, o)
	if err != nil {
		t.Fatal(err)
	}
	return n, st
}

func browserKeys(t *testing.T) (p256dh, auth string) {
	ua, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(ua.PublicKey().Bytes()), base64.RawURLEncoding.EncodeToString(make([]byte, 16))
}

var review = api.Event{Type: api.EventSession, Notify: true, Session: &api.Session{ID: "s", Name: "a", Status: api.StatusReview}}

// TestNoSSRF: webhook and push targets on the machine itself are refused,
// when saved (an address, localhost) and when dialed (a name that
// resolves to 127.0.0.1, saved earlier or behind the notifier's back), with
// a clear logged error and no request arriving; --allow-private-webhooks
// lets them through.
func TestNoSSRF(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusCreated)
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	byName := "http://localhost:" + port + "/hook"
	logs := &testio.SyncBuffer{}
	n, st := notifierWith(t, Options{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	ctx := context.Background()

	for _, u := range []string{srv.URL + "/hook", byName, "http://[::1]:" + port + "/", "http://169.254.169.254/latest/meta-data/", "http://[fd00:ec2::254]/"} {
		err := n.SetWebhook(ctx, "u", u)
		if err == nil || api.AsError(err).Code != api.CodeBadRequest || !strings.Contains(err.Error(), "--allow-private-webhooks") {
			t.Errorf("webhook %s: %v, want a 400 that names the flag", u, err)
		}
	}
	p256dh, auth := browserKeys(t)
	var sub Subscription
	sub.Endpoint, sub.Keys.P256dh, sub.Keys.Auth = srv.URL+"/push", p256dh, auth
	if err := n.Subscribe(ctx, "u", sub); err == nil {
		t.Error("a push endpoint on 127.0.0.1 was accepted")
	}

	// Saved without the check (an older version, or the flag was on then):
	// refused when dialed.
	if err := st.Set(ctx, keyWebhook+"u", []byte(byName)); err != nil {
		t.Fatal(err)
	}
	if err := st.PutPushSubscription(ctx, store.PushSubscription{Endpoint: byName, P256dh: p256dh, Auth: auth, User: "u", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	n.Handle(ctx, "u", review)
	n.Wait()
	if h := hits.Load(); h != 0 {
		t.Fatalf("%d requests reached the local server", h)
	}
	for _, want := range []string{`msg=webhook`, `msg="web push"`, "refusing to connect to 127.0.0.1, a loopback address"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
	// The subscription that could not be reached is kept: it is not gone.
	if subs, _ := st.PushSubscriptions(ctx, "u"); len(subs) != 1 {
		t.Errorf("subscriptions %+v", subs)
	}

	// With the flag, both arrive.
	n2, _ := notifierWith(t, Options{AllowPrivate: true})
	if err := n2.SetWebhook(ctx, "u", srv.URL+"/hook"); err != nil {
		t.Fatal(err)
	}
	sub.Endpoint = srv.URL + "/push"
	if err := n2.Subscribe(ctx, "u", sub); err != nil {
		t.Fatal(err)
	}
	n2.Handle(ctx, "u", review)
	n2.Wait()
	if h := hits.Load(); h != 2 {
		t.Fatalf("%d requests with --allow-private-webhooks, want 2 (push and webhook)", h)
	}
}

// TestVAPIDSubject decodes the VAPID JWT of real push requests to a local
// push service: sub is the configured subject exactly once prefixed (never
// mailto:mailto:), aud the push service's origin, exp within a day; subjects
// Apple refuses are refused at start.
func TestVAPIDSubject(t *testing.T) {
	var mu sync.Mutex
	var auths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		auths = append(auths, r.Header.Get("Authorization"))
		mu.Unlock()
		w.WriteHeader(http.StatusCreated)
	}))
	defer srv.Close()
	ctx := context.Background()
	for _, c := range []struct{ subject, want string }{
		{"", DefaultSubject},
		{"https://hub.example.com", "https://hub.example.com"},
		{"mailto:ops@example.com", "mailto:ops@example.com"},
	} {
		n, _ := notifierWith(t, Options{AllowPrivate: true, Subject: c.subject})
		p256dh, auth := browserKeys(t)
		var sub Subscription
		sub.Endpoint, sub.Keys.P256dh, sub.Keys.Auth = srv.URL+"/push/1", p256dh, auth
		if err := n.Subscribe(ctx, "u", sub); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		auths = nil
		mu.Unlock()
		n.Handle(ctx, "u", review)
		n.Wait()
		mu.Lock()
		got := append([]string(nil), auths...)
		mu.Unlock()
		if len(got) != 1 {
			t.Fatalf("subject %q: %d pushes", c.subject, len(got))
		}
		claims := checkVAPID(t, got[0], n.VAPIDPublicKey(), srv.URL)
		if claims.Sub != c.want {
			t.Errorf("subject %q: sub %q, want %q", c.subject, claims.Sub, c.want)
		}
		if now := time.Now().Unix(); claims.Exp <= now || claims.Exp > now+24*3600 {
			t.Errorf("exp %d is not within a day of now (%d)", claims.Exp, now)
		}
	}
	for _, bad := range []string{"mailto:corral@localhost", "mailto:mailto:x@example.com", "https://localhost:7777", "https://box.local",
		"mailto:a@x.invalid", "https://127.0.0.1", "corral@example.com", "http://example.com", "mailto:", "https://"} {
		if err := CheckSubject(bad); err == nil {
			t.Errorf("subject %q accepted", bad)
		}
		if _, err := New(ctx, mustStore(t), Options{Subject: bad}); err == nil {
			t.Errorf("New with subject %q", bad)
		}
	}
}

func mustStore(t *testing.T) *store.Store {
	st, err := store.Open(filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
