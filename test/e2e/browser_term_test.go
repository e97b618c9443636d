package e2e

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
)

// termJS reads the open terminal's state in the page.
const termJS = `(() => { const c = window.__corral && window.__corral.terminal; if (!c) return null;
  const t = c.term; const b = t.buffer.active; const lines = [];
  for (let i = 0; i < b.length; i++) { const l = b.getLine(i); lines.push(l ? l.translateToString(true) : ""); }
  const scr = document.querySelector('[data-testid="terminal"] .xterm-screen');
  const r = scr ? scr.getBoundingClientRect() : {left: 0, right: 0, top: 0, bottom: 0};
  return {cols: t.cols, rows: t.rows, font: t.options.fontSize, driving: c.driving.value,
    window: c.window.value, text: lines.join("\n"),
    left: r.left, right: r.right, top: r.top, bottom: r.bottom,
    vw: window.innerWidth, vh: window.innerHeight, scrollW: document.documentElement.scrollWidth,
    following: !!document.querySelector('[data-testid="term-following"]')}; })()`

type termState struct {
	Cols, Rows int
	Font       float64
	Driving    bool
	Window     *struct{ Cols, Rows int }
	Text       string
	Left       float64
	Right      float64
	Top        float64
	Bottom     float64
	VW, VH     float64
	ScrollW    float64
	Following  bool
}

// waitTerm polls a page's terminal until cond holds.
func waitTerm(t *testing.T, ctx context.Context, d time.Duration, what string, cond func(termState) bool) termState {
	t.Helper()
	var st termState
	deadline := time.Now().Add(d)
	for {
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		v, err := chromedp.Run(c, chromedp.Evaluate[*termState](termJS))
		cancel()
		if err == nil && v != nil {
			st = *v
			if cond(st) {
				return st
			}
		}
		if time.Now().After(deadline) {
			st.Text = tail(st.Text, 600)
			t.Fatalf("%s: timed out; last state %+v (err %v)", what, st, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// openTermAt opens a session's terminal in a page of the given size.
func openTermAt(t *testing.T, ctx context.Context, url, id string, w, h int64, phone bool) {
	t.Helper()
	vp := chromedp.EmulateViewport(w, h)
	if phone {
		vp = chromedp.EmulateViewport(w, h, chromedp.EmulateScale(3), chromedp.EmulatePortrait, chromedp.EmulateMobile, chromedp.EmulateTouch)
	}
	within(t, ctx, 40*time.Second, fmt.Sprintf("open the terminal at %dx%d", w, h),
		vp,
		chromedp.Navigate(url+"#/s/"+id+"/terminal"),
		chromedp.WaitVisible(css(`[data-testid="terminal"] .xterm`)),
	)
}

// TestBrowserTerminalTwoDevices: a phone and a desktop on one session at
// once. The window follows the viewer that typed (or opened, or pressed
// "Fit to this screen") last; the other draws at the window's size with a
// smaller font, so nothing is cut off and nothing is pushed off its screen.
func TestBrowserTerminalTwoDevices(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	id := strings.TrimSpace(h.corral("new", "--shell", "--dir", h.proj, "--name", "two"))
	phone, desk := browser(t), browser(t)

	openTermAt(t, phone, h.webURL(), id, 390, 844, true)
	within(t, phone, 10*time.Second, "type on the phone",
		chromedp.Click(css(`[data-testid="terminal"] .xterm`)),
		typeText("echo phone-$((2*3))"),
		chromedp.KeyEvent("\r"))
	p := waitTerm(t, phone, 15*time.Second, "the phone's echo at its own size", func(s termState) bool {
		return strings.Contains(s.Text, "phone-6") && s.Driving && s.Window != nil && s.Window.Cols == s.Cols
	})
	phoneCols := p.Cols
	saveShot(t, phone, "terminal-phone")
	t.Logf("phone alone: %dx%d at %vpx", p.Cols, p.Rows, p.Font)

	// The desktop logs in with a link of its own (the printed one is used up).
	openTermAt(t, desk, strings.TrimSpace(h.corral("login-link")), id, 1440, 900, false)
	d := waitTerm(t, desk, 15*time.Second, "the desktop sizing the window", func(s termState) bool {
		return s.Driving && s.Window != nil && s.Window.Cols == s.Cols && s.Cols > phoneCols
	})
	t.Logf("desktop opened: %dx%d", d.Cols, d.Rows)

	// The phone follows: its terminal takes the window's size, with a font
	// small enough that it fits on the phone's screen.
	p = waitTerm(t, phone, 15*time.Second, "the phone following the desktop's window", func(s termState) bool {
		return !s.Driving && s.Following && s.Cols == d.Cols && s.Rows == d.Rows
	})
	if p.Right > p.VW+1 || p.ScrollW > p.VW+1 || p.Left < -1 || p.Font < 4 {
		t.Errorf("the phone's terminal spills off its screen: x %v..%v, page %v wide (scroll width %v), font %vpx", p.Left, p.Right, p.VW, p.ScrollW, p.Font)
	}
	if p.Bottom > p.VH+1 {
		t.Errorf("the phone's terminal goes below its screen: bottom %v of %v", p.Bottom, p.VH)
	}
	t.Logf("phone follows: %dx%d at %vpx, x %v..%v of %v", p.Cols, p.Rows, p.Font, p.Left, p.Right, p.VW)

	// A line as wide as the desktop's window reaches the phone whole (not a
	// slice of the window cut at the phone's width).
	long := strings.Repeat("W", d.Cols-10)
	within(t, desk, 10*time.Second, "type on the desktop",
		chromedp.Click(css(`[data-testid="terminal"] .xterm`)),
		typeText(fmt.Sprintf("printf '%%s\\n' %s-END", long)),
		chromedp.KeyEvent("\r"))
	waitTerm(t, phone, 15*time.Second, "the desktop's wide line whole on the phone", func(s termState) bool {
		for _, l := range strings.Split(s.Text, "\n") {
			if strings.TrimSpace(l) == long+"-END" {
				return true
			}
		}
		return false
	})
	saveShot(t, desk, "terminal-desktop")
	saveShot(t, phone, "terminal-following-phone")

	// The phone types: the window is its size again, and now the desktop follows.
	within(t, phone, 10*time.Second, "type on the phone again",
		typeText("echo back-$((4*5))"),
		chromedp.KeyEvent("\r"))
	p = waitTerm(t, phone, 15*time.Second, "the phone sizing the window again", func(s termState) bool {
		return s.Driving && !s.Following && s.Cols == phoneCols && s.Window != nil && s.Window.Cols == phoneCols && strings.Contains(s.Text, "back-20")
	})
	d = waitTerm(t, desk, 15*time.Second, "the desktop following the phone", func(s termState) bool {
		return !s.Driving && s.Following && s.Cols == phoneCols
	})
	// "Fit to this screen" takes it back without typing.
	within(t, desk, 10*time.Second, "fit the desktop", chromedp.Click(css(`[data-testid="term-fit"]`)))
	d = waitTerm(t, desk, 15*time.Second, "the desktop sizing the window after Fit", func(s termState) bool {
		return s.Driving && !s.Following && s.Cols > phoneCols && s.Window != nil && s.Window.Cols == s.Cols
	})
	waitTerm(t, phone, 15*time.Second, "the phone following again", func(s termState) bool {
		return !s.Driving && s.Cols == d.Cols
	})
}

// TestBrowserTerminalCopy: select text in the terminal and copy it with the
// Copy button and with Ctrl+Shift+C; copy-on-select copies a selection as
// it is made. The clipboard is read back with navigator.clipboard.
func TestBrowserTerminalCopy(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	id := strings.TrimSpace(h.corral("new", "--shell", "--dir", h.proj, "--name", "copy"))
	ctx := browser(t)
	for _, perm := range []string{"clipboard-read", "clipboard-write"} {
		c, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := chromedp.CallBrowser(c, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
			Permission: &cdpbrowser.PermissionDescriptor{Name: perm, AllowWithoutSanitization: true},
			Setting:    cdpbrowser.PermissionSettingGranted,
			Origin:     origin(t, h.webURL()),
		})
		cancel()
		if err != nil {
			t.Fatalf("grant %s: %v", perm, err)
		}
	}
	openTermAt(t, ctx, h.webURL(), id, 1440, 900, false)
	within(t, ctx, 10*time.Second, "type",
		chromedp.Click(css(`[data-testid="terminal"] .xterm`)),
		typeText("echo copy-$((5*5))-me"),
		chromedp.KeyEvent("\r"))
	waitTerm(t, ctx, 15*time.Second, "the echo", func(s termState) bool { return strings.Contains(s.Text, "\ncopy-25-me") })

	// Select the output line (as a drag does) and press Copy.
	selectLine := `(() => { const t = window.__corral.terminal.term; const b = t.buffer.active;
	  for (let i = b.length - 1; i >= 0; i--) { const l = b.getLine(i).translateToString(true);
	    if (l.trim() === 'copy-25-me') { t.select(0, i, l.length); return t.getSelection(); } } return ''; })()`
	clip := func(what string, want string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		var got string
		for time.Now().Before(deadline) {
			c, cancel := context.WithTimeout(ctx, 5*time.Second)
			v, err := chromedp.Run(c, chromedp.Evaluate[string](`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise))
			cancel()
			if err == nil && v == want {
				return
			}
			got = v
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("%s: clipboard holds %q, want %q", what, got, want)
	}
	reset := func() {
		within(t, ctx, 5*time.Second, "empty the clipboard", chromedp.Evaluate[chromedp.Void](`navigator.clipboard.writeText('-')`, chromedp.EvalAwaitPromise))
	}
	reset()
	if sel := get(t, ctx, 5*time.Second, "select", chromedp.Evaluate[string](selectLine)); sel != "copy-25-me" {
		t.Fatalf("selection %q", sel)
	}
	within(t, ctx, 10*time.Second, "press Copy", chromedp.Click(css(`[data-testid="term-copy"]`)))
	clip("the Copy button", "copy-25-me")

	// Ctrl+Shift+C.
	reset()
	get(t, ctx, 5*time.Second, "select", chromedp.Evaluate[string](selectLine))
	within(t, ctx, 10*time.Second, "Ctrl+Shift+C",
		chromedp.Focus(css(`[data-testid="terminal"] textarea`)),
		chromedp.KeyEvent("C", chromedp.KeyModifiers(chromedp.ModifierCtrl, chromedp.ModifierShift)))
	clip("Ctrl+Shift+C", "copy-25-me")

	// Copy on select.
	within(t, ctx, 10*time.Second, "turn on copy-on-select", chromedp.Click(css(`[data-testid="copy-on-select"]`)))
	if on := get(t, ctx, 5*time.Second, "the option", chromedp.Evaluate[string](`localStorage.getItem('corral.copyOnSelect') || ''`)); on != "1" {
		t.Fatalf("copy-on-select is %q after the click", on)
	}
	within(t, ctx, 5*time.Second, "clear the selection", chromedp.Evaluate[chromedp.Void](`window.__corral.terminal.term.clearSelection()`))
	reset()
	// (Another range: xterm.js tells no change for the same one again.)
	get(t, ctx, 5*time.Second, "select", chromedp.Evaluate[string](strings.Replace(selectLine, "l.length", "7", 1)))
	clip("copy-on-select", "copy-25")
}

// origin is a URL's scheme://host.
func origin(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Scheme + "://" + u.Host
}

// TestBrowserTerminalJumpToLive: scrolled up, the terminal offers "Jump to
// live", which scrolls back to the live screen and goes away.
func TestBrowserTerminalJumpToLive(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	id := strings.TrimSpace(h.corral("new", "--shell", "--dir", h.proj, "--name", "live"))
	ctx := browser(t)
	openTermAt(t, ctx, h.webURL(), id, 390, 844, true)
	within(t, ctx, 10*time.Second, "print 300 lines",
		chromedp.Click(css(`[data-testid="terminal"] .xterm`)),
		typeText("seq 1 300; echo SEQ-DONE"),
		chromedp.KeyEvent("\r"))
	waitTerm(t, ctx, 15*time.Second, "the output", func(s termState) bool { return strings.Contains(s.Text, "\nSEQ-DONE") })
	// At the live screen there is no pill. (Until the output's end is
	// drawn the viewport may be on its way there.)
	waitFor(t, 10*time.Second, "the live screen without the pill", func() bool {
		return get(t, ctx, 5*time.Second, "pill", chromedp.Evaluate[bool](`(() => {
			const b = window.__corral.terminal.term.buffer.active;
			return b.viewportY === b.baseY && document.querySelectorAll('[data-testid="jump-to-live"]').length === 0;
		})()`))
	})
	// Scrolled up, the pill shows; it scrolls back to the live screen and
	// goes away. A redraw after the fast output (docs/web-protocol.md) puts
	// the viewport back at the live screen by itself, and takes the pill
	// with it: then the test scrolls up again.
	for deadline := time.Now().Add(30 * time.Second); ; {
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := chromedp.Do(c,
			chromedp.Evaluate[chromedp.Void](`window.__corral.terminal.term.scrollLines(-100)`),
			chromedp.WaitVisible(css(`[data-testid="jump-to-live"]`)),
			chromedp.Click(css(`[data-testid="jump-to-live"]`)),
			chromedp.WaitNotPresent(css(`[data-testid="jump-to-live"]`)),
		)
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("scroll up and jump back: %v", err)
		}
		t.Logf("scroll up and jump back: %v; again", err)
	}
	if live := get(t, ctx, 5*time.Second, "viewport", chromedp.Evaluate[bool](`(() => { const b = window.__corral.terminal.term.buffer.active; return b.viewportY === b.baseY; })()`)); !live {
		t.Error("Jump to live left the viewport scrolled up")
	}
	// The phone's copy: the keys bar's Copy opens the text in a sheet, where
	// the phone's own selection works.
	// (The sheet holds the terminal as it is when it opens: after a fast
	// output the terminal may be in the middle of its redraw, docs/web-protocol.md.)
	// It holds the terminal's last lines as the terminal has them (a
	// redraw may differ from the first drawing in blank lines, which the
	// copy keeps), and with them the output's end.
	var sheet, term string
	for deadline := time.Now().Add(20 * time.Second); ; {
		term = waitTerm(t, ctx, 15*time.Second, "the output after any redraw", func(s termState) bool { return strings.Contains(s.Text, "\nSEQ-DONE") }).Text
		within(t, ctx, 10*time.Second, "the copy sheet",
			chromedp.Click(css(`[data-testid="keys-bar"] [data-key="Copy"]`)),
			chromedp.WaitVisible(css(`[data-testid="copy-sheet-text"]`)))
		sheet = get(t, ctx, 5*time.Second, "the sheet's text", chromedp.Evaluate[string](`document.querySelector('[data-testid="copy-sheet-text"]').value`))
		end, done := strings.LastIndex(sheet, "\n300\n"), strings.LastIndex(sheet, "\nSEQ-DONE\n")
		if strings.HasSuffix(strings.TrimRight(term, " \n"), strings.TrimRight(sheet, " \n")) && end >= 0 && done > end {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the copy sheet is not the terminal's end with the output's end:\nsheet %q\nterminal %q", tail(sheet, 200), tail(term, 200))
		}
		within(t, ctx, 10*time.Second, "close the sheet",
			chromedp.Click(css(`[data-testid="copy-sheet"] .copy-sheet-actions .btn:not(.btn-primary)`)),
			chromedp.WaitNotPresent(css(`[data-testid="copy-sheet-text"]`)))
		time.Sleep(200 * time.Millisecond)
	}
	keysFit := get(t, ctx, 5*time.Second, "keys bar", chromedp.Evaluate[bool](`(() => { const r = document.querySelector('[data-testid="keys-bar"]').getBoundingClientRect(); return r.right <= window.innerWidth + 1 && document.documentElement.scrollWidth <= window.innerWidth + 1; })()`))
	if !keysFit {
		t.Error("the keys bar spills off the phone's screen")
	}
}

// TestBrowserTerminalReloadNoBlankLines: a new terminal (a reload, or the
// redraw after /compact) shows the session's history, then the live
// screen, with no run of blank lines between them.
func TestBrowserTerminalReloadNoBlankLines(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	id := strings.TrimSpace(h.corral("new", "--shell", "--dir", h.proj, "--name", "blank"))
	ctx := browser(t)
	openTermAt(t, ctx, h.webURL(), id, 1440, 900, false)
	within(t, ctx, 10*time.Second, "print 300 lines",
		chromedp.Click(css(`[data-testid="terminal"] .xterm`)),
		typeText("seq 1 300 | sed s/^/n-/; echo SEQ-DONE"),
		chromedp.KeyEvent("\r"))
	waitTerm(t, ctx, 15*time.Second, "the output", func(s termState) bool { return strings.Contains(s.Text, "\nSEQ-DONE") })
	within(t, ctx, 30*time.Second, "reload",
		chromedp.Reload(),
		chromedp.WaitVisible(css(`[data-testid="terminal"] .xterm`)))
	st := waitTerm(t, ctx, 15*time.Second, "the history and the screen after the reload", func(s termState) bool {
		return strings.Contains(s.Text, "\nn-1\n") && strings.Contains(s.Text, "\nSEQ-DONE")
	})
	lines := strings.Split(st.Text, "\n")
	first, last := -1, -1
	for i, l := range lines {
		if strings.TrimSpace(l) == "n-1" && first < 0 {
			first = i
		}
		if strings.TrimSpace(l) == "SEQ-DONE" {
			last = i
		}
	}
	run, worst, seen := 0, 0, map[string]int{}
	for _, l := range lines[first : last+1] {
		l = strings.TrimSpace(l)
		if l == "" {
			run++
			worst = max(worst, run)
			continue
		}
		run = 0
		seen[l]++
	}
	if worst > 1 {
		t.Errorf("%d blank lines in a row between the history and the live screen (rows %d)", worst, st.Rows)
	}
	for k := 1; k <= 300; k++ {
		if n := seen[fmt.Sprintf("n-%d", k)]; n != 1 {
			t.Errorf("n-%d appears %d times", k, n)
			break
		}
	}
}
