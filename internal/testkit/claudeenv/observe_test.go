package claudeenv_test

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/testkit/claudeenv"
	"github.com/corral-dev/corral/internal/testkit/fakeapi"
	"github.com/corral-dev/corral/internal/testkit/tmuxtest"
)

// TestObserveClaude runs the real claude CLI in private tmux servers against
// the fake API and checks (and reports) how it behaves: hooks, status line,
// session files, process tree, keys. docs/claude-observations.md is written
// from its report; set CLAUDE_OBSERVE_REPORT=<file> to save the report.
func TestObserveClaude(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the real-claude observation in -short mode")
	}
	claudeenv.RequireTmux(t)
	claude := claudeenv.RequireClaude(t)
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	rep := newReport()
	// The three experiments run in parallel to keep the test short; set
	// CLAUDE_OBSERVE_SERIAL=1 to run them one after another for cleaner
	// timings (that is how docs/claude-observations.md was measured).
	serial := os.Getenv("CLAUDE_OBSERVE_SERIAL") != ""
	run := func(t *testing.T, name string, f func(*testing.T, string, string, *report)) {
		t.Run(name, func(t *testing.T) {
			if !serial {
				t.Parallel()
			}
			f(t, claude, bin, rep)
		})
	}
	t.Run("observe", func(t *testing.T) {
		run(t, "scenario", observeScenario)
		run(t, "hooks", observeHookMechanics)
		run(t, "errors", observeErrors)
	})
	t.Logf("observations:\n%s", rep)
	if p := os.Getenv("CLAUDE_OBSERVE_REPORT"); p != "" {
		if err := os.WriteFile(p, []byte(rep.String()), 0o644); err != nil {
			t.Error(err)
		}
	}
}

// rig is one claude under observation.
type rig struct {
	t       *testing.T
	rep     *report
	section string
	api     *fakeapi.Server
	env     *claudeenv.Env
	tm      *tmuxtest.Server
	proj    string
	dir     string // scratch dir for logs and settings
	log     hookLog
	sess    *sessWatch
	procs   *procSampler
	pane    string
}

func newRig(t *testing.T, rep *report, section string, apiOpts fakeapi.Options, envOpts claudeenv.Options) *rig {
	dir := t.TempDir()
	proj := filepath.Join(dir, "proj")
	scratch := filepath.Join(dir, "scratch")
	for _, d := range []string{proj, scratch} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	proj, _ = claudeenv.Realpath(proj)
	r := &rig{t: t, rep: rep, section: section, proj: proj, dir: dir, log: hookLog{path: filepath.Join(dir, "hooks.jsonl")}}
	if apiOpts.ToolDir == "" {
		apiOpts.ToolDir = scratch
	}
	r.api = fakeapi.New(apiOpts)
	r.api.Start(t)
	if envOpts.BaseURL == "" {
		envOpts.BaseURL = r.api.URL()
	}
	envOpts.Trust = append(envOpts.Trust, proj)
	r.env = claudeenv.New(t, envOpts)
	r.tm = tmuxtest.New(t, r.env.Environ())
	r.sess = watchSessions(t, r.env.SessionsDir())
	r.procs = sampleProcs(t)
	t.Cleanup(func() {
		if t.Failed() && r.pane != "" {
			t.Logf("screen of %s:\n%s", r.pane, r.tm.Capture(r.pane))
			t.Logf("hooks:%s", r.log.summary(time.Time{}))
			t.Logf("session files:%s", r.sess.summary(time.Time{}))
		}
	})
	return r
}

func (r *rig) note(format string, args ...any) { r.rep.add(r.section, format, args...) }

// settings writes a --settings file registering the recorder for every event
// plus a status line, and returns its path.
func (r *rig) settings(bin string) string {
	hooks := map[string]any{}
	for _, ev := range allEvents() {
		hooks[ev] = []any{hookEntry("", cmdHook(recorderCmd(bin, r.log.path, "hook", ev)))}
	}
	p := filepath.Join(r.dir, "settings.json")
	writeJSON(r.t, p, map[string]any{
		"hooks":      hooks,
		"statusLine": map[string]any{"type": "command", "command": recorderCmd(bin, r.log.path, "statusline", "main")},
	})
	return p
}

// inputLine returns the text after "❯ " on the last prompt line of the
// screen (the input box).
func inputLine(screen string) string {
	lines := strings.Split(screen, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "❯") {
			return strings.TrimSpace(strings.TrimPrefix(lines[i], "❯"))
		}
	}
	return ""
}

// ready waits until claude shows an empty input box.
func (r *rig) ready(timeout time.Duration) {
	r.t.Helper()
	r.tm.WaitScreen(r.pane, timeout, "an empty input box", func(s string) bool {
		return strings.Contains(s, "────") && inputLine(s) == "" && strings.Contains(s, "\n❯")
	})
}

// typeLine types text, waits until it shows in the input box, and presses
// Enter; it returns the time just before Enter.
func (r *rig) typeLine(text string) time.Time {
	r.t.Helper()
	r.tm.SendText(r.pane, text)
	r.tm.WaitScreen(r.pane, 5*time.Second, "typed "+text, func(s string) bool { return strings.HasPrefix(inputLine(s), text) })
	t0 := time.Now()
	r.tm.SendKeys(r.pane, "Enter")
	return t0
}

func (r *rig) key(k string) time.Time {
	t0 := time.Now()
	r.tm.SendKeys(r.pane, k)
	return t0
}

// claudePID waits for claude's session file and returns its pid.
func (r *rig) claudePID(from time.Time) sessChange {
	r.t.Helper()
	return r.sess.wait(r.t, 20*time.Second, "created", from, func(c sessChange) bool { return !c.Removed })
}

func (r *rig) current(file string) sessionFile {
	var s sessionFile
	b, err := os.ReadFile(filepath.Join(r.env.SessionsDir(), file))
	if err == nil {
		_ = json.Unmarshal(b, &s)
	}
	return s
}

func hookNames(rs []hookRec) string {
	var n []string
	for _, h := range rs {
		s := h.Tag
		if v := h.field("source"); v != "" {
			s += "(source=" + v + ")"
		}
		if v := h.field("reason"); v != "" {
			s += "(reason=" + v + ")"
		}
		if v := h.field("notification_type"); v != "" {
			s += "(" + v + ")"
		}
		if v := h.field("tool_name"); v != "" {
			s += "(" + v + ")"
		}
		if v := h.field("trigger"); v != "" {
			s += "(trigger=" + v + ")"
		}
		n = append(n, s)
	}
	return strings.Join(n, ", ")
}

func (r *rig) hooksBetween(from, to time.Time) []hookRec {
	var out []hookRec
	for _, h := range r.log.hooks(from) {
		if h.T <= to.UnixNano() {
			out = append(out, h)
		}
	}
	return out
}

func (r *rig) statusChanges(from, to time.Time) string {
	var s []string
	for _, c := range r.sess.all() {
		if c.T.Before(from) || c.T.After(to) {
			continue
		}
		if c.Removed {
			s = append(s, fmt.Sprintf("removed@%s", ms(from, c.T)))
		} else {
			w := ""
			if c.S.WaitingFor != "" {
				w = "(" + c.S.WaitingFor + ")"
			}
			s = append(s, fmt.Sprintf("%s%s@%s", c.S.Status, w, ms(from, c.T)))
		}
	}
	return strings.Join(s, " ")
}

func (r *rig) expectNo(tag string, from, to time.Time) {
	r.t.Helper()
	for _, h := range r.hooksBetween(from, to) {
		if h.Tag == tag {
			r.t.Errorf("unexpected %s hook at %s: %s", tag, h.time().Format("15:04:05.000"), truncate(string(h.Stdin), 300))
		}
	}
}

// ---- experiment 1: the fixture scenario and more ------------------------------

func observeScenario(t *testing.T, claude, bin string, rep *report) {
	r := newRig(t, rep, "1 scenario", fakeapi.Options{
		Rules: []fakeapi.Rule{
			{Contains: "ASKQ", Reply: fakeapi.AskUserQuestion("Color", "Which color do you want?", "Red", "Blue")},
			{Contains: "NOTEXT", Reply: fakeapi.Reply{FirstByteDelay: 30 * time.Second}},
		},
	}, claudeenv.Options{})
	settings := r.settings(bin)

	// --- start
	t0 := time.Now()
	tLaunch := t0
	r.pane = r.tm.NewSession("a", r.proj, 140, 40, []string{"CORRAL_SESSION=obs-a"}, claude, "--settings", settings)
	panePID := r.tm.PanePID(r.pane)
	r.procs.addRoot(panePID)
	ss := r.log.wait(t, 30*time.Second, "SessionStart", t0, nil)
	created := r.claudePID(t0)
	file := created.File
	pid := created.S.PID
	firstIdle := r.sess.status(t, 10*time.Second, "idle", t0)
	r.ready(20 * time.Second)
	tReady := time.Now()
	sl0, _ := r.log.find("statusline", "main", t0)
	r.note("start: SessionStart(source=%s) %s after new-session; session file %s first seen %s with status %q, then status idle %s; first status line %s; input box ready %s",
		ss.field("source"), ms(t0, ss.time()), file, ms(t0, created.T), created.S.Status, ms(t0, firstIdle.T), ms(t0, sl0.time()), ms(t0, tReady))
	r.note("session file creation: first content %s; fs ops %v", created.Raw, r.sess.fsEvents(created.T.Add(-100*time.Millisecond), firstIdle.T))
	if ss.field("source") != "startup" {
		t.Errorf("start: SessionStart source %q", ss.field("source"))
	}

	// --- process tree
	exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	cmdline := strings.ReplaceAll(strings.TrimRight(procField(pid, "cmdline"), "\x00"), "\x00", " ")
	ppid := 0
	if f := statFields(pid); len(f) > 1 {
		ppid, _ = strconv.Atoi(f[1])
	}
	r.note("process: pane_pid %d, claude pid %d (pane_pid == claude pid: %v, started by tmux with argv, no shell); comm %q; exe %s; cmdline %q; parent %d (%s); session file pid %d; procStart %q == /proc/<pid>/stat field 22 %q",
		panePID, pid, panePID == pid, procField(pid, "comm"), exe, cmdline, ppid, procField(ppid, "comm"), created.S.PID, created.S.ProcStart, procStart(pid))
	if created.S.PID != panePID || created.S.ProcStart != procStart(pid) {
		t.Errorf("session file pid %d procStart %q; pane pid %d procStart %q", created.S.PID, created.S.ProcStart, panePID, procStart(panePID))
	}
	if created.S.Cwd != r.proj {
		t.Errorf("session cwd %q, want %q", created.S.Cwd, r.proj)
	}
	r.note("session file fields: %s", created.Raw)

	// --- how a hook is run (from the SessionStart record)
	r.note("hook process: argv %q; parent pid %d comm %q cmdline %q; grandparent pid %d comm %q (claude pid %d); own pgid %d (parent pid %d); cwd %q; stdin closed: %v",
		ss.Argv, ss.PPID, ss.ParentComm, ss.ParentCmdline, ss.GrandPID, ss.GrandComm, pid, ss.PGID, ss.PPID, ss.Cwd, !ss.StdinOpen)
	r.note("hook env: %v", ss.Env)
	r.note("hook env names: %s", strings.Join(ss.EnvNames, " "))
	if ss.GrandPID != pid || len(ss.ParentCmdline) < 3 || ss.ParentCmdline[1] != "-c" {
		t.Errorf("hook not run as claude -> sh -c -> command: parent %q grandparent %d", ss.ParentCmdline, ss.GrandPID)
	}
	if ss.Env["CLAUDE_PROJECT_DIR"] != r.proj || ss.Env["CORRAL_SESSION"] != "obs-a" || ss.Env["TMUX_PANE"] != r.pane || ss.Cwd != r.proj {
		t.Errorf("hook env/cwd: %v cwd %q", ss.Env, ss.Cwd)
	}
	if ss.Env["CLAUDE_CODE_SESSION_ID"] != ss.field("session_id") {
		t.Errorf("CLAUDE_CODE_SESSION_ID %q vs session_id %q", ss.Env["CLAUDE_CODE_SESSION_ID"], ss.field("session_id"))
	}
	origID := ss.field("session_id")

	// --- 2 say hello
	tE := r.typeLine("say hello")
	ups := r.log.wait(t, 10*time.Second, "UserPromptSubmit", tE, nil)
	busy := r.sess.status(t, 10*time.Second, "busy", tE)
	req := r.api.AwaitPrompt(t, "say hello", 10*time.Second)
	stop := r.log.wait(t, 15*time.Second, "Stop", tE, nil)
	idle := r.sess.status(t, 10*time.Second, "idle", busy.T)
	r.note("say hello: Enter=0; UserPromptSubmit %s; file busy %s (statusUpdatedAt %s); API request %s; Stop hook start %s; file idle %s (statusUpdatedAt %s) => idle written %s relative to Stop start (by statusUpdatedAt %s)",
		ms(tE, ups.time()), ms(tE, busy.T), ms(tE, msTime(busy.S.StatusUpdatedAt)), ms(tE, req.Time), ms(tE, stop.time()),
		ms(tE, idle.T), ms(tE, msTime(idle.S.StatusUpdatedAt)), ms(stop.time(), idle.T), ms(stop.time(), msTime(idle.S.StatusUpdatedAt)))
	if ups.field("prompt") != "say hello" || stop.field("last_assistant_message") != fakeapi.DefaultText {
		t.Errorf("say hello: prompt %q, last message %q", ups.field("prompt"), stop.field("last_assistant_message"))
	}
	r.note("say hello hooks: %s; session file changes: %s", hookNames(r.hooksBetween(tE, idle.T.Add(200*time.Millisecond))), r.statusChanges(tE, idle.T.Add(200*time.Millisecond)))
	r.note("file write ops around the idle change: %v", r.sess.fsEvents(idle.T.Add(-50*time.Millisecond), idle.T.Add(50*time.Millisecond)))
	r.note("inode of the session file: busy %d, idle %d (same inode: %v)", busy.Ino, idle.Ino, busy.Ino == idle.Ino)

	// --- 3 RUNTOOL one: permission prompt, Notification later, approve with Enter
	r.ready(5 * time.Second)
	tE = r.typeLine("RUNTOOL one")
	pre := r.log.wait(t, 10*time.Second, "PreToolUse", tE, nil)
	perm := r.log.wait(t, 10*time.Second, "PermissionRequest", tE, nil)
	waiting := r.sess.status(t, 10*time.Second, "waiting", tE)
	scr := r.tm.WaitText(r.pane, "Do you want to proceed?", 5*time.Second)
	notif := r.log.wait(t, 15*time.Second, "Notification", tE, nil)
	r.note("RUNTOOL one: PreToolUse(%s) %s; PermissionRequest %s; file waiting(%q) %s (statusUpdatedAt %s) => waiting %s after PermissionRequest start; Notification(%s, %q) %s => %s after PermissionRequest",
		pre.field("tool_name"), ms(tE, pre.time()), ms(tE, perm.time()), waiting.S.WaitingFor, ms(tE, waiting.T), ms(tE, msTime(waiting.S.StatusUpdatedAt)),
		ms(perm.time(), waiting.T), notif.field("notification_type"), notif.field("message"), ms(tE, notif.time()), ms(perm.time(), notif.time()))
	r.note("permission dialog on screen:\n\n```\n%s```\n", lastLines(scr, 14))
	r.note("PermissionRequest payload: %s", perm.Stdin)
	if perm.T > notif.T || notif.field("notification_type") != "permission_prompt" || waiting.S.WaitingFor != "permission prompt" {
		t.Errorf("permission: PermissionRequest %v, Notification %v (%s), waitingFor %q", perm.time(), notif.time(), notif.field("notification_type"), waiting.S.WaitingFor)
	}
	tK := r.key("Enter")
	post := r.log.wait(t, 10*time.Second, "PostToolUse", tK, nil)
	stop = r.log.wait(t, 10*time.Second, "Stop", tK, nil)
	idle = r.sess.status(t, 10*time.Second, "idle", tK)
	r.note("approve with Enter: PostToolUse %s; Stop %s; file idle %s; file changes after Enter: %s",
		ms(tK, post.time()), ms(tK, stop.time()), ms(tK, idle.T), r.statusChanges(tK, idle.T.Add(100*time.Millisecond)))
	if _, err := os.Stat(filepath.Join(r.dir, "scratch", "created_by_tool")); err != nil {
		t.Errorf("the approved tool did not run: %v", err)
	}

	// --- 5 RUNTOOL two + Escape
	r.ready(5 * time.Second)
	tE = r.typeLine("RUNTOOL two")
	perm = r.log.wait(t, 10*time.Second, "PermissionRequest", tE, nil)
	r.sess.status(t, 10*time.Second, "waiting", tE)
	r.tm.WaitText(r.pane, "Do you want to proceed?", 5*time.Second)
	nInt := r.interrupts(origID)
	tK = r.key("Escape")
	idle = r.sess.status(t, 10*time.Second, "idle", tK)
	r.ready(5 * time.Second)
	r.note("RUNTOOL two + Escape at the permission dialog: file idle %s after Escape; hooks after Escape: [%s]; transcript interrupt line: %s",
		ms(tK, idle.T), hookNames(r.hooksBetween(tK, time.Now())), r.newInterrupt(origID, nInt, tK))
	escTwo := tK

	// --- 6 SLOW answer + Escape after 1.5 s
	tE = r.typeLine("SLOW answer")
	expectNoStop := func() { r.expectNo("Stop", escTwo, tE) }
	expectNoStop()
	req = r.api.AwaitPrompt(t, "SLOW answer", 10*time.Second)
	time.Sleep(time.Until(req.Time.Add(1500 * time.Millisecond))) // the scenario's scripted pause
	scrBusy := r.tm.Capture(r.pane)
	nInt = r.interrupts(origID)
	tK = r.key("Escape")
	idle = r.sess.status(t, 10*time.Second, "idle", tK)
	time.Sleep(300 * time.Millisecond) // let the screen settle before reading the input box
	scr = r.tm.Capture(r.pane)
	in := inputLine(scr)
	r.note("SLOW answer + Escape 1.5 s after the request (the first text delta \"Hello from mock.\" was sent at once): file idle %s after Escape; hooks after Escape: [%s]; input box afterwards %q; transcript interrupt line: %s",
		ms(tK, idle.T), hookNames(r.hooksBetween(tK, time.Now())), in, r.newInterrupt(origID, nInt, tK))
	r.note("screen 1.5 s into the paused stream:\n\n```\n%s```\n\nscreen after the Escape:\n\n```\n%s```\n", lastLines(scrBusy, 8), lastLines(scr, 8))
	if in != "" {
		// The prompt came back into the input box: clear it with Ctrl-U.
		r.key("C-u")
		r.ready(5 * time.Second)
		r.note("the restored prompt was cleared with C-u")
	}
	escSlow := tK

	// --- Escape before the model sent anything (response headers held back)
	tE = r.typeLine("NOTEXT answer")
	r.expectNo("Stop", escSlow, tE)
	req = r.api.AwaitPrompt(t, "NOTEXT answer", 10*time.Second)
	r.sess.status(t, 10*time.Second, "busy", tE)
	time.Sleep(time.Until(req.Time.Add(1000 * time.Millisecond))) // scripted pause
	nInt = r.interrupts(origID)
	tK = r.key("Escape")
	idle = r.sess.status(t, 10*time.Second, "idle", tK)
	time.Sleep(300 * time.Millisecond) // let the screen settle before reading the input box
	scr = r.tm.Capture(r.pane)
	in = inputLine(scr)
	r.note("NOTEXT answer (no response bytes at all) + Escape after 1 s: file idle %s after Escape; hooks after Escape: [%s]; input box afterwards %q; transcript interrupt line: %s",
		ms(tK, idle.T), hookNames(r.hooksBetween(tK, time.Now())), in, r.newInterrupt(origID, nInt, tK))
	if in != "" {
		r.key("C-u")
		r.ready(5 * time.Second)
		r.note("the prompt restored into the input box was cleared with C-u")
	}
	escSlow = tK

	// --- 7/8 SLOW with text: busy, statusline while busy, Stop
	tE = r.typeLine("SLOW with text")
	r.expectNo("Stop", escSlow, tE)
	busy = r.sess.status(t, 10*time.Second, "busy", tE)
	time.Sleep(time.Until(tE.Add(500 * time.Millisecond)))
	snap := r.current(file)
	stop = r.log.wait(t, 20*time.Second, "Stop", tE, nil)
	idle = r.sess.status(t, 10*time.Second, "idle", busy.T)
	var sls []string
	for _, h := range r.log.all() {
		if h.Kind == "statusline" && h.T >= tE.UnixNano() && h.T <= idle.T.UnixNano() {
			sls = append(sls, ms(tE, h.time()))
		}
	}
	r.note("SLOW with text (5 s stream pause): status at +0.5 s %q; Stop %s; idle %s; status line runs during the turn at [%s]",
		snap.Status, ms(tE, stop.time()), ms(tE, idle.T), strings.Join(sls, " "))
	if snap.Status != "busy" {
		t.Errorf("SLOW with text: status %q at +0.5 s", snap.Status)
	}

	// --- 9 FAIL please
	r.ready(5 * time.Second)
	tE = r.typeLine("FAIL please")
	sf := r.log.wait(t, 20*time.Second, "StopFailure", tE, nil)
	idle = r.sess.status(t, 10*time.Second, "idle", tE)
	r.note("FAIL please (HTTP 400): StopFailure %s error=%q last_assistant_message=%q; file idle %s (%s relative to StopFailure); changes %s",
		ms(tE, sf.time()), sf.field("error"), sf.field("last_assistant_message"), ms(tE, idle.T), ms(sf.time(), idle.T), r.statusChanges(tE, idle.T.Add(100*time.Millisecond)))
	if sf.field("error") != "unknown" || !strings.Contains(sf.field("last_assistant_message"), "mock failure") {
		t.Errorf("StopFailure payload %s", sf.Stdin)
	}
	r.expectNo("Stop", tE, time.Now())

	// --- AskUserQuestion
	r.ready(5 * time.Second)
	tE = r.typeLine("ASKQ please")
	pre = r.log.wait(t, 10*time.Second, "PreToolUse", tE, nil)
	perm = r.log.wait(t, 10*time.Second, "PermissionRequest", tE, nil)
	waiting = r.sess.status(t, 10*time.Second, "waiting", tE)
	scr = r.tm.WaitText(r.pane, "Which color do you want?", 5*time.Second)
	r.note("AskUserQuestion: PreToolUse(tool_name=%s) %s; PermissionRequest(tool_name=%s) %s; file waiting(%q) %s",
		pre.field("tool_name"), ms(tE, pre.time()), perm.field("tool_name"), ms(tE, perm.time()), waiting.S.WaitingFor, ms(tE, waiting.T))
	r.note("AskUserQuestion PreToolUse payload: %s", pre.Stdin)
	r.note("AskUserQuestion on screen:\n\n```\n%s```\n", lastLines(scr, 14))
	if pre.field("tool_name") != "AskUserQuestion" || perm.field("tool_name") != "AskUserQuestion" {
		t.Errorf("AskUserQuestion hooks: %s / %s", pre.field("tool_name"), perm.field("tool_name"))
	}
	tK = r.key("2")
	post = r.log.wait(t, 10*time.Second, "PostToolUse", tK, nil)
	stop = r.log.wait(t, 10*time.Second, "Stop", tK, nil)
	tr := r.api.AwaitAfter(t, req.Seq, 10*time.Second, func(q fakeapi.Request) bool { return len(q.ToolResults) > 0 && q.Time.After(tK) })
	r.note("AskUserQuestion answered with the digit 2 alone: PostToolUse %s (tool_response.answers %v); Stop %s; tool_result sent to the model: %q",
		ms(tK, post.time()), post.payload()["tool_response"].(map[string]any)["answers"], ms(tK, stop.time()), tr.ToolResults[0].Content)

	// --- permission by digit: "1" alone
	r.ready(5 * time.Second)
	if err := os.Remove(filepath.Join(r.dir, "scratch", "created_by_tool")); err != nil {
		t.Fatal(err)
	}
	tE = r.typeLine("RUNTOOL three")
	r.log.wait(t, 10*time.Second, "PermissionRequest", tE, nil)
	r.tm.WaitText(r.pane, "Do you want to proceed?", 5*time.Second)
	tK = r.key("1")
	post = r.log.wait(t, 10*time.Second, "PostToolUse", tK, nil)
	r.log.wait(t, 10*time.Second, "Stop", tK, nil)
	r.note("permission dialog answered with the digit 1 alone (no Enter): PostToolUse %s", ms(tK, post.time()))

	// --- /compact
	r.ready(5 * time.Second)
	tE = r.typeLine("/compact")
	pc := r.log.wait(t, 20*time.Second, "PostCompact", tE, nil)
	time.Sleep(300 * time.Millisecond)
	hs := r.hooksBetween(tE, time.Now())
	r.note("/compact: hooks [%s] (PostCompact %s); session file changes %s; compaction request kind seen by the fake API: %s",
		hookNames(hs), ms(tE, pc.time()), r.statusChanges(tE, time.Now()), lastKind(r.api))
	for _, h := range hs {
		if h.Tag == "SessionStart" && h.field("source") != "compact" {
			t.Errorf("SessionStart during compaction with source %q", h.field("source"))
		}
	}

	// --- /clear
	r.ready(5 * time.Second)
	before := r.current(file)
	tE = r.typeLine("/clear")
	se := r.log.wait(t, 10*time.Second, "SessionEnd", tE, nil)
	ss = r.log.wait(t, 10*time.Second, "SessionStart", tE, nil)
	ch := r.sess.wait(t, 10*time.Second, "new sessionId", tE, func(c sessChange) bool { return !c.Removed && c.S.SessionID != before.SessionID })
	r.note("/clear: SessionEnd(reason=%s, session_id old) %s; SessionStart(source=%s, session_id new) %s; session file (same name %s: %v, same inode: %v) sessionId %s -> %s at %s, status %q",
		se.field("reason"), ms(tE, se.time()), ss.field("source"), ms(tE, ss.time()), file, ch.File == file, ch.Ino == idle.Ino, before.SessionID, ch.S.SessionID, ms(tE, ch.T), ch.S.Status)
	time.Sleep(300 * time.Millisecond)
	r.note("/clear: session file changes %s", r.statusChanges(tE, time.Now()))
	if se.field("reason") != "clear" || ss.field("source") != "clear" || ss.field("session_id") != ch.S.SessionID || ch.File != file {
		t.Errorf("/clear: SessionEnd %s SessionStart %s file %+v", se.Stdin, ss.Stdin, ch)
	}

	// --- /resume <id> inside the running claude
	r.ready(5 * time.Second)
	before = r.current(file)
	tE = r.typeLine("/resume " + origID)
	se = r.log.wait(t, 10*time.Second, "SessionEnd", tE, nil)
	ss = r.log.wait(t, 10*time.Second, "SessionStart", tE, nil)
	ch = r.sess.wait(t, 10*time.Second, "resumed sessionId", tE, func(c sessChange) bool { return !c.Removed && c.S.SessionID == origID })
	r.note("/resume <first session id>: SessionEnd(reason=%s) %s; SessionStart(source=%s, session_id=%s) %s; session file sessionId %s -> %s (the resumed id: %v), same pid file %v",
		se.field("reason"), ms(tE, se.time()), ss.field("source"), ss.field("session_id"), ms(tE, ss.time()), before.SessionID, ch.S.SessionID, ch.S.SessionID == origID, ch.File == file)
	if se.field("reason") != "resume" || ss.field("source") != "resume" {
		t.Errorf("/resume: SessionEnd %s SessionStart %s", se.Stdin, ss.Stdin)
	}

	// --- /exit
	r.ready(10 * time.Second)
	tE = r.typeLine("/exit")
	se = r.log.wait(t, 10*time.Second, "SessionEnd", tE, nil)
	gone := r.sess.wait(t, 10*time.Second, "removed", tE, func(c sessChange) bool { return c.Removed && c.File == file })
	waitFor(t, 10*time.Second, "pane dead", func() bool { return r.tm.Display(r.pane, "#{pane_dead}") == "1" }, nil)
	r.note("/exit: SessionEnd(reason=%s) %s; session file removed %s (%s relative to SessionEnd); pane dead %s",
		se.field("reason"), ms(tE, se.time()), ms(tE, gone.T), ms(se.time(), gone.T), ms(tE, time.Now()))
	if se.field("reason") != "prompt_input_exit" {
		t.Errorf("/exit: %s", se.Stdin)
	}

	// --- claude --resume <id>, then the tmux session is killed (SIGHUP)
	t0 = time.Now()
	pane2 := r.tm.NewSession("b", r.proj, 140, 40, nil, claude, "--settings", settings, "--resume", origID)
	ss = r.log.wait(t, 30*time.Second, "SessionStart", t0, nil)
	created = r.claudePID(t0)
	r.pane = pane2
	r.ready(20 * time.Second)
	r.note("claude --resume <id>: SessionStart(source=%s, session_id=%s, same as resumed: %v) %s; new session file %s with sessionId %s (same as resumed: %v)",
		ss.field("source"), ss.field("session_id"), ss.field("session_id") == origID, ms(t0, ss.time()), created.File, created.S.SessionID, created.S.SessionID == origID)
	if ss.field("source") != "resume" {
		t.Errorf("--resume: SessionStart %s", ss.Stdin)
	}
	tK = time.Now()
	r.tm.Must("kill-session", "-t", "b")
	se = r.log.wait(t, 10*time.Second, "SessionEnd", tK, nil)
	gone = r.sess.wait(t, 10*time.Second, "removed", tK, func(c sessChange) bool { return c.Removed && c.File == created.File })
	r.note("tmux kill-session (SIGHUP to claude): SessionEnd(reason=%s) %s; session file removed %s", se.field("reason"), ms(tK, se.time()), ms(tK, gone.T))
	r.pane = ""

	// --- summaries: statusUpdatedAt vs observation, status line, helpers
	var lag []int64
	prevStatus := map[string]int64{}
	for _, c := range r.sess.all() {
		if !c.Removed && c.S.StatusUpdatedAt > 0 && c.S.StatusUpdatedAt != prevStatus[c.File] {
			lag = append(lag, c.T.Sub(msTime(c.S.StatusUpdatedAt)).Milliseconds())
		}
		prevStatus[c.File] = c.S.StatusUpdatedAt
	}
	sort.Slice(lag, func(i, j int) bool { return lag[i] < lag[j] })
	if len(lag) > 0 {
		r.note("session file: %d changes of statusUpdatedAt seen; observation time (fsnotify) minus statusUpdatedAt: min %d ms, median %d ms, max %d ms", len(lag), lag[0], lag[len(lag)/2], lag[len(lag)-1])
		if lag[0] < -1000 || lag[len(lag)/2] > 1000 {
			t.Errorf("statusUpdatedAt is not wall-clock ms: lags %v", lag)
		}
	}
	var sl []hookRec
	for _, h := range r.log.all() {
		if h.Kind == "statusline" {
			sl = append(sl, h)
		}
	}
	if len(sl) > 0 {
		var keys []string
		for k := range sl[len(sl)-1].payload() {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		r.note("status line: %d runs in the whole scenario; parent %q; payload keys %v; a late payload: %s", len(sl), sl[0].ParentCmdline, keys, sl[len(sl)-1].Stdin)
		var when []string
		for _, h := range sl {
			var prev hookRec
			for _, k := range r.log.all() {
				if k.Kind == "hook" && k.T <= h.T {
					prev = k
				}
			}
			if prev.T == 0 {
				when = append(when, fmt.Sprintf("%s(before any hook)", ms(tLaunch, h.time())))
			} else {
				when = append(when, fmt.Sprintf("%s(%s after %s)", ms(tLaunch, h.time()), ms(prev.time(), h.time()), prev.Tag))
			}
		}
		r.note("status line runs (relative to launch, and to the latest hook before it): %s", strings.Join(when, " "))
	}
	partial, empty := r.sess.partialReads()
	r.note("session file reads (one per fsnotify event) that found invalid JSON: %d, an empty file: %d", partial, empty)
	names, waits := map[string]bool{}, map[string]bool{}
	for _, c := range r.sess.all() {
		names[c.S.Name] = true
		waits[c.S.WaitingFor] = true
	}
	r.note("session file name values seen: %v; waitingFor values seen: %v", names, waits)
	var helpers, long []string
	hookProcs := 0
	for _, p := range r.procs.list() {
		if strings.Contains(p.Cmdline, recorderFlag) || p.Comm == "claudeenv.test" {
			hookProcs++
			continue
		}
		d := fmt.Sprintf("%s %q", p.Comm, truncate(p.Cmdline, 90))
		helpers = append(helpers, d)
		if p.Last.Sub(p.Seen) > time.Second {
			long = append(long, fmt.Sprintf("%s (pid %d, parent %d, seen from %s to %s after launch)", d, p.PID, p.PPID,
				ms(tLaunch, p.Seen), ms(tLaunch, p.Last)))
		}
	}
	r.note("descendants of claude seen by a 25 ms /proc sampler (besides %d hook/status line processes): %s", hookProcs, strings.Join(helpers, "; "))
	r.note("descendants that lived longer than 1 s: %s", strings.Join(long, "; "))
}

func lastKind(api *fakeapi.Server) string {
	var ks []string
	for _, q := range api.Requests() {
		if q.Kind == fakeapi.KindCompact {
			ks = append(ks, fmt.Sprintf("#%d compact", q.Seq))
		}
	}
	return strings.Join(ks, ", ")
}

func firstLineWith(screen, s string) string {
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, s) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

// lastLines returns the last n non-blank lines of a screen.
func lastLines(screen string, n int) string {
	var out []string
	for _, l := range strings.Split(screen, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, strings.TrimRight(l, " "))
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return strings.Join(out, "\n") + "\n"
}

// interrupts counts "[Request interrupted by user" lines in a transcript.
func (r *rig) interrupts(sessionID string) int {
	b, _ := os.ReadFile(r.env.TranscriptPath(r.proj, sessionID))
	return strings.Count(string(b), "[Request interrupted by user")
}

// newInterrupt polls the transcript for up to 1.5 s for more than before
// interrupt lines and describes when one appeared.
func (r *rig) newInterrupt(sessionID string, before int, since time.Time) string {
	deadline := time.Now().Add(1500 * time.Millisecond)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(r.env.TranscriptPath(r.proj, sessionID))
		if n := strings.Count(string(b), "[Request interrupted by user"); n > before {
			i := strings.LastIndex(string(b), "[Request interrupted by user")
			end := strings.IndexAny(string(b)[i:], "\"]")
			return fmt.Sprintf("%q appeared %s", string(b)[i:i+end], ms(since, time.Now()))
		}
		time.Sleep(20 * time.Millisecond)
	}
	return "none within 1.5 s"
}

// ---- experiment 2: hook mechanics ---------------------------------------------

func observeHookMechanics(t *testing.T, claude, bin string, rep *report) {
	r := newRig(t, rep, "2 hooks", fakeapi.Options{
		Rules: []fakeapi.Rule{{Contains: "WRITE", ReplyFunc: func(*fakeapi.Request) fakeapi.Reply {
			return fakeapi.ToolUse("Write", map[string]any{"file_path": "/nonexistent/blocked.txt", "content": "x"})
		}}},
	}, claudeenv.Options{})
	// The hook program and the settings live in a directory with a space.
	sp := filepath.Join(r.dir, "dir with space")
	if err := os.MkdirAll(sp, 0o755); err != nil {
		t.Fatal(err)
	}
	hb := filepath.Join(sp, "hook helper")
	if err := os.Symlink(bin, hb); err != nil {
		t.Fatal(err)
	}
	rc := func(kind, tag string, opts ...string) string { return recorderCmd(hb, r.log.path, kind, tag, opts...) }
	// ~/.claude/settings.json: a few hooks and a status line of "the user".
	if err := r.env.WriteUserSettings(map[string]any{
		"hooks": map[string]any{
			"SessionStart":     []any{hookEntry("", cmdHook(rc("hook", "home:SessionStart")))},
			"UserPromptSubmit": []any{hookEntry("", cmdHook(rc("hook", "home:UserPromptSubmit")))},
			"Stop":             []any{hookEntry("", cmdHook(rc("hook", "home:Stop")))},
		},
		"statusLine": map[string]any{"type": "command", "command": rc("statusline", "home")},
	}); err != nil {
		t.Fatal(err)
	}
	settings := filepath.Join(sp, "corral settings.json")
	writeJSON(t, settings, map[string]any{
		"hooks": map[string]any{
			"SessionStart":     []any{hookEntry("", cmdHook(rc("hook", "SessionStart", "stdout=SESSIONSTART-STDOUT-MARKER")))},
			"UserPromptSubmit": []any{hookEntry("", cmdHook(rc("hook", "UserPromptSubmit", "sleep=2s", "stdout=UPS-STDOUT-MARKER", "note=/x y 'q'")))},
			"PreToolUse": []any{
				hookEntry("Write", cmdHook(rc("hook", "PreToolUse:Write", "exit=2", "stderr=PRETOOL-BLOCKED-MARKER"))),
				hookEntry("Bash", cmdHook(rc("hook", "PreToolUse:Bash"))),
			},
			"PermissionRequest":  []any{hookEntry("", cmdHook(rc("hook", "PermissionRequest")))},
			"PostToolUse":        []any{hookEntry("", cmdHook(rc("hook", "PostToolUse", "sleep=3s"), "async", true))},
			"PostToolUseFailure": []any{hookEntry("", cmdHook(rc("hook", "PostToolUseFailure")))},
			"Stop": []any{hookEntry("",
				cmdHook(rc("hook", "Stop", "sleep=5s"), "timeout", 1),
				cmdHook(rc("hook", "Stop:exit1", "exit=1", "stderr=STOP-EXIT1-MARKER")))},
			"StopFailure":  []any{hookEntry("", cmdHook(rc("hook", "StopFailure")))},
			"Notification": []any{hookEntry("", cmdHook(rc("hook", "Notification")))},
			"SessionEnd":   []any{hookEntry("", cmdHook(rc("hook", "SessionEnd")))},
		},
		"statusLine": map[string]any{"type": "command", "command": rc("statusline", "settings", "sleep=2s")},
	})

	// Start an interactive bash in the pane and type the claude command into it.
	t0 := time.Now()
	r.pane = r.tm.NewSession("h", r.proj, 140, 40, []string{"CORRAL_SESSION=obs-h", "PS1=$ "}, "bash", "--norc", "--noprofile")
	panePID := r.tm.PanePID(r.pane)
	r.procs.addRoot(panePID)
	r.tm.WaitText(r.pane, "$", 10*time.Second)
	r.tm.SendText(r.pane, claude+" --settings "+shq(settings))
	r.tm.SendKeys(r.pane, "Enter")
	ss := r.log.wait(t, 30*time.Second, "SessionStart", t0, nil)
	created := r.claudePID(t0)
	pid := created.S.PID
	r.ready(20 * time.Second)
	ppid := 0
	if f := statFields(pid); len(f) > 1 {
		ppid, _ = strconv.Atoi(f[1])
	}
	r.note("claude typed into bash: pane_pid %d (%s), claude pid %d, claude's parent %d (== pane pid: %v)", panePID, procField(panePID, "comm"), pid, ppid, ppid == panePID)
	if ppid != panePID {
		t.Errorf("claude's parent %d, pane pid %d", ppid, panePID)
	}
	home := r.log.wait(t, 10*time.Second, "home:SessionStart", t0, nil)
	r.note("hooks in --settings and in ~/.claude/settings.json both fire (merged): --settings SessionStart %s, ~/.claude/settings.json SessionStart %s after launch",
		ms(t0, ss.time()), ms(t0, home.time()))
	r.note("a command string with single-quoted words runs through sh: argv of the recorder = %q", ss.Argv)
	if len(ss.Argv) < 2 || ss.Argv[0] != hb {
		t.Errorf("argv %q", ss.Argv)
	}

	// say hello: UserPromptSubmit sleeps 2 s and prints to stdout; Stop sleeps 5 s with timeout 1.
	tE := r.typeLine("say hello")
	ups := r.log.wait(t, 10*time.Second, "UserPromptSubmit", tE, nil)
	req := r.api.AwaitPrompt(t, "say hello", 15*time.Second)
	upsEnd, _ := r.log.find("hook-end", "UserPromptSubmit", tE)
	body := string(req.Body)
	r.note("UserPromptSubmit hook sleeping 2 s: hook start %s, hook end %s, API request %s => Claude waits for UserPromptSubmit hooks before calling the model: %v",
		ms(tE, ups.time()), ms(tE, upsEnd.time()), ms(tE, req.Time), req.Time.Sub(ups.time()) > 1900*time.Millisecond)
	r.note("hook stdout reaches the model: UserPromptSubmit stdout in the request: %v; SessionStart stdout in the request: %v",
		strings.Contains(body, "UPS-STDOUT-MARKER"), strings.Contains(body, "SESSIONSTART-STDOUT-MARKER"))
	r.note("argv with an argument containing spaces and quotes: %q", ups.Argv[len(ups.Argv)-1])
	if ups.Argv[len(ups.Argv)-1] != "note=/x y 'q'" {
		t.Errorf("argv not split as sh would: %q", ups.Argv)
	}
	stop := r.log.wait(t, 15*time.Second, "Stop", tE, nil)
	busy := r.sess.status(t, 10*time.Second, "busy", tE)
	idle := r.sess.status(t, 15*time.Second, "idle", busy.T)
	time.Sleep(time.Until(stop.time().Add(5500 * time.Millisecond)))
	stopEnd, stopEnded := r.log.find("hook-end", "Stop", stop.time())
	_, exit1 := r.log.find("hook", "Stop:exit1", tE)
	_, homeStop := r.log.find("hook", "home:Stop", tE)
	_, homeUPS := r.log.find("hook", "home:UserPromptSubmit", tE)
	scr := r.tm.Capture(r.pane)
	endAt := "never"
	if stopEnded {
		endAt = ms(stop.time(), stopEnd.time())
	}
	r.note("Stop hook sleeping 5 s with \"timeout\": 1: hook start %s; file idle %s (%s after the Stop hook started); the hook's end line written: %s => killed at the timeout: %v",
		ms(tE, stop.time()), ms(tE, idle.T), ms(stop.time(), idle.T), endAt, !stopEnded)
	r.note("second Stop hook exiting 1 with stderr ran: %v; screen lines mentioning it: %q; ~/.claude/settings.json hooks ran too: UserPromptSubmit %v, Stop %v",
		exit1, linesWith(scr, "STOP-EXIT1", "hook", "Stop"), homeUPS, homeStop)
	if !homeUPS || !homeStop {
		t.Errorf("hooks of ~/.claude/settings.json did not run next to --settings ones: UserPromptSubmit %v Stop %v", homeUPS, homeStop)
	}

	// A PreToolUse hook exiting 2 blocks the tool.
	r.ready(10 * time.Second)
	tE = r.typeLine("WRITE it")
	pw := r.log.wait(t, 10*time.Second, "PreToolUse:Write", tE, nil)
	tr := r.api.AwaitAfter(t, req.Seq, 15*time.Second, func(q fakeapi.Request) bool { return len(q.ToolResults) > 0 && q.Time.After(tE) })
	r.log.wait(t, 15*time.Second, "Stop", tE, nil)
	r.note("PreToolUse hook exiting 2 (stderr PRETOOL-BLOCKED-MARKER): hooks [%s]; tool_result sent to the model is_error=%v content=%q",
		hookNames(r.hooksBetween(tE, time.Now())), tr.ToolResults[0].IsError, tr.ToolResults[0].Content)
	_ = pw
	if !strings.Contains(tr.ToolResults[0].Content, "PRETOOL-BLOCKED-MARKER") {
		t.Errorf("exit 2 did not block the tool: %+v", tr.ToolResults)
	}

	// An async PostToolUse hook (sleep 3 s) does not hold the next request.
	r.ready(10 * time.Second)
	tE = r.typeLine("RUNTOOL b")
	r.log.wait(t, 10*time.Second, "PermissionRequest", tE, nil)
	r.tm.WaitText(r.pane, "Do you want to proceed?", 5*time.Second)
	r.key("1")
	post := r.log.wait(t, 10*time.Second, "PostToolUse", tE, nil)
	tr = r.api.AwaitAfter(t, tr.Seq, 15*time.Second, func(q fakeapi.Request) bool { return len(q.ToolResults) > 0 && q.Time.After(tE) })
	r.note("async PostToolUse hook sleeping 3 s: hook start %s before the follow-up model request => \"async\": true does not block: %v",
		ms(post.time(), tr.Time), tr.Time.Sub(post.time()) < 1500*time.Millisecond)

	// Status line: which one ran, how long Claude waits for a slow one.
	var home2, mine []hookRec
	ends := map[int]hookRec{}
	for _, h := range r.log.all() {
		switch {
		case h.Kind == "statusline" && h.Tag == "home":
			home2 = append(home2, h)
		case h.Kind == "statusline" && h.Tag == "settings":
			mine = append(mine, h)
		case h.Kind == "statusline-end":
			ends[h.PID] = h
		}
	}
	var runs []string
	for _, h := range mine {
		e, ok := ends[h.PID]
		if ok {
			runs = append(runs, fmt.Sprintf("%s..%s", ms(t0, h.time()), ms(t0, e.time())))
		} else {
			runs = append(runs, fmt.Sprintf("%s..(no end)", ms(t0, h.time())))
		}
	}
	r.note("statusLine in --settings vs ~/.claude/settings.json: --settings one ran %d times, the ~/.claude/settings.json one %d times; screen shows %q",
		len(mine), len(home2), firstLineWith(scr, "SL-"))
	r.note("slow (2 s) status line runs (start..end relative to launch): %s", strings.Join(runs, " "))
	if len(mine) == 0 || len(home2) != 0 {
		t.Errorf("statusLine precedence: --settings %d runs, home %d runs", len(mine), len(home2))
	}

	tE = r.typeLine("/exit")
	se := r.log.wait(t, 10*time.Second, "SessionEnd", tE, nil)
	waitFor(t, 10*time.Second, "bash back in the pane", func() bool { return r.tm.Display(r.pane, "#{pane_current_command}") == "bash" }, nil)
	r.note("/exit from bash: SessionEnd %s; bash is the pane's foreground command again %s", ms(tE, se.time()), ms(tE, time.Now()))
	r.pane = ""
}

func linesWith(screen string, subs ...string) []string {
	var out []string
	for _, l := range strings.Split(screen, "\n") {
		for _, s := range subs {
			if strings.Contains(l, s) {
				out = append(out, strings.TrimSpace(l))
				break
			}
		}
	}
	return out
}

// ---- experiment 3: API errors and an unreachable API -------------------------

func observeErrors(t *testing.T, claude, bin string, rep *report) {
	r := newRig(t, rep, "3 errors", fakeapi.Options{
		Rules: []fakeapi.Rule{
			{Contains: "E529", Reply: fakeapi.Overloaded()},
			{Contains: "E429", Reply: fakeapi.RateLimited(1)},
			{Contains: "E500", Reply: fakeapi.ServerError()},
		},
	}, claudeenv.Options{Env: []string{"CLAUDE_CODE_MAX_RETRIES=1"}})
	settings := r.settings(bin)
	t0 := time.Now()
	r.pane = r.tm.NewSession("e", r.proj, 140, 40, nil, claude, "--settings", settings)
	r.log.wait(t, 30*time.Second, "SessionStart", t0, nil)
	r.ready(20 * time.Second)
	r.note("CLAUDE_CODE_MAX_RETRIES=1 for this claude")
	for _, p := range []string{"E529 please", "E429 please", "E500 please"} {
		tE := r.typeLine(p)
		sf := r.log.wait(t, 40*time.Second, "StopFailure", tE, nil)
		idle := r.sess.status(t, 10*time.Second, "idle", tE)
		n := 0
		for _, q := range r.api.Prompts() {
			if q.Prompt == p {
				n++
			}
		}
		r.note("%s: StopFailure %s error=%q last_assistant_message=%q; %d requests; file changes %s",
			p, ms(tE, sf.time()), sf.field("error"), sf.field("last_assistant_message"), n, r.statusChanges(tE, idle.T.Add(50*time.Millisecond)))
		r.expectNo("Stop", tE, time.Now())
		r.ready(10 * time.Second)
	}
	// Now the API goes away: connection refused.
	r.api.Close()
	if c, err := net.Dial("tcp", strings.TrimPrefix(r.api.URL(), "http://")); err == nil {
		c.Close()
		t.Fatal("fake API still accepting connections after Close")
	}
	tE := r.typeLine("hello dead")
	scr := r.tm.WaitText(r.pane, "Unable to connect", 20*time.Second)
	sf := r.log.wait(t, 60*time.Second, "StopFailure", tE, nil)
	idle := r.sess.status(t, 10*time.Second, "idle", tE)
	r.note("API unreachable (connection refused): screen while retrying %q; StopFailure %s error=%q last_assistant_message=%q; file changes %s",
		firstLineWith(scr, "Unable to connect"), ms(tE, sf.time()), sf.field("error"), sf.field("last_assistant_message"), r.statusChanges(tE, idle.T.Add(50*time.Millisecond)))
	if sf.field("error") != "server_error" {
		t.Errorf("connection refused: StopFailure %s", sf.Stdin)
	}
}
