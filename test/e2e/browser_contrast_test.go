package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/corral-dev/corral/internal/api"
)

// contrastJS lists the visible text whose colour against its background is
// below 4.5:1 (WCAG AA for normal text), with the ratio. The background is
// the nearest ancestor's opaque one, with translucent ones above it blended
// in; text over an image or a gradient is skipped.
const contrastJS = `(() => {
  const parse = (c) => { const m = c.match(/rgba?\(([^)]+)\)/); if (!m) return null; const p = m[1].split(/[ ,\/]+/).filter(Boolean).map(Number); return {r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1}; };
  const lum = (c) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); }; return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b); };
  const blend = (top, bot) => ({r: top.r * top.a + bot.r * (1 - top.a), g: top.g * top.a + bot.g * (1 - top.a), b: top.b * top.a + bot.b * (1 - top.a), a: 1});
  const bgOf = (el) => { const stack = []; for (let e = el; e; e = e.parentElement) { const cs = getComputedStyle(e); if (cs.backgroundImage !== 'none') return null; const c = parse(cs.backgroundColor); if (c && c.a > 0) { stack.push(c); if (c.a >= 1) break; } }
    let bg = {r: 255, g: 255, b: 255, a: 1}; if (stack.length && stack[stack.length - 1].a >= 1) bg = stack.pop(); else { const root = parse(getComputedStyle(document.documentElement).backgroundColor); if (root && root.a > 0) bg = root; }
    while (stack.length) bg = blend(stack.pop(), bg); return bg; };
  const out = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const seen = new Set(); let checked = 0;
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (!n.textContent.trim()) continue;
    const el = n.parentElement; if (!el || seen.has(el)) continue; seen.add(el);
    if (el.closest('.xterm, [aria-hidden="true"], [hidden], option, .term-wrap')) continue;
    const r = el.getBoundingClientRect(); if (r.width === 0 || r.height === 0) continue;
    const cs = getComputedStyle(el); if (cs.visibility === 'hidden' || Number(cs.opacity) < 1) continue;
    let op = 1; for (let e = el; e; e = e.parentElement) op *= Number(getComputedStyle(e).opacity); if (op < 1) continue;
    if (el.closest('button:disabled, [disabled], [aria-disabled="true"]')) continue;
    const fg = parse(cs.color); const bg = bgOf(el); if (!fg || !bg) continue;
    const c = blend(fg, bg); checked++;
    const L1 = lum(c), L2 = lum(bg); const ratio = (Math.max(L1, L2) + 0.05) / (Math.min(L1, L2) + 0.05);
    if (ratio < 4.5) out.push(ratio.toFixed(2) + ' ' + cs.fontSize + ' ' + cs.color + ' on ' + JSON.stringify(bg) + ' "' + n.textContent.trim().slice(0, 40) + '" <' + el.tagName.toLowerCase() + ' class="' + el.className + '">');
  }
  return {bad: out, checked};
})()`

// TestBrowserContrast: all the text on the home screen and a session's
// timeline is at least 4.5:1 against its background, dark and light.
func TestBrowserContrast(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	id := h.newSession("--name", "contrast")
	h.send(id, "hello")
	h.waitStatus(id, api.StatusReview, 60*time.Second)
	ctx := browser(t)
	scheme := func(s string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: s}}})
			return err
		})
	}
	base := h.webURL()
	for _, s := range []string{"dark", "light"} {
		for _, page := range []struct{ name, hash, ready string }{
			{"home", "#/", `[data-testid="new-session-empty"]`},
			{"timeline", "#/s/" + id + "/timeline", `[data-testid="timeline"] .tl-prompt`},
		} {
			within(t, ctx, 30*time.Second, s+" "+page.name,
				chromedp.EmulateViewport(1440, 900),
				scheme(s),
				// A page load each time (the first logs in with the link's token).
				chromedp.Navigate(base+page.hash),
				chromedp.WaitVisible(css(page.ready)))
			base = origin(t, base) + "/?p=" + s + page.name
			time.Sleep(300 * time.Millisecond) // let the fade-in transitions end
			res := get(t, ctx, 10*time.Second, "contrast", chromedp.Evaluate[struct {
				Bad     []string
				Checked int
			}](contrastJS))
			bad := res.Bad
			t.Logf("%s %s: %d texts checked", s, page.name, res.Checked)
			if res.Checked < 5 {
				t.Errorf("%s %s: only %d texts checked", s, page.name, res.Checked)
			}
			if len(bad) > 0 {
				t.Errorf("%s %s: %d texts below 4.5:1:\n%s", s, page.name, len(bad), strings.Join(bad, "\n"))
			}
		}
	}
}
