package claudeenv_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/testkit/claudeenv"
	"github.com/corral-dev/corral/internal/testkit/fakeapi"
	"github.com/corral-dev/corral/internal/testkit/tmuxtest"
)

// The recorder of testdata/claude-code-2.1.197/flows: a flow drives the real
// claude in a private tmux against the fake API and writes, into
// flows/<name>/, the pane after each step (screens.txt), every hook payload
// (hooks.jsonl), Claude's session file at each step (sessions/<step>.json),
// the transcripts, and a README.md with the step table and the facts the
// flow measured. Paths are rewritten as in the first fixture.

const (
	recWidth, recHeight     = 140, 40
	phoneWidth, phoneHeight = 50, 30
)

// recordEvents are the hook events a recording registers: every event of
// 2.1.197's settings schema except WorktreeCreate/WorktreeRemove, whose
// command hooks replace Claude's own git worktree handling.
func recordEvents() []string {
	return []string{"PreToolUse", "PostToolUse", "PostToolUseFailure", "PostToolBatch", "Notification",
		"UserPromptSubmit", "UserPromptExpansion", "SessionStart", "SessionEnd", "Stop", "StopFailure",
		"SubagentStart", "SubagentStop", "PreCompact", "PostCompact", "PermissionRequest", "PermissionDenied",
		"Setup", "TeammateIdle", "TaskCreated", "TaskCompleted", "Elicitation", "ElicitationResult",
		"ConfigChange", "InstructionsLoaded", "CwdChanged", "FileChanged", "MessageDisplay"}
}

// flowOptions configure one recorded flow.
type flowOptions struct {
	// Rules script the fake model.
	Rules []fakeapi.Rule
	// Untrusted leaves the project folder untrusted (the trust dialog).
	Untrusted bool
	// KeyNotApproved leaves the API key unapproved (the API-key dialog).
	KeyNotApproved bool
	// MCP registers the fake MCP server as "fake" with --mcp-config.
	MCP bool
	// Env holds extra KEY=VALUE for claude.
	Env []string
	// UserSettings is written as ~/.claude/settings.json.
	UserSettings any
}

type flowRow struct{ step, keys, hooks, file string }

type flow struct {
	t         *testing.T
	name, out string
	claude    string
	bin       string
	api       *fakeapi.Server
	env       *claudeenv.Env
	tm        *tmuxtest.Server
	dir       string // logs, settings, Claude's temp dir
	proj      string
	scratch   string
	log       hookLog
	mcpLog    string
	sess      *sessWatch
	settings  string
	mcpConfig string
	pane      string
	runs      int
	screens   bytes.Buffer
	rows      []flowRow
	notes     []string
	mark      time.Time // the last key press
	lastStep  time.Time
	keys      []string          // what was typed since the last step
	files     map[string][]byte // rel path -> content, written by finish
}

func newFlow(t *testing.T, claude, bin, name string, o flowOptions) *flow {
	f := &flow{t: t, name: name, claude: claude, bin: bin, dir: t.TempDir()}
	f.out = filepath.Join(fixtureFlows, name)
	f.log = hookLog{path: filepath.Join(f.dir, "hooks.jsonl")}
	f.api = fakeapi.New(fakeapi.Options{Rules: o.Rules, Logf: func(string, ...any) {}})
	f.api.Start(t)
	envOpts := claudeenv.Options{
		BaseURL:      f.api.URL(),
		UserSettings: o.UserSettings,
		Env:          o.Env,
	}
	if o.KeyNotApproved {
		envOpts.ClaudeJSON = map[string]any{"customApiKeyResponses": map[string]any{"approved": []string{}, "rejected": []string{}}}
	}
	f.env = claudeenv.New(t, envOpts)
	// The project lives in HOME, so that Claude shows it as ~/proj.
	f.proj = filepath.Join(f.env.Home, "proj")
	f.scratch = filepath.Join(f.env.Home, "scratch")
	for _, d := range []string{f.proj, f.scratch} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(f.proj, "hello.txt"), []byte("hello world\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !o.Untrusted {
		if err := f.env.Trust(f.proj); err != nil {
			t.Fatal(err)
		}
	}
	f.tm = tmuxtest.New(t, f.env.Environ())
	f.sess = watchSessions(t, f.env.SessionsDir())
	hooks := map[string]any{}
	for _, ev := range recordEvents() {
		hooks[ev] = []any{hookEntry("", cmdHook(recorderCmd(bin, f.log.path, "hook", ev)))}
	}
	f.settings = filepath.Join(f.dir, "settings.json")
	writeJSON(t, f.settings, map[string]any{
		"hooks":      hooks,
		"statusLine": map[string]any{"type": "command", "command": recorderCmd(bin, f.log.path, "statusline", "corral")},
	})
	if o.MCP {
		f.mcpLog = filepath.Join(f.dir, "mcp.jsonl")
		f.mcpConfig = filepath.Join(f.dir, "mcp.json")
		writeJSON(t, f.mcpConfig, map[string]any{"mcpServers": map[string]any{
			"fake": map[string]any{"command": bin, "args": []string{fakeMCPFlag, f.mcpLog}},
		}})
	}
	t.Cleanup(func() {
		if t.Failed() && f.pane != "" {
			t.Logf("screen of %s:\n%s", f.pane, f.tm.Capture(f.pane))
			t.Logf("hooks:%s", f.log.summary(time.Time{}))
			t.Logf("session files:%s", f.sess.summary(time.Time{}))
		}
	})
	f.mark, f.lastStep = time.Now(), time.Now()
	return f
}

// claudeArgs is the command line of a corral-like claude: our settings and,
// for MCP flows, the fake server.
func (f *flow) claudeArgs(extra ...string) []string {
	args := []string{f.claude, "--settings", f.settings}
	if f.mcpConfig != "" {
		args = append(args, "--mcp-config", f.mcpConfig)
	}
	return append(args, extra...)
}

// launch starts claude with args in a new tmux session of the recording
// size and waits for what (a string on screen).
func (f *flow) launch(what string, args ...string) {
	f.t.Helper()
	f.runs++
	f.mark = time.Now()
	f.keys = append(f.keys, "(start `"+strings.Join(f.rewriteArgs(f.claudeArgs(args...)), " ")+"`)")
	f.pane = f.tm.NewSession(fmt.Sprintf("r%d", f.runs), f.proj, recWidth, recHeight, []string{"CORRAL_SESSION=rec"}, f.claudeArgs(args...)...)
	f.waitText(what, 40*time.Second)
}

// launchShell starts an interactive bash in a new tmux session that runs
// command first, as corral's panes do ("$@"; exec $SHELL).
func (f *flow) launchShell(what, command string) {
	f.t.Helper()
	f.runs++
	f.mark = time.Now()
	f.keys = append(f.keys, "(start `sh -c '"+f.rewrite(command)+"; exec bash'`)")
	f.pane = f.tm.NewSession(fmt.Sprintf("r%d", f.runs), f.proj, recWidth, recHeight,
		[]string{"CORRAL_SESSION=rec", "PS1=$ "}, "sh", "-c", command+"; exec bash --norc --noprofile")
	f.waitText(what, 40*time.Second)
}

func (f *flow) rewriteArgs(args []string) []string {
	var out []string
	for _, a := range args {
		out = append(out, f.rewrite(a))
	}
	return out
}

// press sends tmux key names.
func (f *flow) press(keys ...string) {
	f.t.Helper()
	f.mark = time.Now()
	f.keys = append(f.keys, "`"+strings.Join(keys, " ")+"`")
	f.tm.SendKeys(f.pane, keys...)
}

// text types text literally (no Enter).
func (f *flow) text(s string) {
	f.t.Helper()
	f.mark = time.Now()
	f.keys = append(f.keys, fmt.Sprintf("%q", s))
	f.tm.SendText(f.pane, s)
}

// line types text into the input box, waits until it shows there and
// presses Enter.
func (f *flow) line(s string) {
	f.t.Helper()
	f.tm.SendText(f.pane, s)
	first := strings.SplitN(s, "\n", 2)[0]
	f.tm.WaitScreen(f.pane, 10*time.Second, "typed "+first, func(scr string) bool { return strings.Contains(scr, first) })
	f.keys = append(f.keys, fmt.Sprintf("%q Enter", s))
	f.mark = time.Now()
	f.tm.SendKeys(f.pane, "Enter")
}

func (f *flow) waitText(s string, timeout time.Duration) string {
	f.t.Helper()
	return f.tm.WaitText(f.pane, s, timeout)
}

func (f *flow) waitScreen(what string, timeout time.Duration, cond func(string) bool) string {
	f.t.Helper()
	return f.tm.WaitScreen(f.pane, timeout, what, cond)
}

// waitDialog waits until s is on screen and Claude's input box is not: a
// dialog replaces the input box while it is open.
func (f *flow) waitDialog(s string, timeout time.Duration) string {
	f.t.Helper()
	return f.waitScreen("a dialog showing "+s, timeout, func(scr string) bool {
		return strings.Contains(scr, s) && !strings.Contains(scr, "\n❯\u00a0")
	})
}

// ready waits for Claude's input box, empty, with no dialog under it.
func (f *flow) ready(timeout time.Duration) {
	f.t.Helper()
	f.waitScreen("an empty input box", timeout, func(s string) bool { return emptyInputBox(s) })
}

// emptyInputBox reports the input box "❯\u00a0" as the last prompt line,
// between two rules, with nothing typed.
func emptyInputBox(s string) bool {
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i > 0; i-- {
		if strings.HasPrefix(lines[i], "❯\u00a0") || lines[i] == "❯" {
			return strings.TrimSpace(strings.TrimPrefix(lines[i], "❯")) == "" && strings.HasPrefix(lines[i-1], "────") &&
				i+1 < len(lines) && strings.HasPrefix(lines[i+1], "────")
		}
	}
	return false
}

// settle waits until the screen stays the same for 400 ms (at most 4 s: a
// spinner never settles) and returns it.
func (f *flow) settle() string {
	f.t.Helper()
	prev := f.tm.Capture(f.pane)
	since := time.Now()
	deadline := time.Now().Add(4 * time.Second)
	for time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		cur := f.tm.Capture(f.pane)
		if cur != prev {
			prev, since = cur, time.Now()
			continue
		}
		if time.Since(since) >= 400*time.Millisecond {
			break
		}
	}
	return prev
}

// step records the pane, the session file and the hooks and session-file
// changes since the previous step.
func (f *flow) step(name string) string {
	f.t.Helper()
	scr := f.settle()
	now := time.Now()
	f.addScreen(name, scr)
	keys := strings.Join(f.keys, ", ")
	if keys == "" {
		keys = "(wait)"
	}
	from := f.lastStep
	f.rows = append(f.rows, flowRow{step: name, keys: keys, hooks: f.hookSummary(from, now), file: f.fileSummary(name, from, now)})
	f.keys = nil
	f.lastStep = now
	return scr
}

// phone records the pane at 50x30, then restores the recording size.
func (f *flow) phone(name string) string {
	f.t.Helper()
	f.tm.Must("resize-window", "-t", f.pane, "-x", fmt.Sprint(phoneWidth), "-y", fmt.Sprint(phoneHeight))
	f.waitScreen("the 50x30 redraw", 10*time.Second, func(s string) bool { return maxWidth(s) <= phoneWidth })
	scr := f.settle()
	f.addScreen(name+" @50x30", scr)
	f.rows = append(f.rows, flowRow{step: name + " @50x30", keys: "(pane resized to 50x30, then back to 140x40)"})
	f.tm.Must("resize-window", "-t", f.pane, "-x", fmt.Sprint(recWidth), "-y", fmt.Sprint(recHeight))
	f.settle()
	return scr
}

func maxWidth(s string) int {
	w := 0
	for _, l := range strings.Split(s, "\n") {
		w = max(w, len([]rune(strings.TrimRight(l, " "))))
	}
	return w
}

func (f *flow) addScreen(name, scr string) {
	fmt.Fprintf(&f.screens, "=== %s\n%s", name, f.rewrite(scr))
	if !strings.HasSuffix(scr, "\n") {
		f.screens.WriteString("\n")
	}
}

func (f *flow) note(format string, args ...any) {
	f.notes = append(f.notes, f.rewrite(fmt.Sprintf(format, args...)))
}

// hookSummary lists the hooks that started in (from, to], with their start
// relative to the last key press.
func (f *flow) hookSummary(from, to time.Time) string {
	var out []string
	for _, h := range f.log.hooks(from) {
		if h.T > to.UnixNano() || h.T <= from.UnixNano() {
			continue
		}
		out = append(out, describeHook(h)+" "+ms(f.mark, h.time()))
	}
	if len(out) == 0 {
		return "-"
	}
	return strings.Join(out, ", ")
}

func describeHook(h hookRec) string {
	p := h.payload()
	var det []string
	for _, k := range []string{"tool_name", "notification_type", "source", "reason", "trigger", "mcp_server_name", "action"} {
		if v, ok := p[k].(string); ok && v != "" {
			det = append(det, v)
		}
	}
	if a, ok := p["agent_type"].(string); ok && p["agent_id"] != nil {
		det = append(det, "agent "+a)
	}
	if bt, ok := p["background_tasks"].([]any); ok && len(bt) > 0 {
		det = append(det, fmt.Sprintf("%d background", len(bt)))
	}
	if len(det) == 0 {
		return h.Tag
	}
	return h.Tag + "(" + strings.Join(det, ", ") + ")"
}

// fileSummary saves the session file(s) as sessions/<step>.json and
// describes the status changes in (from, to].
func (f *flow) fileSummary(step string, from, to time.Time) string {
	var ch []string
	for _, c := range f.sess.all() {
		if !c.T.After(from) || c.T.After(to) {
			continue
		}
		if c.Removed {
			ch = append(ch, "removed "+ms(f.mark, c.T))
			continue
		}
		s := c.S.Status
		if s == "" {
			s = "(no status)"
		}
		if c.S.WaitingFor != "" {
			s += " (" + c.S.WaitingFor + ")"
		}
		ch = append(ch, s+" "+ms(f.mark, c.T))
	}
	ents, _ := os.ReadDir(f.env.SessionsDir())
	var cur []string
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(f.env.SessionsDir(), e.Name()))
		if err != nil {
			continue
		}
		var s sessionFile
		_ = json.Unmarshal(b, &s)
		name := step
		if len(cur) > 0 {
			name += "-" + strings.TrimSuffix(e.Name(), ".json")
		}
		f.writeOut(filepath.Join("sessions", name+".json"), b)
		st := s.Status
		if s.WaitingFor != "" {
			st += " (" + s.WaitingFor + ")"
		}
		cur = append(cur, st)
	}
	now := "no session file"
	if len(cur) > 0 {
		now = strings.Join(cur, " + ")
	}
	if len(ch) == 0 {
		return now
	}
	return strings.Join(ch, ", ") + "; now " + now
}

// rewrite replaces the recording's paths by those of the first fixture.
func (f *flow) rewrite(s string) string {
	pairs := [][2]string{
		{f.proj, "/home/dev/proj"},
		{claudeenv.ProjectKey(f.proj), "-home-dev-proj"},
		{f.scratch, "/home/dev/scratch"},
		{f.dir, "/home/dev/work"},
		{claudeenv.ProjectKey(f.dir), "-home-dev-work"},
		{f.env.Home, "/home/dev"},
		{f.bin, "/usr/local/bin/recorder"},
		{f.claude, "claude"},
		{f.api.URL(), "http://127.0.0.1:PORT"},
	}
	sort.SliceStable(pairs, func(i, j int) bool { return len(pairs[i][0]) > len(pairs[j][0]) })
	for _, p := range pairs {
		if p[0] != "" {
			s = strings.ReplaceAll(s, p[0], p[1])
		}
	}
	return s
}

// writeOut keeps a file of the flow (rewritten) for finish to write.
func (f *flow) writeOut(rel string, b []byte) {
	if f.files == nil {
		f.files = map[string][]byte{}
	}
	f.files[rel] = []byte(f.rewrite(string(b)))
}

// sessionIDs are the Claude session ids of the flow, in the order their
// first hook fired.
func (f *flow) sessionIDs() []string {
	var ids []string
	seen := map[string]bool{}
	for _, h := range f.log.hooks(time.Time{}) {
		if id := h.field("session_id"); id != "" && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	// Sessions of a claude without our hooks: transcripts on disk.
	ents, _ := os.ReadDir(f.env.ProjectDir(f.proj))
	for _, e := range ents {
		if id, ok := strings.CutSuffix(e.Name(), ".jsonl"); ok && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids
}

// toolResults returns the tool_result blocks the model received in the
// requests since the last key press, in order.
func (f *flow) toolResults() []string {
	var out []string
	for _, r := range f.api.Requests() {
		if r.Time.Before(f.mark) {
			continue
		}
		for _, tr := range r.ToolResults {
			out = append(out, fmt.Sprintf("%s is_error=%v %q", tr.ToolUseID, tr.IsError, tr.Content))
		}
	}
	return out
}

// lastUserMessage returns the last user message (JSON) of the newest
// main-loop request.
func (f *flow) lastUserMessage() string {
	rs := f.api.Prompts()
	if len(rs) == 0 {
		return ""
	}
	var w struct {
		Messages []json.RawMessage `json:"messages"`
	}
	_ = json.Unmarshal(rs[len(rs)-1].Body, &w)
	for i := len(w.Messages) - 1; i >= 0; i-- {
		var m struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(w.Messages[i], &m) == nil && m.Role == "user" {
			return string(m.Content)
		}
	}
	return ""
}

// finish writes the flow's files.
func (f *flow) finish(title, how string) {
	f.t.Helper()
	if f.t.Failed() {
		return
	}
	// Let claude write its last transcript lines.
	time.Sleep(500 * time.Millisecond)
	f.writeOut("screens.txt", f.screens.Bytes())
	var hooks bytes.Buffer
	for _, h := range f.log.hooks(time.Time{}) {
		hooks.Write(h.Stdin)
		hooks.WriteString("\n")
	}
	f.writeOut("hooks.jsonl", hooks.Bytes())
	var files []string
	for i, id := range f.sessionIDs() {
		b, err := os.ReadFile(f.env.TranscriptPath(f.proj, id))
		if err != nil {
			continue
		}
		name := "transcript.jsonl"
		if i > 0 {
			name = fmt.Sprintf("transcript-%d.jsonl", i+1)
		}
		f.writeOut(name, b)
		files = append(files, fmt.Sprintf("`%s` (session %s)", name, id))
		subs, _ := filepath.Glob(filepath.Join(f.env.ProjectDir(f.proj), id, "subagents", "*.jsonl"))
		for _, s := range subs {
			b, err := os.ReadFile(s)
			if err == nil {
				rel := filepath.Join("subagents", filepath.Base(s))
				f.writeOut(rel, b)
				files = append(files, fmt.Sprintf("`%s` (a subagent of session %s)", rel, id))
			}
		}
	}
	if f.mcpLog != "" {
		if b, err := os.ReadFile(f.mcpLog); err == nil {
			f.writeOut("mcp.jsonl", b)
			files = append(files, "`mcp.jsonl` (every JSON-RPC message the fake MCP server received (`in`) and sent (`out`))")
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n%s\n\n", title, how)
	b.WriteString("Recorded by `CORRAL_RECORD=1 go test ./internal/testkit/claudeenv -run 'TestRecord/" + f.name + "$'` with Claude Code 2.1.197 in tmux (140x40; steps marked @50x30 were captured after resizing the pane to a phone's 50x30) against `internal/testkit/fakeapi`. " +
		"Every hook event was registered with a recorder (`hooks.jsonl` holds the payloads in order); `screens.txt` holds the pane after each step; `sessions/<step>.json` is `~/.claude/sessions/<pid>.json` at that step. " +
		"Paths are rewritten as in `../../README.md`. Times are the start of the hook process or the session file change, relative to the step's last key press (negative: before it).\n\n")
	if len(files) > 0 {
		b.WriteString("Transcripts and logs: " + strings.Join(files, "; ") + ".\n\n")
	}
	b.WriteString("| step | keys typed | hooks fired (in order) | session file status |\n|---|---|---|---|\n")
	for _, r := range f.rows {
		if r.hooks == "" {
			r.hooks = "-"
		}
		if r.file == "" {
			r.file = "-"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", r.step, cell(r.keys), cell(r.hooks), cell(r.file))
	}
	if len(f.notes) > 0 {
		b.WriteString("\nMeasured in this recording:\n\n")
		for _, n := range f.notes {
			b.WriteString("- " + n + "\n")
		}
	}
	f.writeOut("README.md", []byte(b.String()))
	if err := os.RemoveAll(f.out); err != nil {
		f.t.Fatal(err)
	}
	for rel, data := range f.files {
		p := filepath.Join(f.out, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			f.t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			f.t.Fatal(err)
		}
	}
}

func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}

// fixtureFlows is the corpus directory, relative to this package.
const fixtureFlows = "../../../testdata/claude-code-2.1.197/flows"
