package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/datadir"
	"github.com/corral-dev/corral/internal/version"
)

func TestNoDaemon(t *testing.T) {
	in := newInstall(t)
	for _, args := range [][]string{{"ls"}, {"ls", "--json"}, {"send", "x", "hi"}, {"kill", "x"}} {
		r := in.run(args...)
		if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "corral serve") {
			t.Errorf("corral %s without a daemon: exit %d, stdout %q, stderr %q; want exit 1 and a hint to run corral serve",
				strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
	}
	if r := in.run("ls", "--hub", "http://127.0.0.1:1"); r.code != 1 || !strings.Contains(r.stderr, "--token") {
		t.Errorf("--hub without a token: %+v", r)
	}
}

func TestLs(t *testing.T) {
	in := newInstall(t)
	in.startDaemon()

	r := in.run("ls")
	if r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, "no sessions") {
		t.Errorf("ls on an empty daemon: %+v", r)
	}
	if out := in.must("ls", "--json"); out != "[]\n" {
		t.Errorf("ls --json on an empty daemon = %q, want []", out)
	}

	id := in.shell("table")
	out := in.must("ls")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "ID") || !strings.Contains(lines[0], "STATUS") {
		t.Fatalf("ls table:\n%s", out)
	}
	if f := strings.Fields(lines[1]); len(f) < 4 || f[0] != id || f[1] != "table" || f[2] != "idle" {
		t.Errorf("ls row %q, want id, name, status", lines[1])
	}

	// The scripting contract: an array of objects with these keys, always
	// present (null or "" when empty).
	var raw []map[string]json.RawMessage
	if err := json.Unmarshal([]byte(in.must("ls", "--json")), &raw); err != nil {
		t.Fatal(err)
	}
	if len(raw) != 1 {
		t.Fatalf("ls --json: %d sessions", len(raw))
	}
	want := map[string]string{
		"id": strconv.Quote(id), "name": `"table"`, "dir": strconv.Quote(in.proj), "status": `"idle"`,
		"claude_session_id": `""`, "current_tool": `""`, "waiting_for": "null", "error": `""`,
	}
	for k, v := range want {
		got, ok := raw[0][k]
		if !ok {
			t.Errorf("ls --json lacks %q", k)
		} else if string(got) != v {
			t.Errorf("ls --json %s = %s, want %s", k, got, v)
		}
	}
	var updated time.Time
	if err := json.Unmarshal(raw[0]["updated_at"], &updated); err != nil || updated.IsZero() || time.Since(updated) > time.Minute {
		t.Errorf("updated_at = %s (%v)", raw[0]["updated_at"], err)
	}
	if r := in.run("list", "--json"); r.code != 0 || r.stdout == "" {
		t.Errorf("the list alias: %+v", r)
	}
}

func TestNewKillRename(t *testing.T) {
	in := newInstall(t)
	in.startDaemon()

	out := in.must("new", "--shell", "--dir", in.proj, "--json")
	var s api.Session
	if err := json.Unmarshal([]byte(out), &s); err != nil || s.Kind != api.KindShell || s.Name != "proj" || s.Dir != in.proj {
		t.Fatalf("new --json = %s (%v)", out, err)
	}
	if r := in.run("new", "--shell", "--resume", "abcdefgh-1234"); r.code != 1 || !strings.Contains(r.stderr, "--shell") {
		t.Errorf("new --shell --resume: %+v", r)
	}
	if r := in.run("new", "--shell", "--dir", filepath.Join(in.proj, "missing")); r.code != 1 || !strings.Contains(r.stderr, "does not exist") {
		t.Errorf("new in a missing dir: %+v", r)
	}

	in.must("rename", s.ID, "better")
	got, err := in.c.Session(context.Background(), s.ID)
	if err != nil || got.Name != "better" {
		t.Errorf("after rename: %+v, %v", got, err)
	}
	in.must("kill", "better")
	if _, err := in.c.Session(context.Background(), s.ID); !errors.Is(err, api.ErrNotFound) {
		t.Errorf("after kill by name: %v", err)
	}
	if r := in.run("kill", "better"); r.code != 1 || !strings.Contains(r.stderr, "no session") {
		t.Errorf("kill of a gone session: %+v", r)
	}
}

func TestResolve(t *testing.T) {
	in := newInstall(t)
	in.startDaemon()
	ctx := context.Background()

	// Make sessions until two ids share a first character.
	byFirst := map[byte][]string{}
	var pair []string
	for i := 0; pair == nil; i++ {
		if i == 40 {
			t.Fatal("40 sessions without two ids sharing a first character")
		}
		id := in.shell(fmt.Sprintf("s%d", i))
		byFirst[id[0]] = append(byFirst[id[0]], id)
		if len(byFirst[id[0]]) == 2 {
			pair = byFirst[id[0]]
		}
	}
	a, b := pair[0], pair[1]

	// Exact id, name, unique prefix.
	for ref, want := range map[string]string{a: a, b: b} {
		if s, err := resolve(ctx, in.c, ref); err != nil || s.ID != want {
			t.Errorf("resolve(%q) = %s, %v", ref, s.ID, err)
		}
	}
	sa, _ := in.c.Session(ctx, a)
	if s, err := resolve(ctx, in.c, sa.Name); err != nil || s.ID != a {
		t.Errorf("resolve by name %q = %s, %v", sa.Name, s.ID, err)
	}
	if s, err := resolve(ctx, in.c, a[:len(a)-1]); err != nil || s.ID != a {
		t.Errorf("resolve by prefix = %s, %v", s.ID, err)
	}
	// Ambiguous prefix.
	_, err := resolve(ctx, in.c, a[:1])
	if err == nil || !strings.Contains(err.Error(), "matches 2 session ids") {
		t.Errorf("ambiguous prefix %q: %v", a[:1], err)
	}
	// A name beats a prefix; an exact id beats a name.
	in.must("rename", b, a[:1])
	if s, err := resolve(ctx, in.c, a[:1]); err != nil || s.ID != b {
		t.Errorf("name equal to a prefix: %s, %v; want the named session %s", s.ID, err, b)
	}
	in.must("rename", b, a)
	if s, err := resolve(ctx, in.c, a); err != nil || s.ID != a {
		t.Errorf("name equal to another id: %s, %v; want the id's session %s", s.ID, err, a)
	}
	// Two sessions with one name (Rename allows it today; Create does not).
	in.must("rename", b, "twin")
	if r := in.run("rename", a, "twin"); r.code == 0 {
		_, err = resolve(ctx, in.c, "twin")
		if err == nil || !strings.Contains(err.Error(), "2 sessions are named") {
			t.Errorf("ambiguous name: %v", err)
		}
		if r := in.run("send", "twin", "x"); r.code != 1 || !strings.Contains(r.stderr, "use the id") {
			t.Errorf("send to an ambiguous name: %+v", r)
		}
	}
	_, err = resolve(ctx, in.c, "nothing-like-it")
	if !errors.Is(err, api.ErrNotFound) || !strings.Contains(err.Error(), "corral ls") {
		t.Errorf("unknown ref: %v", err)
	}
	if _, err := resolve(ctx, in.c, ""); err == nil {
		t.Error("empty ref resolved")
	}
}

func TestRunExitCode(t *testing.T) {
	in := newInstall(t)
	in.startDaemon()
	id := in.shell("runner")

	r := in.run("run", "runner", "--", "sh", "-c", "echo out; exit 7")
	if r.code != 7 || r.stdout != "out\n" {
		t.Errorf("run exit 7: %+v", r)
	}
	if r := in.run("run", id, "--", "true"); r.code != 0 || r.stdout != "" {
		t.Errorf("run true: %+v", r)
	}
	if r := in.run("run", id, "--", "printf", "no newline"); r.code != 0 || r.stdout != "no newline\n" {
		t.Errorf("output without a final newline: %q", r.stdout)
	}
	if r := in.run("run", id, "--", "no-such-command-xyz"); r.code != 127 {
		t.Errorf("missing command: %+v", r)
	}
	if r := in.run("run", "--timeout", "200ms", id, "--", "sleep", "10"); r.code != 124 || !strings.Contains(r.stdout, "timed out") {
		t.Errorf("timeout: %+v", r)
	}
	if r := in.run("run", id, "--", "sh", "-c", "yes | head -c 1100000"); r.code != 0 || !strings.Contains(r.stderr, "cut") || len(r.stdout) < 256<<10 {
		t.Errorf("capped output: exit %d, %d bytes, stderr %q", r.code, len(r.stdout), r.stderr)
	}
	// Without "--" the command's own flags are still the command's.
	if r := in.run("run", id, "sh", "-c", "echo hi"); r.code != 0 || r.stdout != "hi\n" {
		t.Errorf("run without --: %+v", r)
	}
	if r := in.run("run", "nosuch", "--", "true"); r.code != 1 || !strings.Contains(r.stderr, "no session") {
		t.Errorf("run in an unknown session: %+v", r)
	}
}

func TestSendKeysCapture(t *testing.T) {
	in := newInstall(t)
	in.startDaemon()
	id := in.shell("typist")

	if r := in.runIn("echo from-stdin-$((2+3))\n\n", "send", "typist", "-"); r.code != 0 {
		t.Fatalf("send -: %+v", r)
	}
	in.waitScreen(id, "from-stdin-5")
	in.must("send", "typist", "echo", "joined", "words-$((1+1))")
	in.waitScreen(id, "joined words-2")
	in.must("send", "--no-enter", "typist", "echo keyed-$((4+4))")
	in.must("keys", "typist", "Enter")
	in.waitScreen(id, "keyed-8")
	if r := in.run("keys", "typist", "NotAKey"); r.code != 1 || !strings.Contains(r.stderr, "invalid key") {
		t.Errorf("keys with a bad name: %+v", r)
	}

	var scr api.Screen
	if err := json.Unmarshal([]byte(in.must("capture", "--json", "typist")), &scr); err != nil || scr.Cols == 0 || scr.Rows == 0 {
		t.Errorf("capture --json: %+v %v", scr, err)
	}
	if out := in.must("capture", "--history", "100", "typist"); !strings.Contains(out, "from-stdin-5") {
		t.Errorf("capture --history:\n%s", out)
	}
}

func TestVersionAndDoctor(t *testing.T) {
	in := newInstall(t)
	// Without a daemon: the version, and doctor says what to do.
	want := "corral " + describeBuild(version.Get()) + "\n"
	if out := in.must("version"); out != want || !strings.HasPrefix(out, "corral "+version.String()+" (") {
		t.Errorf("version without a daemon = %q", out)
	}
	var vj versionOutput
	if err := json.Unmarshal([]byte(in.must("version", "--json")), &vj); err != nil || vj.Version != version.String() || vj.Go == "" || vj.Daemon != nil {
		t.Errorf("version --json without a daemon = %+v, %v", vj, err)
	}
	r := in.run("doctor")
	if r.code != 1 || !strings.Contains(r.stdout, "not running") || !strings.Contains(r.stdout, "fix: corral serve") {
		t.Errorf("doctor without a daemon: %+v", r)
	}

	in.startDaemon()
	if out := in.must("version"); out != want {
		t.Errorf("version with a daemon of the same version = %q", out)
	}
	vj = versionOutput{}
	if err := json.Unmarshal([]byte(in.must("version", "--json")), &vj); err != nil || vj.Daemon == nil ||
		vj.Daemon.Version != version.String() || vj.Daemon.Commit != version.Get().Commit || vj.Daemon.PID != in.serve.Process.Pid {
		t.Errorf("version --json with a daemon = %+v (daemon %+v), %v", vj, vj.Daemon, err)
	}
	r = in.run("doctor")
	for _, want := range []string{"tmux", "claude", in.dataDir, fmt.Sprintf("running (pid %d)", in.serve.Process.Pid),
		"claude config   " + filepath.Join(in.home, ".claude")} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, r.stdout)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if strings.HasPrefix(line, "!!") && !strings.Contains(line, "claude") {
			t.Errorf("doctor reports a problem: %s", line)
		}
	}
}

func TestSecondServeRefused(t *testing.T) {
	in := newInstall(t)
	in.startDaemon()
	r := in.run("serve")
	if r.code != 1 || !strings.Contains(r.stderr, "already serving") || !strings.Contains(r.stderr, strconv.Itoa(in.serve.Process.Pid)) {
		t.Errorf("a second serve: %+v", r)
	}
	// The first one still serves.
	if _, err := in.c.Version(context.Background()); err != nil {
		t.Errorf("the first daemon: %v", err)
	}
}

func TestServeRestartKeepsSessions(t *testing.T) {
	in := newInstall(t)
	in.startDaemon()
	id := in.shell("keeper")
	in.must("send", id, "echo kept-$((8*8))")
	in.waitScreen(id, "kept-64")
	in.stopDaemon()
	if r := in.run("ls"); r.code != 1 {
		t.Errorf("ls with the daemon stopped: %+v", r)
	}
	in.startDaemon()
	out := in.must("ls", "--json")
	if !strings.Contains(out, id) {
		t.Fatalf("after restart: %s", out)
	}
	in.waitScreen(id, "kept-64")
}

func TestHookWithoutDaemon(t *testing.T) {
	in := newInstall(t)
	for _, name := range []string{"hook", "statusline"} {
		start := time.Now()
		r := in.runIn("\x00garbage{{{", name, "--data-dir", in.dataDir)
		if took := time.Since(start); took > time.Second {
			t.Errorf("%s took %v without a daemon", name, took)
		}
		if r.code != 0 || r.stdout != "" || r.stderr != "" {
			t.Errorf("%s with garbage and no daemon: %+v", name, r)
		}
	}
	// As Claude runs it: a process, through Main's fast path.
	stdout, stderr, code, took := runProcess(t, in.environ(), strings.NewReader("garbage"), "hook")
	if code != 0 || stdout != "" || stderr != "" || took > time.Second {
		t.Errorf("corral hook process: exit %d, stdout %q, stderr %q, %v", code, stdout, stderr, took)
	}
	// A data directory that cannot even be resolved.
	env := []string{mainEnv + "=1", "PATH=" + os.Getenv("PATH"), "GORACE=atexit_sleep_ms=0"}
	stdout, stderr, code, _ = runProcess(t, env, strings.NewReader("{}"), "hook")
	if code != 0 || stdout != "" {
		t.Errorf("corral hook with no HOME: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if r := in.run("hook", "--help"); r.code != 0 || !strings.Contains(r.stdout, "Usage") {
		t.Errorf("hook --help: %+v", r)
	}
}

func TestHookStuckAgentBounded(t *testing.T) {
	// Something listens on the hook socket but never reads: the delivery
	// gives up within about a second.
	in := newInstall(t)
	sock := datadir.Socket(in.dataDir, datadir.HookSocket)
	ln, err := listenUnix(sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // hold it, read nothing
		}
	}()
	big := strings.Repeat(`{"a":"`+strings.Repeat("x", 1000)+`"}`, 8000) // 8 MB
	start := time.Now()
	stdout, stderr, code, _ := runProcess(t, in.environ(), strings.NewReader(big), "hook")
	took := time.Since(start)
	// The hook gives up after hookTimeout; the rest is starting a process on
	// a machine that may be busy with other tests.
	if code != 0 || stdout != "" || took > hookTimeout+2*time.Second {
		t.Errorf("hook to a stuck agent: exit %d, stdout %q, stderr %q, took %v", code, stdout, stderr, took)
	}
}

func TestHookDelivers(t *testing.T) {
	in := newInstall(t)
	in.startDaemon()
	id := in.shell("hooked")
	var stdout, stderr strings.Builder
	e := &env{
		stdin:  strings.NewReader(`{"session_id":"c1","hook_event_name":"UserPromptSubmit","prompt":"from the hook"}`),
		stdout: &stdout, stderr: &stderr,
		getenv: func(k string) string {
			if k == "CORRAL_SESSION" {
				return id
			}
			return in.getenv(k)
		},
	}
	root := newRoot(e)
	root.SetArgs([]string{"hook"})
	if err := root.Execute(); err != nil || stdout.Len() != 0 {
		t.Fatalf("hook: %v, stdout %q, stderr %q", err, stdout.String(), stderr.String())
	}
	in.waitStatus(id, api.StatusBusy)
	s, _ := in.c.Session(context.Background(), id)
	if s.LastPrompt != "from the hook" {
		t.Errorf("last prompt %q", s.LastPrompt)
	}
}

func TestWatchCommand(t *testing.T) {
	in := newInstall(t)
	in.startDaemon()
	pr, pw := io.Pipe()
	e := &env{stdin: strings.NewReader(""), stdout: pw, stderr: io.Discard, getenv: in.getenv}
	root := newRoot(e)
	root.SetArgs([]string{"watch", "--json"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx); pw.Close() }()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func() api.Event {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("watch ended: %v", <-done)
			}
			var ev api.Event
			if err := json.Unmarshal([]byte(l), &ev); err != nil {
				t.Fatalf("watch --json line %q: %v", l, err)
			}
			return ev
		case <-time.After(10 * time.Second):
			t.Fatal("no line from watch --json")
		}
		return api.Event{}
	}
	if ev := next(); ev.Type != api.EventSnapshot {
		t.Fatalf("first line %+v", ev)
	}
	id := in.shell("watched")
	if ev := next(); ev.Type != api.EventSession || ev.Session.ID != id {
		t.Errorf("second line %+v", ev)
	}
	in.must("kill", id)
	if ev := next(); ev.Type != api.EventRemoved || ev.ID != id {
		t.Errorf("third line %+v", ev)
	}
	cancel()
	go func() {
		for range lines {
		}
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("watch after cancel: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("watch did not stop")
	}
}

func TestResumableCommand(t *testing.T) {
	in := newInstall(t)
	in.startDaemon()
	if out := in.must("resumable", "--json", in.proj); strings.TrimSpace(out) != "[]" {
		t.Errorf("resumable --json of a fresh dir = %q", out)
	}
	if r := in.run("resumable", "relative/dir"); r.code != 0 {
		// A relative DIR is made absolute against the current directory.
		t.Errorf("resumable with a relative dir: %+v", r)
	}
}

func TestResumableNoteOnStderr(t *testing.T) {
	in := newInstall(t)
	in.startDaemon()
	r := in.run("resumable", in.proj)
	if r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, "no Claude sessions") {
		t.Errorf("resumable with nothing to list: %+v", r)
	}
}

func TestHooksInstallRoundTrip(t *testing.T) {
	in := newInstall(t)
	settings := filepath.Join(in.home, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o700); err != nil {
		t.Fatal(err)
	}
	original := `{
  "model": "opus",
  "hooks": {
    "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]
  },
  "statusLine": {"type": "command", "command": "echo mine"}
}
`
	if err := os.WriteFile(settings, []byte(original), 0o600); err != nil {
		t.Fatal(err)
	}

	for _, args := range [][]string{{"hooks", "install"}, {"hooks", "uninstall"}} {
		r := in.run(args...)
		if r.code != 1 || !strings.Contains(r.stderr, "--global") {
			t.Errorf("%s without --global: %+v", strings.Join(args, " "), r)
		}
	}
	if b, _ := os.ReadFile(settings); string(b) != original {
		t.Fatalf("a refused command changed settings.json:\n%s", b)
	}

	out := in.must("hooks", "install", "--global")
	if !strings.Contains(out, "installed") || !strings.Contains(out, settings) || !strings.Contains(out, "backup") {
		t.Errorf("install said %q", out)
	}
	b, err := os.ReadFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("settings.json after install is not JSON: %v\n%s", err, b)
	}
	text := string(b)
	// Exec form: the hook's arguments are a JSON list.
	for _, want := range []string{"notify-send done", `"model": "opus"`, `"args": [`, `"--data-dir"`, in.dataDir, "statusline"} {
		if !strings.Contains(text, want) {
			t.Errorf("settings after install lack %q:\n%s", want, text)
		}
	}
	hooks, _ := got["hooks"].(map[string]any)
	for _, ev := range []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "Stop", "StopFailure", "SessionEnd"} {
		if _, ok := hooks[ev]; !ok {
			t.Errorf("no %s hook after install", ev)
		}
	}
	if out := in.must("hooks", "install", "--global"); !strings.Contains(out, "already") {
		t.Errorf("second install said %q", out)
	}

	out = in.must("hooks", "uninstall", "--global")
	if !strings.Contains(out, "removed") {
		t.Errorf("uninstall said %q", out)
	}
	b, _ = os.ReadFile(settings)
	var before, after any
	json.Unmarshal([]byte(original), &before)
	if err := json.Unmarshal(b, &after); err != nil {
		t.Fatal(err)
	}
	bj, _ := json.Marshal(before)
	aj, _ := json.Marshal(after)
	if string(bj) != string(aj) {
		t.Errorf("install then uninstall did not give the original back:\nbefore %s\nafter  %s", bj, aj)
	}
	if out := in.must("hooks", "uninstall", "--global"); !strings.Contains(out, "no corral hooks") {
		t.Errorf("second uninstall said %q", out)
	}
}

func TestHooksInstallWithoutSettings(t *testing.T) {
	in := newInstall(t)
	in.must("hooks", "install", "--global")
	settings := filepath.Join(in.home, ".claude", "settings.json")
	if _, err := os.Stat(settings); err != nil {
		t.Fatalf("install without a settings file: %v", err)
	}
	in.must("hooks", "uninstall", "--global")
	b, _ := os.ReadFile(settings)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("after uninstall: %v %s", err, b)
	}
	if _, ok := m["hooks"]; ok && len(m["hooks"].(map[string]any)) != 0 {
		t.Errorf("hooks left after uninstall: %s", b)
	}
}

// With CLAUDE_CONFIG_DIR set, Claude reads its settings from there, so the
// hooks must go there, and the status line must find the user's own there.
func TestHooksFollowClaudeConfigDir(t *testing.T) {
	in := newInstall(t)
	cfg := filepath.Join(in.home, "claude-cfg")
	in.env = map[string]string{"CLAUDE_CONFIG_DIR": cfg}
	settings := filepath.Join(cfg, "settings.json")
	if err := os.MkdirAll(cfg, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, []byte(`{"statusLine":{"type":"command","command":"printf cfg-dir-line"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := in.must("hooks", "install", "--global"); !strings.Contains(out, settings) {
		t.Errorf("install said %q, want it to name %s", out, settings)
	}
	b, _ := os.ReadFile(settings)
	if !strings.Contains(string(b), "PermissionRequest") {
		t.Errorf("no hooks in %s:\n%s", settings, b)
	}
	if _, err := os.Stat(filepath.Join(in.home, ".claude")); !os.IsNotExist(err) {
		t.Errorf("install touched ~/.claude although CLAUDE_CONFIG_DIR is set: %v", err)
	}
	if r := in.runIn(`{"cwd":"`+in.proj+`"}`, "statusline"); r.code != 0 || r.stdout != "cfg-dir-line" {
		t.Errorf("statusline: %+v", r)
	}
	if r := in.run("doctor"); !strings.Contains(r.stdout, cfg+" (from $CLAUDE_CONFIG_DIR)") {
		t.Errorf("doctor does not name the configuration directory:\n%s", r.stdout)
	}
}

func TestStatusLineRunsTheUsersOwn(t *testing.T) {
	in := newInstall(t)
	settings := filepath.Join(in.home, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, []byte(`{"statusLine":{"type":"command","command":"printf 'mine:%s' \"$(cat)\""}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	payload := `{"cwd":"` + in.proj + `","model":{"id":"m"}}`
	r := in.runIn(payload, "statusline")
	if r.code != 0 || r.stdout != "mine:"+payload {
		t.Errorf("statusline with the user's own: %+v", r)
	}
	// Still theirs once corral's status line replaced it in settings.json.
	in.must("hooks", "install", "--global")
	r = in.runIn(payload, "statusline")
	if r.code != 0 || r.stdout != "mine:"+payload {
		t.Errorf("statusline after hooks install: %+v", r)
	}
	// And a hook never prints.
	if r := in.runIn(`{"hook_event_name":"SessionStart"}`, "hook"); r.stdout != "" || r.code != 0 {
		t.Errorf("hook printed %q", r.stdout)
	}
}

func TestLsEscapesControlCharacters(t *testing.T) {
	in := newInstall(t)
	in.startDaemon()
	id := in.shell("plain")
	hookRun := func(payload string) {
		var out strings.Builder
		e := &env{stdin: strings.NewReader(payload), stdout: &out, stderr: &out, getenv: func(k string) string {
			if k == "CORRAL_SESSION" {
				return id
			}
			return in.getenv(k)
		}}
		root := newRoot(e)
		root.SetArgs([]string{"hook"})
		if err := root.Execute(); err != nil {
			t.Fatal(err)
		}
	}
	hookRun(`{"session_id":"c","hook_event_name":"UserPromptSubmit","prompt":"p"}`)
	hookRun(`{"session_id":"c","hook_event_name":"Stop","last_assistant_message":"done \u001b]0;pwned\u0007 \u001b[2J"}`)
	in.waitStatus(id, api.StatusReview)
	out := in.must("ls")
	if strings.ContainsAny(out, "\x1b\x07") {
		t.Errorf("ls printed control characters: %q", out)
	}
}

// TestAttachDetachKey runs `corral attach` in a terminal of its own: what is
// typed reaches the session, Ctrl-\ detaches and the session keeps running.
func TestAttachDetachKey(t *testing.T) {
	in := newInstall(t)
	in.startDaemon()
	id := in.shell("attached")

	user, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer user.Close()
	if err := pty.Setsize(user, &pty.Winsize{Cols: 100, Rows: 30}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(testExe(t), "attach", "attached")
	cmd.Env = append(in.environ(), "TERM=xterm-256color")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	var mu sync.Mutex
	var shown strings.Builder
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := user.Read(buf)
			mu.Lock()
			shown.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	waitShown := func(want string) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for time.Now().Before(deadline) {
			mu.Lock()
			ok := strings.Contains(shown.String(), want)
			mu.Unlock()
			if ok {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("terminal never showed %q:\n%q", want, shown.String())
	}
	waitShown("ctrl-\\ detaches")
	if _, err := user.Write([]byte("echo attached-$((5*5))\r")); err != nil {
		t.Fatal(err)
	}
	waitShown("attached-25")
	in.waitScreen(id, "attached-25")
	if _, err := user.Write([]byte{0x1c}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("corral attach after the detach key: %v", err)
		}
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		t.Fatal("corral attach did not exit on the detach key")
	}
	waitShown("[detached")
	if _, err := in.c.Session(context.Background(), id); err != nil {
		t.Fatalf("session gone after detaching: %v", err)
	}
}

// A device token never goes on the command line, where every local user
// reads it in /proc/PID/cmdline: corral agent refuses --token (and the
// global one) and points to --token-file and $CORRAL_DEVICE_TOKEN; a token
// file must hold one token.
func TestAgentTokenNotInArgv(t *testing.T) {
	in := newInstall(t)
	for _, args := range [][]string{
		{"agent", "--hub", "http://127.0.0.1:1", "--token", "ce_secret"},
		{"--token", "ce_secret", "agent", "--hub", "http://127.0.0.1:1"},
	} {
		r := in.run(args...)
		if r.code != 1 || !strings.Contains(r.stderr, "--token-file") || !strings.Contains(r.stderr, "CORRAL_DEVICE_TOKEN") {
			t.Errorf("corral %s: %+v; want a refusal that names --token-file and $CORRAL_DEVICE_TOKEN", strings.Join(args, " "), r)
		}
	}
	if _, err := os.Stat(filepath.Join(in.dataDir, datadir.DeviceKey)); err == nil {
		t.Errorf("a refused agent made a key")
	}
	dir := t.TempDir()
	for name, content := range map[string]string{"empty": "", "two": "ce_a ce_b\n", "huge": strings.Repeat("x", 5000)} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o600)
		if r := in.run("agent", "--hub", "http://127.0.0.1:1", "--token-file", p); r.code != 1 || !strings.Contains(r.stderr, "--token-file") {
			t.Errorf("a token file %s: %+v", name, r)
		}
	}
	if r := in.run("agent", "--hub", "http://127.0.0.1:1", "--token-file", filepath.Join(dir, "missing")); r.code != 1 || !strings.Contains(r.stderr, "no such file") {
		t.Errorf("a missing token file: %+v", r)
	}
}
