package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserClaudeMissing: with no claude on corral's PATH, the home
// screen says so with the install command, on a desktop and on a phone,
// before anyone presses Start.
func TestBrowserClaudeMissing(t *testing.T) {
	t.Parallel()
	// A PATH with what corral and a shell session need, and no claude.
	bin := t.TempDir()
	for _, p := range []string{"tmux", "sh", "bash", "git", "env", "cat"} {
		if full, err := exec.LookPath(p); err == nil {
			if err := os.Symlink(full, filepath.Join(bin, p)); err != nil {
				t.Fatal(err)
			}
		}
	}
	h := newHarness(t, harnessOptions{extraEnv: []string{"PATH=" + bin}})
	ctx := browser(t)
	within(t, ctx, 40*time.Second, "the desktop's home screen",
		chromedp.EmulateViewport(1440, 900),
		chromedp.Navigate(h.webURL()),
		chromedp.WaitVisible(css(`[data-testid="new-session-empty"]`)),
		chromedp.WaitVisible(css(`[data-testid="claude-missing"]`)),
		// No sessions yet: the newcomer's three steps.
		chromedp.WaitVisible(css(`[data-testid="welcome"]`)),
	)
	if n := get(t, ctx, 5*time.Second, "steps", chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="welcome"] .welcome-steps > li').length`)); n != 3 {
		t.Errorf("the welcome has %d steps", n)
	}
	cmd := get(t, ctx, 5*time.Second, "the command", chromedp.Text(css(`[data-testid="claude-install-command"]`)))
	if !strings.Contains(cmd, "npm install -g @anthropic-ai/claude-code") {
		t.Errorf("the banner's command is %q", cmd)
	}
	saveShot(t, ctx, "claude-missing-desktop")
	within(t, ctx, 40*time.Second, "the phone's home screen",
		chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(3), chromedp.EmulatePortrait, chromedp.EmulateMobile, chromedp.EmulateTouch),
		chromedp.Reload(),
		chromedp.WaitVisible(css(`.home [data-testid="claude-missing"]`)),
		chromedp.WaitVisible(css(`.home [data-testid="welcome"]`)),
	)
	fits := get(t, ctx, 5*time.Second, "the banner's box", chromedp.Evaluate[bool](`(() => { const r = document.querySelector('[data-testid="claude-missing"]').getBoundingClientRect(); return r.left >= 0 && r.right <= window.innerWidth + 1 && document.documentElement.scrollWidth <= window.innerWidth + 1; })()`))
	if !fits {
		t.Error("the banner does not fit on the phone's screen")
	}
	// Laid out for the phone: the banner and the steps keep off the
	// screen's edges, nothing in the banner sticks out of it, and the
	// command has its Copy button beside it.
	layout := get(t, ctx, 5*time.Second, "the phone's layout", chromedp.Evaluate[[]string](`(() => {
		const bad = [];
		const w = window.innerWidth;
		for (const sel of ['[data-testid="claude-missing"]', '[data-testid="welcome"]']) {
			const r = document.querySelector(sel).getBoundingClientRect();
			if (r.left < 8 || r.right > w - 8) bad.push(sel + ' touches the edge: ' + r.left + '..' + r.right + ' of ' + w);
		}
		const b = document.querySelector('[data-testid="claude-missing"]').getBoundingClientRect();
		for (const e of document.querySelectorAll('[data-testid="claude-missing"] *')) {
			const r = e.getBoundingClientRect();
			if (r.width > 0 && (r.left < b.left || r.right > b.right + 0.5)) bad.push(e.tagName + ' sticks out: ' + r.left + '..' + r.right);
		}
		const code = document.querySelector('[data-testid="claude-install-command"]').getBoundingClientRect();
		const btn = document.querySelector('[data-testid="claude-install-command"] + button').getBoundingClientRect();
		if (btn.top >= code.bottom) bad.push('the Copy button is under the command');
		return bad;
	})()`))
	if len(layout) > 0 {
		t.Errorf("the phone's Claude-missing screen: %q", layout)
	}
	saveShot(t, ctx, "claude-missing-phone")
}

// TestBrowserDaemonDown: when corral stops, the open page says corral is
// not reachable and how to start it; a reload gets the service worker's
// offline page instead of the browser's error.
func TestBrowserDaemonDown(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	id := strings.TrimSpace(h.corral("new", "--shell", "--dir", h.proj, "--name", "down"))
	ctx := browser(t)
	within(t, ctx, 40*time.Second, "open the dashboard",
		chromedp.EmulateViewport(1440, 900),
		chromedp.Navigate(h.webURL()),
		chromedp.WaitVisible(css(`[data-testid="session-row"][data-session-id="`+id+`"]`)),
	)
	// The service worker controls the page once it is active (it claims it).
	within(t, ctx, 20*time.Second, "the service worker",
		chromedp.Poll[chromedp.Void](`navigator.serviceWorker && navigator.serviceWorker.controller !== null`, chromedp.WithPollingInterval(100*time.Millisecond)))
	if n := get(t, ctx, 5*time.Second, "banner", chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="unreachable"]').length`)); n != 0 {
		t.Fatal("the unreachable banner shows while corral runs")
	}
	h.stopServe(syscall.SIGTERM)
	within(t, ctx, 30*time.Second, "the unreachable banner", chromedp.WaitVisible(css(`[data-testid="unreachable"]`)))
	if cmd := get(t, ctx, 5*time.Second, "the command", chromedp.Text(css(`[data-testid="start-command"]`))); cmd != "corral serve" {
		t.Errorf("the start command is %q", cmd)
	}
	within(t, ctx, 30*time.Second, "reload onto the offline page",
		chromedp.Reload(),
		chromedp.WaitVisible(css(`[data-testid="offline-page"]`)),
	)
	txt := get(t, ctx, 5*time.Second, "the offline page", chromedp.Text(css(`[data-testid="offline-page"]`)))
	if !strings.Contains(txt, "corral is not reachable") || !strings.Contains(txt, "corral serve") {
		t.Errorf("offline page says %q", txt)
	}
}

// TestBrowserAttach: a file attached from the prompt box, and a screenshot
// pasted into it, are saved in the session's folder and named in the
// prompt (a shell session here: its prompt gets the path itself).
func TestBrowserAttach(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	id := strings.TrimSpace(h.corral("new", "--shell", "--dir", h.proj, "--name", "attach"))
	src := filepath.Join(t.TempDir(), "notes for claude.txt")
	if err := os.WriteFile(src, []byte("attached content\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := browser(t)
	within(t, ctx, 40*time.Second, "open the prompt box",
		chromedp.EmulateViewport(1440, 900),
		chromedp.Navigate(h.webURL()+"#/s/"+id+"/timeline"),
		chromedp.WaitVisible(css(`[data-testid="attach"]`)),
		chromedp.SetUploadFiles(css(`[data-testid="attach-input"]`), []string{src}),
		chromedp.Poll[chromedp.Void](`document.querySelector('[data-testid="prompt-box"]').value.includes('notes_for_claude.txt')`, chromedp.WithPollingInterval(50*time.Millisecond)),
	)
	if b, err := os.ReadFile(filepath.Join(h.proj, "notes_for_claude.txt")); err != nil || string(b) != "attached content\n" {
		t.Errorf("the attached file in the folder: %q, %v", b, err)
	}
	// A pasted image (as a browser's paste of a screenshot carries it).
	within(t, ctx, 20*time.Second, "paste a screenshot",
		chromedp.Evaluate[chromedp.Void](`(() => { const dt = new DataTransfer();
		  dt.items.add(new File([new Uint8Array([137, 80, 78, 71, 13, 10, 26, 10, 1, 2, 3])], 'image.png', {type: 'image/png'}));
		  document.querySelector('[data-testid="prompt-box"]').dispatchEvent(new ClipboardEvent('paste', {clipboardData: dt, bubbles: true, cancelable: true})); })()`),
		chromedp.Poll[chromedp.Void](`document.querySelector('[data-testid="prompt-box"]').value.includes('screenshot-')`, chromedp.WithPollingInterval(50*time.Millisecond)),
	)
	box := get(t, ctx, 5*time.Second, "the prompt", chromedp.Evaluate[string](`document.querySelector('[data-testid="prompt-box"]').value`))
	shots, _ := filepath.Glob(filepath.Join(h.proj, "screenshot-*.png"))
	if len(shots) != 1 {
		t.Fatalf("screenshots in the folder: %v (prompt %q)", shots, box)
	}
	if b, _ := os.ReadFile(shots[0]); len(b) != 11 || b[1] != 'P' {
		t.Errorf("the screenshot's bytes: %v", b)
	}
	if !strings.Contains(box, filepath.Base(shots[0])) {
		t.Errorf("the prompt %q does not name %s", box, filepath.Base(shots[0]))
	}
}
