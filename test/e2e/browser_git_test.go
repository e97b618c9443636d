package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/corral-dev/corral/internal/api"
)

// TestBrowserGit: on a real repository the row shows the branch and the
// changed-file count, the Git panel its status and diff; a new session in
// a new worktree is made from the new-session dialog, and killing it
// offers to remove the worktree: refused while it holds a new file (the
// refusal shown), done once the file is gone, the branch kept.
func TestBrowserGit(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	initRepo(t, h.proj, map[string]string{"README.md": "# app\n\nline 3\n"})
	h.stopServe(syscall.SIGTERM)
	h.serveArgs = append(h.serveArgs, "--root", h.proj)
	h.startServe()
	if err := os.WriteFile(filepath.Join(h.proj, "README.md"), []byte("# app\n\nline three\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSpace(h.corral("new", "--shell", "--dir", h.proj, "--name", "repo"))
	h.rec.waitFor(30*time.Second, "the row's git", func(x api.Session) bool {
		return x.ID == id && x.Git != nil && x.Git.Branch == "main" && x.Git.Changed == 1
	})

	ctx := browser(t)
	row := fmt.Sprintf(`[data-testid="session-row"][data-session-id="%s"]`, id)
	within(t, ctx, 40*time.Second, "the row's branch and count",
		chromedp.EmulateViewport(1440, 900),
		chromedp.Navigate(h.webURL()),
		chromedp.WaitVisible(css(row+` [data-testid="row-changed"]`)))
	if got := get(t, ctx, 5*time.Second, "row git", chromedp.Text(css(row+` [data-testid="row-git"]`))); !strings.Contains(got, "main") || !strings.Contains(got, "±1") {
		t.Errorf("the row says %q, want the branch main and ±1", got)
	}

	// The Git panel: the branch, the file, its diff with git's line numbers.
	within(t, ctx, 20*time.Second, "the Git panel",
		chromedp.Click(css(row)),
		chromedp.Click(css(`[data-testid="open-git"]`)),
		chromedp.WaitVisible(css(`[data-testid="git-panel"] [data-testid="git-file"][data-path="README.md"]`)),
		chromedp.WaitVisible(css(`[data-testid="git-file-diff"][data-path="README.md"]`)))
	if got := get(t, ctx, 5*time.Second, "branch", chromedp.Text(css(`[data-testid="git-branch"]`))); got != "main" {
		t.Errorf("the panel names branch %q", got)
	}
	diff := get(t, ctx, 5*time.Second, "diff", chromedp.Text(css(`[data-testid="git-file-diff"][data-path="README.md"]`)))
	for _, want := range []string{"@@ -1,3 +1,3 @@", "-line 3", "+line three"} {
		if !strings.Contains(diff, want) {
			t.Errorf("the diff lacks %q:\n%s", want, diff)
		}
	}
	saveShot(t, ctx, "git-desktop")
	// Staged: nothing yet.
	within(t, ctx, 10*time.Second, "the staged side",
		chromedp.Click(css(`[data-testid="git-staged"]`)),
		chromedp.WaitNotPresent(css(`[data-testid="git-file-diff"]`)))
	within(t, ctx, 5*time.Second, "close the panel", chromedp.KeyEvent("\x1b"), chromedp.WaitNotPresent(css(`[data-testid="git-panel"]`)))

	// A new session in a new worktree, from the dialog.
	within(t, ctx, 30*time.Second, "new worktree session",
		chromedp.Click(css(`[data-testid="new-session"]`)),
		chromedp.WaitVisible(css(`[data-testid="new-session-dialog"]`)),
		chromedp.WaitEnabled(css(`[data-testid="use-folder"]`)),
		chromedp.Click(css(`[data-testid="use-folder"]`)),
		chromedp.WaitVisible(css(`[data-testid="choice-shell"]`)),
		chromedp.Click(css(`[data-testid="choice-shell"]`)),
		chromedp.Click(css(`[data-testid="new-worktree"]`)),
		chromedp.SendKeys(css(`[data-testid="worktree-branch"]`), "feat/ui"),
		chromedp.Click(css(`[data-testid="create-session"]`)))
	wtSess := h.rec.waitFor(30*time.Second, "the worktree session", func(x api.Session) bool { return x.Worktree != nil && x.Worktree.Branch == "feat/ui" })
	wt := wtSess.Worktree.Path
	if !strings.HasSuffix(wt, filepath.Join(".claude", "worktrees", "feat+ui")) || wtSess.Dir != wt {
		t.Fatalf("worktree %+v, dir %s", wtSess.Worktree, wtSess.Dir)
	}
	if _, err := os.Stat(filepath.Join(wt, "README.md")); err != nil {
		t.Fatalf("the worktree has no checkout: %v", err)
	}
	// The dialog opens the new session.
	waitFor(t, 20*time.Second, "the worktree session open", func() bool {
		v, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`window.__corral.state.selectedId || ''`))
		return v == wtSess.ID
	})

	// Killing it with its worktree: refused while it holds a new file.
	if err := os.WriteFile(filepath.Join(wt, "notes.txt"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	within(t, ctx, 20*time.Second, "kill, removing the worktree",
		chromedp.Click(css(`[data-testid="kill"]`)),
		chromedp.WaitVisible(css(`[data-testid="kill-dialog"] [data-testid="kill-remove-worktree"]`)),
		chromedp.Click(css(`[data-testid="kill-confirm"]`)),
		chromedp.WaitVisible(css(`[data-testid="worktree-dirty"]`)))
	if got := get(t, ctx, 5*time.Second, "the refusal", chromedp.Text(css(`[data-testid="worktree-dirty"]`))); !strings.Contains(got, "notes.txt") {
		t.Errorf("the refusal does not name the file: %q", got)
	}
	if _, err := os.Stat(filepath.Join(wt, "notes.txt")); err != nil {
		t.Fatalf("the refused kill lost the file: %v", err)
	}
	if s := h.lsOne(wtSess.ID); s.Status == api.StatusExited {
		t.Errorf("the refused kill ended the session")
	}
	// The file gone, the same button removes it.
	if err := os.Remove(filepath.Join(wt, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	within(t, ctx, 20*time.Second, "kill again",
		chromedp.Click(css(`[data-testid="kill-confirm"]`)),
		chromedp.WaitNotPresent(css(`[data-testid="kill-dialog"]`)))
	waitFor(t, 20*time.Second, "the worktree removed", func() bool {
		_, err := os.Stat(wt)
		return os.IsNotExist(err)
	})
	waitFor(t, 20*time.Second, "the session gone", func() bool {
		for _, s := range h.ls() {
			if s.ID == wtSess.ID {
				return false
			}
		}
		return true
	})
	if out := gitIn(t, h.proj, "branch", "--list", "feat/ui"); !strings.Contains(out, "feat/ui") {
		t.Errorf("the branch went with the worktree: %q", out)
	}
}
