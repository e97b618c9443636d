package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/backend"
	"github.com/corral-dev/corral/internal/httpapi"
)

// table serves the ops of a Mux, and nothing else.
type table struct {
	backend.Backend
	m *backend.Mux
}

func (t table) Serve(ctx context.Context, op string, req any) (any, error) {
	return t.m.Serve(ctx, op, req)
}

// TestBodies: a lenient op takes a body with fields it does not read (a
// browser's push subscription), every other op refuses them, and an op
// that answers nothing sends no body, whatever its status.
func TestBodies(t *testing.T) {
	t.Parallel()
	m := backend.NewMux()
	var got api.PushSubscription
	backend.HandleNone(m, api.OpPushSubscribe, func(_ context.Context, s api.PushSubscription) error { got = s; return nil })
	backend.HandleNone(m, api.OpPushTest, func(context.Context, api.Empty) error { return nil })
	backend.HandleNone(m, api.OpPushUnsubscribe, func(context.Context, api.PushUnsubscribeRequest) error { return nil })
	backend.Handle(m, api.OpSettings, func(_ context.Context, r api.SettingsRequest) (api.Settings, error) {
		return api.Settings{WebhookURL: *r.WebhookURL}, nil
	})
	srv := httptest.NewServer(httpapi.New(table{m: m}, httpapi.Options{}))
	t.Cleanup(srv.Close)
	do := func(method, path, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, b := do("POST", "/api/v1/push/subscriptions", `{"endpoint":"https://push.example.com/x","expirationTime":null,"keys":{"p256dh":"k","auth":"a"}}`)
	if code != 201 || b != "" || got.Endpoint != "https://push.example.com/x" || got.Keys.Auth != "a" {
		t.Errorf("subscribe: %d %q, read %+v", code, b, got)
	}
	if code, b := do("POST", "/api/v1/push/test", `{}`); code != 202 || b != "" {
		t.Errorf("test: %d %q", code, b)
	}
	if code, b := do("DELETE", "/api/v1/push/subscriptions", ""); code != 400 || !strings.Contains(b, "endpoint") {
		t.Errorf("unsubscribe without a body: %d %s", code, b)
	}
	if code, b := do("DELETE", "/api/v1/push/subscriptions", `{"endpoint":"https://push.example.com/x"}`); code != 204 || b != "" {
		t.Errorf("unsubscribe: %d %q", code, b)
	}
	if code, b := do("PUT", "/api/v1/settings", `{"webhook_url":"https://ntfy.sh/t","theme":"dark"}`); code != 400 || !strings.Contains(b, "theme") {
		t.Errorf("settings with an unknown field: %d %s", code, b)
	}
	if code, b := do("PUT", "/api/v1/settings", `{"webhook_url":"https://ntfy.sh/t"}`); code != 200 || !strings.Contains(b, `"webhook_url":"https://ntfy.sh/t"`) {
		t.Errorf("settings: %d %s", code, b)
	}
}
