package e2e

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/corral-dev/corral/internal/testkit/fakeapi"
)

// liveLoop prints a line every half second for 10 s, after a line of
// markup that must show as text.
const liveLoop = "echo '<b>bold</b>'; for i in $(seq 1 20); do echo line$i; sleep 0.5; done"

// TestBrowserLiveToolOutput: while a Bash command runs (Claude writes its
// result to the transcript only at the end), the timeline shows its output
// as the screen does, growing, as plain text; once the result comes the
// live block goes and the tool's result is shown instead.
func TestBrowserLiveToolOutput(t *testing.T) {
	t.Parallel()
	rules := []fakeapi.Rule{
		{Name: "live", Match: func(r *fakeapi.Request) bool { return strings.Contains(r.TurnPrompt, "LIVETEST") }, ReplyFunc: func(r *fakeapi.Request) fakeapi.Reply {
			if r.TurnSteps == 0 {
				return fakeapi.Bash(liveLoop, "Print twenty lines")
			}
			return fakeapi.Text("printed")
		}},
	}
	h := newHarness(t, harnessOptions{fake: fakeapi.Options{Rules: rules}})
	id := h.newSession("--name", "live", "--", "--allowedTools", "Bash")
	ctx := browser(t)
	within(t, ctx, 30*time.Second, "open the timeline",
		chromedp.EmulateViewport(1440, 900),
		chromedp.Navigate(h.webURL()+"#/s/"+id+"/timeline"),
		chromedp.WaitVisible(css(`[data-testid="prompt-box"]`)))
	h.send(id, "LIVETEST")

	// The last "lineN" the live block shows, once it shows one while the
	// tool still runs (the live tail says so).
	const js = `(() => {
		const tail = document.querySelector('[data-testid="live-tail"]');
		const out = document.querySelector('[data-testid="live-output"]');
		if (!tail || !out || !tail.textContent.includes('Running Bash')) return 0;
		const m = [...out.textContent.matchAll(/line(\d+)/g)];
		return m.length ? Number(m[m.length - 1][1]) : 0;
	})()`
	lastLine := func(above int) int {
		t.Helper()
		within(t, ctx, 30*time.Second, "a live line past line"+strconv.Itoa(above),
			chromedp.Poll[chromedp.Void](js+` > `+strconv.Itoa(above), chromedp.WithPollingInterval(50*time.Millisecond)))
		return get(t, ctx, 5*time.Second, "the live line", chromedp.Evaluate[int](js))
	}
	first := lastLine(0)
	if first >= 20 {
		t.Fatalf("the first live line seen is line%d: the tool had ended", first)
	}
	// It grows while the tool runs.
	if next := lastLine(first); next <= first {
		t.Errorf("live output did not grow: line%d then line%d", first, next)
	}
	saveShot(t, ctx, "timeline-live-output")
	// The markup is text, not elements.
	if n := get(t, ctx, 5*time.Second, "elements in the live block", chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="live-output"] b').length`)); n != 0 {
		t.Errorf("the live block holds %d <b> elements; its text must not be HTML", n)
	}

	// The result came and the turn ended: the live block is gone.
	within(t, ctx, 60*time.Second, "the turn to end",
		chromedp.Poll[chromedp.Void](`(() => { const tl = document.querySelector('[data-testid="timeline"]'); return !!tl && tl.textContent.includes('printed') && !document.querySelector('[data-testid="live-tail"]'); })()`, chromedp.WithPollingInterval(100*time.Millisecond)))
	if n := get(t, ctx, 5*time.Second, "live blocks", chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="live-output"]').length`)); n != 0 {
		t.Errorf("%d live blocks after the tool's result came", n)
	}
}
