package claudeenv_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/claude/screen"
	"github.com/corral-dev/corral/internal/testkit/claudeenv"
	"github.com/corral-dev/corral/internal/testkit/fakeapi"
	"github.com/corral-dev/corral/internal/testkit/tmuxtest"
)

// TestDialogs answers every kind of dialog of the real claude with the keys
// screen.Read and Dialog.Keys plan from its screen, and checks the
// outcome: the tool ran or not, the answer reached the model, the file
// appeared or not. The subtests share one fake API and run in parallel.
func TestDialogs(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the real-claude dialog tests in -short mode")
	}
	claudeenv.RequireTmux(t)
	bin := claudeenv.RequireClaude(t)
	api := fakeapi.New(fakeapi.Options{NoDefaultRules: true})
	api.Start(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	d := &dialogRig{claude: bin, self: self, api: api}
	t.Run("kinds", func(t *testing.T) {
		t.Run("permission", func(t *testing.T) { t.Parallel(); testPermissionDialogs(t, d) })
		t.Run("question", func(t *testing.T) { t.Parallel(); testQuestionDialogs(t, d) })
		t.Run("plan_and_elicitation", func(t *testing.T) { t.Parallel(); testPlanAndElicitation(t, d) })
		t.Run("startup", func(t *testing.T) { t.Parallel(); testStartupDialogs(t, d) })
	})
}

type dialogRig struct {
	claude, self string
	api          *fakeapi.Server
	n            atomic.Int64
}

// word returns a prompt keyword unique to this run of the tests.
func (d *dialogRig) word(prefix string) string {
	return prefix + "Q" + strconv.FormatInt(d.n.Add(1), 10) + "Z"
}

// pane is one claude under test.
type pane struct {
	t    *testing.T
	rig  *dialogRig
	env  *claudeenv.Env
	tm   *tmuxtest.Server
	id   string
	proj string
}

func (d *dialogRig) start(t *testing.T, opts claudeenv.Options, trusted bool, args ...string) *pane {
	t.Helper()
	return d.startWith(t, opts, trusted, nil, args...)
}

// startWith starts claude in a new HOME; prepare (if set) runs first, with
// the project folder made.
func (d *dialogRig) startWith(t *testing.T, opts claudeenv.Options, trusted bool, prepare func(env *claudeenv.Env, proj string), args ...string) *pane {
	t.Helper()
	opts.BaseURL = d.api.URL()
	env := claudeenv.New(t, opts)
	proj := filepath.Join(env.Home, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, "hello.txt"), []byte("hello world\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if trusted {
		if err := env.Trust(proj); err != nil {
			t.Fatal(err)
		}
	}
	if prepare != nil {
		prepare(env, proj)
	}
	p := &pane{t: t, rig: d, env: env, tm: tmuxtest.New(t, env.Environ()), proj: proj}
	p.id = p.tm.NewSession("d", proj, 120, 40, nil, append([]string{d.claude}, args...)...)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("screen:\n%s", p.tm.Capture(p.id))
		}
	})
	return p
}

// screen waits until screen.Read shows what cond wants and returns it.
func (p *pane) screen(what string, cond func(screen.Screen) bool) (screen.Screen, string) {
	p.t.Helper()
	var s screen.Screen
	text := p.tm.WaitScreen(p.id, 40*time.Second, what, func(scr string) bool {
		s = screen.Read(scr)
		return cond(s)
	})
	return s, text
}

// dialog waits for a dialog of kind whose text holds contains.
func (p *pane) dialog(kind, contains string) screen.Dialog {
	p.t.Helper()
	s, _ := p.screen("a "+kind+" dialog with "+contains, func(s screen.Screen) bool {
		d := s.Dialog
		return d != nil && d.Kind == kind && strings.Contains(d.Title+"\n"+d.Question+"\n"+d.Body, contains)
	})
	return *s.Dialog
}

// idle waits for the empty input box.
func (p *pane) idle() {
	p.t.Helper()
	p.screen("the empty input box", func(s screen.Screen) bool {
		return s.Input != nil && s.Input.Draft == "" && !s.Busy
	})
}

// prompt types a prompt into the empty input box and submits it.
func (p *pane) prompt(text string) {
	p.t.Helper()
	p.idle()
	p.tm.SendText(p.id, text)
	p.screen("the typed prompt", func(s screen.Screen) bool { return s.Input != nil && s.Input.Draft == text })
	p.tm.SendKeys(p.id, "Enter")
}

// answer plans the keys for a on the dialog d and sends them step by step,
// each once the screen shows the previous one took effect; a plan that
// asks for it is made again from the new screen.
func (p *pane) answer(d screen.Dialog, a screen.Answer) {
	p.t.Helper()
	for round := 0; round < 5; round++ {
		plan, err := d.Keys(a)
		if err != nil {
			p.t.Fatalf("Keys(%+v) on %s dialog %q: %v", a, d.Kind, d.Question, err)
		}
		for i, st := range plan.Steps {
			if st.Text != "" {
				p.tm.SendText(p.id, st.Text)
			} else {
				p.tm.SendKeys(p.id, st.Keys...)
			}
			p.tm.WaitScreen(p.id, 15*time.Second, "step "+itoa(i+1)+" "+st.Until.What+" "+st.Until.Target, func(scr string) bool {
				return st.Until.Met(&d, scr)
			})
		}
		if !plan.Replan {
			return
		}
		s, _ := p.screen("the same dialog", func(s screen.Screen) bool { return s.Dialog != nil && s.Dialog.Fingerprint() == d.Fingerprint() })
		d = *s.Dialog
	}
	p.t.Fatal("the plan kept asking for another round")
}

func itoa(i int) string { return strconv.Itoa(i) }

// lastToolResult waits for the model to get a tool_result after since.
func (d *dialogRig) lastToolResult(t *testing.T, since int, contains string) fakeapi.ToolResult {
	t.Helper()
	r := d.api.AwaitAfter(t, since, 30*time.Second, func(q fakeapi.Request) bool {
		for _, tr := range q.ToolResults {
			if strings.Contains(tr.Content, contains) {
				return true
			}
		}
		return false
	})
	for _, tr := range r.ToolResults {
		if strings.Contains(tr.Content, contains) {
			return tr
		}
	}
	return fakeapi.ToolResult{}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// ---- permissions -------------------------------------------------------------------

func testPermissionDialogs(t *testing.T, d *dialogRig) {
	bashW, editW, writeW, subW, subBash := d.word("BASH"), d.word("EDIT"), d.word("WRITE"), d.word("SUB"), d.word("SUBRUN")
	var p *pane
	d.api.AddRule(fakeapi.Rule{Contains: bashW, ReplyFunc: func(*fakeapi.Request) fakeapi.Reply {
		return fakeapi.Bash("touch "+filepath.Join(p.proj, "by_bash"), "Touch a file")
	}})
	d.api.AddRule(fakeapi.Rule{Name: editW, Match: func(r *fakeapi.Request) bool { return strings.Contains(r.TurnPrompt, editW) && r.TurnSteps < 2 },
		ReplyFunc: func(r *fakeapi.Request) fakeapi.Reply {
			f := filepath.Join(p.proj, "hello.txt")
			if r.TurnSteps == 0 {
				return fakeapi.Read(f)
			}
			return fakeapi.Edit(f, "hello world", "goodbye world")
		}})
	d.api.AddRule(fakeapi.Rule{Contains: writeW, ReplyFunc: func(*fakeapi.Request) fakeapi.Reply {
		return fakeapi.Write(filepath.Join(p.proj, "new.txt"), "new\n")
	}})
	d.api.AddRule(fakeapi.Rule{Contains: subW, Reply: fakeapi.Agent("Touch a file", subBash+" please", "general-purpose", false)})
	d.api.AddRule(fakeapi.Rule{Contains: subBash, ReplyFunc: func(*fakeapi.Request) fakeapi.Reply {
		return fakeapi.Bash("touch "+filepath.Join(p.proj, "by_subagent"), "Touch a file")
	}})
	p = d.start(t, claudeenv.Options{}, true)

	// Bash, approved with its digit.
	p.prompt(bashW)
	dl := p.dialog(screen.KindPermission, "Do you want to proceed?")
	if dl.Tool != "Bash" || len(dl.Options) != 3 || dl.Options[0].Label != "Yes" || !strings.Contains(dl.Body, "by_bash") {
		t.Fatalf("bash dialog: %+v", dl)
	}
	// Text typed now would answer the dialog: the screen says so.
	if err := (screen.Screen{Dialog: &dl}).Typable(); err == nil {
		t.Fatal("Typable with a dialog open")
	}
	p.answer(dl, screen.Answer{Option: 1})
	waitFor(t, 20*time.Second, "by_bash", func() bool { return fileExists(filepath.Join(p.proj, "by_bash")) }, nil)

	// Edit, answered No with feedback (Tab to amend).
	seq := d.api.LastSeq()
	p.prompt(editW)
	dl = p.dialog(screen.KindPermission, "Do you want to make this edit to hello.txt?")
	if dl.Tool != "Edit" || !dl.Options[2].Text {
		t.Fatalf("edit dialog: %+v", dl)
	}
	p.answer(dl, screen.Answer{Option: 3, Text: "use another word"})
	tr := d.lastToolResult(t, seq, "use another word")
	if !tr.IsError {
		t.Errorf("the rejection is not an error result: %+v", tr)
	}
	if b, _ := os.ReadFile(filepath.Join(p.proj, "hello.txt")); string(b) != "hello world\n" {
		t.Errorf("hello.txt edited: %q", b)
	}

	// Write, answered No: the file never appears.
	p.prompt(writeW)
	dl = p.dialog(screen.KindPermission, "Do you want to create new.txt?")
	if dl.Tool != "Write" {
		t.Fatalf("write dialog: %+v", dl)
	}
	p.answer(dl, screen.Answer{Option: 3})
	p.idle()
	if fileExists(filepath.Join(p.proj, "new.txt")) {
		t.Error("new.txt written after No")
	}

	// A subagent's Bash, approved.
	p.prompt(subW)
	dl = p.dialog(screen.KindPermission, "Do you want to proceed?")
	if dl.Agent != "general-purpose" || dl.Tool != "Bash" {
		t.Fatalf("subagent dialog: %+v", dl)
	}
	p.answer(dl, screen.Answer{Option: 1})
	waitFor(t, 30*time.Second, "by_subagent", func() bool { return fileExists(filepath.Join(p.proj, "by_subagent")) }, nil)
	p.idle()

	// A draft left in the box: Typable refuses, ClearDraftKeys empties it.
	p.tm.SendText(p.id, "n")
	s, _ := p.screen("the draft", func(s screen.Screen) bool { return s.Input != nil && s.Input.Draft == "n" })
	if err := s.Typable(); err == nil {
		t.Fatal("Typable with a draft")
	}
	plan, err := s.ClearDraftKeys()
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range plan.Steps {
		p.tm.SendKeys(p.id, st.Keys...)
		p.tm.WaitScreen(p.id, 10*time.Second, st.Until.What, func(scr string) bool { return st.Until.Met(nil, scr) })
	}
}

// ---- AskUserQuestion -----------------------------------------------------------------

func testQuestionDialogs(t *testing.T, d *dialogRig) {
	opts := func(l ...string) []fakeapi.QuestionOption {
		var o []fakeapi.QuestionOption
		for _, s := range l {
			o = append(o, fakeapi.QuestionOption{Label: s, Description: s + " described"})
		}
		return o
	}
	single := fakeapi.Question{Question: "Which database?", Header: "Database", Options: opts("PostgreSQL", "SQLite")}
	multi := fakeapi.Question{Question: "Which features?", Header: "Features", Options: opts("Auth", "Search", "Export"), MultiSelect: true}
	name := fakeapi.Question{Question: "Which name?", Header: "Name", Options: opts("corral", "herd")}
	w1, w2, w3, w4 := d.word("ASK"), d.word("ASK"), d.word("ASK"), d.word("ASK")
	d.api.AddRule(fakeapi.Rule{Contains: w1, Reply: fakeapi.AskQuestions(single)})
	d.api.AddRule(fakeapi.Rule{Contains: w2, Reply: fakeapi.AskQuestions(single)})
	d.api.AddRule(fakeapi.Rule{Contains: w3, Reply: fakeapi.AskQuestions(multi)})
	d.api.AddRule(fakeapi.Rule{Contains: w4, Reply: fakeapi.AskQuestions(single, multi, name)})
	p := d.start(t, claudeenv.Options{}, true)

	cases := []struct {
		word    string
		answers []screen.Answer // one per screen: the question(s), then the review step
		result  string
	}{
		{w1, []screen.Answer{{Option: 2}}, `"Which database?"="SQLite"`},
		{w2, []screen.Answer{{Option: 3, Text: "DuckDB"}}, `"Which database?"="DuckDB"`},
		{w3, []screen.Answer{{Options: []int{1, 3}}, {Option: 1}}, `"Which features?"="Auth, Export"`},
		{w4, []screen.Answer{{Option: 1}, {Options: []int{2}, Text: "Graphs"}, {Option: 2}, {Option: 1}},
			`"Which database?"="PostgreSQL", "Which features?"="Search, Graphs", "Which name?"="herd"`},
	}
	for _, c := range cases {
		seq := d.api.LastSeq()
		p.prompt(c.word)
		var prev string
		for i, a := range c.answers {
			s, _ := p.screen("question "+itoa(i+1), func(s screen.Screen) bool {
				return s.Dialog != nil && s.Dialog.Kind == screen.KindQuestion && s.Dialog.Fingerprint() != prev
			})
			dl := *s.Dialog
			if i == len(c.answers)-1 && len(c.answers) > 1 && dl.Current != screen.CurrentSubmit {
				t.Fatalf("%s: the last screen is not the Submit step: %+v", c.word, dl)
			}
			if i == 0 && dl.Options[0].Description == "" {
				t.Errorf("%s: option without its description: %+v", c.word, dl.Options[0])
			}
			prev = dl.Fingerprint()
			p.answer(dl, a)
		}
		tr := d.lastToolResult(t, seq, "Your questions have been answered")
		if !strings.Contains(tr.Content, c.result) {
			t.Errorf("%s: the model got %q, want %s", c.word, tr.Content, c.result)
		}
	}
}

// ---- plan approval and MCP elicitation ------------------------------------------------

func testPlanAndElicitation(t *testing.T, d *dialogRig) {
	planW, formW := d.word("PLAN"), d.word("FORM")
	d.api.AddRule(fakeapi.Plan(planW, "# Plan\n\n1. Do it\n"))
	d.api.AddRule(fakeapi.Rule{Contains: formW, Reply: fakeapi.MCPTool("fake", "form", map[string]any{"message": "Tell me about you"})})
	home := t.TempDir()
	mcpLog := filepath.Join(home, "mcp.jsonl")
	mcpConfig := filepath.Join(home, "mcp.json")
	writeJSON(t, mcpConfig, map[string]any{"mcpServers": map[string]any{
		"fake": map[string]any{"command": d.self, "args": []string{fakeMCPFlag, mcpLog}},
	}})
	p := d.start(t, claudeenv.Options{}, true, "--permission-mode", "plan", "--mcp-config", mcpConfig)

	seq := d.api.LastSeq()
	p.prompt(planW + " one")
	dl := p.dialog(screen.KindPlan, "Would you like to proceed?")
	if !strings.Contains(dl.Plan, "1. Do it") || !dl.Options[2].Text {
		t.Fatalf("plan dialog: %+v", dl)
	}
	p.answer(dl, screen.Answer{Option: 3, Text: "add tests first"})
	if tr := d.lastToolResult(t, seq, "add tests first"); !tr.IsError {
		t.Errorf("feedback result: %+v", tr)
	}
	seq = d.api.LastSeq()
	p.prompt(planW + " two")
	dl = p.dialog(screen.KindPlan, "Would you like to proceed?")
	p.answer(dl, screen.Answer{Option: 2})
	d.lastToolResult(t, seq, "User has approved your plan")
	p.screen("plan mode off", func(s screen.Screen) bool { return s.Input != nil })

	// The MCP tool's permission, then its form, filled and accepted.
	p.prompt(formW)
	dl = p.dialog(screen.KindPermission, "Do you want to proceed?")
	if dl.Tool != "mcp__fake__form" {
		t.Fatalf("mcp permission: %+v", dl)
	}
	p.answer(dl, screen.Answer{Option: 1})
	dl = p.dialog(screen.KindElicitation, "Tell me about you")
	if len(dl.Fields) != 4 {
		t.Fatalf("form fields: %+v", dl.Fields)
	}
	seq = d.api.LastSeq()
	p.answer(dl, screen.Answer{Option: 1, Fields: map[string]string{"Color": "blue", "Name": "Alice", "Count": "7", "Notify me": "true"}})
	tr := d.lastToolResult(t, seq, "elicitation result")
	for _, s := range []string{`"action":"accept"`, `"color":"blue"`, `"name":"Alice"`, `"count":7`, `"notify":true`} {
		if !strings.Contains(tr.Content, s) {
			t.Errorf("the MCP server got %q, want %s", tr.Content, s)
		}
	}
}

// ---- dialogs at start ----------------------------------------------------------------

func testStartupDialogs(t *testing.T, d *dialogRig) {
	t.Run("trust_then_api_key", func(t *testing.T) {
		t.Parallel()
		p := d.start(t, claudeenv.Options{ClaudeJSON: map[string]any{"customApiKeyResponses": map[string]any{"approved": []string{}, "rejected": []string{}}}}, false)
		dl := p.dialog(screen.KindTrust, "Accessing workspace:")
		if err := (screen.Screen{Dialog: &dl}).Typable(); err == nil {
			t.Fatal("Typable at the trust dialog")
		}
		p.answer(dl, screen.Answer{Option: 1})
		dl = p.dialog(screen.KindAPIKey, "Do you want to use this API key?")
		if dl.Selected != 1 {
			t.Errorf("the API-key dialog's focus is on %d (Enter picks it)", dl.Selected)
		}
		p.answer(dl, screen.Answer{Option: 1})
		p.idle()
		cfg := readJSONFile(p.env.ClaudeJSONPath())
		proj, _ := claudeenv.Realpath(p.proj)
		if pr, _ := cfg["projects"].(map[string]any)[proj].(map[string]any); pr["hasTrustDialogAccepted"] != true {
			t.Errorf("trust not recorded: %v", cfg["projects"])
		}
	})
	t.Run("bypass_permissions", func(t *testing.T) {
		t.Parallel()
		p := d.start(t, claudeenv.Options{Env: []string{"IS_SANDBOX=1"}}, true, "--dangerously-skip-permissions")
		dl := p.dialog(screen.KindBypass, "Bypass Permissions mode")
		p.answer(dl, screen.Answer{Option: 2})
		p.idle()
	})
	t.Run("mcp_server", func(t *testing.T) {
		t.Parallel()
		p := d.startWith(t, claudeenv.Options{}, true, func(env *claudeenv.Env, proj string) {
			writeJSON(t, filepath.Join(proj, ".mcp.json"), map[string]any{"mcpServers": map[string]any{
				"fake": map[string]any{"command": d.self, "args": []string{fakeMCPFlag, filepath.Join(env.Home, "mcp.jsonl")}},
			}})
		})
		dl := p.dialog(screen.KindMCPServer, "New MCP server found")
		p.answer(dl, screen.Answer{Option: 1}) // Use this MCP server
		p.idle()
		waitFor(t, 20*time.Second, "the MCP server to start", func() bool { return fileExists(filepath.Join(p.env.Home, "mcp.jsonl")) }, nil)
	})
	t.Run("settings_error", func(t *testing.T) {
		// (With a settings error Claude skips the .mcp.json approval.)
		t.Parallel()
		p := d.startWith(t, claudeenv.Options{}, true, func(env *claudeenv.Env, proj string) {
			if err := os.WriteFile(env.UserSettingsPath(), []byte(`{"permissions": {"allow": "notalist"}}`), 0o600); err != nil {
				t.Fatal(err)
			}
		})
		dl := p.dialog(screen.KindSettingsError, "permissions.allow")
		p.answer(dl, screen.Answer{Option: 3}) // Continue without these settings
		p.idle()
	})
}
