package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/testkit/fakeapi"
)

// TestBrowserTimelineRich: the timeline's code blocks have a copy button,
// task lists their boxes, an edit's diff the file's real line numbers
// (from Claude's patch), a running Bash its command, each finished turn
// its time; and the conversation can be searched.
func TestBrowserTimelineRich(t *testing.T) {
	t.Parallel()
	const md = "Here is the plan:\n\n```go\nfunc main() {}\n```\n\n- [x] read the file\n- [ ] edit it\n"
	var file string
	rules := []fakeapi.Rule{
		{Name: "markdown", Contains: "MDTEST", Reply: fakeapi.Text(md)},
		{Name: "edit", Match: func(r *fakeapi.Request) bool { return strings.Contains(r.TurnPrompt, "EDITTEST") }, ReplyFunc: func(r *fakeapi.Request) fakeapi.Reply {
			switch r.TurnSteps {
			case 0:
				return fakeapi.ToolUse("Read", map[string]any{"file_path": file})
			case 1:
				return fakeapi.ToolUse("Edit", map[string]any{"file_path": file, "old_string": "line 5\n", "new_string": "line five\n"})
			}
			return fakeapi.Text("edited")
		}},
		{Name: "bash", Match: func(r *fakeapi.Request) bool { return strings.Contains(r.TurnPrompt, "BASHTEST") }, ReplyFunc: func(r *fakeapi.Request) fakeapi.Reply {
			if r.TurnSteps == 0 {
				return fakeapi.Bash("sleep 4; echo slept", "wait a bit")
			}
			return fakeapi.Text("done sleeping")
		}},
		// A turn that runs a subagent: its responses count in the turn.
		{Name: "subagent", Match: func(r *fakeapi.Request) bool { return strings.Contains(r.TurnPrompt, "SUBTEST") }, ReplyFunc: func(r *fakeapi.Request) fakeapi.Reply {
			if r.TurnSteps == 0 {
				return fakeapi.Agent("look around", "SUBWORK look around", "general-purpose", false)
			}
			return fakeapi.Text("the subagent looked")
		}},
		{Name: "the subagent", Contains: "SUBWORK", Reply: fakeapi.Text("looked around")},
	}
	h := newHarness(t, harnessOptions{fake: fakeapi.Options{Rules: rules}})
	file = filepath.Join(h.proj, "notes.txt")
	var lines []string
	for i := 1; i <= 10; i++ {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	id := h.newSession("--name", "rich", "--", "--permission-mode", "acceptEdits", "--allowedTools", "Bash")
	ctx := browser(t)
	within(t, ctx, 30*time.Second, "open the timeline",
		chromedp.EmulateViewport(1440, 900),
		chromedp.Navigate(h.webURL()+"#/s/"+id+"/timeline"),
		chromedp.WaitVisible(css(`[data-testid="prompt-box"]`)))

	// A turn is over when its prompt says how long it took (the page has
	// the session open, so review turns to idle at once: the DOM is the
	// surer sign).
	turns := func(n int) {
		t.Helper()
		within(t, ctx, 60*time.Second, fmt.Sprintf("turn %d to end", n),
			chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.querySelectorAll('[data-testid="turn-time"]').length === %d`, n), chromedp.WithPollingInterval(100*time.Millisecond)))
	}
	h.send(id, "MDTEST")
	turns(1)
	within(t, ctx, 20*time.Second, "the markdown",
		chromedp.WaitVisible(css(`[data-testid="timeline"] [data-testid="code-copy"]`)))
	// The Go block is highlighted by the lazily loaded hl.js.
	within(t, ctx, 20*time.Second, "the highlighted code",
		chromedp.WaitVisible(css(`[data-testid="timeline"] code[data-hl="done"] .hljs-keyword`)))
	if kw := get(t, ctx, 5*time.Second, "keyword", chromedp.Text(css(`[data-testid="timeline"] code[data-hl="done"] .hljs-keyword`))); kw != "func" {
		t.Errorf("highlighted keyword %q, want func", kw)
	}
	boxes := get(t, ctx, 5*time.Second, "task boxes", chromedp.Evaluate[[]bool](`[...document.querySelectorAll('[data-testid="timeline"] .md input[type=checkbox]')].map(b => b.checked && b.disabled)`))
	if len(boxes) != 2 || !boxes[0] || boxes[1] {
		t.Errorf("task list boxes (checked and disabled): %v, want [true false]", boxes)
	}

	h.send(id, "EDITTEST")
	turns(2)
	within(t, ctx, 20*time.Second, "the numbered patch", chromedp.WaitVisible(css(`[data-testid="patch"]`)))
	patch := get(t, ctx, 5*time.Second, "patch rows", chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid="patch"] .dl')].map(d => [...d.children].map(c => c.textContent).join('|'))`))
	t.Logf("patch: %q", patch)
	var head, added bool
	for _, r := range patch {
		head = head || r == "Lines 2-8"
		added = added || r == "|5|+line five"
	}
	if !head || !added {
		t.Errorf("the patch lacks the header Lines 2-8 or line 5's addition: %q", patch)
	}
	if b, _ := os.ReadFile(file); !strings.Contains(string(b), "line five") {
		t.Errorf("the edit did not happen: %q", b)
	}

	h.send(id, "BASHTEST")
	within(t, ctx, 30*time.Second, "the running command",
		chromedp.Poll[chromedp.Void](`(() => { const l = document.querySelector('[data-testid="live-tail"]'); return !!l && l.textContent.includes('Running Bash: sleep 4; echo slept'); })()`, chromedp.WithPollingInterval(50*time.Millisecond)))
	// Each finished turn says how long it took.
	turns(3)
	saveShot(t, ctx, "timeline-desktop")

	h.send(id, "SUBTEST")
	turns(4)

	// And what it used.
	tk := get(t, ctx, 5*time.Second, "turn tokens", chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid="turn-tokens"]')].map(e => e.textContent)`))
	if len(tk) != 4 || !regexp.MustCompile(`^ · [0-9.]+k? in, [0-9.]+k? out$`).MatchString(tk[0]) {
		t.Errorf("turn tokens %q", tk)
	}
	// And what it cost: the agent prices each turn from its usage (the
	// fake model answers as the claude-opus-4-8 that Claude asks for), the
	// page shows that figure, and the sidebar the day's sum. The last
	// turn's count its subagent's response (priced at the same rates):
	// its own two and the subagent's one.
	tl := checkTurnCosts(t, ctx, h, id, 4)
	for _, it := range tl.Items {
		if it.Kind == api.TimelinePrompt && strings.Contains(it.Text, "SUBTEST") && (it.Tokens == nil || it.Tokens.Responses != 3) {
			t.Errorf("the subagent's turn: %+v, want 3 responses (the subagent's included)", it.Tokens)
		}
	}

	// Search, and jump to a prompt.
	within(t, ctx, 10*time.Second, "search",
		chromedp.SendKeys(css(`[data-testid="timeline-search"]`), "line five"),
		chromedp.SendKeys(css(`[data-testid="timeline-search"]`), "\r"),
		chromedp.WaitVisible(css(`.tl-hit`)))
	if c := get(t, ctx, 5*time.Second, "count", chromedp.Text(css(`[data-testid="timeline-search-count"]`))); !strings.HasPrefix(c, "1 of ") {
		t.Errorf("search count %q", c)
	}
	n := get(t, ctx, 5*time.Second, "prompts", chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="jump-to-prompt"] option').length`))
	if n != 5 {
		t.Errorf("jump-to-prompt has %d options, want 4 prompts and the label", n)
	}
}

// checkTurnCosts compares the per-turn cost the page shows with the agent's
// figure in `corral timeline --json`, and the sidebar's cost today with
// their sum (the session's transcript holds only these turns, all of today).
func checkTurnCosts(t *testing.T, ctx context.Context, h *harness, id string, n int) api.Timeline {
	t.Helper()
	var tl api.Timeline
	if err := json.Unmarshal([]byte(h.corral("timeline", "--json", id)), &tl); err != nil {
		t.Fatalf("corral timeline --json: %v", err)
	}
	var want []string
	sum := 0.0
	for _, it := range tl.Items {
		tk := it.Tokens
		if it.Kind != api.TimelinePrompt || tk == nil {
			continue
		}
		// Claude's default model, claude-opus-4-8: $5 in, $25 out, $6.25
		// cache writes, $0.50 cache reads per million tokens.
		price := (float64(tk.Input)*5 + float64(tk.Output)*25 + float64(tk.CacheCreation)*6.25 + float64(tk.CacheRead)*0.5) / 1e6
		if tk.Unpriced != 0 || math.Abs(tk.CostUSD-price) > 1e-9 || tk.CostUSD <= 0 {
			t.Errorf("turn %q: tokens %+v, want a cost of $%v", it.Text, *tk, price)
		}
		sum += tk.CostUSD
		w := fmt.Sprintf(" · $%.2f", tk.CostUSD)
		if tk.CostUSD < 0.005 {
			w = " · <$0.01"
		}
		want = append(want, w)
	}
	if len(want) != n {
		t.Fatalf("%d priced turns in the timeline, want %d: %+v", len(want), n, tl.Items)
	}
	// The page shows a turn's last response once its poll brings it.
	wantJS, _ := json.Marshal(want)
	poll := func(js string) error {
		c, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		return chromedp.Do(c, chromedp.Poll[chromedp.Void](js, chromedp.WithPollingInterval(100*time.Millisecond)))
	}
	if err := poll(fmt.Sprintf(`JSON.stringify([...document.querySelectorAll('[data-testid="turn-cost"]')].map(e => e.textContent)) === %q`, wantJS)); err != nil {
		got := get(t, ctx, 5*time.Second, "turn costs", chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid="turn-cost"]')].map(e => e.textContent)`))
		t.Errorf("turn costs shown %q, want %q", got, want)
	}
	// The sidebar's title carries the sum to four places; it follows the
	// session's usage, which the agent publishes once it read the last turn.
	wantTitle := fmt.Sprintf("$%.4f", sum)
	if err := poll(fmt.Sprintf(`(() => { const e = document.querySelector('[data-testid="total-cost"]'); return !!e && e.title.includes(%q) && e.textContent.endsWith(' today'); })()`, wantTitle)); err != nil {
		got := get(t, ctx, 5*time.Second, "cost today", chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid="total-cost"]')].map(e => e.textContent + ' | ' + e.title)`))
		t.Errorf("cost today %q, want the title to say %s", got, wantTitle)
	}
	return tl
}
