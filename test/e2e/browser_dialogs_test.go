package e2e

import (
	"context"
	"encoding/json"
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
	"github.com/corral-dev/corral/internal/testkit/testio"
)

// The browser tests of dialogs: the needs-input card answers each kind, the
// prompt box never types into a dialog, an exited session restarts. Real
// Chromium, real corral serve, real claude; only the model is fake.

const (
	desktopW, desktopH = 1440, 900
	phoneW, phoneH     = 390, 844
)

func desktop() chromedp.Action[chromedp.Void] {
	return chromedp.EmulateViewport(desktopW, desktopH)
}

func phone() chromedp.Action[chromedp.Void] {
	return chromedp.EmulateViewport(phoneW, phoneH, chromedp.EmulateScale(2), chromedp.EmulatePortrait, chromedp.EmulateMobile, chromedp.EmulateTouch)
}

// card is what the needs-input card of the open session shows.
type card struct {
	Dialog   string   `json:"dialog"`
	Kind     string   `json:"kind"`
	Title    string   `json:"title"`
	Text     string   `json:"text"`
	Options  []string `json:"options"`
	Disabled bool     `json:"disabled"`
	// Focused is the data-option of the focused element inside the card.
	Focused string `json:"focused"`
	// Overflow: the card is wider than the window (a phone must not scroll sideways).
	Overflow bool    `json:"overflow"`
	Right    float64 `json:"right"`
	MinH     float64 `json:"min_h"`
	Announce string  `json:"announce"`
}

const cardJS = `(() => {
  const c = document.querySelector('[data-testid="needs-input-card"]');
  if (!c) return "";
  const btns = [...c.querySelectorAll('[data-answer]')];
  const a = document.activeElement;
  const r = c.getBoundingClientRect();
  const ann = document.querySelector('[data-testid="needs-announce"]');
  return JSON.stringify({
    dialog: c.getAttribute('data-dialog-id') || '',
    kind: c.getAttribute('data-kind') || '',
    title: (c.querySelector('[data-testid="needs-title"]') || {}).textContent || '',
    text: c.innerText,
    options: [...c.querySelectorAll('[data-option]')].map(b => b.getAttribute('data-option') + ' ' + (b.getAttribute('aria-label') || b.innerText)),
    disabled: btns.length > 0 && btns.every(b => b.disabled),
    focused: a && c.contains(a) ? (a.closest('[data-option]') || a).getAttribute('data-option') || a.tagName : '',
    overflow: c.scrollWidth > c.clientWidth + 1 || r.right > window.innerWidth + 1,
    right: r.right,
    min_h: Math.min(...btns.map(b => b.getBoundingClientRect().height)),
    announce: ann ? ann.textContent : '',
  });
})()`

// waitCard waits until the card shows the dialog (by id) with its options
// enabled, and returns it.
func waitCard(t *testing.T, ctx context.Context, dialog string, d time.Duration) card {
	t.Helper()
	var c card
	deadline := time.Now().Add(d)
	for {
		raw := get(t, ctx, 5*time.Second, "the card", chromedp.Evaluate[string](cardJS))
		c = card{}
		if raw != "" {
			if err := json.Unmarshal([]byte(raw), &c); err != nil {
				t.Fatal(err)
			}
			if c.Dialog == dialog && !c.Disabled && len(c.Options) > 0 {
				return c
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the card never showed dialog %s ready: %+v", dialog, c)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// promptBox is the state of the open session's prompt box.
type promptBox struct {
	Mode     string `json:"mode"`
	Disabled bool   `json:"disabled"`
	Value    string `json:"value"`
	Reason   string `json:"reason"`
	Label    string `json:"label"`
}

func readPromptBox(t *testing.T, ctx context.Context) promptBox {
	t.Helper()
	const js = `(() => {
  const f = document.querySelector('[data-testid="prompt-form"]');
  const ta = document.querySelector('[data-testid="prompt-box"]');
  const r = document.querySelector('[data-testid="prompt-reason"]');
  const l = document.querySelector('[data-testid="prompt-answer-label"]');
  return JSON.stringify({mode: f ? f.getAttribute('data-mode') : '', disabled: !!(ta && ta.disabled), value: ta ? ta.value : '',
    reason: r ? r.textContent : '', label: l ? l.textContent : ''});
})()`
	var p promptBox
	if err := json.Unmarshal([]byte(get(t, ctx, 5*time.Second, "the prompt box", chromedp.Evaluate[string](js))), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// clickOption clicks the card's option number n.
func clickOption(t *testing.T, ctx context.Context, n int) {
	t.Helper()
	sel := fmt.Sprintf(`[data-testid="needs-input-card"] button[data-option="%d"]`, n)
	within(t, ctx, 10*time.Second, fmt.Sprintf("click option %d", n), chromedp.WaitEnabled(css(sel)), chromedp.Click(css(sel)))
}

// optionNumber finds the option whose label starts with prefix.
func optionNumber(t *testing.T, w *api.Waiting, prefix string) int {
	t.Helper()
	for _, o := range w.Options {
		if strings.HasPrefix(o.Label, prefix) {
			return o.Number
		}
	}
	t.Fatalf("no option %q in %+v", prefix, w.Options)
	return 0
}

// stillWaiting checks that the session still waits on the same dialog, its
// screen unchanged and the tool's file absent.
func stillWaiting(t *testing.T, h *harness, id, dialog, screen, made, after string) {
	t.Helper()
	s := h.lsOne(id)
	if s.Status != api.StatusNeedsInput || s.WaitingFor == nil || s.WaitingFor.DialogID != dialog {
		t.Fatalf("after %s the dialog is gone: %s %+v", after, s.Status, s.WaitingFor)
	}
	if got := h.screen(id); got != screen {
		t.Errorf("the screen changed after %s:\nbefore:\n%s\nafter:\n%s", after, screen, got)
	}
	if _, err := os.Stat(made); err == nil {
		t.Fatalf("the tool ran after %s", after)
	}
}

// TestBrowserDialogs: one corral serve, one browser.
//   - A permission prompt: the card says what it asks; the prompt box is
//     disabled (or is the "tell Claude" answer, where Claude offers it), and
//     typing there reaches nothing; the Yes button answers.
//   - On a phone: the card fits, the focus stays put, No answers.
//   - An exited session restarts from its Restart button.
//   - A folder Claude does not trust: its trust dialog is answered with a
//     button, then the session is idle.
func TestBrowserDialogs(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	// The folder picker of the new-session dialog shows the project.
	h.stopServe(syscall.SIGTERM)
	h.serveArgs = []string{"--root", h.proj}
	h.startServe()
	made := filepath.Join(h.proj, "created_by_tool")
	// The untrusted folder's session starts now: its dialog waits for as
	// long as it takes.
	untrusted := testio.TempDir(t, "corral-untrusted-")
	trustID := strings.TrimSpace(h.corral("new", "--dir", untrusted, "--name", "untrusted"))
	id := h.newSession("--name", "perm")
	ctx := browser(t)

	within(t, ctx, 30*time.Second, "open the session's timeline",
		desktop(),
		chromedp.Navigate(h.webURL()+"#/s/"+id+"/timeline"),
		chromedp.WaitVisible(css(`[data-testid="prompt-box"]`)),
		chromedp.SendKeys(css(`[data-testid="prompt-box"]`), "RUNTOOL from the browser"),
		chromedp.SendKeys(css(`[data-testid="prompt-box"]`), "\r"),
	)
	// The screen shows the dialog first; the hook's payload, a moment
	// later, names the command, and the summary says it from then on.
	s := h.waitDialogWhere(id, api.DialogPermission, 30*time.Second, "with its command", func(w *api.Waiting) bool {
		return strings.HasPrefix(w.Summary, "Allow Bash: touch")
	})
	w := s.WaitingFor
	var c card
	waitFor(t, 20*time.Second, "the card to say "+w.Summary, func() bool {
		c = waitCard(t, ctx, w.DialogID, 20*time.Second)
		return c.Title == w.Summary
	})
	if strings.Contains(c.Text, "AskUserQuestion") || !strings.Contains(c.Text, "created_by_tool") {
		t.Errorf("card text: %q", c.Text)
	}
	if !strings.Contains(c.Announce, "perm needs input: "+w.Summary) {
		t.Errorf("announced %q", c.Announce)
	}
	rowSel := css(fmt.Sprintf(`[data-testid="session-row"][data-session-id="%s"]`, id))
	waitFor(t, 10*time.Second, "the sidebar row to say "+w.Summary, func() bool {
		return strings.Contains(get(t, ctx, 5*time.Second, "row", chromedp.Text(rowSel)), w.Summary)
	})
	waitFor(t, 10*time.Second, "the tab title to say "+w.Summary, func() bool {
		return strings.Contains(get(t, ctx, 5*time.Second, "title", chromedp.Title()), w.Summary)
	})
	// The person was typing a moment ago: the focus moves to the first
	// option only once they pause.
	waitFor(t, 10*time.Second, "the focus on the first option", func() bool {
		return waitCard(t, ctx, w.DialogID, 5*time.Second).Focused == "1"
	})
	saveShot(t, ctx, "dialog-permission-desktop")

	before := h.screen(id)
	pb := readPromptBox(t, ctx)
	var feedback *api.Option
	for i, o := range w.Options {
		if o.Text {
			feedback = &w.Options[i]
		}
	}
	t.Logf("permission options %+v; prompt box %+v", w.Options, pb)
	if feedback == nil {
		// No text answer offered: the box is disabled and says why.
		if pb.Mode != "blocked" || !pb.Disabled || !strings.Contains(pb.Reason, "Answer the dialog above, or press Esc") {
			t.Fatalf("prompt box during a permission prompt: %+v", pb)
		}
		// A person clicks into it and types, then Enter: nothing reaches
		// the session (the focus is not left on an option either).
		within(t, ctx, 10*time.Second, "type into the disabled prompt box",
			chromedp.Click(css(`[data-testid="prompt-box"]`)),
			typeText("1"),
			chromedp.KeyEvent("\r"),
		)
		if got := readPromptBox(t, ctx); got.Value != "" {
			t.Errorf("the disabled prompt box took text: %+v", got)
		}
		stillWaiting(t, h, id, w.DialogID, before, made, "typing into the prompt box")
	} else {
		// The box is the dialog's "tell Claude" answer, labelled so.
		if pb.Mode != "feedback" || pb.Disabled || !strings.Contains(pb.Label, feedback.Label) {
			t.Fatalf("prompt box during a permission prompt that takes text: %+v (option %+v)", pb, feedback)
		}
		within(t, ctx, 10*time.Second, "type into the prompt box", chromedp.Click(css(`[data-testid="prompt-box"]`)), typeText("1"))
		stillWaiting(t, h, id, w.DialogID, before, made, "typing into the prompt box")
		// Sent, it is the dialog's answer: No, with the text for Claude.
		seq := h.api.LastSeq()
		within(t, ctx, 10*time.Second, "tell Claude", typeText(" do not touch that file"), chromedp.KeyEvent("\r"))
		h.api.AwaitAfter(t, seq, 30*time.Second, func(r fakeapi.Request) bool {
			for _, tr := range r.ToolResults {
				if tr.IsError && strings.Contains(tr.Content, "1 do not touch that file") {
					return true
				}
			}
			return false
		})
		h.rec.waitFor(30*time.Second, "the turn after the feedback", func(s api.Session) bool {
			return s.ID == id && (s.Status == api.StatusReview || s.Status == api.StatusIdle)
		})
		if _, err := os.Stat(made); err == nil {
			t.Fatal("the tool ran after No with feedback")
		}
		// The page hears of the turn's end a moment after the recorder.
		var got promptBox
		if !eventually(10*time.Second, func() bool {
			got = readPromptBox(t, ctx)
			return got.Mode == "prompt" && got.Value == ""
		}) {
			t.Errorf("after the feedback answer the prompt box is %+v", got)
		}
		// Again, to answer with a button.
		h.send(id, "RUNTOOL again")
		w = h.waitDialog(id, api.DialogPermission, 30*time.Second).WaitingFor
		waitCard(t, ctx, w.DialogID, 20*time.Second)
	}

	// Yes, from its button: the tool runs, the turn ends in review.
	clickOption(t, ctx, optionNumber(t, w, "Yes"))
	h.rec.waitFor(30*time.Second, "the turn after Yes", func(s api.Session) bool {
		return s.ID == id && (s.Status == api.StatusReview || s.Status == api.StatusIdle)
	})
	if _, err := os.Stat(made); err != nil {
		t.Fatalf("the approved tool did not run: %v", err)
	}
	os.Remove(made)

	// A phone: the card fits the screen, the focus stays where it was, No
	// answers from its button.
	within(t, ctx, 30*time.Second, "phone layout", phone(), chromedp.Reload(), chromedp.WaitVisible(css(`[data-testid="prompt-box"]`)))
	h.send(id, "RUNTOOL on the phone")
	s = h.waitDialog(id, api.DialogPermission, 30*time.Second)
	w = s.WaitingFor
	c = waitCard(t, ctx, w.DialogID, 20*time.Second)
	if c.Overflow || c.Right > phoneW+1 {
		t.Errorf("the card does not fit a %d px phone: %+v", phoneW, c)
	}
	if c.MinH < 40 {
		t.Errorf("an answer on the phone is %.0f px high; want a 40 px target", c.MinH)
	}
	if c.Focused != "" {
		t.Errorf("on a phone the focus moved into the card (%s)", c.Focused)
	}
	saveShot(t, ctx, "dialog-permission-phone")
	clickOption(t, ctx, optionNumber(t, w, "No"))
	h.rec.waitFor(30*time.Second, "the turn after No", func(s api.Session) bool {
		return s.ID == id && s.Status != api.StatusNeedsInput && s.Status != api.StatusBusy
	})
	if _, err := os.Stat(made); err == nil {
		t.Fatal("the tool ran after No")
	}

	// The new-session dialog marks the conversation as running here, and
	// offers to switch to it; resuming it anyway is refused.
	conv := h.lsOne(id).ClaudeSessionID
	resumable := fmt.Sprintf(`[data-testid="resumable"][data-id="%s"]`, conv)
	within(t, ctx, 30*time.Second, "the resumable list",
		chromedp.Click(css(`[data-testid="new-session"]`)),
		chromedp.WaitEnabled(css(`[data-testid="use-folder"]`)),
		chromedp.Click(css(`[data-testid="use-folder"]`)),
		chromedp.WaitVisible(css(resumable+`[data-running="true"]`)),
	)
	if got := get(t, ctx, 5*time.Second, "the running mark", chromedp.Text(css(resumable))); !strings.Contains(got, "Running now in perm") {
		t.Errorf("the running conversation says %q", got)
	}
	within(t, ctx, 20*time.Second, "resume it anyway",
		chromedp.Click(css(resumable)),
		chromedp.Click(css(`[data-testid="create-session"]`)),
		chromedp.WaitVisible(css(`[data-testid="new-session-dialog"] .form-error`)),
	)
	if got := get(t, ctx, 5*time.Second, "the refusal", chromedp.Text(css(`[data-testid="new-session-dialog"] .form-error`))); !strings.Contains(got, "running") {
		t.Errorf("resuming a running conversation says %q", got)
	}
	within(t, ctx, 20*time.Second, "switch to it",
		chromedp.Click(css(`[data-testid="switch-to"]`)),
		chromedp.WaitNotPresent(css(`[data-testid="new-session-dialog"]`)),
		chromedp.WaitVisible(css(fmt.Sprintf(`.session-view[data-session-id="%s"]`, id))),
	)
	if n := len(h.ls()); n != 2 {
		t.Errorf("%d sessions after the refused resume, want 2", n)
	}

	// Exited: Restart starts Claude again, in a new conversation.
	h.send(id, "/exit")
	h.waitStatus(id, api.StatusExited, 20*time.Second)
	within(t, ctx, 20*time.Second, "the Restart and Resume buttons",
		chromedp.WaitVisible(css(`[data-testid="exited-banner"] [data-testid="restart"]`)),
		chromedp.WaitVisible(css(`[data-testid="exited-banner"] [data-testid="resume"]`)),
	)
	saveShot(t, ctx, "exited-phone")
	within(t, ctx, 10*time.Second, "click Restart", chromedp.Click(css(`[data-testid="restart"]`)))
	h.rec.waitFor(60*time.Second, "idle in a new conversation", func(s api.Session) bool {
		return s.ID == id && s.Status == api.StatusIdle && s.ClaudeSessionID != "" && s.ClaudeSessionID != conv
	})
	within(t, ctx, 10*time.Second, "the banner gone", chromedp.WaitNotPresent(css(`[data-testid="exited-banner"]`)))

	// The trust dialog, answered with its button, on the desktop.
	s = h.waitDialog(trustID, api.DialogTrust, 60*time.Second)
	w = s.WaitingFor
	within(t, ctx, 30*time.Second, "open the untrusted session",
		desktop(),
		// The login link was for one use: the page is still logged in.
		chromedp.Click(css(fmt.Sprintf(`[data-testid="session-row"][data-session-id="%s"]`, trustID))),
		chromedp.Click(css(`[data-testid="tab-terminal"]`)),
		chromedp.WaitVisible(css(`[data-testid="needs-input-card"]`)),
	)
	c = waitCard(t, ctx, w.DialogID, 20*time.Second)
	if c.Title != "Trust the files in this folder?" || c.Kind != api.DialogTrust {
		t.Errorf("trust card: %+v", c)
	}
	row := get(t, ctx, 5*time.Second, "row", chromedp.Text(css(fmt.Sprintf(`[data-testid="session-row"][data-session-id="%s"]`, trustID))))
	if !strings.Contains(row, "Trust the files in this folder?") {
		t.Errorf("the untrusted session's row: %q", row)
	}
	saveShot(t, ctx, "dialog-trust-desktop")
	clickOption(t, ctx, optionNumber(t, w, "Yes"))
	h.waitStatus(trustID, api.StatusIdle, 30*time.Second)
	within(t, ctx, 10*time.Second, "the card gone", chromedp.WaitNotPresent(css(`[data-testid="needs-input-card"]`)))

	// A draft typed in the terminal: the prompt is refused, the draft is
	// shown, and Replace the draft sends the prompt instead of it.
	h.corral("keys", trustID, "n")
	waitFor(t, 10*time.Second, "the draft on the screen", func() bool { return inputLine(h.screen(trustID)) == "n" })
	within(t, ctx, 20*time.Second, "a prompt over the draft",
		chromedp.Click(css(`[data-testid="tab-timeline"]`)),
		chromedp.WaitEnabled(css(`[data-testid="prompt-box"]`)),
		chromedp.SendKeys(css(`[data-testid="prompt-box"]`), "say hello"),
		chromedp.Click(css(`[data-testid="prompt-send"]`)),
		chromedp.WaitVisible(css(`[data-testid="prompt-refusal"][data-code="draft_present"]`)),
	)
	if got := get(t, ctx, 5*time.Second, "the refusal", chromedp.Text(css(`[data-testid="prompt-refusal"] .draft-text`))); got != "n" {
		t.Errorf("the refusal shows the draft %q, want %q", got, "n")
	}
	within(t, ctx, 20*time.Second, "replace the draft", chromedp.Click(css(`[data-testid="replace-draft"]`)))
	h.api.AwaitPrompt(t, "say hello", 20*time.Second)
	for _, r := range h.api.Requests() {
		if strings.Contains(r.Prompt, "nsay hello") {
			t.Errorf("the model got %q", r.Prompt)
		}
	}
	within(t, ctx, 10*time.Second, "the refusal gone, the box empty", chromedp.WaitNotPresent(css(`[data-testid="prompt-refusal"]`)))
	if got := readPromptBox(t, ctx); got.Value != "" {
		t.Errorf("the sent prompt stayed in the box: %+v", got)
	}
}

// askRules script AskUserQuestion calls: one single choice, one
// multi-select, one answered with free text.
func askRules() []fakeapi.Rule {
	q := func(header, question string, multi bool, labels ...string) map[string]any {
		var opts []map[string]any
		for _, l := range labels {
			opts = append(opts, map[string]any{"label": l, "description": "The " + l + " option"})
		}
		return map[string]any{"question": question, "header": header, "options": opts, "multiSelect": multi}
	}
	ask := func(qs ...map[string]any) fakeapi.Reply {
		return fakeapi.ToolUse("AskUserQuestion", map[string]any{"questions": qs})
	}
	return []fakeapi.Rule{
		// A turn with a task list and a subagent that takes its time.
		{Contains: "SUBSLOW", Reply: fakeapi.Slow(4*time.Second, fakeapi.Text("Background done."))},
		fakeapi.Steps("WORKLIST",
			fakeapi.TodoWrite(
				fakeapi.Todo{Content: "Write code", Status: "completed", ActiveForm: "Writing code"},
				fakeapi.Todo{Content: "Test it", Status: "in_progress", ActiveForm: "Testing it"},
				fakeapi.Todo{Content: "Ship", Status: "pending", ActiveForm: "Shipping"}),
			fakeapi.Agent("Slow work", "SUBSLOW please", "", false),
			fakeapi.Text("All done.")),
		{Contains: "ASKONE", Reply: ask(q("Database", "Which database should the service use?", false, "PostgreSQL", "SQLite"))},
		{Contains: "ASKMANY", Reply: ask(q("Features", "Which features do you want?", true, "Auth", "Search", "Export"))},
		{Contains: "ASKTEXT", Reply: ask(q("Name", "What should the project be called?", false, "corral", "herd"))},
	}
}

// toolResult waits for the model to be sent a tool result that contains
// want, after request number after.
func toolResult(t *testing.T, h *harness, after int, want string) {
	t.Helper()
	h.api.AwaitAfter(t, after, 30*time.Second, func(r fakeapi.Request) bool {
		for _, tr := range r.ToolResults {
			if strings.Contains(tr.Content, want) {
				return true
			}
		}
		return false
	})
}

// TestBrowserQuestion: AskUserQuestion answered from the card: a single
// choice, a multi-select and free text, each reaching Claude, each turn
// ending in review.
func TestBrowserQuestion(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{fake: fakeapi.Options{Rules: askRules()}})
	id := h.newSession("--name", "asks")
	other := strings.TrimSpace(h.corral("new", "--shell", "--dir", h.proj, "--name", "elsewhere"))
	ctx := browser(t)
	within(t, ctx, 30*time.Second, "open the session",
		desktop(),
		chromedp.Navigate(h.webURL()+"#/s/"+id+"/timeline"),
		chromedp.WaitVisible(css(`[data-testid="prompt-box"]`)),
	)
	// ask sends a prompt, waits for its question card, and returns the
	// dialog and the fake API's request count before the answer.
	ask := func(prompt string) (*api.Waiting, card, int) {
		t.Helper()
		h.send(id, prompt)
		s := h.waitDialog(id, api.DialogQuestion, 30*time.Second)
		c := waitCard(t, ctx, s.WaitingFor.DialogID, 20*time.Second)
		t.Logf("%s: waiting for %+v\ncard %+v\nscreen:\n%s", prompt, s.WaitingFor, c, h.screen(id))
		if !strings.HasPrefix(c.Title, "Claude asks: ") || strings.Contains(c.Text, "Allow AskUserQuestion") {
			t.Errorf("question card title %q", c.Title)
		}
		return s.WaitingFor, c, h.api.LastSeq()
	}
	// reviewed waits for the turn to end in review (looked at elsewhere),
	// then comes back.
	reviewed := func() {
		t.Helper()
		open := func(id string) chromedp.Action[bool] {
			return chromedp.Evaluate[bool](fmt.Sprintf(`(window.__corral.open(%q, "timeline"), true)`, id))
		}
		get(t, ctx, 10*time.Second, "look elsewhere", open(other))
		h.waitStatus(id, api.StatusReview, 30*time.Second)
		get(t, ctx, 10*time.Second, "come back", open(id))
		within(t, ctx, 10*time.Second, "the session", chromedp.WaitVisible(css(`[data-testid="prompt-box"]`)))
		h.waitStatus(id, api.StatusIdle, 10*time.Second)
	}

	// A turn's task list and its running subagent show on the row and in
	// the header.
	h.send(id, "WORKLIST")
	row := fmt.Sprintf(`[data-testid="session-row"][data-session-id="%s"]`, id)
	within(t, ctx, 30*time.Second, "the subagent and the task list",
		chromedp.WaitVisible(css(row+` [data-testid="row-subagents"]`)),
		chromedp.WaitVisible(css(`.session-head [data-testid="subagents"]`)),
		chromedp.WaitVisible(css(row+` [data-testid="row-todos"]`)),
	)
	if got := get(t, ctx, 5*time.Second, "todos", chromedp.Text(css(row+` [data-testid="row-todos"]`))); got != "1/3" {
		t.Errorf("the row's todos say %q, want 1/3", got)
	}
	if got := get(t, ctx, 5*time.Second, "subagents", chromedp.Text(css(`.session-head [data-testid="subagents"]`))); got != "1 subagent" {
		t.Errorf("the header says %q, want 1 subagent", got)
	}
	h.rec.waitFor(30*time.Second, "the turn's end", func(s api.Session) bool {
		return s.ID == id && (s.Status == api.StatusReview || s.Status == api.StatusIdle)
	})
	within(t, ctx, 10*time.Second, "the subagent gone", chromedp.WaitNotPresent(css(row+` [data-testid="row-subagents"]`)))

	// A single choice: its button, with the option's description.
	w, c, seq := ask("ASKONE")
	if !strings.Contains(strings.ToLower(c.Text), "database") || !strings.Contains(c.Text, "The SQLite option") {
		t.Errorf("the card lacks the header or a description: %q", c.Text)
	}
	saveShot(t, ctx, "dialog-question-desktop")
	clickOption(t, ctx, optionNumber(t, w, "SQLite"))
	toolResult(t, h, seq, "SQLite")
	reviewed()

	// A multi-select: toggles, then Submit.
	w, c, seq = ask("ASKMANY")
	if !w.MultiSelect {
		t.Errorf("a multi-select question is not multi_select: %+v", w)
	}
	for _, label := range []string{"Auth", "Export"} {
		sel := fmt.Sprintf(`[data-testid="needs-input-card"] label[data-option="%d"]`, optionNumber(t, w, label))
		within(t, ctx, 10*time.Second, "toggle "+label, chromedp.Click(css(sel)))
	}
	saveShot(t, ctx, "dialog-multi-desktop")
	within(t, ctx, 10*time.Second, "submit", chromedp.Click(css(`[data-testid="multi-submit"]`)))
	// Claude then shows its "Submit answers" step: another dialog.
	s := h.rec.waitFor(20*time.Second, "the Submit answers step", func(s api.Session) bool {
		return s.ID == id && s.WaitingFor != nil && s.WaitingFor.DialogID != w.DialogID && s.WaitingFor.DialogID != ""
	})
	c = waitCard(t, ctx, s.WaitingFor.DialogID, 20*time.Second)
	t.Logf("the submit step: %+v\ncard %+v", s.WaitingFor, c)
	if s.WaitingFor.Current != -1 || !strings.Contains(c.Text, "Review your answers") {
		t.Errorf("the Submit answers step is not shown as such: current %d, card %q", s.WaitingFor.Current, c.Text)
	}
	saveShot(t, ctx, "dialog-submit-step-desktop")
	clickOption(t, ctx, optionNumber(t, s.WaitingFor, "Submit answers"))
	h.api.AwaitAfter(t, seq, 30*time.Second, func(r fakeapi.Request) bool {
		for _, tr := range r.ToolResults {
			if strings.Contains(tr.Content, "Auth") && strings.Contains(tr.Content, "Export") && !strings.Contains(tr.Content, "Search") {
				return true
			}
		}
		return false
	})
	reviewed()

	// Free text, on a phone: the "Type something" option is a field.
	within(t, ctx, 30*time.Second, "phone layout", phone(), chromedp.Reload(), chromedp.WaitVisible(css(`[data-testid="prompt-box"]`)))
	w, c, seq = ask("ASKTEXT")
	if c.Overflow || c.Right > phoneW+1 {
		t.Errorf("the question card does not fit a %d px phone: %+v", phoneW, c)
	}
	saveShot(t, ctx, "dialog-question-phone")
	var typed *api.Option
	for i, o := range w.Options {
		if o.Text {
			typed = &w.Options[i]
		}
	}
	if typed == nil {
		t.Fatalf("no text option in %+v", w.Options)
	}
	const name = "a name of my own"
	sel := fmt.Sprintf(`[data-testid="needs-input-card"] form[data-option="%d"]`, typed.Number)
	within(t, ctx, 10*time.Second, "type an answer",
		chromedp.Click(css(sel+` [data-testid="option-text"]`)),
		typeText(name),
		chromedp.Click(css(sel+` button[type="submit"]`)),
	)
	toolResult(t, h, seq, name)
	reviewed()

	// Esc cancels the question: nothing goes to the model, the session is idle.
	w, _, seq = ask("ASKONE")
	within(t, ctx, 10*time.Second, "Esc", chromedp.Click(css(`[data-testid="dialog-esc"]`)))
	h.rec.waitFor(20*time.Second, "idle after Esc", func(s api.Session) bool {
		return s.ID == id && s.Status == api.StatusIdle
	})
	if n := h.api.LastSeq(); n != seq {
		t.Errorf("Esc sent %d requests to the model", n-seq)
	}
}
