package web_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/corral-dev/corral/internal/web"
)

// TestMetricsBehindLogin: /metrics on the dashboard needs a credential, and
// a dashboard given no metrics handler says so rather than serving the UI.
func TestMetricsBehindLogin(t *testing.T) {
	f := newFixture(t)
	h := web.New(f.ag.Backend(), web.Options{Auth: f.auth, Loopback: true,
		Metrics: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("corral_up 1\n")) })})
	srv := httptest.NewServer(h)
	defer srv.Close()
	get := func(base, token string) (int, string) {
		req, _ := http.NewRequest("GET", base+"/metrics", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		buf := make([]byte, 4096)
		n, _ := resp.Body.Read(buf)
		b.Write(buf[:n])
		return resp.StatusCode, b.String()
	}
	if code, _ := get(srv.URL, ""); code != http.StatusUnauthorized {
		t.Errorf("/metrics without a credential: %d", code)
	}
	if code, body := get(srv.URL, f.token); code != 200 || body != "corral_up 1\n" {
		t.Errorf("/metrics with the API token: %d %q", code, body)
	}
	if code, body := get(f.srv.URL, f.token); code != http.StatusNotFound || !strings.Contains(body, "not served here") {
		t.Errorf("/metrics on a dashboard without metrics: %d %q", code, body)
	}
}
