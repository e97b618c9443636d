package screen

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// screenOf returns one recorded screen: "flow/step" or "flow/step @50x30".
func screenOf(t testing.TB, name string) string {
	t.Helper()
	flow, step, _ := strings.Cut(name, "/")
	b, err := os.ReadFile(filepath.Join(flowsDir, flow, "screens.txt"))
	if err != nil {
		t.Fatal(err)
	}
	_, texts := splitScreens(b)
	s, ok := texts[step]
	if !ok {
		t.Fatalf("no recorded screen %s", name)
	}
	return s
}

func dialogOf(t testing.TB, name string) Dialog {
	t.Helper()
	s := Read(screenOf(t, name))
	if s.Dialog == nil {
		t.Fatalf("%s: no dialog: %s", name, summary(s))
	}
	return *s.Dialog
}

func labels(d Dialog) []string {
	var out []string
	for _, o := range d.Options {
		out = append(out, o.Label)
	}
	return out
}

// want describes what a recorded screen must read as.
type want struct {
	kind, title, question, tool, agent, footer string
	options                                    []string
	selected                                   int
	text, chat                                 []int // 1-based options with Text / Chat
	questions                                  []string
	current                                    int
	multi                                      bool
	plan                                       string
}

func TestReadScreenDialogs(t *testing.T) {
	cases := map[string]want{
		"trust/1-trust-dialog": {kind: KindTrust, title: "Accessing workspace:",
			question: "Quick safety check: Is this a project you created or one you trust? (Like your own code, a well-known open source project, or work from your team). If not, take a moment to review what's in this folder first.",
			options:  []string{"Yes, I trust this folder", "No, exit"},
			footer:   "Enter to confirm · Esc to cancel"},
		"api_key/1-api-key-dialog": {kind: KindAPIKey, title: "Detected a custom API key in your environment", question: "Do you want to use this API key?",
			options: []string{"Yes", "No (recommended)"}, selected: 1, footer: "Enter to confirm · Esc to cancel"},
		"permission/2-bash": {kind: KindPermission, title: "Bash command", question: "Do you want to proceed?", tool: "Bash",
			options: []string{"Yes", "Yes, and always allow access to scratch/ from this project", "No"}, text: []int{1, 3},
			footer: "Esc to cancel · Tab to amend · ctrl+e to explain"},
		"permission/4-edit @50x30": {kind: KindPermission, title: "Edit file", question: "Do you want to make this edit to hello.txt?", tool: "Edit",
			options: []string{"Yes", "Yes, allow all edits during this session (shift+tab)", "No"}, text: []int{1, 3}, footer: "Esc to cancel · Tab to amend"},
		"permission/7-edit-tab-on-no": {kind: KindPermission, title: "Edit file", question: "Do you want to make this edit to hello.txt?", tool: "Edit",
			options: []string{"Yes", "Yes, allow all edits during this session (shift+tab)", "No, and tell Claude what to do differently"}, selected: 2, text: []int{3}, footer: "Esc to cancel"},
		"permission/10-write": {kind: KindPermission, title: "Create file", question: "Do you want to create new.txt?", tool: "Write",
			options: []string{"Yes", "Yes, allow all edits during this session (shift+tab)", "No"}, text: []int{1, 3}, footer: "Esc to cancel · Tab to amend"},
		"permission/12-webfetch @50x30": {kind: KindPermission, title: "Fetch", question: "Do you want to allow Claude to fetch this content?", tool: "WebFetch",
			options: []string{"Yes", "Yes, and don't ask again for example.com", "No, and tell Claude what to do differently (esc)"}},
		"permission/14-long-bash": {kind: KindPermission, title: "Bash command", question: "Do you want to proceed?", tool: "Bash",
			options: []string{"Yes", "No"}, text: []int{1, 2}, footer: "Esc to cancel · Tab to amend · ctrl+e to explain"},
		"elicitation/1-mcp-tool-permission @50x30": {kind: KindPermission, title: "Tool use", question: "Do you want to proceed?", tool: "mcp__fake__form",
			options: []string{"Yes", "Yes, and don't ask again for fake - form commands in /home/dev/proj", "No"}, text: []int{1, 3}, footer: "Esc to cancel · Tab to amend"},
		"subagent/1-subagent-permission @50x30": {kind: KindPermission, title: "Bash command · from the general-purpose agent", question: "Do you want to proceed?",
			tool: "Bash", agent: "general-purpose", options: []string{"Yes", "Yes, and always allow access to scratch/ from this project", "No"}, text: []int{1, 3},
			footer: "Esc to cancel · Tab to amend · ctrl+e to explain"},
		"question/1-single @50x30": {kind: KindQuestion, question: "Which database should we use?",
			options: []string{"PostgreSQL", "SQLite", "MySQL", "Type something.", "Chat about this"}, text: []int{4}, chat: []int{5},
			questions: []string{"Database"}, footer: "Enter to select · ↑/↓ to navigate · Esc to cancel"},
		"question/6-multi": {kind: KindQuestion, question: "Which features do you want?", multi: true,
			options: []string{"Auth", "Search", "Export", "Type something", "Chat about this"}, text: []int{4}, chat: []int{5},
			questions: []string{"Features"}, footer: "Enter to select · ↑/↓ to navigate · Esc to cancel"},
		"question/8-multi-submit-focused": {kind: KindQuestion, question: "Which features do you want?", multi: true, selected: -1,
			options: []string{"Auth", "Search", "Export", "Type something", "Chat about this"}, text: []int{4}, chat: []int{5},
			questions: []string{"Features"}, footer: "Enter to select · ↑/↓ to navigate · ctrl+g to edit in Vim · Esc to cancel"},
		"question/11-three @50x30": {kind: KindQuestion, question: "Which database should we use?",
			options: []string{"PostgreSQL", "SQLite", "Type something.", "Chat about this"}, text: []int{3}, chat: []int{4},
			questions: []string{"Database", "Features", "Name"}, current: CurrentUnknown,
			footer: "Enter to select · Tab/Arrow keys to navigate · Esc to cancel"},
		"question/16-three-review @50x30": {kind: KindQuestion, title: "Review your answers", question: "Ready to submit your answers?",
			options: []string{"Submit answers", "Cancel"}, questions: []string{"Database", "Features", "Name"}, current: CurrentSubmit},
		"plan/4-plan @50x30": {kind: KindPlan, title: "Ready to code?", question: "Claude has written up a plan and is ready to execute. Would you like to proceed?",
			options: []string{"Yes, and use auto mode", "Yes, manually approve edits", "Tell Claude what to change"}, text: []int{3},
			plan:   "Plan\n\n1. Create hello.txt\n2. Write a test\n3. Run it",
			footer: "ctrl+g to    Vi  · ~/.claude/plans/plannofile-pl edit in      m  ease-crispy-sunbeam.md"},
		"plan/2-exit-plan-mode-no-plan": {kind: KindPlan, title: "Exit plan mode?", options: []string{"Yes", "No"}},
		"elicitation/2-form": {kind: KindElicitation, title: "MCP server “fake” requests your input", question: "Tell me about you",
			options: []string{"Accept", "Decline"}, selected: -1, footer: "Esc to cancel · ↑/↓ to navigate · Backspace to unset · → to expand"},
		"bypass_permissions/1-bypass-warning @50x30": {kind: KindBypass, title: "WARNING: Claude Code running in Bypass Permissions mode",
			options: []string{"No, exit", "Yes, I accept"}, footer: "Enter to confirm · Esc to cancel"},
		"mcp_server/1-mcp-server-approval @50x30": {kind: KindMCPServer, title: "New MCP server found in this project: fake",
			options: []string{"Use this MCP server", "Use this and all future MCP servers in this project", "Continue without using this MCP server"},
			footer:  "Enter to confirm · Esc to cancel"},
		"settings_error/1-settings-error @50x30": {kind: KindSettingsError, title: "Settings Error",
			options: []string{"Fix with Claude", "Exit and fix manually", "Continue without these settings"}, footer: "Enter to confirm · Esc to cancel"},
		"clear_resume/5-resume-picker @50x30": {kind: KindChoice, title: "Resume session", selected: -1,
			footer: "Ctrl+A to show all projects · Ctrl+B to only show current branch · Space to preview · Ctrl+R to rename · Type to search · Esc to cancel"},
		"drafts/13-escape-escape-on-empty-box": {kind: KindChoice, title: "Rewind", selected: -1, footer: "Enter to continue · Esc to cancel"},
		"question/9-multi-review @50x30":       {kind: KindChoice, title: "←  ☒ Features  ✔ Submit  →", selected: -1, footer: "❯ 1. Submit answers"},
	}
	for name, w := range cases {
		d := dialogOf(t, name)
		got := want{kind: d.Kind, title: d.Title, question: d.Question, tool: d.Tool, agent: d.Agent, footer: d.Footer,
			options: labels(d), selected: d.Selected, questions: d.Questions, current: d.Current, multi: d.MultiSelect, plan: d.Plan}
		for i, o := range d.Options {
			if o.Text {
				got.text = append(got.text, i+1)
			}
			if o.Chat {
				got.chat = append(got.chat, i+1)
			}
		}
		if !wantEqual(got, w) {
			t.Errorf("%s:\n got %+v\nwant %+v", name, got, w)
		}
	}
}

func wantEqual(a, b want) bool {
	return a.kind == b.kind && a.title == b.title && a.question == b.question && a.tool == b.tool && a.agent == b.agent &&
		a.footer == b.footer && slices.Equal(a.options, b.options) && a.selected == b.selected && slices.Equal(a.text, b.text) &&
		slices.Equal(a.chat, b.chat) && slices.Equal(a.questions, b.questions) && a.current == b.current && a.multi == b.multi && a.plan == b.plan
}

func TestReadScreenDetails(t *testing.T) {
	d := dialogOf(t, "question/1-single")
	if d.Options[1].Description != "The SQLite option, described" || d.Options[0].Checked != nil {
		t.Errorf("descriptions: %+v", d.Options)
	}
	d = dialogOf(t, "question/7-multi-toggled")
	var checked []bool
	for _, o := range d.Options[:4] {
		checked = append(checked, *o.Checked)
	}
	if !slices.Equal(checked, []bool{true, false, true, false}) || d.Options[0].Description != "The Auth option, described" {
		t.Errorf("checkboxes %v, %+v", checked, d.Options)
	}
	if d := dialogOf(t, "question/13-three-next-focused"); d.Selected != -1 || d.Focus != "Next" || !slices.Equal(d.Answered, []bool{true, true, false}) {
		t.Errorf("Next focus: %+v", d)
	}
	if d := dialogOf(t, "permission/2-bash"); d.Body != "touch /home/dev/scratch/created_by_tool\ncreate file" {
		t.Errorf("bash body %q", d.Body)
	}
	if d := dialogOf(t, "permission/14-long-bash"); d.Body != "echo first line\necho second line with a much longer text that goes on and on\nfor i in 1 2 3; do\n  echo $i\ndone\nPrint some lines\n\nContains simple_expansion" {
		t.Errorf("long bash body %q", d.Body)
	}
	if d := dialogOf(t, "permission/10-write @50x30"); d.Body != "new.txt" || d.Preview != "1 line one\n2 line two" {
		t.Errorf("write body %q preview %q", d.Body, d.Preview)
	}
	if d := dialogOf(t, "permission/4-edit"); d.Preview != "…" {
		t.Errorf("the diff drawn late: preview %q", d.Preview)
	}
	if d := dialogOf(t, "settings_error/1-settings-error @50x30"); !d.Truncated {
		t.Error("the settings error at 50x30 has its top scrolled off")
	}
	if d := dialogOf(t, "question/16-three-review"); d.Body != "● Which database should we use?\n  → SQLite\n● Which features do you want?\n  → Auth, Search\n● What should the project be called?\n  → corral" {
		t.Errorf("review body %q", d.Body)
	}
	f := dialogOf(t, "elicitation/3-enum-expanded")
	wantFields := []Field{
		{Name: "Color", Kind: "choice", Missing: true, Choices: []string{"red", "green", "blue"}, ChoiceFocus: 0},
		{Name: "Count", Kind: "text", ChoiceFocus: -1},
		{Name: "Name", Kind: "text", Missing: true, Description: "Your name", ChoiceFocus: -1},
		{Name: "Notify me", Kind: "boolean", Value: "false", Valid: true, ChoiceFocus: -1},
	}
	if b1, b2 := jsonOf(f.Fields), jsonOf(wantFields); b1 != b2 || f.Focus != "Color" {
		t.Errorf("fields\n got %s\nwant %s (focus %q)", b1, b2, f.Focus)
	}
	f = dialogOf(t, "elicitation/5-form-filled @50x30")
	if f.Selected != 0 || f.Focus != "Accept" || f.Fields[2].Value != "Alice" || f.Fields[3].Value != "true" || f.Fields[0].Value != "green" {
		t.Errorf("filled form %s", jsonOf(f))
	}
	if f := dialogOf(t, "elicitation/8-decline-focused"); f.Selected != 1 || f.Focus != "Decline" {
		t.Errorf("decline focus %+v", f)
	}
}

func jsonOf(v any) string { b, _ := json.Marshal(v); return string(b) }

func TestReadScreenInputAndActivity(t *testing.T) {
	cases := []struct {
		name       string
		draft      string // "-" for no input box
		busy       bool
		background int
	}{
		{"drafts/1-empty", "", false, 0},
		{"drafts/2-one-letter @50x30", "n", false, 0},
		{"drafts/3-escape-once", "n", false, 0},
		{"drafts/5-three-lines @50x30", "line one\nline two\nline three", false, 0},
		{"drafts/6-ctrl-u", "line one\nline two", false, 0},
		{"drafts/7-stashed", "", false, 0},
		{"drafts/11-draft-while-busy", "x", false, 0},
		{"todo/4-busy-with-tasks", "", true, 0},
		{"todo/6-numbered-list-in-answer @50x30", "", false, 0},
		{"escape_tool/2-running", "", true, 0},
		{"escape_tool/3-escaped", "", false, 0},
		{"background_agent/1-main-stop-waiting @50x30", "", false, 1},
		{"background_agent/2-task-notification-turn", "", false, 0},
		{"background_shell/2-main-stop-shell-running", "", false, 1},
		{"background_shell/3-task-notification-turn", "", false, 0},
		{"hand_claude/2-exited-to-shell", "-", false, 0},
		{"hand_claude/5-exited-again", "-", false, 0},
		{"hand_claude/3-hand-claude", "", false, 0},
		{"trust_no/2-no-exit", "-", false, 0},
	}
	for _, c := range cases {
		s := Read(screenOf(t, c.name))
		draft := "-"
		if s.Input != nil {
			draft = s.Input.Draft
		}
		if s.Dialog != nil || draft != c.draft || s.Busy != c.busy || s.BackgroundTasks != c.background {
			t.Errorf("%s: %s; want draft %q busy %v background %d", c.name, summary(s), c.draft, c.busy, c.background)
		}
	}
}

func TestReadScreenRejects(t *testing.T) {
	rule := strings.Repeat("─", 60)
	cases := map[string]string{
		"assistant list above the input box": strings.Join([]string{
			"● Steps:", "  1. Build", "  2. Test", "", rule, "❯\u00a0", rule, "  ? for shortcuts"}, "\n"),
		"typed numbered prompts": strings.Join([]string{
			"❯ 1. first thing", "", "● ok", "", "❯ 2. second thing", "", "● ok"}, "\n"),
		"a dialog scrolled up into the conversation": strings.Join([]string{
			rule, " Do you want to proceed?", " ❯ 1. Yes", "   2. No", "", "● Done.", "", "✻ Cooked for 1s"}, "\n"),
		"options without a focus marker": strings.Join([]string{rule, " Question?", "   1. A", "   2. B", "", " Esc to cancel"}, "\n"),
		"no rule, no footer":             " Pick one\n ❯ 1. a\n   2. b\n",
		"the box without its lower rule": strings.Join([]string{rule, "❯\u00a0hello"}, "\n"),
		"empty":                          "",
		"only escapes":                   "\x1b[2J\x1b[H\x1b]0;title\x07",
	}
	for name, screen := range cases {
		s := Read(screen)
		if s.Dialog != nil && name != "options without a focus marker" || s.Input != nil && name != "assistant list above the input box" {
			t.Errorf("%s: %s", name, summary(s))
		}
		if name == "assistant list above the input box" && (s.Input == nil || s.Dialog != nil) {
			t.Errorf("%s: %s", name, summary(s))
		}
	}
}

func TestReadScreenEscapes(t *testing.T) {
	// The same three-question dialog with the capture's SGR escapes (tmux
	// capture-pane -e): the second tab has the background colour.
	plain := screenOf(t, "question/12-three-second")
	colored := strings.Replace(plain, "←  ☒ Database  ☐ Features  ☐ Name  ✔ Submit  →",
		"\x1b[39m←  ☒ Database \x1b[38;5;16m\x1b[48;5;153m ☐ Features \x1b[39m\x1b[49m ☐ Name  ✔ Submit  →", 1)
	if colored == plain {
		t.Fatal("tab line not found in the recorded screen")
	}
	if d := Read(plain).Dialog; d == nil || d.Current != CurrentUnknown {
		t.Fatalf("plain capture: %+v", d)
	}
	d := Read(colored).Dialog
	if d == nil || d.Current != 1 || d.Question != "Which features do you want?" {
		t.Fatalf("capture with escapes: %+v", d)
	}
	if d.Fingerprint() != Read(plain).Dialog.Fingerprint() {
		t.Error("the fingerprint depends on the capture having escapes")
	}
	// Escapes around every word must not change what is read.
	var b strings.Builder
	for _, r := range screenOf(t, "permission/2-bash") {
		b.WriteString("\x1b[38;5;246m")
		b.WriteRune(r)
	}
	if got, want := summary(Read(b.String())), summary(Read(screenOf(t, "permission/2-bash"))); got != want {
		t.Errorf("with escapes %s\nwithout %s", got, want)
	}
}

func TestFingerprint(t *testing.T) {
	same := [][]string{
		// Focus, Tab amending and typed feedback do not make another dialog.
		{"permission/4-edit @50x30", "permission/5-edit-tab-on-yes", "permission/6-edit-no-focused", "permission/7-edit-tab-on-no", "permission/8-edit-feedback-typed"},
		// Checkboxes and the focus on Submit neither.
		{"question/6-multi", "question/7-multi-toggled", "question/8-multi-submit-focused"},
		// Nor the typed free text.
		{"question/1-single", "question/3-text-focused", "question/4-text-typed"},
		{"plan/4-plan", "plan/5-tell-claude-focused", "plan/6-feedback-typed"},
		{"elicitation/2-form", "elicitation/3-enum-expanded", "elicitation/4-enum-chosen"},
	}
	for _, group := range same {
		fp := dialogOf(t, group[0]).Fingerprint()
		for _, n := range group[1:] {
			if got := dialogOf(t, n).Fingerprint(); got != fp {
				t.Errorf("%s and %s differ", group[0], n)
			}
		}
	}
	differ := [][2]string{
		{"question/11-three", "question/12-three-second"},
		{"question/12-three-second", "question/14-three-third"},
		{"question/14-three-third", "question/16-three-review"},
		{"permission/2-bash", "subagent/1-subagent-permission"},
		{"permission/10-write", "permission/4-edit"},
		{"elicitation/2-form", "elicitation/7-confirm-form"},
	}
	for _, p := range differ {
		if dialogOf(t, p[0]).Fingerprint() == dialogOf(t, p[1]).Fingerprint() {
			t.Errorf("%s and %s have the same fingerprint", p[0], p[1])
		}
	}
}

// keysOf flattens a plan: keys as names, text as "text:..." .
func keysOf(p KeyPlan) []string {
	var out []string
	for _, s := range p.Steps {
		if s.Text != "" {
			out = append(out, "text:"+s.Text)
		}
		out = append(out, s.Keys...)
	}
	return out
}

func TestKeys(t *testing.T) {
	cases := []struct {
		screen string
		answer Answer
		keys   []string
	}{
		// What the recording typed, planned from the screen it typed on.
		{"trust/1-trust-dialog", Answer{Option: 1}, []string{"1"}},
		{"api_key/1-api-key-dialog @50x30", Answer{Option: 1}, []string{"1"}},
		{"api_key/1-api-key-dialog", Answer{Option: 2}, []string{"2"}},
		{"permission/2-bash", Answer{Option: 1}, []string{"1"}},
		{"permission/4-edit", Answer{Option: 3, Text: "use a different word"}, []string{"Down", "Down", "Tab", "text:use a different word", "Enter"}},
		{"permission/6-edit-no-focused", Answer{Option: 3, Text: "use a different word"}, []string{"Tab", "text:use a different word", "Enter"}},
		{"permission/14-long-bash", Answer{Option: 1, Text: "then stop"}, []string{"Tab", "text:then stop", "Enter"}},
		{"permission/10-write", Answer{Option: 3}, []string{"3"}},
		{"permission/12-webfetch", Answer{Option: 3}, []string{"3"}},
		{"permission/12-webfetch", Answer{Cancel: true}, nil},
		{"permission/2-bash", Answer{Cancel: true}, []string{"Escape"}},
		{"subagent/1-subagent-permission", Answer{Option: 1}, []string{"1"}},
		{"question/1-single", Answer{Option: 2}, []string{"2"}},
		{"question/1-single", Answer{Option: 4, Text: "DuckDB"}, []string{"4", "text:DuckDB", "Enter"}},
		{"question/1-single", Answer{Option: 5}, []string{"5"}},
		{"question/6-multi", Answer{Options: []int{1, 3}}, []string{"1", "3", "Down", "Down", "Down", "Down", "Enter"}},
		{"question/7-multi-toggled", Answer{Options: []int{1, 3}}, []string{"Down", "Down", "Down", "Down", "Enter"}},
		{"question/7-multi-toggled", Answer{Options: []int{2}}, []string{"1", "2", "3", "Down", "Down", "Down", "Down", "Enter"}},
		{"question/8-multi-submit-focused", Answer{Options: []int{1, 3}}, []string{"Enter"}},
		{"question/6-multi", Answer{Options: []int{2}, Text: "Graphs"}, []string{"2", "Down", "Down", "Down", "text:Graphs", "Down", "Enter"}},
		{"question/9-multi-review", Answer{Option: 1}, []string{"1"}},
		{"question/11-three", Answer{Option: 2}, []string{"2"}},
		{"question/12-three-second", Answer{Options: []int{1, 2}}, []string{"1", "2", "Down", "Down", "Down", "Down", "Enter"}},
		{"question/16-three-review", Answer{Option: 1}, []string{"1"}},
		{"question/20-right-to-review", Answer{Option: 2}, []string{"2"}},
		{"plan/2-exit-plan-mode-no-plan", Answer{Option: 2}, []string{"2"}},
		{"plan/4-plan", Answer{Option: 3, Text: "add tests first"}, []string{"3", "text:add tests first", "Enter"}},
		{"plan/4-plan", Answer{Option: 2}, []string{"2"}},
		{"elicitation/2-form", Answer{Option: 2}, []string{"Down", "Down", "Down", "Down", "Down", "Enter"}},
		{"elicitation/7-confirm-form", Answer{Option: 2}, []string{"Down", "Down", "Enter"}},
		{"elicitation/7-confirm-form", Answer{Option: 1}, []string{"Down", "Enter"}},
		{"elicitation/7-confirm-form", Answer{Option: 1, Fields: map[string]string{"Proceed": "false"}}, []string{"Space", "Down", "Enter"}},
		{"elicitation/2-form", Answer{Option: 1, Fields: map[string]string{"Color": "green", "Name": "Alice"}}, []string{"Right"}},
		{"elicitation/3-enum-expanded", Answer{Option: 1, Fields: map[string]string{"Color": "green", "Count": "3", "Name": "Alice", "Notify me": "true"}},
			[]string{"Down", "Space", "Down", "text:3", "Down", "text:Alice", "Down", "Space", "Down", "Enter"}},
		{"elicitation/2-form", Answer{Cancel: true}, []string{"Escape"}},
		{"bypass_permissions/1-bypass-warning", Answer{Option: 2}, []string{"2"}},
		{"mcp_server/1-mcp-server-approval", Answer{Option: 1}, []string{"1"}},
		{"settings_error/1-settings-error @50x30", Answer{Option: 3}, []string{"3"}},
	}
	for _, c := range cases {
		d := dialogOf(t, c.screen)
		p, err := d.Keys(c.answer)
		if c.keys == nil {
			if err == nil {
				t.Errorf("%s %+v: planned %v, want an error", c.screen, c.answer, keysOf(p))
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %+v: %v", c.screen, c.answer, err)
			continue
		}
		if got := keysOf(p); !slices.Equal(got, c.keys) {
			t.Errorf("%s %+v:\n got %q\nwant %q", c.screen, c.answer, got, c.keys)
		}
	}
	p, _ := dialogOf(t, "elicitation/2-form").Keys(Answer{Option: 1, Fields: map[string]string{"Color": "green", "Name": "Alice"}})
	if !p.Replan {
		t.Error("expanding a choice field must ask for a new plan")
	}
}

func TestKeysRefuse(t *testing.T) {
	cases := []struct {
		screen string
		answer Answer
		why    string
	}{
		{"permission/2-bash", Answer{Option: 4}, "not on screen"},
		{"permission/2-bash", Answer{Option: 0}, "not on screen"},
		{"permission/2-bash", Answer{Option: 2, Text: "x"}, "takes no text"},
		{"permission/2-bash", Answer{Options: []int{1}}, "not several"},
		{"permission/2-bash", Answer{Option: 1, Text: "a\nb"}, "one line"},
		{"permission/2-bash", Answer{Option: 1, Text: "a\x1b[Ab"}, "control character"},
		{"permission/2-bash", Answer{Option: 1, Text: "   "}, "empty"},
		{"permission/7-edit-tab-on-no", Answer{Option: 1}, "text input"},
		{"permission/12-webfetch", Answer{Option: 3, Text: "no"}, "takes no text"},
		{"permission/12-webfetch", Answer{Cancel: true}, "does not offer Escape"},
		{"question/1-single", Answer{Option: 4}, "takes text"},
		{"question/1-single", Answer{Options: []int{1, 2}}, "not several"},
		{"question/3-text-focused", Answer{Option: 1}, "text input"},
		{"question/4-text-typed", Answer{Option: 4, Text: "Other"}, "text input"},
		{"question/6-multi", Answer{Option: 1}, "several options"},
		{"question/6-multi", Answer{Options: []int{5}}, "answer it alone"},
		{"question/6-multi", Answer{Options: []int{4}}, "takes text"},
		{"question/6-multi", Answer{Options: []int{9}}, "not on screen"},
		{"question/6-multi", Answer{}, "no option"},
		{"plan/4-plan", Answer{Option: 3}, "takes text"},
		{"plan/5-tell-claude-focused", Answer{Option: 1}, "text input"},
		{"clear_resume/5-resume-picker", Answer{Option: 1}, "does not know"},
		{"drafts/13-escape-escape-on-empty-box", Answer{Cancel: true}, ""},
		{"question/9-multi-review @50x30", Answer{Option: 1}, "does not know"},
		{"elicitation/2-form", Answer{Option: 1}, "required"},
		{"elicitation/2-form", Answer{Option: 1, Fields: map[string]string{"Colour": "red"}}, "no field"},
		{"elicitation/3-enum-expanded", Answer{Option: 1, Fields: map[string]string{"Color": "pink", "Name": "A"}}, "offers red, green, blue"},
		{"elicitation/5-form-filled", Answer{Option: 1, Fields: map[string]string{"Name": "Bob"}}, "already holds"},
		{"elicitation/7-confirm-form", Answer{Option: 1, Fields: map[string]string{"Proceed": "maybe"}}, "true or false"},
		{"elicitation/7-confirm-form", Answer{Option: 3}, "not on screen"},
		{"elicitation/7-confirm-form", Answer{Option: 1, Text: "x"}, "not text"},
		{"trust/1-trust-dialog", Answer{Option: 1, Fields: map[string]string{"a": "b"}}, "no fields"},
	}
	for _, c := range cases {
		p, err := dialogOf(t, c.screen).Keys(c.answer)
		if c.why == "" {
			// Escape is offered: a plan, not a refusal.
			if err != nil {
				t.Errorf("%s %+v: %v", c.screen, c.answer, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%s %+v: planned %v, err %v; want an error about %q", c.screen, c.answer, keysOf(p), err, c.why)
		}
	}
}

func TestUntilMet(t *testing.T) {
	// Each step's condition, checked on the screens the recording saw
	// after the same keys.
	edit := dialogOf(t, "permission/4-edit")
	p, err := edit.Keys(Answer{Option: 3, Text: "use a different word"})
	if err != nil {
		t.Fatal(err)
	}
	if u := p.Steps[0].Until; u.Met(&edit, screenOf(t, "permission/4-edit")) || u.Met(&edit, screenOf(t, "permission/6-edit-no-focused")) {
		t.Error("first Down met before the focus moved to 2")
	}
	if u := p.Steps[1].Until; !u.Met(&edit, screenOf(t, "permission/6-edit-no-focused")) {
		t.Errorf("second Down: %+v not met with the focus on No", u)
	}
	if u := p.Steps[2].Until; !u.Met(&edit, screenOf(t, "permission/7-edit-tab-on-no")) || u.Met(&edit, screenOf(t, "permission/6-edit-no-focused")) {
		t.Errorf("Tab: %+v", u)
	}
	if u := p.Steps[3].Until; !u.Met(&edit, screenOf(t, "permission/8-edit-feedback-typed")) || u.Met(&edit, screenOf(t, "permission/7-edit-tab-on-no")) {
		t.Errorf("text: %+v", u)
	}
	if u := p.Steps[4].Until; !u.Met(&edit, screenOf(t, "permission/9-edit-rejected-with-feedback")) || u.Met(&edit, screenOf(t, "permission/8-edit-feedback-typed")) {
		t.Errorf("Enter: %+v", u)
	}
	multi := dialogOf(t, "question/6-multi")
	p, _ = multi.Keys(Answer{Options: []int{1, 3}})
	if !p.Steps[0].Until.Met(&multi, screenOf(t, "question/7-multi-toggled")) || p.Steps[0].Until.Met(&multi, screenOf(t, "question/6-multi")) {
		t.Errorf("toggle 1: %+v", p.Steps[0].Until)
	}
	if u := p.Steps[5].Until; !u.Met(&multi, screenOf(t, "question/8-multi-submit-focused")) || u.What != UntilFocus || u.Target != "Submit" {
		t.Errorf("Down to Submit: %+v", u)
	}
	if u := p.Steps[6].Until; !u.Met(&multi, screenOf(t, "question/9-multi-review")) {
		t.Errorf("Enter: %+v", u)
	}
	three := dialogOf(t, "question/11-three")
	if u := (Until{What: UntilGone}); !u.Met(&three, screenOf(t, "question/12-three-second")) || u.Met(&three, screenOf(t, "question/11-three @50x30")) {
		t.Error("answering the first of three questions is not \"gone\", or the same question at another width is")
	}
	form := dialogOf(t, "elicitation/2-form")
	if u := (Until{What: UntilExpanded, Target: "Color"}); !u.Met(&form, screenOf(t, "elicitation/3-enum-expanded")) || u.Met(&form, screenOf(t, "elicitation/2-form")) {
		t.Error("expanded")
	}
	if u := (Until{What: UntilValue, Target: "Color", Value: "green"}); !u.Met(&form, screenOf(t, "elicitation/4-enum-chosen")) || u.Met(&form, screenOf(t, "elicitation/3-enum-expanded")) {
		t.Error("value")
	}
	if u := (Until{What: UntilInputEmpty}); !u.Met(nil, screenOf(t, "drafts/4-escape-twice-cleared")) || u.Met(nil, screenOf(t, "drafts/3-escape-once")) {
		t.Error("input empty")
	}
}

func TestTypableAndClearDraft(t *testing.T) {
	if err := Read(screenOf(t, "drafts/1-empty")).Typable(); err != nil {
		t.Errorf("empty box: %v", err)
	}
	if err := Read(screenOf(t, "permission/2-bash")).Typable(); !errors.Is(err, ErrDialogOpen) || !strings.Contains(err.Error(), "Do you want to proceed?") {
		t.Errorf("dialog: %v", err)
	}
	if err := Read(screenOf(t, "drafts/2-one-letter")).Typable(); !errors.Is(err, ErrDraftPresent) {
		t.Errorf("draft: %v", err)
	}
	if err := Read(screenOf(t, "hand_claude/2-exited-to-shell")).Typable(); !errors.Is(err, ErrNoInputBox) {
		t.Errorf("exited: %v", err)
	}
	s := Read(screenOf(t, "drafts/5-three-lines"))
	p, err := s.ClearDraftKeys()
	if err != nil || !slices.Equal(keysOf(p), []string{"Escape", "Escape"}) {
		t.Fatalf("clear: %v %v", keysOf(p), err)
	}
	if !p.Steps[0].Until.Met(nil, screenOf(t, "drafts/3-escape-once")) || !p.Steps[1].Until.Met(nil, screenOf(t, "drafts/4-escape-twice-cleared")) {
		t.Error("the clear plan's conditions do not hold on the recorded screens")
	}
	if _, err := Read(screenOf(t, "drafts/1-empty")).ClearDraftKeys(); err == nil {
		t.Error("Escape twice on an empty box opens Rewind: must refuse")
	}
	busy := Read(screenOf(t, "todo/4-busy-with-tasks"))
	busy.Input.Draft = "x"
	if _, err := busy.ClearDraftKeys(); err == nil {
		t.Error("Escape while busy interrupts the turn: must refuse")
	}
}
