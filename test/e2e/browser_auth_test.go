package e2e

import (
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserSignedInDevices: Settings lists the browsers logged in to
// this corral serve, and "Sign out" ends another one's session at once;
// "Log out" ends this one's on the server too.
func TestBrowserSignedInDevices(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	ctx := browser(t)
	within(t, ctx, 30*time.Second, "login with the printed link",
		chromedp.Navigate(h.webURL()),
		chromedp.WaitVisible(css(`[data-testid="new-session"]`)),
	)

	// Another device, logged in with a link of `corral login-link`.
	link := strings.TrimSpace(h.corral("login-link"))
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	base := u.Scheme + "://" + u.Host
	jar, _ := cookiejar.New(nil)
	phone := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	phoneGet := func(p string) int {
		t.Helper()
		req, _ := http.NewRequest("GET", base+p, nil)
		req.Header.Set("User-Agent", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Safari/604.1")
		resp, err := phone.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	phoneGet(strings.TrimPrefix(link, base))
	if code := phoneGet("/api/v1/sessions"); code != 200 {
		t.Fatalf("the phone after its login link: %d", code)
	}

	within(t, ctx, 20*time.Second, "sign the phone out in Settings",
		chromedp.Click(css(`[data-testid="settings-button"]`)),
		chromedp.WaitVisible(css(`[data-testid="signed-in-devices"] [data-testid="web-session"][data-current="true"]`)),
		chromedp.WaitVisible(css(`[data-testid="web-session"][data-current="false"]`)),
	)
	names := get(t, ctx, 5*time.Second, "the signed-in devices",
		chromedp.Evaluate[string](`[...document.querySelectorAll('[data-testid="web-session"]')].map(e => e.textContent).join('|')`))
	if !strings.Contains(names, "Safari on iOS") || !strings.Contains(names, "this browser") {
		t.Errorf("the signed-in devices: %q", names)
	}
	within(t, ctx, 20*time.Second, "sign out",
		chromedp.Click(css(`[data-testid="web-session"][data-current="false"] [data-testid="sign-out-device"]`)),
		chromedp.WaitNotPresent(css(`[data-testid="web-session"][data-current="false"]`)),
	)
	if code := phoneGet("/api/v1/sessions"); code != 401 {
		t.Fatalf("the phone after Sign out: %d", code)
	}

	within(t, ctx, 20*time.Second, "log out",
		chromedp.Click(css(`[data-testid="logout"]`)),
		chromedp.WaitVisible(css(`[data-testid="login"]`)),
	)
	var left []json.RawMessage
	if err := json.Unmarshal([]byte(h.corral("sessions", "--json")), &left); err != nil || len(left) != 0 {
		t.Fatalf("browser sessions after logging out: %v %d", err, len(left))
	}
}
