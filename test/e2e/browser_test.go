package e2e

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/testkit/fakeapi"
)

// chromium finds Debian's Chromium; the browser tests fail without it when
// CORRAL_REQUIRE_CLAUDE is set (CI), else they skip.
func chromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("CORRAL_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	if os.Getenv("CORRAL_REQUIRE_CLAUDE") != "" {
		t.Fatal("chromium not found: apt-get install chromium")
	}
	t.Skip("chromium not found (apt-get install chromium)")
	return ""
}

// browser starts a headless Chromium for one test.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.WindowSize(1280, 800),
	)
	// A start can fail for want of the machine's resources at that moment
	// (seen in CI: "Zygote could not fork" while other tests ran): that is
	// not what the test checks, so it tries again, a bounded number of times.
	const starts = 3
	for i := 1; ; i++ {
		// A fresh profile each try: a failed start may leave its lock.
		actx, cancelA := chromedp.NewExecAllocator(context.Background(), append(opts, chromedp.UserDataDir(t.TempDir()))...)
		ctx, cancelC := chromedp.NewContext(actx)
		// The browser lives as long as the context of its first run: start
		// it here, not inside a step's deadline.
		err := chromedp.Do(ctx)
		if err == nil {
			t.Cleanup(func() { cancelC(); cancelA() })
			return ctx
		}
		cancelC()
		cancelA()
		if i == starts {
			t.Fatalf("start chromium (%d tries): %v", starts, err)
		}
		t.Logf("start chromium, try %d: %v", i, err)
		time.Sleep(time.Duration(i) * time.Second)
	}
}

// within runs browser actions with a deadline.
func within(t *testing.T, ctx context.Context, d time.Duration, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	if err := chromedp.Do(c, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// get runs one browser action that returns a value, with a deadline.
func get[T any](t *testing.T, ctx context.Context, d time.Duration, what string, a chromedp.Action[T]) T {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	v, err := chromedp.Run(c, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// css is a CSS selector.
func css(s string) chromedp.CSS { return chromedp.CSS(s) }

// typeText types into the focused element as an IME or a paste does. (A
// synthesized keyDown+char pair, which chromedp's KeyEvent sends, reaches
// xterm.js through both its keydown and its input handler: twice.)
func typeText(text string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, input.InsertText, input.InsertTextParams{Text: text})
		return err
	})
}

// rowStatus waits until a session's row in the sidebar shows status st.
func rowStatus(t *testing.T, ctx context.Context, id string, st api.Status, d time.Duration) {
	t.Helper()
	within(t, ctx, d, fmt.Sprintf("row of %s to show %s", id, st),
		chromedp.WaitVisible(css(fmt.Sprintf(`[data-testid="session-row"][data-session-id="%s"][data-status="%s"]`, id, st))))
}

// TestBrowserStatusFlow: log in with the token, create a session in the
// dialog, and watch its dot go busy -> needs-input -> (click Yes) -> busy
// -> review -> (open it) idle while the real Claude Code runs.
func TestBrowserStatusFlow(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{fake: fakeapi.Options{Rules: []fakeapi.Rule{{
		// After the approved tool ran, answer slowly: time to look away.
		Name:  "slow after tool",
		Match: func(r *fakeapi.Request) bool { return len(r.ToolResults) > 0 && r.Kind == fakeapi.KindPrompt },
		Reply: fakeapi.Slow(3*time.Second, fakeapi.Text("The file is created.")),
	}}}})
	h.stopServe(syscall.SIGTERM)
	h.serveArgs = []string{"--root", h.proj}
	h.startServe()
	ctx := browser(t)

	// Log in with the token URL; the token leaves the address bar.
	within(t, ctx, 30*time.Second, "login",
		chromedp.Navigate(h.webURL()),
		chromedp.WaitVisible(css(`[data-testid="new-session"]`)),
	)
	loc := get(t, ctx, 5*time.Second, "location", chromedp.Location())
	if strings.Contains(loc, "token=") {
		t.Errorf("token still in the address bar: %s", loc)
	}

	// Create a Claude session through the dialog: the picker starts at the
	// root (the project), "Use this folder", then Start.
	within(t, ctx, 30*time.Second, "new session dialog",
		chromedp.Click(css(`[data-testid="new-session"]`)),
		chromedp.WaitVisible(css(`[data-testid="new-session-dialog"]`)),
		chromedp.WaitEnabled(css(`[data-testid="use-folder"]`)),
		chromedp.Click(css(`[data-testid="use-folder"]`)),
		chromedp.WaitVisible(css(`[data-testid="create-session"]`)),
		chromedp.Click(css(`[data-testid="create-session"]`)),
	)
	s := h.rec.waitFor(30*time.Second, "the session created in the browser", func(s api.Session) bool { return s.Kind == api.KindClaude })
	if s.Dir != h.proj {
		t.Fatalf("created in %s, want %s", s.Dir, h.proj)
	}
	id := s.ID
	rowStatus(t, ctx, id, api.StatusIdle, 60*time.Second)

	// A second session to look at while the first one works.
	other := strings.TrimSpace(h.corral("new", "--shell", "--dir", h.proj, "--name", "elsewhere"))

	// Prompt from the timeline's prompt box.
	within(t, ctx, 20*time.Second, "send a prompt",
		chromedp.Click(css(fmt.Sprintf(`[data-testid="session-row"][data-session-id="%s"]`, id))),
		chromedp.Click(css(`[data-testid="tab-timeline"]`)),
		chromedp.WaitVisible(css(`[data-testid="prompt-box"]`)),
		chromedp.SendKeys(css(`[data-testid="prompt-box"]`), "RUNTOOL from the browser"),
		chromedp.SendKeys(css(`[data-testid="prompt-box"]`), "\r"),
	)
	rowStatus(t, ctx, id, api.StatusBusy, 20*time.Second)
	rowStatus(t, ctx, id, api.StatusNeedsInput, 20*time.Second)
	// The card shows what Claude wants and the screen's options.
	within(t, ctx, 20*time.Second, "the needs-input card",
		chromedp.WaitVisible(css(`[data-testid="needs-input-card"] button[aria-label="Yes"]`)))
	// The session file announces the dialog first; the tool and its input
	// follow from the PermissionRequest hook moments later.
	var card string
	for deadline := time.Now().Add(10 * time.Second); ; {
		card = get(t, ctx, 5*time.Second, "card text", chromedp.Text(css(`[data-testid="needs-input-card"]`)))
		if (strings.Contains(card, "Bash") && strings.Contains(card, "created_by_tool")) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(card, "Bash") || !strings.Contains(card, "created_by_tool") {
		t.Errorf("card does not show the tool and command: %q", card)
	}
	within(t, ctx, 10*time.Second, "click Yes",
		chromedp.WaitEnabled(css(`[data-testid="needs-input-card"] button[aria-label="Yes"]`)),
		chromedp.Click(css(`[data-testid="needs-input-card"] button[aria-label="Yes"]`)))
	rowStatus(t, ctx, id, api.StatusBusy, 20*time.Second)
	// Look elsewhere while the (slow) answer comes: the finished turn then
	// waits for review.
	within(t, ctx, 10*time.Second, "open the other session",
		chromedp.Click(css(fmt.Sprintf(`[data-testid="session-row"][data-session-id="%s"]`, other))))
	rowStatus(t, ctx, id, api.StatusReview, 30*time.Second)
	if _, err := os.Stat(filepath.Join(h.proj, "created_by_tool")); err != nil {
		t.Errorf("the approved tool did not run: %v", err)
	}
	// The tab follows (at most every 100 ms): a count in the title, and the
	// icon with the violet review dot.
	tabIs(t, ctx, "(1) corral", "#a78bfa")
	// Opening it is looking at it.
	within(t, ctx, 10*time.Second, "open the reviewed session",
		chromedp.Click(css(fmt.Sprintf(`[data-testid="session-row"][data-session-id="%s"]`, id))))
	rowStatus(t, ctx, id, api.StatusIdle, 10*time.Second)
	if got := h.lsOne(id).Status; got != api.StatusIdle {
		t.Errorf("daemon says %s after the session was opened", got)
	}
	tabIs(t, ctx, "corral", "/icon.svg")
}

// tabIs waits until the tab's title is title and its icon's URL contains
// icon (decoded).
func tabIs(t *testing.T, ctx context.Context, title, icon string) {
	t.Helper()
	const js = `(() => { const l = document.querySelector('link[rel="icon"][type="image/svg+xml"]'); return document.title + "\n" + (l ? decodeURIComponent(l.getAttribute("href")) : ""); })()`
	var got string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		got = get(t, ctx, 5*time.Second, "tab title and icon", chromedp.Evaluate[string](js))
		gotTitle, gotIcon, _ := strings.Cut(got, "\n")
		if gotTitle == title && strings.Contains(gotIcon, icon) {
			return
		}
	}
	t.Errorf("tab shows %q; want title %q and an icon with %q", got, title, icon)
}

// TestBrowserTerminal: type into the terminal and see the echo; reload in
// the middle of a long output and lose nothing.
func TestBrowserTerminal(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	id := strings.TrimSpace(h.corral("new", "--shell", "--dir", h.proj, "--name", "term"))
	ctx := browser(t)
	within(t, ctx, 30*time.Second, "open the terminal",
		chromedp.Navigate(h.webURL()),
		chromedp.WaitVisible(css(`[data-testid="new-session"]`)),
		chromedp.Click(css(fmt.Sprintf(`[data-testid="session-row"][data-session-id="%s"]`, id))),
		chromedp.Click(css(`[data-testid="tab-terminal"]`)),
		chromedp.WaitVisible(css(`[data-testid="terminal"] .xterm`)),
	)
	waitBuffer := func(what string, d time.Duration, cond string) string {
		t.Helper()
		var text string
		deadline := time.Now().Add(d)
		for {
			var err error
			text, err = chromedp.Run(ctx, chromedp.Evaluate[string](`(() => { const t = window.__corral && window.__corral.term; if (!t) return ""; const b = t.buffer.active; const out = []; for (let i = 0; i < b.length; i++) { const l = b.getLine(i); out.push(l ? l.translateToString(true) : ""); } return out.join("\n"); })()`))
			if err == nil && strings.Contains(text, cond) {
				return text
			}
			if time.Now().After(deadline) {
				t.Fatalf("terminal never showed %s (%q); last buffer tail: %q", what, cond, tail(text, 400))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// Typing: keystrokes go through xterm.js and the WebSocket to the pane.
	within(t, ctx, 10*time.Second, "type",
		chromedp.Click(css(`[data-testid="terminal"] .xterm`)),
		typeText("echo hello-$((6*7))"),
		chromedp.KeyEvent("\r"),
	)
	waitBuffer("the echo", 10*time.Second, "hello-42")

	// A long output, and a reload while it runs.
	const n = 30000
	within(t, ctx, 10*time.Second, "start a long output",
		typeText(fmt.Sprintf("for i in $(seq 1 %d); do echo line-$i; done; echo END-MARK", n)),
		chromedp.KeyEvent("\r"))
	waitBuffer("the output starting", 20*time.Second, "line-")
	within(t, ctx, 30*time.Second, "reload",
		chromedp.Reload(),
		chromedp.WaitVisible(css(`[data-testid="terminal"] .xterm`)),
	)
	waitBuffer("the end of the output after the reload", 60*time.Second, "END-MARK")
	// Nothing lost: once the output is quiet, the last lines are all there,
	// in order, once each, down to as far as the terminal's scrollback
	// reaches. (A viewer that fell behind the flood is redrawn from the
	// session's complete history when the output stops.)
	var low int
	var lines map[int]int
	deadline := time.Now().Add(20 * time.Second)
	for {
		text := waitBuffer("the end mark", 10*time.Second, "END-MARK")
		lines = map[int]int{}
		for _, l := range strings.Split(text, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(l), "line-"); ok {
				if k, err := strconv.Atoi(v); err == nil {
					lines[k]++
				}
			}
		}
		low = n
		for low > 0 && lines[low-1] > 0 {
			low--
		}
		if lines[n] > 0 && n-low >= 5000 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the output ended, only lines %d..%d are there without a gap (last line present: %v); want the last 5000 at least", low, n, lines[n] > 0)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for k := low; k <= n; k++ {
		if lines[k] != 1 {
			t.Fatalf("line-%d appears %d times", k, lines[k])
		}
	}
	t.Logf("after the reload the terminal holds lines %d..%d with no gap", low, n)
	// And the session itself kept every line (tmux's history).
	scr, err := h.c.Capture(context.Background(), id, 50000)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{1, n / 2, n} {
		if !strings.Contains(scr.Text, fmt.Sprintf("line-%d\n", k)) {
			t.Errorf("tmux history lacks line-%d", k)
		}
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

// TestBrowserPhone: on a phone-sized screen the sidebar collapses and the
// terminal has the special-keys bar; a screenshot shows it.
func TestBrowserPhone(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	id := strings.TrimSpace(h.corral("new", "--shell", "--dir", h.proj, "--name", "phone"))
	ctx := browser(t)
	within(t, ctx, 40*time.Second, "phone layout",
		chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(3), chromedp.EmulatePortrait, chromedp.EmulateMobile, chromedp.EmulateTouch),
		chromedp.Navigate(h.webURL()+"#/s/"+id+"/terminal"),
		chromedp.WaitVisible(css(`[data-testid="keys-bar"]`)),
	)
	barVisible := get(t, ctx, 5*time.Second, "keys bar box", chromedp.Evaluate[bool](`(() => { const r = document.querySelector('[data-testid="keys-bar"]').getBoundingClientRect(); return r.width > 300 && r.bottom <= window.innerHeight + 1 && r.top >= 0; })()`))
	sidebarHidden := get(t, ctx, 5*time.Second, "sidebar box", chromedp.Evaluate[bool](`(() => { const row = document.querySelector('[data-testid="session-row"]'); if (!row) return true; const r = row.getBoundingClientRect(); return r.width === 0 || r.right <= 0 || getComputedStyle(row).visibility === 'hidden'; })()`))
	shot := get(t, ctx, 10*time.Second, "screenshot", chromedp.CaptureScreenshot())
	if !barVisible {
		t.Error("the keys bar is not on screen")
	}
	if !sidebarHidden {
		t.Error("the sidebar did not collapse on a phone")
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatal(err)
	}
	if w := img.Bounds().Dx(); w != 390*3 {
		t.Errorf("screenshot %d px wide, want %d (390 CSS px at 3x)", w, 390*3)
	}
	saveShot(t, ctx, "phone-keys-bar")
	// The keys work: Ctrl then C reaches the shell as ^C; Esc, arrows, 1-3
	// and Enter are buttons.
	keys := get(t, ctx, 5*time.Second, "keys", chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid="keys-bar"] [data-key]')].map(b => b.getAttribute('data-key'))`))
	for _, want := range []string{"Escape", "Tab", "Ctrl", "1", "2", "3", "Enter"} {
		found := false
		for _, k := range keys {
			found = found || strings.EqualFold(k, want)
		}
		if !found {
			t.Errorf("keys bar lacks %s (has %v)", want, keys)
		}
	}
}
