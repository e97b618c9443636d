package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/claude/screen"
	"github.com/corral-dev/corral/internal/datadir"
	"github.com/corral-dev/corral/internal/testkit/fakeapi"
	"github.com/corral-dev/corral/internal/testkit/testio"
)

// waitDialog waits until a session waits on a dialog read off the screen
// (it has an id to answer) and returns it.
func (h *harness) waitDialog(id, kind string, timeout time.Duration) api.Session {
	h.t.Helper()
	return h.waitDialogWhere(id, kind, timeout, "", func(*api.Waiting) bool { return true })
}

// waitDialogWhere is waitDialog for a dialog that also satisfies also,
// described by what ("" for none).
func (h *harness) waitDialogWhere(id, kind string, timeout time.Duration, what string, also func(*api.Waiting) bool) api.Session {
	h.t.Helper()
	desc := "a " + kind + " dialog read off the screen"
	if what != "" {
		desc += ", " + what
	}
	return h.rec.waitFor(timeout, desc, func(s api.Session) bool {
		return s.ID == id && s.Status == api.StatusNeedsInput && s.WaitingFor != nil &&
			s.WaitingFor.Kind == kind && s.WaitingFor.DialogID != "" && len(s.WaitingFor.Options) > 0 &&
			also(s.WaitingFor)
	})
}

// answer answers a dialog through the API, as the dashboard does.
func (h *harness) answer(id string, req api.AnswerRequest) (api.AnswerResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return h.c.Answer(ctx, id, req)
}

// expectCode fails unless err is an API error with the code.
func expectCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Code != code {
		t.Fatalf("%s: got %v, want %s", what, err, code)
	}
}

// refusesText checks that text sent while a dialog is open is refused with
// dialog_open and changes nothing on the screen.
func (h *harness) refusesText(t *testing.T, id string) {
	t.Helper()
	before := h.screen(id)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := h.c.Input(ctx, id, api.InputRequest{Text: "2 no wait", Enter: true})
	expectCode(t, "text while a dialog is open", err, api.CodeDialogOpen)
	// The dialog as read before and after: the same one, its focus, checks
	// and fields untouched (a spinner above it may move meanwhile).
	after := h.screen(id)
	b, a := screen.Read(before).Dialog, screen.Read(after).Dialog
	bj, _ := json.Marshal(b)
	aj, _ := json.Marshal(a)
	if b == nil || a == nil || string(aj) != string(bj) {
		t.Errorf("the dialog changed after refused input:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// TestPermissionRefusesText: while "Allow Bash?" waits, text from corral
// send or the API is refused and nothing on the screen changes; an answer
// names its dialog, and one for a dialog that is gone is refused.
func TestPermissionRefusesText(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	id := h.newSession()
	made := filepath.Join(h.proj, "created_by_tool")

	h.send(id, "RUNTOOL one")
	s := h.waitDialog(id, api.DialogPermission, 30*time.Second)
	first := s.WaitingFor.DialogID
	if s.WaitingFor.Tool != "Bash" || !strings.HasPrefix(s.WaitingFor.Summary, "Allow Bash: touch") {
		t.Errorf("waiting for %+v", s.WaitingFor)
	}
	before := h.screen(id)

	out, err := h.corralErr("send", id, "no wait, do not run that")
	if err == nil || !strings.Contains(out+err.Error(), "dialog") {
		t.Fatalf("corral send into a permission dialog: %q %v", out, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err = h.c.Input(ctx, id, api.InputRequest{Text: "1", Enter: true})
	expectCode(t, "API input during a permission dialog", err, api.CodeDialogOpen)
	after := h.screen(id)
	bj, _ := json.Marshal(screen.Read(before).Dialog)
	aj, _ := json.Marshal(screen.Read(after).Dialog)
	if string(aj) != string(bj) || screen.Read(after).Dialog == nil {
		t.Errorf("the dialog changed after refused input:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if _, err := os.Stat(made); err == nil {
		t.Fatal("the tool ran: refused text reached the dialog")
	}

	// An answer for a dialog that is not the one on screen does nothing.
	_, err = h.answer(id, api.AnswerRequest{Dialog: "notthisone", Choice: "yes"})
	expectCode(t, "answer with a made-up dialog id", err, api.CodeStaleDialog)

	// No: the tool does not run, the turn ends.
	res, err := h.answer(id, api.AnswerRequest{Dialog: first, Choice: "no"})
	if err != nil || !strings.Contains(res.Answered, "No") {
		t.Fatalf("answer no: %+v %v", res, err)
	}
	h.waitStatus(id, api.StatusIdle, 20*time.Second)
	if _, err := os.Stat(made); err == nil {
		t.Fatal("the tool ran after No")
	}

	// The next dialog has another id; the old one no longer answers it.
	h.send(id, "RUNTOOL two")
	s = h.waitDialog(id, api.DialogPermission, 30*time.Second)
	if s.WaitingFor.DialogID == first {
		t.Fatal("a new dialog kept the old dialog's id")
	}
	_, err = h.answer(id, api.AnswerRequest{Dialog: first, Choice: "yes"})
	expectCode(t, "answer for the earlier dialog", err, api.CodeStaleDialog)
	if _, err := os.Stat(made); err == nil {
		t.Fatal("a stale answer ran the tool")
	}
	if _, err := h.answer(id, api.AnswerRequest{Dialog: s.WaitingFor.DialogID, Option: 1}); err != nil {
		t.Fatal(err)
	}
	h.waitStatus(id, api.StatusReview, 30*time.Second)
	if _, err := os.Stat(made); err != nil {
		t.Fatalf("the approved tool did not run: %v", err)
	}
	// Once it is answered, the dialog is gone for good.
	_, err = h.answer(id, api.AnswerRequest{Dialog: s.WaitingFor.DialogID, Option: 1})
	expectCode(t, "a second answer to the same dialog", err, api.CodeStaleDialog)
}

// TestDraftRefused: text typed in the terminal and left in Claude's input
// box is not sent on with the next prompt.
func TestDraftRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	id := h.newSession()
	h.corral("keys", id, "n")
	waitFor(t, 10*time.Second, "the draft on the screen", func() bool { return inputLine(h.screen(id)) == "n" })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := h.c.Input(ctx, id, api.InputRequest{Text: "EXPLORE the project", Enter: true})
	expectCode(t, "a prompt over a draft", err, api.CodeDraftPresent)
	if err := h.c.Input(ctx, id, api.InputRequest{Text: "say hello", Enter: true, ClearDraft: true}); err != nil {
		t.Fatal(err)
	}
	h.api.AwaitPrompt(t, "say hello", 20*time.Second)
	for _, r := range h.api.Requests() {
		if strings.Contains(r.Prompt, "nsay hello") || strings.Contains(r.Prompt, "EXPLORE") {
			t.Errorf("the model got %q", r.Prompt)
		}
	}
	h.waitStatus(id, api.StatusReview, 30*time.Second)
}

// startupDialog starts claude in a session and returns the session once a
// startup dialog is needs-input, checking that it came within a second of
// the dialog being drawn.
func startupDialog(t *testing.T, h *harness, dir, kind, text string) api.Session {
	t.Helper()
	id := strings.TrimSpace(h.corral("new", "--dir", dir))
	var drawn time.Time
	waitFor(t, 60*time.Second, "the "+kind+" dialog on the screen", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		scr, err := h.c.Capture(ctx, id, 0)
		if err == nil && strings.Contains(scr.Text, text) {
			drawn = time.Now()
			return true
		}
		return false
	})
	s := h.waitDialog(id, kind, 10*time.Second)
	ch, ok := h.rec.firstSince(id, api.StatusNeedsInput, time.Time{})
	if !ok {
		t.Fatal("no needs-input in the history")
	}
	// drawn is when this test saw it (polling every 20 ms or so, plus a
	// capture); the dialog was drawn a little before.
	if lag := ch.at.Sub(drawn); lag > time.Second {
		t.Errorf("needs-input %v after the %s dialog was on the screen", lag, kind)
	}
	return s
}

// holds checks that a session stays needs-input with the same dialog for d
// (past the agent's safety check, every 10 s).
func holds(t *testing.T, h *harness, id, dialog string, d time.Duration) {
	t.Helper()
	t0 := time.Now()
	for time.Since(t0) < d {
		s := h.lsOne(id)
		if s.Status != api.StatusNeedsInput || s.WaitingFor == nil || s.WaitingFor.DialogID != dialog {
			t.Fatalf("after %v the dialog is no longer held: %s %+v", time.Since(t0).Round(time.Millisecond), s.Status, s.WaitingFor)
		}
		time.Sleep(500 * time.Millisecond)
	}
	for _, st := range h.rec.statuses(id) {
		if st == api.StatusIdle || st == api.StatusBusy {
			t.Fatalf("the session was %s while the dialog waited: %v", st, h.rec.statuses(id))
		}
	}
}

// TestTrustDialog: a folder Claude does not trust yet asks first, before
// any hook or session file; corral shows it as a trust dialog, holds it for
// as long as it waits, types nothing into it, and answers it.
func TestTrustDialog(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	dir := testio.TempDir(t, "corral-untrusted-")
	s := startupDialog(t, h, dir, api.DialogTrust, "trust")
	id, dialog := s.ID, s.WaitingFor.DialogID
	if s.WaitingFor.Summary != "Trust the files in this folder?" {
		t.Errorf("summary %q", s.WaitingFor.Summary)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	expectCode(t, "a prompt into the trust dialog", h.c.Input(ctx, id, api.InputRequest{Text: "explore", Enter: true}), api.CodeDialogOpen)
	holds(t, h, id, dialog, 15*time.Second)
	if _, err := h.answer(id, api.AnswerRequest{Dialog: dialog, Choice: "yes"}); err != nil {
		t.Fatal(err)
	}
	h.waitStatus(id, api.StatusIdle, 30*time.Second)
	h.send(id, "say hello")
	h.waitStatus(id, api.StatusReview, 30*time.Second)
}

// TestAPIKeyDialog: a key Claude has not been told to use asks at start.
func TestAPIKeyDialog(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{extraEnv: []string{"ANTHROPIC_API_KEY=sk-ant-other-key-never-approved-0123456789"}})
	s := startupDialog(t, h, h.proj, api.DialogAPIKey, "API key")
	h.refusesText(t, s.ID)
	holds(t, h, s.ID, s.WaitingFor.DialogID, 12*time.Second)
	if _, err := h.answer(s.ID, api.AnswerRequest{Dialog: s.WaitingFor.DialogID, Choice: "yes"}); err != nil {
		t.Fatal(err)
	}
	h.waitStatus(s.ID, api.StatusIdle, 30*time.Second)
}

// TestClaudeStartedByHand: after /exit, the person types claude in the
// pane's shell. That claude has none of corral's hooks; the session
// follows it anyway, from its session file and transcript.
func TestClaudeStartedByHand(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	id := h.newSession()
	h.send(id, "/exit")
	h.waitStatus(id, api.StatusExited, 20*time.Second)
	h.rec.waitFor(10*time.Second, "claude gone", func(s api.Session) bool { return s.ID == id && s.ClaudePID == 0 })
	h.corral("send", id, "claude")
	h.waitStatus(id, api.StatusIdle, 60*time.Second)
	// A slow answer, so that busy lasts long enough to be seen whatever
	// the load.
	h.send(id, "SLOW hello")
	h.waitStatus(id, api.StatusBusy, 20*time.Second)
	h.waitStatus(id, api.StatusReview, 30*time.Second)
}

// TestConversationIdentity: /clear keeps the session and follows the new
// conversation; resuming a conversation a live session runs is refused.
func TestConversationIdentity(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	id := h.newSession()
	h.send(id, "say hello")
	s := h.waitStatus(id, api.StatusReview, 30*time.Second)
	conv := s.ClaudeSessionID

	out, err := h.corralErr("new", "--dir", h.proj, "--resume", conv)
	if err == nil || !strings.Contains(out+err.Error(), "running") {
		t.Fatalf("resuming a running conversation: %q %v", out, err)
	}
	// Claude writes its transcript as it goes; the list reads it.
	waitFor(t, 20*time.Second, "the resumable list to mark the conversation running here", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		list, err := h.c.Resumable(ctx, "", h.proj)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range list {
			if r.ID == conv {
				return r.RunningIn == id && r.Running
			}
		}
		return false
	})

	h.send(id, "/clear")
	s = h.rec.waitFor(30*time.Second, "a new conversation after /clear", func(s api.Session) bool {
		return s.ID == id && s.ClaudeSessionID != "" && s.ClaudeSessionID != conv
	})
	if s.Status == api.StatusExited {
		t.Fatalf("/clear ended the session: %+v", s)
	}
	h.send(id, "say hello again")
	h.waitStatus(id, api.StatusReview, 30*time.Second)
	if got := h.lsOne(id).ClaudeSessionID; got == conv {
		t.Errorf("still on the old conversation %s", got)
	}
}

// TestRestart: an exited session starts Claude again, in a new
// conversation or resuming its last one.
func TestRestart(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	id := h.newSession()
	h.send(id, "say hello")
	conv := h.waitStatus(id, api.StatusReview, 30*time.Second).ClaudeSessionID

	out, err := h.corralErr("restart", id)
	if err == nil {
		t.Fatalf("restarted a running session: %q", out)
	}
	h.send(id, "/exit")
	h.waitStatus(id, api.StatusExited, 20*time.Second)
	if out, err := h.corralErr("restart", "--resume", id); err != nil {
		t.Fatalf("restart --resume: %q %v", out, err)
	}
	s := h.waitStatus(id, api.StatusIdle, 60*time.Second)
	if s.ClaudeSessionID != conv {
		t.Errorf("restart --resume: conversation %q, want %q", s.ClaudeSessionID, conv)
	}
	h.send(id, "/exit")
	h.waitStatus(id, api.StatusExited, 20*time.Second)
	h.corral("restart", id)
	s = h.rec.waitFor(60*time.Second, "idle in a new conversation", func(s api.Session) bool {
		return s.ID == id && s.Status == api.StatusIdle && s.ClaudeSessionID != "" && s.ClaudeSessionID != conv
	})
}

// TestPasteIntoDialogIsInert checks the fact corral's typing relies on: text
// goes to Claude as a bracketed paste, and Claude's dialogs take none of a
// paste as keys. So a dialog that opens between corral's look at the screen
// and its typing gets nothing: a pasted "1" does not pick "Yes".
func TestPasteIntoDialogIsInert(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	id := h.newSession()
	h.send(id, "RUNTOOL one")
	h.waitDialog(id, api.DialogPermission, 30*time.Second)
	sock := datadir.Socket(h.dataDir, datadir.TmuxSocket)
	for _, text := range []string{"1", "yes\n", "2\r"} {
		for _, args := range [][]string{{"set-buffer", "-b", "t", "--", text}, {"paste-buffer", "-p", "-r", "-d", "-b", "t", "-t", id}} {
			if out, err := exec.Command("tmux", append([]string{"-S", sock}, args...)...).CombinedOutput(); err != nil {
				t.Fatalf("tmux %v: %v %s", args, err, out)
			}
		}
	}
	// Nothing to wait for but time: Claude would act on a key at once.
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(filepath.Join(h.proj, "created_by_tool")); err == nil {
			t.Fatal("a pasted text answered the permission dialog")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if s := h.lsOne(id); s.Status != api.StatusNeedsInput {
		t.Fatalf("after the pastes: %s", s.Status)
	}
}

// TestMultilinePrompt: a prompt of several lines arrives whole, as one
// prompt.
func TestMultilinePrompt(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	id := h.newSession()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	want := "first line\nsecond line; with 1. a list\n2. and more"
	if err := h.c.Input(ctx, id, api.InputRequest{Text: want, Enter: true}); err != nil {
		t.Fatal(err)
	}
	h.api.AwaitPrompt(t, "second line", 20*time.Second)
	h.waitStatus(id, api.StatusReview, 30*time.Second)
	for _, r := range h.api.Requests() {
		if r.Kind == fakeapi.KindPrompt && strings.Contains(r.Prompt, "second line") && r.Prompt != want {
			t.Errorf("the model got %q, want %q", r.Prompt, want)
		}
	}
}

// lastToolResult waits for a tool result whose content contains sub, sent
// to the model after request seq, and returns its content.
func (h *harness) lastToolResult(t *testing.T, after time.Time, sub string) string {
	t.Helper()
	var got string
	waitFor(t, 30*time.Second, "a tool result with "+sub, func() bool {
		for _, r := range h.api.Requests() {
			if r.Time.Before(after) {
				continue
			}
			for _, tr := range r.ToolResults {
				if strings.Contains(tr.Content, sub) {
					got = tr.Content
					return true
				}
			}
		}
		return false
	})
	return got
}

// TestQuestionDialog: AskUserQuestion is a question, not a permission: its
// questions, options and descriptions are in waiting_for; a single choice,
// free text and a multi-select answered through corral reach Claude, and
// the turn ends in review.
func TestQuestionDialog(t *testing.T) {
	t.Parallel()
	opts := func(l ...string) []fakeapi.QuestionOption {
		var o []fakeapi.QuestionOption
		for _, s := range l {
			o = append(o, fakeapi.QuestionOption{Label: s, Description: s + " described"})
		}
		return o
	}
	single := fakeapi.Question{Question: "Which database?", Header: "Database", Options: opts("PostgreSQL", "SQLite")}
	multi := fakeapi.Question{Question: "Which features?", Header: "Features", Options: opts("Auth", "Search", "Export"), MultiSelect: true}
	h := newHarness(t, harnessOptions{fake: fakeapi.Options{Rules: []fakeapi.Rule{
		{Contains: "ASKONE", Reply: fakeapi.AskQuestions(single)},
		{Contains: "ASKTEXT", Reply: fakeapi.AskQuestions(single)},
		{Contains: "ASKMULTI", Reply: fakeapi.AskQuestions(multi)},
	}}})
	id := h.newSession()

	cases := []struct {
		prompt string
		steps  []func(w *api.Waiting) api.AnswerRequest
		result string
	}{
		{"ASKONE", []func(w *api.Waiting) api.AnswerRequest{
			func(w *api.Waiting) api.AnswerRequest { return api.AnswerRequest{Option: 2} }}, `"Which database?"="SQLite"`},
		{"ASKTEXT", []func(w *api.Waiting) api.AnswerRequest{
			func(w *api.Waiting) api.AnswerRequest {
				for _, o := range w.Options {
					if o.Text {
						return api.AnswerRequest{Option: o.Number, Text: "DuckDB"}
					}
				}
				t.Fatalf("no text option in %+v", w.Options)
				return api.AnswerRequest{}
			}}, `"Which database?"="DuckDB"`},
		{"ASKMULTI", []func(w *api.Waiting) api.AnswerRequest{
			func(w *api.Waiting) api.AnswerRequest {
				if !w.MultiSelect {
					t.Errorf("multi-select not shown: %+v", w)
				}
				return api.AnswerRequest{Options: []int{1, 3}}
			},
			func(w *api.Waiting) api.AnswerRequest { return api.AnswerRequest{Option: 1} }, // Submit answers
		}, `"Which features?"="Auth, Export"`},
	}
	for _, c := range cases {
		t0 := time.Now()
		h.send(id, c.prompt+" please")
		prev := ""
		for i, f := range c.steps {
			s := h.rec.waitFor(30*time.Second, fmt.Sprintf("%s: question screen %d", c.prompt, i+1), func(s api.Session) bool {
				return s.ID == id && s.Status == api.StatusNeedsInput && s.WaitingFor != nil && s.WaitingFor.Kind == api.DialogQuestion &&
					s.WaitingFor.DialogID != "" && s.WaitingFor.DialogID != prev && len(s.WaitingFor.Options) > 0
			})
			w := s.WaitingFor
			if i == 0 {
				if len(w.Questions) != 1 || w.Questions[0].Header == "" || w.Questions[0].Options[0].Description == "" {
					t.Errorf("%s: questions %+v", c.prompt, w.Questions)
				}
				if w.Options[0].Description == "" || !strings.HasPrefix(w.Summary, "Claude asks: ") {
					t.Errorf("%s: options %+v summary %q", c.prompt, w.Options, w.Summary)
				}
			}
			if i == 0 {
				h.refusesText(t, id)
			}
			prev = w.DialogID
			req := f(w)
			req.Dialog = w.DialogID
			if _, err := h.answer(id, req); err != nil {
				t.Fatalf("%s: answer %d: %v", c.prompt, i+1, err)
			}
		}
		if got := h.lastToolResult(t, t0, "answered"); !strings.Contains(got, c.result) {
			t.Errorf("%s: the model got %q, want %s", c.prompt, got, c.result)
		}
		h.waitStatus(id, api.StatusReview, 30*time.Second)
		h.corral("send", id, "ok") // viewed: review -> idle, and the next turn
		h.waitStatus(id, api.StatusReview, 30*time.Second)
	}
}

// TestPlanDialog: ExitPlanMode shows the plan; feedback keeps Claude
// planning, approval lets it go on.
func TestPlanDialog(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{fake: fakeapi.Options{Rules: []fakeapi.Rule{
		fakeapi.Plan("PLANIT", "# Plan\n\n1. Do it\n"),
	}}})
	id := strings.TrimSpace(h.corral("new", "--dir", h.proj, "--", "--permission-mode", "plan"))
	h.waitStatus(id, api.StatusIdle, 60*time.Second)

	t0 := time.Now()
	h.send(id, "PLANIT one")
	s := h.waitDialog(id, api.DialogPlan, 60*time.Second)
	h.refusesText(t, id)
	if !strings.Contains(s.WaitingFor.Plan, "1. Do it") {
		t.Errorf("the plan is not shown: %+v", s.WaitingFor)
	}
	var feedback int
	for _, o := range s.WaitingFor.Options {
		if o.Text {
			feedback = o.Number
		}
	}
	if feedback == 0 {
		t.Fatalf("no feedback option: %+v", s.WaitingFor.Options)
	}
	if _, err := h.answer(id, api.AnswerRequest{Dialog: s.WaitingFor.DialogID, Option: feedback, Text: "add tests first"}); err != nil {
		t.Fatal(err)
	}
	h.lastToolResult(t, t0, "add tests first")
	h.waitStatus(id, api.StatusReview, 30*time.Second)

	t0 = time.Now()
	h.send(id, "PLANIT two")
	s = h.waitDialog(id, api.DialogPlan, 60*time.Second)
	if _, err := h.answer(id, api.AnswerRequest{Dialog: s.WaitingFor.DialogID, Option: 2}); err != nil {
		t.Fatal(err)
	}
	h.lastToolResult(t, t0, "approved your plan")
	h.waitStatus(id, api.StatusReview, 30*time.Second)
}

// TestElicitationDialog: an MCP server's form is needs-input (elicitation)
// with its fields, and a filled form answered through corral reaches the
// server.
func TestElicitationDialog(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{fake: fakeapi.Options{Rules: []fakeapi.Rule{
		{Contains: "FORMNOW", Reply: fakeapi.MCPTool("fake", "form", map[string]any{"message": "Tell me about you"})},
	}}})
	mcpLog := filepath.Join(h.proj, "mcp.jsonl")
	cfg := filepath.Join(testio.TempDir(t, "corral-mcp-"), "mcp.json")
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"fake": map[string]any{"command": fakeMCPBin, "args": []string{"-log", mcpLog}}}})
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSpace(h.corral("new", "--dir", h.proj, "--", "--mcp-config", cfg))
	h.waitStatus(id, api.StatusIdle, 60*time.Second)
	t0 := time.Now()
	h.send(id, "FORMNOW please")
	s := h.waitDialog(id, api.DialogPermission, 60*time.Second)
	if _, err := h.answer(id, api.AnswerRequest{Dialog: s.WaitingFor.DialogID, Choice: "yes"}); err != nil {
		t.Fatal(err)
	}
	s = h.rec.waitFor(60*time.Second, "the form", func(s api.Session) bool {
		return s.ID == id && s.WaitingFor != nil && s.WaitingFor.Kind == api.DialogElicitation && s.WaitingFor.DialogID != "" && len(s.WaitingFor.Fields) > 0
	})
	if len(s.WaitingFor.Fields) != 4 {
		t.Errorf("fields %+v", s.WaitingFor.Fields)
	}
	h.refusesText(t, id)
	_, err := h.answer(id, api.AnswerRequest{Dialog: s.WaitingFor.DialogID, Option: 1,
		Fields: map[string]string{"Color": "blue", "Name": "Alice", "Count": "7", "Notify me": "true"}})
	if err != nil {
		t.Fatal(err)
	}
	got := h.lastToolResult(t, t0, "elicitation result")
	for _, want := range []string{`"action":"accept"`, `"color":"blue"`, `"name":"Alice"`} {
		if !strings.Contains(got, want) {
			t.Errorf("the MCP server got %q, want %s", got, want)
		}
	}
	h.waitStatus(id, api.StatusReview, 30*time.Second)
}
