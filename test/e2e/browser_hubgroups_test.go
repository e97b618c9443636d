package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserHubProjectGroups: on a hub the sidebar groups by machine, and
// within each machine by project (the session's repository root, else its
// folder), each project with its roll-up dot, as on a single machine.
func TestBrowserHubProjectGroups(t *testing.T) {
	t.Parallel()
	hp := newHubProc(t, "127.0.0.1:0")
	alice := hp.addUser(t, "alice")
	m1 := newAgent(t, hp.url, hp.addDevice(t, "m1", "alice"), agentOptions{})
	m2 := newAgent(t, hp.url, hp.addDevice(t, "m2", "alice"), agentOptions{})
	alice.waitOnline(t, "m1", 15*time.Second)
	alice.waitOnline(t, "m2", 15*time.Second)
	other := filepath.Join(m1.proj, "other")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	shell := func(h *harness, dir, name string) {
		t.Helper()
		if id := strings.TrimSpace(h.corral("new", "--shell", "--dir", dir, "--name", name)); id == "" {
			t.Fatal("corral new printed no id")
		}
	}
	shell(m1, m1.proj, "a1")
	shell(m1, m1.proj, "a2")
	shell(m1, other, "b1")
	shell(m2, m2.proj, "c1")

	ctx := browser(t)
	within(t, ctx, 30*time.Second, "open the hub",
		chromedp.EmulateViewport(1440, 900),
		chromedp.Navigate(hp.url+"/"))
	// Log in with alice's API token, as the login screen's token field does.
	login := fmt.Sprintf(`fetch('/api/v1/auth/login', {method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify({token: %q})}).then(r => r.status)`, alice.token)
	if st := get(t, ctx, 10*time.Second, "log in", chromedp.Evaluate[int](login, chromedp.EvalAwaitPromise)); st/100 != 2 {
		t.Fatalf("login: %d", st)
	}
	within(t, ctx, 30*time.Second, "the dashboard", chromedp.Navigate(hp.url+"/"))
	group := func(device, dir string) string {
		return fmt.Sprintf(`[data-testid="device-group"][data-device="%s"] [data-testid="project-group"][data-project="%s"]`, device, dir)
	}
	within(t, ctx, 30*time.Second, "the projects inside each machine",
		chromedp.WaitVisible(css(group("m1", m1.proj)+` [data-testid="project-dot"]`)),
		chromedp.WaitVisible(css(group("m1", other)+` [data-testid="project-dot"]`)),
		chromedp.WaitVisible(css(group("m2", m2.proj)+` [data-testid="project-dot"]`)))
	names := func(sel string) []string {
		return get(t, ctx, 5*time.Second, "rows of "+sel, chromedp.Evaluate[[]string](fmt.Sprintf(`[...document.querySelectorAll(%q)].map(e => e.textContent)`, sel+` .row-name`)))
	}
	// Rows come in as the hub learns of them: wait for all four.
	within(t, ctx, 20*time.Second, "every row",
		chromedp.Poll[chromedp.Void](`document.querySelectorAll('[data-testid="project-group"] .row-name').length === 4`, chromedp.WithPollingInterval(50*time.Millisecond)))
	if got := names(group("m1", m1.proj)); len(got) != 2 || !strings.Contains(strings.Join(got, ","), "a1") || !strings.Contains(strings.Join(got, ","), "a2") {
		t.Errorf("m1's first project holds %q, want a1 and a2", got)
	}
	if got := names(group("m1", other)); len(got) != 1 || got[0] != "b1" {
		t.Errorf("m1's other project holds %q, want b1", got)
	}
	if got := names(group("m2", m2.proj)); len(got) != 1 || got[0] != "c1" {
		t.Errorf("m2's project holds %q, want c1", got)
	}
	// The project's dot is the most urgent state of its sessions: shells idle.
	for _, sel := range []string{group("m1", m1.proj), group("m1", other), group("m2", m2.proj)} {
		st := get(t, ctx, 5*time.Second, "dot", chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector(%q).dataset.status`, sel+` [data-testid="project-dot"]`)))
		if st != "idle" {
			t.Errorf("%s: dot %q, want idle", sel, st)
		}
	}
	// Headings: the machines' groups, then their projects, one level down.
	checkHeadings(t, "hub", get(t, ctx, 5*time.Second, "the headings", chromedp.Evaluate[[]string](headingsJS)))
	saveShot(t, ctx, "hub-project-groups")
}
