package claudeenv_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/testkit/fakeapi"
)

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func (f *flow) waitStop(timeout time.Duration) hookRec {
	f.t.Helper()
	return f.log.wait(f.t, timeout, "Stop", f.mark, nil)
}

// ---- 3. permission --------------------------------------------------------------

func option(labels ...string) []fakeapi.QuestionOption {
	var out []fakeapi.QuestionOption
	for _, l := range labels {
		out = append(out, fakeapi.QuestionOption{Label: l, Description: "The " + l + " option, described"})
	}
	return out
}

const longBash = "echo first line\necho second line with a much longer text that goes on and on\nfor i in 1 2 3; do\n  echo $i\ndone"

func recordPermission(t *testing.T, claude, bin string) {
	var f *flow
	rules := func() []fakeapi.Rule {
		return []fakeapi.Rule{
			{Contains: "RUNTOOL", ReplyFunc: func(*fakeapi.Request) fakeapi.Reply {
				return fakeapi.Bash("touch "+filepath.Join(f.scratch, "created_by_tool"), "create file")
			}},
			{Name: "EDITF", Match: func(r *fakeapi.Request) bool { return strings.Contains(r.TurnPrompt, "EDITF") && r.TurnSteps < 2 },
				ReplyFunc: func(r *fakeapi.Request) fakeapi.Reply {
					p := filepath.Join(f.proj, "hello.txt")
					if r.TurnSteps == 0 {
						return fakeapi.Read(p)
					}
					return fakeapi.Edit(p, "hello world", "goodbye world")
				}},
			{Contains: "WRITEF", ReplyFunc: func(*fakeapi.Request) fakeapi.Reply {
				return fakeapi.Write(filepath.Join(f.proj, "new.txt"), "line one\nline two\n")
			}},
			{Contains: "WRITE2", ReplyFunc: func(*fakeapi.Request) fakeapi.Reply {
				return fakeapi.Write(filepath.Join(f.proj, "new2.txt"), "second file\n")
			}},
			{Contains: "FETCH", Reply: fakeapi.WebFetch("https://example.com/page", "Summarise the page")},
			{Contains: "LONGBASH", Reply: fakeapi.Bash(longBash, "Print some lines")},
		}
	}
	f = newFlow(t, claude, bin, "permission", flowOptions{})
	for _, r := range rules() {
		f.api.AddRule(r)
	}
	f.launch("❯")
	f.ready(30 * time.Second)
	f.step("1-started")

	// Bash
	f.line("RUNTOOL one")
	f.waitDialog("Do you want to proceed?", 20*time.Second)
	f.step("2-bash")
	f.phone("2-bash")
	f.press("1")
	f.waitStop(20 * time.Second)
	f.ready(10 * time.Second)
	f.step("3-bash-approved")
	f.note("Bash approved with `1`: created_by_tool exists: %v", exists(filepath.Join(f.scratch, "created_by_tool")))

	// Edit, with "Tab to amend" on Yes and on No, and feedback
	f.line("EDITF please")
	f.waitDialog("Do you want to make this edit to", 20*time.Second)
	f.step("4-edit")
	f.phone("4-edit")
	f.press("Tab")
	f.waitText("and tell Claude what to do next", 5*time.Second)
	f.step("5-edit-tab-on-yes")
	f.moveFocus("Down", 2)
	f.waitScreen("No focused", 5*time.Second, func(s string) bool { return strings.Contains(s, "❯ 3. No") })
	f.step("6-edit-no-focused")
	f.press("Tab")
	f.waitText("No, and tell Claude what to do differently", 5*time.Second)
	f.step("7-edit-tab-on-no")
	f.text("use a different word")
	f.waitText("No, use a different word", 5*time.Second)
	f.step("8-edit-feedback-typed")
	f.phone("8-edit-feedback-typed")
	f.press("Enter")
	f.waitStop(20 * time.Second)
	f.ready(10 * time.Second)
	f.step("9-edit-rejected-with-feedback")
	b, _ := os.ReadFile(filepath.Join(f.proj, "hello.txt"))
	f.note("Edit rejected with feedback (Down Down Tab, text, Enter): hello.txt is still %q; the model got: %s", b, lastOf(f.toolResults()))

	// Write, answered No
	f.line("WRITEF please")
	f.waitDialog("Do you want to create new.txt?", 20*time.Second)
	f.step("10-write")
	f.phone("10-write")
	f.press("3")
	f.ready(10 * time.Second)
	f.step("11-write-rejected")
	f.note("Write answered `3` (No): new.txt exists: %v; no Stop: %v", exists(filepath.Join(f.proj, "new.txt")), !f.has("Stop", f.mark))

	// WebFetch: no footer; left open past the permission_prompt notification
	f.line("FETCH please")
	f.waitDialog("Do you want to allow Claude to fetch this content?", 20*time.Second)
	shown := time.Now()
	f.step("12-webfetch")
	f.phone("12-webfetch")
	n := f.log.wait(t, 20*time.Second, "Notification", shown.Add(-time.Second), nil)
	perm := f.log.wait(t, time.Second, "PermissionRequest", shown.Add(-10*time.Second), nil)
	f.note("WebFetch dialog left open: Notification(%s, %q) %s after PermissionRequest", n.field("notification_type"), n.field("message"), ms(perm.time(), n.time()))
	f.press("3")
	f.ready(10 * time.Second)
	f.step("13-webfetch-rejected")

	// A multi-line Bash command, approved with feedback ("Yes, and tell Claude what to do next")
	f.line("LONGBASH please")
	f.waitDialog("Do you want to proceed?", 20*time.Second)
	f.step("14-long-bash")
	f.phone("14-long-bash")
	f.press("Tab")
	f.waitText("and tell Claude what to do next", 5*time.Second)
	f.text("then stop")
	f.waitText("Yes, then stop", 5*time.Second)
	f.step("15-long-bash-yes-with-text")
	f.press("Enter")
	f.waitStop(20 * time.Second)
	f.ready(10 * time.Second)
	f.step("16-long-bash-approved-with-text")
	f.note("Bash approved with Tab, text \"then stop\", Enter: the last user message sent to the model: %s", f.lastUserMessage())

	// Write answered 2: "Yes, allow all edits during this session"
	f.line("WRITE2 please")
	f.waitDialog("Do you want to create new2.txt?", 20*time.Second)
	f.press("2")
	f.waitStop(20 * time.Second)
	f.ready(10 * time.Second)
	f.step("17-write-allow-session")
	f.note("Write answered `2`: new2.txt exists: %v", exists(filepath.Join(f.proj, "new2.txt")))
	f.finish("Permission dialogs: Bash, Edit, Write, WebFetch, a multi-line Bash command", "One claude; the fake model asks for Bash (`RUNTOOL`), Read then Edit (`EDITF`), Write (`WRITEF`, `WRITE2`), WebFetch (`FETCH`) and a multi-line Bash command (`LONGBASH`).")
}

func lastOf(s []string) string {
	if len(s) == 0 {
		return "no tool result (no request to the model since the key)"
	}
	return s[len(s)-1]
}

// has reports whether a hook with tag started at or after from.
func (f *flow) has(tag string, from time.Time) bool {
	_, ok := f.log.find("hook", tag, from)
	return ok
}

// ---- 4. AskUserQuestion --------------------------------------------------------------

func recordQuestion(t *testing.T, claude, bin string) {
	q1 := fakeapi.Question{Question: "Which database should we use?", Header: "Database", Options: option("PostgreSQL", "SQLite", "MySQL")}
	qm := fakeapi.Question{Question: "Which features do you want?", Header: "Features", Options: option("Auth", "Search", "Export"), MultiSelect: true}
	q3 := []fakeapi.Question{
		{Question: "Which database should we use?", Header: "Database", Options: option("PostgreSQL", "SQLite")},
		qm,
		{Question: "What should the project be called?", Header: "Name", Options: option("corral", "herd")},
	}
	f := newFlow(t, claude, bin, "question", flowOptions{Rules: []fakeapi.Rule{
		{Contains: "ASK1", Reply: fakeapi.AskQuestions(q1)},
		{Contains: "ASKTEXT", Reply: fakeapi.AskQuestions(q1)},
		{Contains: "ASKCHAT", Reply: fakeapi.AskQuestions(q1)},
		{Contains: "ASKESC", Reply: fakeapi.AskQuestions(q1)},
		{Contains: "ASKMULTI", Reply: fakeapi.AskQuestions(qm)},
		{Contains: "ASKCANCEL", Reply: fakeapi.AskQuestions(qm)},
		{Contains: "ASK3", Reply: fakeapi.AskQuestions(q3...)},
	}})
	f.launch("❯")
	f.ready(30 * time.Second)

	// single choice with descriptions
	f.line("ASK1 please")
	f.waitDialog("Which database should we use?", 20*time.Second)
	f.step("1-single")
	f.phone("1-single")
	f.press("2")
	f.waitStop(20 * time.Second)
	f.ready(10 * time.Second)
	f.step("2-single-answered")
	f.note("single choice answered with `2`: the model got %s", lastOf(f.toolResults()))

	// free text
	f.line("ASKTEXT please")
	f.waitDialog("Which database should we use?", 20*time.Second)
	f.press("4")
	f.waitText("❯ 4. Type something.", 5*time.Second)
	f.step("3-text-focused")
	f.text("DuckDB")
	f.waitText("❯ 4. DuckDB", 5*time.Second)
	f.step("4-text-typed")
	f.phone("4-text-typed")
	f.press("Enter")
	f.waitStop(20 * time.Second)
	f.ready(10 * time.Second)
	f.step("5-text-answered")
	f.note("free text (`4`, \"DuckDB\", Enter): the model got %s", lastOf(f.toolResults()))

	// multi-select
	f.line("ASKMULTI please")
	f.waitDialog("Which features do you want?", 20*time.Second)
	f.step("6-multi")
	f.phone("6-multi")
	f.press("1")
	f.waitText("1. [✔] Auth", 5*time.Second)
	f.press("3")
	f.waitText("3. [✔] Export", 5*time.Second)
	f.step("7-multi-toggled")
	f.moveFocus("Down", 4)
	f.waitScreen("Submit focused", 5*time.Second, func(s string) bool { return strings.Contains(s, "❯    Submit") })
	f.step("8-multi-submit-focused")
	f.press("Enter")
	f.waitText("Review your answers", 5*time.Second)
	f.step("9-multi-review")
	f.phone("9-multi-review")
	f.press("1")
	f.waitStop(20 * time.Second)
	f.ready(10 * time.Second)
	f.step("10-multi-answered")
	f.note("multi-select (`1`, `3`, Down x4, Enter, `1`): the model got %s", lastOf(f.toolResults()))

	// three questions
	f.line("ASK3 please")
	f.waitDialog("Which database should we use?", 20*time.Second)
	f.step("11-three")
	f.phone("11-three")
	f.press("2")
	f.waitText("Which features do you want?", 5*time.Second)
	f.step("12-three-second")
	f.press("1")
	f.waitText("1. [✔] Auth", 5*time.Second)
	f.press("2")
	f.waitText("2. [✔] Search", 5*time.Second)
	f.moveFocus("Down", 4)
	f.waitScreen("Next focused", 5*time.Second, func(s string) bool { return strings.Contains(s, "❯    Next") })
	f.step("13-three-next-focused")
	f.press("Enter")
	f.waitText("What should the project be called?", 5*time.Second)
	f.step("14-three-third")
	f.press("Left")
	f.waitText("Which features do you want?", 5*time.Second)
	f.step("15-three-back-to-second")
	f.press("Tab")
	f.waitText("What should the project be called?", 5*time.Second)
	f.press("1")
	f.waitText("Review your answers", 5*time.Second)
	f.step("16-three-review")
	f.phone("16-three-review")
	f.press("1")
	f.waitStop(20 * time.Second)
	f.ready(10 * time.Second)
	f.step("17-three-answered")
	f.note("three questions (`2`; `1` `2` Down x4 Enter; Left, Tab; `1`; `1`): the model got %s", lastOf(f.toolResults()))

	// Chat about this
	f.line("ASKCHAT please")
	f.waitDialog("Which database should we use?", 20*time.Second)
	f.press("5")
	f.settle()
	f.step("18-chat-about-this")
	f.note("`5` (Chat about this): Stop fired: %v; the model got %s", f.has("Stop", f.mark), lastOf(f.toolResults()))
	f.ready(20 * time.Second)

	// Escape
	f.line("ASKESC please")
	f.waitDialog("Which database should we use?", 20*time.Second)
	f.press("Escape")
	f.ready(10 * time.Second)
	f.step("19-escape")
	f.note("Escape: Stop fired: %v; the model got %s", f.has("Stop", f.mark), lastOf(f.toolResults()))

	// Right to the Submit tab, then Cancel
	f.line("ASKCANCEL please")
	f.waitDialog("Which features do you want?", 20*time.Second)
	f.press("1")
	f.waitText("1. [✔] Auth", 5*time.Second)
	f.press("Right")
	f.waitText("Review your answers", 5*time.Second)
	f.step("20-right-to-review")
	f.press("2")
	f.settle()
	f.step("21-review-cancel")
	f.note("review Cancel (`2`): Stop fired: %v; the model got %s", f.has("Stop", f.mark), lastOf(f.toolResults()))
	f.finish("AskUserQuestion: single choice, free text, multi-select, three questions, Chat about this, Escape, Cancel", "One claude; the fake model calls AskUserQuestion with one single-choice question (`ASK1`...), one multi-select question (`ASKMULTI`, `ASKCANCEL`) and three questions (`ASK3`).")
}

// ---- 5. ExitPlanMode ------------------------------------------------------------------

func recordPlan(t *testing.T, claude, bin string) {
	plan := "# Plan\n\n1. Create hello.txt\n2. Write a test\n3. Run it\n"
	f := newFlow(t, claude, bin, "plan", flowOptions{Rules: []fakeapi.Rule{
		{Contains: "PLANNOFILE", Reply: fakeapi.ToolUse("ExitPlanMode", map[string]any{})},
		fakeapi.Plan("PLANX", plan),
	}})
	f.launch("❯", "--permission-mode", "plan")
	f.ready(30 * time.Second)
	f.step("1-plan-mode")

	f.line("PLANNOFILE please")
	f.waitDialog("Exit plan mode?", 20*time.Second)
	f.step("2-exit-plan-mode-no-plan")
	f.phone("2-exit-plan-mode-no-plan")
	f.press("2")
	f.ready(10 * time.Second)
	f.step("3-no")
	f.note("ExitPlanMode without a plan file, answered `2` (No): Stop: %v; the model got %s", f.has("Stop", f.mark), lastOf(f.toolResults()))

	f.line("PLANX one")
	f.waitDialog("Would you like to proceed?", 20*time.Second)
	f.step("4-plan")
	f.phone("4-plan")
	f.press("3")
	f.settle()
	f.step("5-tell-claude-focused")
	f.text("add tests first")
	f.waitText("add tests first", 5*time.Second)
	f.step("6-feedback-typed")
	f.press("Enter")
	f.waitStop(20 * time.Second)
	f.ready(10 * time.Second)
	f.step("7-feedback-sent")
	f.note("plan answered with `3`, text, Enter: the model got %s", lastOf(f.toolResults()))

	f.line("PLANX two")
	f.waitDialog("Would you like to proceed?", 20*time.Second)
	f.step("8-plan-again")
	f.press("2")
	f.waitStop(20 * time.Second)
	f.ready(10 * time.Second)
	f.step("9-approved-manual")
	f.note("plan answered with `2` (Yes, manually approve edits): the model got %s", lastOf(f.toolResults()))

	f.press("BTab")
	f.waitText("accept edits on", 5*time.Second)
	f.press("BTab")
	f.waitText("plan mode on", 5*time.Second)
	f.step("10-back-to-plan-mode")
	f.line("PLANX three")
	f.waitDialog("Would you like to proceed?", 20*time.Second)
	f.press("Escape")
	f.settle()
	f.step("11-escape")
	f.note("plan answered with Escape: Stop: %v; the model got %s", f.has("Stop", f.mark), lastOf(f.toolResults()))
	f.finish("ExitPlanMode: the plan approval dialog", "claude started with `--permission-mode plan`; the fake model writes the plan to the plan file Claude names in its system reminder, then calls ExitPlanMode (`PLANX`); `PLANNOFILE` calls ExitPlanMode without writing a plan.")
}

// ---- 6. elicitation ------------------------------------------------------------------

func recordElicitation(t *testing.T, claude, bin string) {
	f := newFlow(t, claude, bin, "elicitation", flowOptions{MCP: true, Rules: []fakeapi.Rule{
		{Contains: "MCPFORM", Reply: fakeapi.MCPTool("fake", "form", map[string]any{"message": "Tell me about you"})},
		{Contains: "MCPOK", Reply: fakeapi.MCPTool("fake", "confirm", map[string]any{"message": "Deploy now?"})},
	}})
	f.launch("❯")
	f.ready(30 * time.Second)

	f.line("MCPFORM please")
	f.waitDialog("Do you want to proceed?", 30*time.Second)
	f.step("1-mcp-tool-permission")
	f.phone("1-mcp-tool-permission")
	f.press("1")
	f.waitDialog("requests your input", 20*time.Second)
	shown := time.Now()
	f.step("2-form")
	f.phone("2-form")
	f.press("Right")
	f.waitText("◯ green", 5*time.Second)
	f.waitFocus("◯ red", 5*time.Second)
	f.step("3-enum-expanded")
	f.press("Down")
	f.waitFocus("◯ green", 5*time.Second)
	f.press("Space")
	f.waitText("Color: ▸ green", 5*time.Second)
	f.step("4-enum-chosen")
	f.press("Down")
	f.waitFocus("Count", 5*time.Second)
	f.text("3")
	f.waitText("Count: 3", 5*time.Second)
	f.press("Down")
	f.waitFocus("Name", 5*time.Second)
	f.text("Alice")
	f.waitText("Name: Alice", 5*time.Second)
	f.press("Down")
	f.waitFocus("Notify me", 5*time.Second)
	f.press("Space")
	f.waitText("Notify me: ☒", 5*time.Second)
	f.press("Down")
	f.waitScreen("Accept focused", 5*time.Second, func(s string) bool { return strings.Contains(s, "❯ Accept") })
	f.step("5-form-filled")
	f.phone("5-form-filled")
	n, _ := f.log.find("hook", "Notification", shown)
	f.note("form shown: Elicitation hook, then Notification(%s) %s after the form was drawn; session file meanwhile: %s", n.field("notification_type"), ms(shown, n.time()), f.current1())
	f.press("Enter")
	f.waitStop(20 * time.Second)
	f.ready(10 * time.Second)
	f.step("6-accepted")
	f.note("accepted: the model got %s", lastOf(f.toolResults()))

	f.line("MCPOK please")
	f.waitDialog("Do you want to proceed?", 20*time.Second)
	f.press("1")
	f.waitDialog("Deploy now?", 20*time.Second)
	f.step("7-confirm-form")
	f.press("Down")
	f.press("Right")
	f.waitScreen("Decline focused", 5*time.Second, func(s string) bool { return strings.Contains(s, "❯ Decline") })
	f.step("8-decline-focused")
	f.press("Down")
	f.waitFocus("Proceed", 5*time.Second)
	f.step("8b-down-wraps-to-first-field")
	f.press("Up")
	f.waitScreen("Decline focused", 5*time.Second, func(s string) bool { return strings.Contains(s, "❯ Decline") })
	f.press("Enter")
	f.waitStop(20 * time.Second)
	f.ready(10 * time.Second)
	f.step("9-declined")
	f.note("declined: the model got %s", lastOf(f.toolResults()))

	f.line("MCPOK again")
	f.waitDialog("Do you want to proceed?", 20*time.Second)
	f.press("1")
	f.waitDialog("Deploy now?", 20*time.Second)
	f.press("Escape")
	f.ready(20 * time.Second)
	f.step("10-cancelled")
	f.note("Escape on the form: Stop: %v; the model got %s", f.has("Stop", f.mark), lastOf(f.toolResults()))
	f.finish("MCP elicitation: a form, accepted, declined and cancelled", "claude with `--mcp-config` naming the fake MCP server (`internal/testkit/fakemcp`, here the test binary with `-fake-mcp`); its `form` and `confirm` tools call `elicitation/create` during the tool call.")
}

// current1 describes the single session file now.
func (f *flow) current1() string {
	ents, _ := os.ReadDir(f.env.SessionsDir())
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".json") {
			b, _ := os.ReadFile(filepath.Join(f.env.SessionsDir(), e.Name()))
			return string(b)
		}
	}
	return "(none)"
}

func (f *flow) status() string {
	var s sessionFile
	ents, _ := os.ReadDir(f.env.SessionsDir())
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".json") {
			s = f.currentFile(e.Name())
		}
	}
	if s.WaitingFor != "" {
		return s.Status + " (" + s.WaitingFor + ")"
	}
	return s.Status
}

func (f *flow) currentFile(name string) sessionFile {
	var s sessionFile
	b, err := os.ReadFile(filepath.Join(f.env.SessionsDir(), name))
	if err == nil {
		_ = jsonUnmarshal(b, &s)
	}
	return s
}

// ---- 7. subagent ------------------------------------------------------------------

func recordSubagent(t *testing.T, claude, bin string) {
	var f *flow
	f = newFlow(t, claude, bin, "subagent", flowOptions{Rules: []fakeapi.Rule{
		{Contains: "SUBAGENT", Reply: fakeapi.Agent("Touch a file", "SUBRUN please", "general-purpose", false)},
		{Contains: "SUBDENY", Reply: fakeapi.Agent("Touch another file", "SUBNO please", "general-purpose", false)},
		{Contains: "SUBRUN", ReplyFunc: func(*fakeapi.Request) fakeapi.Reply {
			return fakeapi.Bash("touch "+filepath.Join(f.scratch, "sub_file"), "Touch sub file")
		}},
		{Contains: "SUBNO", ReplyFunc: func(*fakeapi.Request) fakeapi.Reply {
			return fakeapi.Bash("touch "+filepath.Join(f.scratch, "sub_denied"), "Touch denied file")
		}},
	}})
	f.launch("❯")
	f.ready(30 * time.Second)
	f.line("SUBAGENT please")
	f.waitDialog("Do you want to proceed?", 30*time.Second)
	f.step("1-subagent-permission")
	f.phone("1-subagent-permission")
	f.note("while the subagent's permission prompt is open the session file says %s", f.status())
	f.press("1")
	f.waitStop(30 * time.Second)
	f.ready(10 * time.Second)
	f.step("2-subagent-done")
	f.note("sub_file exists: %v; the main model got %s", exists(filepath.Join(f.scratch, "sub_file")), lastOf(f.toolResults()))

	f.line("SUBDENY please")
	f.waitDialog("Do you want to proceed?", 30*time.Second)
	f.press("3")
	f.settle()
	f.step("3-subagent-denied")
	f.ready(30 * time.Second)
	f.step("4-after-denied")
	f.note("subagent's Bash denied with `3`: sub_denied exists: %v; Stop: %v; the models got %s", exists(filepath.Join(f.scratch, "sub_denied")), f.has("Stop", f.mark), strings.Join(f.toolResults(), "; "))
	f.finish("Subagent (Agent tool) with a permission prompt inside", "The fake model calls `Agent` (subagent_type general-purpose); the subagent's own first request gets a Bash tool_use that needs permission (`SUBAGENT`: approved; `SUBDENY`: denied).")
}

// ---- 8. background agent ------------------------------------------------------------------

func recordBackgroundAgent(t *testing.T, claude, bin string) {
	f := newFlow(t, claude, bin, "background_agent", flowOptions{Rules: []fakeapi.Rule{
		{Contains: "BGAGENT", Reply: fakeapi.Agent("Slow background work", "SUBSLOW please", "general-purpose", true)},
		{Contains: "SUBSLOW", Reply: fakeapi.Slow(8*time.Second, fakeapi.Text("Background done."))},
	}})
	f.launch("❯")
	f.ready(30 * time.Second)
	f.line("BGAGENT please")
	k := f.mark
	stop := f.waitStop(30 * time.Second)
	f.waitText("background agent", 10*time.Second)
	f.step("1-main-stop-waiting")
	f.phone("1-main-stop-waiting")
	f.note("main Stop %s after Enter with background_tasks %v; the session file then says %s", ms(k, stop.time()), stop.payload()["background_tasks"], f.status())
	ups := f.log.wait(t, 30*time.Second, "UserPromptSubmit", stop.time(), nil)
	stop2 := f.log.wait(t, 30*time.Second, "Stop", ups.time(), nil)
	f.ready(10 * time.Second)
	f.step("2-task-notification-turn")
	f.note("the follow-up turn: UserPromptSubmit %s after Enter, prompt starts %q; its Stop has background_tasks %v", ms(k, ups.time()), truncate(ups.field("prompt"), 60), stop2.payload()["background_tasks"])
	f.note("session file changes from Enter to the end: %s", f.statusChanges(k, time.Now()))
	f.finish("Background agent (Agent with run_in_background)", "The fake model calls `Agent` with `run_in_background: true`; the subagent's answer takes 8 s.")
}

// statusChanges lists the session file changes in [from, to].
func (f *flow) statusChanges(from, to time.Time) string {
	var s []string
	for _, c := range f.sess.all() {
		if c.T.Before(from) || c.T.After(to) {
			continue
		}
		if c.Removed {
			s = append(s, "removed "+ms(from, c.T))
			continue
		}
		w := c.S.Status
		if c.S.WaitingFor != "" {
			w += " (" + c.S.WaitingFor + ")"
		}
		s = append(s, w+" "+ms(from, c.T))
	}
	return strings.Join(s, ", ")
}

// ---- 9. background shell ------------------------------------------------------------------

func recordBackgroundShell(t *testing.T, claude, bin string) {
	f := newFlow(t, claude, bin, "background_shell", flowOptions{Rules: []fakeapi.Rule{
		{Contains: "BGSHELL", Reply: fakeapi.BashBackground("sleep 6", "Sleep in background")},
	}})
	f.launch("❯")
	f.ready(30 * time.Second)
	f.line("BGSHELL please")
	k := f.mark
	if strings.Contains(f.settle(), "Do you want to proceed?") {
		f.step("1-permission")
		f.press("1")
	}
	stop := f.waitStop(30 * time.Second)
	f.waitText("shell", 10*time.Second)
	f.step("2-main-stop-shell-running")
	f.phone("2-main-stop-shell-running")
	f.note("main Stop %s after Enter with background_tasks %v; the session file then says %s", ms(k, stop.time()), stop.payload()["background_tasks"], f.status())
	ups := f.log.wait(t, 30*time.Second, "UserPromptSubmit", stop.time(), nil)
	f.log.wait(t, 30*time.Second, "Stop", ups.time(), nil)
	f.ready(10 * time.Second)
	f.step("3-task-notification-turn")
	f.note("the follow-up turn: UserPromptSubmit %s after Enter, prompt starts %q", ms(k, ups.time()), truncate(ups.field("prompt"), 60))
	f.note("session file changes from Enter to the end: %s", f.statusChanges(k, time.Now()))
	f.finish("Background shell (Bash with run_in_background)", "The fake model runs `sleep 6` with `run_in_background: true`.")
}

// ---- 10. Escape while a tool runs ---------------------------------------------------------

func recordEscapeTool(t *testing.T, claude, bin string) {
	f := newFlow(t, claude, bin, "escape_tool", flowOptions{Rules: []fakeapi.Rule{
		{Contains: "SLEEPY", Reply: fakeapi.Bash("sleep 30", "Sleep 30 seconds")},
	}})
	f.launch("❯")
	f.ready(30 * time.Second)
	f.line("SLEEPY please")
	f.waitText("Running", 20*time.Second)
	time.Sleep(1500 * time.Millisecond)
	f.step("2-running")
	sid := f.log.wait(t, time.Second, "UserPromptSubmit", time.Time{}, nil).field("session_id")
	before := f.transcriptLines(sid)
	f.press("Escape")
	k := f.mark
	time.Sleep(time.Second)
	hooks := f.hookSummary(k, time.Now())
	file := f.statusChanges(k, time.Now())
	added := f.transcriptLines(sid)[len(before):]
	f.step("3-escaped")
	var types []string
	for _, l := range added {
		types = append(types, transcriptSummary(l))
	}
	f.note("within 1 s of Escape: hooks [%s]; session file %s; new transcript lines: %s", hooks, file, strings.Join(types, "; "))
	f.ready(10 * time.Second)
	f.step("4-idle")
	f.finish("Escape while a tool runs", "The fake model runs `sleep 30` (Claude runs `sleep` without asking), and Escape is pressed 1.5 s into it.")
}

// ---- 10b. a tool's output while it runs -------------------------------------------------

// liveToolCommand prints a line every half second for 10 s: long enough to
// read the screen while it runs.
const liveToolCommand = "for i in $(seq 1 20); do echo line$i; sleep 0.5; done"

func recordLiveTool(t *testing.T, claude, bin string) {
	f := newFlow(t, claude, bin, "live_tool", flowOptions{Rules: []fakeapi.Rule{
		{Contains: "LIVELINES", Reply: fakeapi.Bash(liveToolCommand, "Print twenty lines")},
	}})
	f.launch("❯")
	f.ready(30 * time.Second)
	f.line("LIVELINES please")
	if strings.Contains(f.settle(), "Do you want to proceed?") {
		f.step("1-permission")
		f.press("1")
	}
	f.waitText("line3", 20*time.Second)
	f.step("2-running")
	f.waitText("Hello from mock. Done.", 20*time.Second)
	f.ready(20 * time.Second)
	f.step("3-done")
	f.finish("A tool's output while it runs", "The fake model runs a Bash loop that prints a line every 0.5 s for 10 s; the screen is read while it runs (Claude writes the tool_result to the transcript only at the end).")
}

func (f *flow) transcriptLines(id string) []string {
	b, _ := os.ReadFile(f.env.TranscriptPath(f.proj, id))
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// ---- 11. /exit, claude by hand ---------------------------------------------------------

func recordHandClaude(t *testing.T, claude, bin string) {
	f := newFlow(t, claude, bin, "hand_claude", flowOptions{})
	f.launchShell("❯", strings.Join(shqAll(f.claudeArgs()), " "))
	f.ready(30 * time.Second)
	f.step("1-corral-claude")
	f.line("/exit")
	f.waitScreen("the shell prompt", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "\n$ ") || strings.HasSuffix(strings.TrimRight(s, "\n "), "$")
	})
	f.step("2-exited-to-shell")
	f.line("claude")
	k := f.mark
	f.ready(30 * time.Second)
	created := f.sess.wait(t, 20*time.Second, "created", k, func(c sessChange) bool { return !c.Removed })
	f.step("3-hand-claude")
	f.note("`claude` typed in the shell: session file %s %s after Enter (pid %d, parent: the shell); no hooks: %v", created.File, ms(k, created.T), created.S.PID, !f.has("SessionStart", k))
	f.line("say hello")
	f.waitScreen("the answer", 20*time.Second, func(s string) bool { return strings.Count(s, "Hello from mock. Done.") >= 1 })
	f.ready(10 * time.Second)
	f.step("4-hand-claude-turn")
	id := created.S.SessionID
	f.note("its turn: session file changes %s; transcript %s has %d lines", f.statusChanges(f.mark, time.Now()), id, len(f.transcriptLines(id)))
	f.line("/exit")
	f.waitScreen("the shell prompt", 20*time.Second, shellPrompt)
	f.step("5-exited-again")
	f.line("claude --resume " + id)
	k = f.mark
	f.ready(30 * time.Second)
	created = f.sess.wait(t, 20*time.Second, "created", k, func(c sessChange) bool { return !c.Removed })
	f.step("6-hand-resume")
	f.note("`claude --resume <id>` by hand: session file %s with sessionId %s (the resumed id: %v)", created.File, created.S.SessionID, created.S.SessionID == id)
	f.line("say hello again")
	f.waitScreen("the answer", 20*time.Second, func(s string) bool { return strings.Count(s, "Hello from mock. Done.") >= 2 })
	f.ready(10 * time.Second)
	f.step("7-hand-resume-turn")
	f.note("its turn: session file changes %s", f.statusChanges(f.mark, time.Now()))
	f.finish("/exit, then claude typed by hand in the pane's shell, and claude --resume", "The pane runs `sh -c '<claude with corral's settings>; exec bash'` as corral's panes do; after `/exit` the person types `claude` (no corral settings: no hooks, no status line), later `claude --resume <id>`.")
}

func shqAll(args []string) []string {
	var out []string
	for _, a := range args {
		out = append(out, shq(a))
	}
	return out
}

// ---- 12. /clear and /resume ------------------------------------------------------------

func recordClearResume(t *testing.T, claude, bin string) {
	f := newFlow(t, claude, bin, "clear_resume", flowOptions{})
	f.launch("❯")
	f.ready(30 * time.Second)
	f.line("say hello")
	f.waitStop(20 * time.Second)
	f.ready(10 * time.Second)
	f.step("1-first-conversation")
	first := f.log.wait(t, time.Second, "SessionStart", time.Time{}, nil).field("session_id")
	f.line("/clear")
	k := f.mark
	ss := f.log.wait(t, 20*time.Second, "SessionStart", k, nil)
	f.ready(10 * time.Second)
	f.step("2-cleared")
	se, _ := f.log.find("hook", "SessionEnd", k)
	f.note("/clear: SessionEnd(reason=%s, session %s) %s, SessionStart(source=%s, session %s) %s; file changes %s", se.field("reason"), se.field("session_id"), ms(k, se.time()), ss.field("source"), ss.field("session_id"), ms(k, ss.time()), f.statusChanges(k, time.Now()))
	f.line("say two")
	f.waitStop(20 * time.Second)
	f.ready(10 * time.Second)
	f.step("3-second-conversation")
	f.line("/resume " + first)
	k = f.mark
	ss = f.log.wait(t, 20*time.Second, "SessionStart", k, nil)
	f.ready(10 * time.Second)
	f.step("4-resumed-first")
	se, _ = f.log.find("hook", "SessionEnd", k)
	f.note("/resume <first id>: SessionEnd(reason=%s) %s, SessionStart(source=%s, session %s, the first: %v) %s; file changes %s", se.field("reason"), ms(k, se.time()), ss.field("source"), ss.field("session_id"), ss.field("session_id") == first, ms(k, ss.time()), f.statusChanges(k, time.Now()))
	f.line("/resume")
	f.waitText("Resume", 10*time.Second)
	f.step("5-resume-picker")
	f.phone("5-resume-picker")
	f.press("Escape")
	f.ready(10 * time.Second)
	f.step("6-picker-escaped")
	f.finish("/clear and /resume inside Claude", "One claude: a prompt, `/clear`, a prompt, `/resume <first session id>`, then `/resume` alone (the picker), closed with Escape.")
}

// ---- 13. drafts ------------------------------------------------------------------------

func recordDrafts(t *testing.T, claude, bin string) {
	f := newFlow(t, claude, bin, "drafts", flowOptions{Rules: []fakeapi.Rule{
		{Contains: "SLOWISH", Reply: fakeapi.Slow(4*time.Second, fakeapi.Text(fakeapi.DefaultText))},
	}})
	f.launch("❯")
	f.ready(30 * time.Second)
	f.step("1-empty")
	f.text("n")
	f.waitScreen("the letter", 5*time.Second, func(s string) bool { return strings.Contains(s, "❯\u00a0n") })
	f.step("2-one-letter")
	f.phone("2-one-letter")
	f.press("Escape")
	f.waitText("Esc again to clear", 5*time.Second)
	f.step("3-escape-once")
	f.press("Escape")
	f.ready(5 * time.Second)
	f.step("4-escape-twice-cleared")
	f.text("line one")
	f.press("C-j")
	f.text("line two")
	f.press("C-j")
	f.text("line three")
	f.waitText("line three", 5*time.Second)
	f.step("5-three-lines")
	f.phone("5-three-lines")
	f.press("C-u")
	f.settle()
	f.step("6-ctrl-u")
	f.press("C-s")
	f.ready(5 * time.Second)
	f.step("7-stashed")
	f.line("say hello")
	f.waitStop(20 * time.Second)
	f.waitText("line one", 10*time.Second)
	f.step("8-stash-restored-after-submit")
	f.press("C-s")
	f.ready(5 * time.Second)
	f.press("C-s")
	f.waitText("line one", 5*time.Second)
	f.step("9-stash-toggled-back")
	f.press("Escape")
	f.press("Escape")
	f.ready(5 * time.Second)
	f.step("10-escape-escape-cleared")
	f.line("SLOWISH please")
	f.waitScreen("busy", 10*time.Second, func(s string) bool { return spinnerRE.MatchString(s) })
	f.text("x")
	f.waitScreen("the letter while busy", 5*time.Second, func(s string) bool { return strings.Contains(s, "❯\u00a0x") })
	f.step("11-draft-while-busy")
	f.waitStop(20 * time.Second)
	f.settle()
	f.step("12-draft-after-turn")
	f.press("Escape")
	f.press("Escape")
	f.ready(5 * time.Second)
	f.press("Escape")
	f.press("Escape")
	f.settle()
	f.step("13-escape-escape-on-empty-box")
	f.phone("13-escape-escape-on-empty-box")
	f.finish("Drafts in the input box", "Text left in Claude's input box: one letter, three lines (C-j), cleared with Escape Escape, C-u, stashed with C-s; a letter typed while Claude is busy; Escape Escape on an empty box.")
}

// ---- 14. Tasks (TodoWrite's successor) and a numbered list in an answer ------------------

func recordTodo(t *testing.T, claude, bin string) {
	create := func(subject, active string) fakeapi.Block {
		return fakeapi.ToolUseBlock("TaskCreate", map[string]any{"subject": subject, "description": subject + ", described", "activeForm": active})
	}
	update := func(id, status string) fakeapi.Block {
		return fakeapi.ToolUseBlock("TaskUpdate", map[string]any{"taskId": id, "status": status})
	}
	f := newFlow(t, claude, bin, "todo", flowOptions{Rules: []fakeapi.Rule{
		{Contains: "TODOWRITE", Reply: fakeapi.TodoWrite(
			fakeapi.Todo{Content: "Write code", Status: "completed", ActiveForm: "Writing code"},
			fakeapi.Todo{Content: "Test it", Status: "in_progress", ActiveForm: "Testing it"})},
		fakeapi.Steps("TASKS",
			fakeapi.Reply{Blocks: []fakeapi.Block{create("Write code", "Writing code"), create("Test it", "Testing it"), create("Ship", "Shipping")}},
			fakeapi.Reply{Blocks: []fakeapi.Block{update("1", "in_progress")}},
		),
		fakeapi.Steps("PROGRESS",
			fakeapi.Reply{Blocks: []fakeapi.Block{update("1", "completed"), update("2", "in_progress")}},
		),
		{Contains: "SLOWTASK", Reply: fakeapi.Slow(4*time.Second, fakeapi.Text(fakeapi.DefaultText))},
		{Contains: "LISTTEXT", Reply: fakeapi.Text("Options:\n\n1. First\n2. Second\n3. Third\n\nWhich one do you want?")},
	}})
	f.launch("❯")
	f.ready(30 * time.Second)
	f.line("TODOWRITE please")
	f.waitStop(20 * time.Second)
	f.ready(10 * time.Second)
	f.step("1-todowrite")
	f.note("TodoWrite: the model got %s", lastOf(f.toolResults()))
	f.line("TASKS please")
	f.waitStop(20 * time.Second)
	f.ready(10 * time.Second)
	f.step("2-tasks-created")
	f.phone("2-tasks-created")
	f.note("TaskCreate x3 then TaskUpdate(1, in_progress): the model got %s", strings.Join(f.toolResults(), "; "))
	f.line("PROGRESS please")
	f.waitStop(20 * time.Second)
	f.ready(10 * time.Second)
	f.step("3-tasks-progress")
	f.line("SLOWTASK please")
	f.waitScreen("busy", 10*time.Second, func(s string) bool { return spinnerRE.MatchString(s) })
	f.step("4-busy-with-tasks")
	f.waitStop(20 * time.Second)
	f.ready(10 * time.Second)
	f.press("C-t")
	f.settle()
	f.step("5-ctrl-t")
	var files []string
	_ = filepath.Walk(filepath.Join(f.env.ClaudeDir(), "tasks"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			b, _ := os.ReadFile(p)
			files = append(files, fmt.Sprintf("`%s`: %s", p, truncate(string(b), 300)))
		}
		return nil
	})
	f.note("task files: %s", strings.Join(files, "; "))
	f.line("LISTTEXT please")
	f.waitStop(20 * time.Second)
	f.ready(10 * time.Second)
	f.step("6-numbered-list-in-answer")
	f.phone("6-numbered-list-in-answer")
	f.finish("Tasks (TaskCreate/TaskUpdate; TodoWrite is disabled in 2.1.197), and a numbered list in an answer", "The fake model tries TodoWrite (`TODOWRITE`), creates three tasks and starts the first (`TASKS`), completes it and starts the second (`PROGRESS`), then answers with a numbered list (`LISTTEXT`), which is not a dialog.")
}

// ---- 15. other dialogs a user meets ---------------------------------------------------------

func recordBypass(t *testing.T, claude, bin string) {
	// As root, claude refuses --dangerously-skip-permissions unless IS_SANDBOX=1.
	f := newFlow(t, claude, bin, "bypass_permissions", flowOptions{Env: []string{"IS_SANDBOX=1"}})
	f.launch("Bypass Permissions mode", "--dangerously-skip-permissions")
	f.step("1-bypass-warning")
	f.phone("1-bypass-warning")
	f.press("2")
	f.ready(30 * time.Second)
	f.step("2-accepted")
	f.note("after `2` (Yes, I accept): bypassPermissionsModeAccepted = %v", readJSONFile(f.env.ClaudeJSONPath())["bypassPermissionsModeAccepted"])
	f.finish("The --dangerously-skip-permissions warning", "claude started with `--dangerously-skip-permissions` (and `IS_SANDBOX=1`: as root claude refuses the flag otherwise, printing \"--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons\" and exiting).")
}

func recordMCPServer(t *testing.T, claude, bin string) {
	f := newFlow(t, claude, bin, "mcp_server", flowOptions{})
	writeJSON(t, filepath.Join(f.proj, ".mcp.json"), map[string]any{"mcpServers": map[string]any{
		"fake": map[string]any{"command": bin, "args": []string{fakeMCPFlag, filepath.Join(f.dir, "mcp.jsonl")}},
	}})
	f.launch("New MCP server found")
	f.step("1-mcp-server-approval")
	f.phone("1-mcp-server-approval")
	f.press("1")
	f.ready(30 * time.Second)
	f.step("2-approved")
	f.finish("A project .mcp.json server asks for approval", "The project holds a `.mcp.json` naming the fake MCP server; claude asks before it starts it.")
}

func recordSettingsError(t *testing.T, claude, bin string) {
	f := newFlow(t, claude, bin, "settings_error", flowOptions{})
	if err := os.WriteFile(f.env.UserSettingsPath(), []byte(`{"permissions": {"allow": "notalist"}, "hooks": 5}`), 0o600); err != nil {
		t.Fatal(err)
	}
	f.launch("Settings Error")
	f.step("1-settings-error")
	f.phone("1-settings-error")
	f.press("3")
	f.ready(30 * time.Second)
	f.step("2-continued")
	f.finish("Settings errors at start", "`~/.claude/settings.json` with invalid `permissions.allow` and `hooks`; answered `3` (Continue without these settings).")
}

var _ = fmt.Sprint

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// waitFocus waits until a line shows the focus marker ❯ before s.
func (f *flow) waitFocus(s string, timeout time.Duration) {
	f.t.Helper()
	f.waitScreen("focus on "+s, timeout, func(scr string) bool {
		for _, l := range strings.Split(scr, "\n") {
			if i := strings.Index(l, "❯"); i >= 0 && strings.Contains(l[i:], s) {
				return true
			}
		}
		return false
	})
}

// focusedLine is the last line of the screen with the focus marker ❯ that
// is not the input box.
func focusedLine(scr string) string {
	lines := strings.Split(scr, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], "❯") && !strings.HasPrefix(lines[i], "❯\u00a0") {
			return lines[i]
		}
	}
	return ""
}

// moveFocus presses key n times, one at a time, each once the focus moved:
// Claude loses arrow keys that arrive in one burst.
func (f *flow) moveFocus(key string, n int) {
	f.t.Helper()
	for i := 0; i < n; i++ {
		before := focusedLine(f.tm.Capture(f.pane))
		f.press(key)
		f.waitScreen("the focus to move", 5*time.Second, func(s string) bool { return focusedLine(s) != before })
	}
}

// shellPrompt reports bash's "$" prompt as the last non-blank line.
func shellPrompt(s string) bool {
	lines := strings.Split(strings.TrimRight(s, "\n "), "\n")
	return strings.TrimSpace(lines[len(lines)-1]) == "$"
}

// spinnerRE matches the spinner line of a running turn, e.g.
// "✶ Photosynthesizing… (19s · ↓ 15 tokens)".
var spinnerRE = regexp.MustCompile(`(?m)^[·✢✳✶✻✽*] [^\n]*…`)

// transcriptSummary describes a transcript line: its type and, for
// messages, the content blocks' types and text.
func transcriptSummary(l string) string {
	var e struct {
		Type    string `json:"type"`
		Message struct {
			Content json.RawMessage `json:"content"`
		} `json:"message"`
	}
	if json.Unmarshal([]byte(l), &e) != nil {
		return truncate(l, 80)
	}
	var blocks []struct {
		Type    string          `json:"type"`
		Text    string          `json:"text"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(e.Message.Content, &blocks) != nil {
		var s string
		_ = json.Unmarshal(e.Message.Content, &s)
		return e.Type + " " + fmt.Sprintf("%q", truncate(s, 80))
	}
	var parts []string
	for _, b := range blocks {
		text := b.Text
		if text == "" && len(b.Content) > 0 {
			var c string
			if json.Unmarshal(b.Content, &c) != nil {
				c = string(b.Content)
			}
			text = c
		}
		parts = append(parts, fmt.Sprintf("%s %q", b.Type, truncate(text, 80)))
	}
	return e.Type + " [" + strings.Join(parts, ", ") + "]"
}
