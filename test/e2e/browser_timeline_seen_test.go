package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/testkit/fakeapi"
)

// turnsDone waits until the page's timeline (shown or not: it loads while
// hidden) has n prompts that say how long their turn took.
func turnsDone(t *testing.T, ctx context.Context, n int) {
	t.Helper()
	within(t, ctx, 60*time.Second, fmt.Sprintf("turn %d to end", n),
		chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.querySelectorAll('[data-testid="turn-time"]').length === %d`, n), chromedp.WithPollingInterval(100*time.Millisecond)))
}

// TestBrowserTimelineNewSince: the timeline remembers (in this browser) how
// far the person had read a session when they left it; on the next visit,
// after a page reload, a "New since you last looked" divider stands before
// the first newer item, scrolled into view, and it is gone on the visit
// after.
func TestBrowserTimelineNewSince(t *testing.T) {
	t.Parallel()
	var long []string
	for i := 1; i <= 120; i++ {
		long = append(long, fmt.Sprintf("Line %d of the long answer.", i))
	}
	rules := []fakeapi.Rule{
		{Name: "first", Contains: "FIRSTTURN", Reply: fakeapi.Text("The first answer.")},
		// Longer than the view: at the bottom, the divider would be out of sight.
		{Name: "second", Contains: "SECONDTURN", Reply: fakeapi.Text(strings.Join(long, "\n\n"))},
	}
	h := newHarness(t, harnessOptions{fake: fakeapi.Options{Rules: rules}})
	id := h.newSession("--name", "seen")
	ctx := browser(t)
	within(t, ctx, 30*time.Second, "open the timeline",
		chromedp.EmulateViewport(1280, 800),
		chromedp.Navigate(h.webURL()+"#/s/"+id+"/timeline"),
		chromedp.WaitVisible(css(`[data-testid="prompt-box"]`)))
	h.send(id, "FIRSTTURN")
	turnsDone(t, ctx, 1)
	// The first visit: no divider (nothing was seen before it).
	if n := get(t, ctx, 5*time.Second, "dividers", chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="tl-new-divider"]').length`)); n != 0 {
		t.Errorf("%d dividers on the first visit", n)
	}
	// Leave it for the terminal: the mark is recorded.
	within(t, ctx, 10*time.Second, "to the terminal", chromedp.Click(css(`[data-testid="tab-terminal"]`)))
	markJS := fmt.Sprintf(`(JSON.parse(localStorage.getItem('corral.seen') || '{}')[%q] || {}).id || ''`, id)
	// (Recorded once the view has rendered hidden: poll.)
	var mark string
	waitFor(t, 10*time.Second, "the mark recorded", func() bool {
		mark, _ = chromedp.Run(ctx, chromedp.Evaluate[string](markJS))
		return mark != ""
	})
	last := get(t, ctx, 5*time.Second, "the last item", chromedp.Evaluate[string](`[...document.querySelectorAll('[data-testid="timeline"] .tl-row')].pop()?.dataset.itemId || ''`))
	if mark != last {
		t.Fatalf("the mark is %q, want the last item seen %q", mark, last)
	}

	h.send(id, "SECONDTURN")
	turnsDone(t, ctx, 2)
	// A new page (on the terminal tab), then the timeline: the mark comes from localStorage.
	within(t, ctx, 30*time.Second, "reload, then the timeline",
		chromedp.Reload(),
		chromedp.WaitVisible(css(`[data-testid="tab-timeline"]`)),
		chromedp.Click(css(`[data-testid="tab-timeline"]`)),
		chromedp.WaitVisible(css(`[data-testid="tl-new-divider"]`)))
	type place struct {
		Next, NextKind, Text string
		InView, AtBottom     bool
	}
	p := get(t, ctx, 5*time.Second, "the divider", chromedp.Evaluate[place](`(() => {
		const d = document.querySelector('[data-testid="tl-new-divider"]');
		const tl = document.querySelector('[data-testid="timeline"]');
		const n = d.nextElementSibling;
		const r = d.getBoundingClientRect(), v = tl.getBoundingClientRect();
		return {Next: n?.dataset.itemId || '', NextKind: n?.querySelector('.tl-item')?.dataset.kind || '', Text: d.textContent,
			InView: r.top >= v.top && r.bottom <= v.bottom, AtBottom: tl.scrollHeight - tl.scrollTop - tl.clientHeight < 48};
	})()`))
	if p.Text != "New since you last looked" || p.NextKind != "prompt" || !p.InView || p.AtBottom {
		t.Errorf("the divider %+v: want it labelled, before the second prompt, in view, the view not at the bottom", p)
	}
	prev := get(t, ctx, 5*time.Second, "the item before", chromedp.Evaluate[string](`document.querySelector('[data-testid="tl-new-divider"]').previousElementSibling?.dataset.itemId || ''`))
	if prev != mark {
		t.Errorf("the divider follows %q, want the marked item %q", prev, mark)
	}

	// Seen: gone on the next visit, which has nothing newer.
	within(t, ctx, 10*time.Second, "away and back",
		chromedp.Click(css(`[data-testid="tab-terminal"]`)),
		chromedp.Click(css(`[data-testid="tab-timeline"]`)),
		chromedp.WaitVisible(css(`[data-testid="prompt-box"]`)))
	// The visit's answer comes after the refetch's debounce: wait for the mark to be read.
	waitFor(t, 10*time.Second, "the divider gone", func() bool {
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="tl-new-divider"]').length`))
		return err == nil && n == 0
	})
}

// TestBrowserTimelineTurnFiles: each prompt lists the files its turn
// changed, with their line counts; a click opens the Git panel at that
// file's diff (a new, untracked file too), and says so when the file has
// no change left to show.
func TestBrowserTimelineTurnFiles(t *testing.T) {
	t.Parallel()
	var notes, added string
	rules := []fakeapi.Rule{
		{Name: "edit", Match: func(r *fakeapi.Request) bool { return strings.Contains(r.TurnPrompt, "FILESTEST") }, ReplyFunc: func(r *fakeapi.Request) fakeapi.Reply {
			switch r.TurnSteps {
			case 0:
				return fakeapi.ToolUse("Read", map[string]any{"file_path": notes})
			case 1:
				return fakeapi.ToolUse("Edit", map[string]any{"file_path": notes, "old_string": "line 2\n", "new_string": "line two\n"})
			case 2:
				return fakeapi.ToolUse("Write", map[string]any{"file_path": added, "content": "one\ntwo\nthree\n"})
			}
			return fakeapi.Text("changed two files")
		}},
	}
	h := newHarness(t, harnessOptions{fake: fakeapi.Options{Rules: rules}})
	notes = filepath.Join(h.proj, "notes.txt")
	added = filepath.Join(h.proj, "added.txt")
	initRepo(t, h.proj, map[string]string{"notes.txt": "line 1\nline 2\nline 3\n"})
	h.stopServe(syscall.SIGTERM)
	h.serveArgs = append(h.serveArgs, "--root", h.proj)
	h.startServe()
	id := h.newSession("--name", "files", "--", "--permission-mode", "acceptEdits")
	ctx := browser(t)
	within(t, ctx, 30*time.Second, "open the timeline",
		chromedp.EmulateViewport(1440, 900),
		chromedp.Navigate(h.webURL()+"#/s/"+id+"/timeline"),
		chromedp.WaitVisible(css(`[data-testid="prompt-box"]`)))
	h.send(id, "FILESTEST")
	turnsDone(t, ctx, 1)
	if b, _ := os.ReadFile(added); string(b) != "one\ntwo\nthree\n" {
		t.Fatalf("the Write did not happen: %q", b)
	}
	h.rec.waitFor(30*time.Second, "the row's git", func(x api.Session) bool { return x.ID == id && x.Git != nil && x.Git.Changed == 2 })
	// The prompt comes back changed with each edit's result: wait for both.
	within(t, ctx, 20*time.Second, "the turn's files",
		chromedp.Poll[chromedp.Void](`document.querySelectorAll('[data-kind="prompt"] [data-testid="turn-file"] [data-testid="turn-file-open"]').length === 2`, chromedp.WithPollingInterval(100*time.Millisecond)))
	files := get(t, ctx, 5*time.Second, "files", chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-kind="prompt"] [data-testid="turn-file"]')].map(e => e.dataset.path + '|' + e.textContent)`))
	want := []string{notes + "|notes.txt+1−1", added + "|added.txtnew+3−0"}
	if strings.Join(files, "\n") != strings.Join(want, "\n") {
		t.Errorf("the turn's files:\n%q\nwant\n%q", files, want)
	}

	open := func(path string) {
		t.Helper()
		within(t, ctx, 20*time.Second, "open "+path,
			chromedp.Click(css(fmt.Sprintf(`[data-testid="turn-file"][data-path=%q] [data-testid="turn-file-open"]`, path))),
			chromedp.WaitVisible(css(`[data-testid="git-panel"]`)))
	}
	closePanel := func() {
		t.Helper()
		within(t, ctx, 5*time.Second, "close the panel", chromedp.KeyEvent("\x1b"), chromedp.WaitNotPresent(css(`[data-testid="git-panel"]`)))
	}
	open(notes)
	within(t, ctx, 20*time.Second, "the edited file's diff",
		chromedp.WaitVisible(css(`[data-testid="git-file-diff"][data-path="notes.txt"][data-focused="true"]`)))
	if d := get(t, ctx, 5*time.Second, "diff", chromedp.Text(css(`[data-focused="true"]`))); !strings.Contains(d, "+line two") {
		t.Errorf("the focused diff lacks the edit: %q", d)
	}
	closePanel()
	open(added)
	within(t, ctx, 20*time.Second, "the new file's diff",
		chromedp.WaitVisible(css(`[data-testid="git-file-diff"][data-path="added.txt"][data-focused="true"]`)))
	closePanel()

	// Committed: nothing left to show, and the panel says so.
	gitIn(t, h.proj, "add", "-A")
	gitIn(t, h.proj, "commit", "-qm", "the turn")
	// (The panel reads the status and diff when it opens.)
	open(notes)
	within(t, ctx, 20*time.Second, "no diff left", chromedp.WaitVisible(css(`[data-testid="git-focus-none"]`)))
	if got := get(t, ctx, 5*time.Second, "note", chromedp.Text(css(`[data-testid="git-focus-none"]`))); !strings.Contains(got, "notes.txt") {
		t.Errorf("the note %q does not name the file", got)
	}
	closePanel()
}
