package e2e

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// headingsJS lists the page's headings in document order as "h2 text",
// those a screen reader sees (hidden ones are left out; visually hidden
// ones are in).
const headingsJS = `[...document.querySelectorAll('h1, h2, h3, h4, h5, h6')]
	.filter(h => !h.closest('[hidden], [aria-hidden="true"]') && getComputedStyle(h).display !== 'none')
	.map(h => h.tagName.toLowerCase() + ' ' + h.textContent.trim())`

// checkHeadings: one h1, first; no level skipped on the way down (an h2
// may follow an h4, an h4 not an h2).
func checkHeadings(t *testing.T, where string, hs []string) {
	t.Helper()
	if len(hs) < 2 {
		t.Errorf("%s: headings %q, want an h1 and the panels' h2", where, hs)
		return
	}
	h1 := 0
	prev := 0
	for i, h := range hs {
		level := int(h[1] - '0')
		if level == 1 {
			h1++
		}
		if i == 0 && level != 1 {
			t.Errorf("%s: the first heading is %q, want the h1", where, h)
		}
		if i > 0 && level > prev+1 {
			t.Errorf("%s: %q follows %q (a level skipped)", where, h, hs[i-1])
		}
		prev = level
	}
	if h1 != 1 {
		t.Errorf("%s: %d h1 in %q, want 1", where, h1, hs)
	}
}

// TestBrowserHeadings: the dashboard has a heading structure for screen
// readers: the page's h1, the panels' and groups' h2
// and below, in order, on the home screen, in a session, in the bell's
// drawer, and on a phone.
func TestBrowserHeadings(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	id := strings.TrimSpace(h.corral("new", "--shell", "--dir", h.proj, "--name", "heads"))
	ctx := browser(t)
	headings := func(where string) []string {
		t.Helper()
		hs := get(t, ctx, 5*time.Second, "the headings", chromedp.Evaluate[[]string](headingsJS))
		checkHeadings(t, where, hs)
		return hs
	}
	within(t, ctx, 40*time.Second, "the home screen",
		chromedp.EmulateViewport(1440, 900),
		chromedp.Navigate(h.webURL()),
		chromedp.WaitVisible(css(`[data-testid="session-row"][data-session-id="`+id+`"]`)))
	hs := headings("home")
	if hs[0] != "h1 corral" || !slices.Contains(hs, "h2 Sessions") {
		t.Errorf("home: headings %q, want h1 corral and h2 Sessions", hs)
	}
	within(t, ctx, 20*time.Second, "the session",
		chromedp.Click(css(`[data-testid="session-row"][data-session-id="`+id+`"]`)),
		chromedp.WaitVisible(css(`[data-testid="session-name"]`)))
	hs = headings("session")
	if hs[0] != "h1 heads · corral" || !slices.Contains(hs, "h2 heads") {
		t.Errorf("session: headings %q, want the session's name in the h1 and an h2", hs)
	}
	within(t, ctx, 10*time.Second, "the bell's drawer",
		chromedp.Click(css(`[data-testid="bell"]`)),
		chromedp.WaitVisible(css(`[data-testid="bell-drawer"]`)))
	headings("bell")
	within(t, ctx, 40*time.Second, "the phone's home screen",
		chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(3), chromedp.EmulatePortrait, chromedp.EmulateMobile, chromedp.EmulateTouch),
		chromedp.Navigate(strings.TrimSpace(h.corral("login-link"))+"#/"),
		chromedp.WaitVisible(css(`.home [data-testid="session-row"]`)))
	headings("phone home")
}
