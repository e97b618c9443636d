package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/testkit/testio"
)

// TestBrowserGlance: many sessions at a glance, at desktop and phone sizes.
// Sessions group by project folder under a dot of the most urgent state;
// "u" opens the next session that needs the person; Ctrl+K finds one by
// name; y answers the open session's dialog from outside the terminal.
func TestBrowserGlance(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	other := testio.TempDir(t, "corral-other-")
	asker := h.newSession("--name", "asker")
	calm := strings.TrimSpace(h.corral("new", "--shell", "--dir", h.proj, "--name", "calm"))
	away := strings.TrimSpace(h.corral("new", "--shell", "--dir", other, "--name", "elsewhere"))
	h.send(asker, "RUNTOOL from the glance test")
	h.waitStatus(asker, api.StatusNeedsInput, 60*time.Second)
	waitFor(t, 20*time.Second, "the dialog read off the screen", func() bool {
		w := h.lsOne(asker).WaitingFor
		return w != nil && w.DialogID != ""
	})

	group := func(dir string) string { return fmt.Sprintf(`[data-testid="project-group"][data-project="%s"]`, dir) }
	selected := func(ctx context.Context) string {
		return get(t, ctx, 5*time.Second, "the open session", chromedp.Evaluate[string](`window.__corral.state.selectedId || ''`))
	}
	waitSelected := func(ctx context.Context, id, what string) {
		t.Helper()
		var got string
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if got = selected(ctx); got == id {
				return
			}
		}
		t.Fatalf("%s: the open session is %q, want %q", what, got, id)
	}
	// Keys go to the page, not a field: the open session's row has the focus.
	pressKey := func(ctx context.Context, what, key string, opts ...chromedp.KeyOption) {
		get(t, ctx, 5*time.Second, "blur", chromedp.Evaluate[bool](`(document.activeElement && document.activeElement.blur && document.activeElement.blur(), true)`))
		within(t, ctx, 10*time.Second, what, chromedp.KeyEvent(key, opts...))
	}

	for _, size := range []struct {
		name  string
		w, h  int64
		phone bool
	}{{"desktop", 1440, 900, false}, {"phone", 390, 844, true}} {
		t.Run(size.name, func(t *testing.T) {
			ctx := browser(t)
			opts := []chromedp.EmulateViewportOption{}
			if size.phone {
				opts = append(opts, chromedp.EmulateScale(3), chromedp.EmulatePortrait, chromedp.EmulateMobile, chromedp.EmulateTouch)
			}
			// A login link logs one browser in: each gets its own.
			within(t, ctx, 40*time.Second, "the dashboard",
				chromedp.EmulateViewport(size.w, size.h, opts...),
				chromedp.Navigate(strings.TrimSpace(h.corral("login-link"))),
				chromedp.WaitVisible(css(group(h.proj))),
			)
			if !size.phone {
				// The first visit offers notifications once: "Not now" is for good.
				within(t, ctx, 10*time.Second, "the notifications offer",
					chromedp.WaitVisible(css(`[data-testid="notify-offer"]`)),
					chromedp.Click(css(`[data-testid="notify-offer-dismiss"]`)),
					chromedp.WaitNotPresent(css(`[data-testid="notify-offer"]`)),
					chromedp.Reload(),
					chromedp.WaitVisible(css(group(h.proj))))
				if n := get(t, ctx, 5*time.Second, "the offer after a reload", chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="notify-offer"]').length`)); n != 0 {
					t.Error("the offer came back after it was answered")
				}
			}
			// The project holding a session that asks shows needs-input;
			// the other folder's group its idle shell.
			within(t, ctx, 20*time.Second, "the roll-up dots",
				chromedp.WaitVisible(css(group(h.proj)+`[data-status="needs-input"] [data-testid="project-dot"][data-status="needs-input"]`)),
				chromedp.WaitVisible(css(group(other)+` [data-testid="session-row"][data-session-id="`+away+`"]`)))
			if st := get(t, ctx, 5*time.Second, "the other group's dot", chromedp.AttributeValue(css(group(other)+` [data-testid="project-dot"]`), "data-status")); st.Value == string(api.StatusNeedsInput) {
				t.Errorf("a group without a waiting session shows %s", st.Value)
			}
			rows := get(t, ctx, 5*time.Second, "the calm row", chromedp.Evaluate[int](fmt.Sprintf(
				`document.querySelectorAll('%s [data-testid="session-row"][data-session-id="%s"]').length`, group(h.proj), calm)))
			if rows != 1 {
				t.Errorf("the calm shell is not in its project's group (%d)", rows)
			}
			saveShot(t, ctx, "dashboard-"+size.name)

			// From the other folder's session, u goes to the one that needs me.
			within(t, ctx, 10*time.Second, "open elsewhere",
				chromedp.Click(css(fmt.Sprintf(`[data-testid="session-row"][data-session-id="%s"]`, away))))
			waitSelected(ctx, away, "click")
			pressKey(ctx, "press u", "u")
			waitSelected(ctx, asker, "u")
			within(t, ctx, 20*time.Second, "the card of the session that asks",
				chromedp.WaitVisible(css(fmt.Sprintf(`[data-testid="needs-input-card"][data-session-id="%s"]`, asker))))
			if !size.phone { // on a phone it is the permission card of TestBrowserDialogs
				saveShot(t, ctx, "needs-input-desktop")
			}

			// Ctrl+K, a few letters, Enter.
			pressKey(ctx, "Ctrl+K", "k", chromedp.KeyModifiers(chromedp.ModifierCtrl))
			within(t, ctx, 10*time.Second, "the quick switcher",
				chromedp.WaitVisible(css(`[data-testid="quick-switcher"] [data-testid="switcher-input"]`)),
				chromedp.SendKeys(css(`[data-testid="switcher-input"]`), "elsew"),
				chromedp.WaitVisible(css(fmt.Sprintf(`[data-testid="switcher-item"][data-session-id="%s"]`, away))))
			saveShot(t, ctx, "switcher-"+size.name)
			if n := get(t, ctx, 5*time.Second, "matches", chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="switcher-item"]').length`)); n != 1 {
				t.Errorf("%d sessions match \"elsew\", want 1", n)
			}
			within(t, ctx, 10*time.Second, "Enter", chromedp.SendKeys(css(`[data-testid="switcher-input"]`), "\r"),
				chromedp.WaitNotPresent(css(`[data-testid="quick-switcher"]`)))
			waitSelected(ctx, away, "the quick switcher")

			if size.phone {
				return
			}
			// The bell names the session of each notification, in plain
			// text; one can be cleared, then all.
			pressKey(ctx, "press b", "b")
			within(t, ctx, 10*time.Second, "the bell drawer",
				chromedp.WaitVisible(css(`[data-testid="bell-drawer"] [data-testid="notification-session"]`)))
			who := get(t, ctx, 5*time.Second, "the notification's session", chromedp.Text(css(`[data-testid="notification-session"]`)))
			if who != "asker" {
				t.Errorf("the notification names %q, want asker", who)
			}
			// The session file can say "waiting" before the hook names the
			// tool (a loaded machine): the entry is then first the generic
			// text, and takes the tool's when the hook's details come.
			within(t, ctx, 20*time.Second, "the notification to name the tool",
				chromedp.Poll[chromedp.Void](`(() => { const m = document.querySelector('[data-testid="notification"] .notif-msg'); return !!m && m.textContent.includes('Bash'); })()`, chromedp.WithPollingInterval(50*time.Millisecond)))
			if msg := get(t, ctx, 5*time.Second, "the notification's text", chromedp.Text(css(`[data-testid="notification"] .notif-msg`))); strings.ContainsAny(msg, "`*") {
				t.Errorf("the notification says %q", msg)
			}
			count := func() int {
				return get(t, ctx, 5*time.Second, "notifications", chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="notification"]').length`))
			}
			n := count()
			within(t, ctx, 10*time.Second, "clear one", chromedp.Click(css(`[data-testid="clear-notification"]`)))
			if got := count(); got != n-1 {
				t.Errorf("%d notifications after clearing one of %d", got, n)
			}
			if n > 1 {
				within(t, ctx, 10*time.Second, "clear all", chromedp.Click(css(`[data-testid="clear-notifications"]`)))
			}
			if got := count(); got != 0 {
				t.Errorf("%d notifications after clearing all", got)
			}
			within(t, ctx, 5*time.Second, "close the drawer", chromedp.KeyEvent("\x1b"), chromedp.WaitNotPresent(css(`[data-testid="bell-drawer"]`)))
		})
	}

	// Desktop again: y answers the dialog of the open session (the card's Yes).
	ctx := browser(t)
	within(t, ctx, 40*time.Second, "open the session that asks",
		chromedp.EmulateViewport(1440, 900),
		chromedp.Navigate(strings.TrimSpace(h.corral("login-link"))+"#/s/"+asker+"/timeline"),
		chromedp.WaitEnabled(css(`[data-testid="needs-input-card"] button[aria-label="Yes"]`)))
	// The card ignores a key for a moment after it takes the focus (keys
	// typed on into it must not answer): press until the answer lands.
	answered := false
	for deadline := time.Now().Add(15 * time.Second); !answered && time.Now().Before(deadline); {
		pressKey(ctx, "press y", "y")
		for until := time.Now().Add(time.Second); time.Now().Before(until); time.Sleep(50 * time.Millisecond) {
			if h.lsOne(asker).Status != api.StatusNeedsInput {
				answered = true
				break
			}
		}
	}
	if !answered {
		t.Fatal("y did not answer the dialog")
	}
}
