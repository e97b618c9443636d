package notify

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/metrics"
)

// TestNotificationMetrics: every push and webhook is counted, sent or
// failed (an HTTP status that is no success counts as failed).
func TestNotificationMetrics(t *testing.T) {
	m := metrics.New()
	n, _ := notifierWith(t, Options{AllowPrivate: true, Metrics: m})
	var hookStatus atomic.Int32
	hookStatus.Store(200)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/push") {
			w.WriteHeader(http.StatusGone)
			return
		}
		w.WriteHeader(int(hookStatus.Load()))
	}))
	defer srv.Close()
	ctx := context.Background()
	p256dh, auth := browserKeys(t)
	var sub Subscription
	sub.Endpoint, sub.Keys.P256dh, sub.Keys.Auth = srv.URL+"/push", p256dh, auth
	if err := n.Subscribe(ctx, "u", sub); err != nil {
		t.Fatal(err)
	}
	if err := n.SetWebhook(ctx, "u", srv.URL+"/hook"); err != nil {
		t.Fatal(err)
	}
	ev := api.Event{Type: api.EventSession, Notify: true, Session: &api.Session{ID: "s", Name: "a", Status: api.StatusReview}}
	n.Handle(ctx, "u", ev)
	n.Wait()
	hookStatus.Store(500)
	n.Handle(ctx, "u", ev)
	n.Wait()

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	b, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`corral_notifications_total{channel="push",result="failed"} 1`, // 410: gone, and dropped
		`corral_notifications_total{channel="webhook",result="ok"} 1`,
		`corral_notifications_total{channel="webhook",result="failed"} 1`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("metrics lack %s:\n%s", want, grepLines(string(b), "corral_notifications"))
		}
	}
}

func grepLines(s, substr string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
