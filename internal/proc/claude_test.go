//go:build linux

package proc

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

func TestIsClaude(t *testing.T) {
	const npm = "/usr/lib/node_modules/@anthropic-ai/claude-code"
	tests := []struct {
		name string
		p    Proc
		want bool
	}{
		{"npm native, as claude", Proc{Comm: "claude", Exe: npm + "/bin/claude.exe", Cmdline: []string{"claude"}}, true},
		{"npm native, by real path", Proc{Comm: "claude.exe", Exe: npm + "/bin/claude.exe", Cmdline: []string{npm + "/bin/claude.exe", "--model", "x"}}, true},
		{"native installer", Proc{Comm: "claude", Exe: "/home/u/.local/share/claude/versions/2.1.197", Cmdline: []string{"claude"}}, true},
		{"old npm via node", Proc{Comm: "node", Exe: "/usr/bin/node", Cmdline: []string{"node", npm + "/cli.js", "--resume", "x"}}, true},
		{"node via symlink", Proc{Comm: "node", Exe: "/opt/node/bin/node", Cmdline: []string{"node", "--max-old-space-size=4096", "/usr/local/bin/claude"}}, true},
		{"versioned node", Proc{Comm: "node20", Exe: "/usr/bin/node20", Cmdline: []string{"node20", npm + "/cli.mjs"}}, true},
		{"unreadable exe, comm", Proc{Comm: "claude", Cmdline: []string{"claude"}}, true},
		{"unreadable exe, node argv", Proc{Comm: "node", Cmdline: []string{"/usr/bin/node", npm + "/cli.js"}}, true},
		{"wrapper script named claude", Proc{Comm: "claude", Exe: "/usr/bin/dash", Cmdline: []string{"/bin/sh", "/home/u/bin/claude"}}, false},
		{"shell running claude", Proc{Comm: "bash", Exe: "/usr/bin/bash", Cmdline: []string{"bash", "-c", "claude"}}, false},
		{"claude-squad", Proc{Comm: "claude-squad", Exe: "/usr/bin/claude-squad", Cmdline: []string{"claude-squad"}}, false},
		{"grep claude", Proc{Comm: "grep", Exe: "/usr/bin/grep", Cmdline: []string{"grep", "claude"}}, false},
		{"node, other script", Proc{Comm: "node", Exe: "/usr/bin/node", Cmdline: []string{"node", "server.js", "claude"}}, false},
		{"node, other cli.js", Proc{Comm: "node", Exe: "/usr/bin/node", Cmdline: []string{"node", "/x/other/cli.js"}}, false},
		{"nodemon", Proc{Comm: "nodemon", Exe: "/usr/bin/nodemon", Cmdline: []string{"nodemon", "/usr/bin/claude"}}, false},
		{"versions dir of another tool", Proc{Comm: "x", Exe: "/opt/tool/versions/1.0", Cmdline: []string{"x"}}, false},
		{"nothing known", Proc{}, false},
	}
	for _, tt := range tests {
		if got := IsClaude(tt.p); got != tt.want {
			t.Errorf("%s: IsClaude(%+v) = %v, want %v", tt.name, tt.p, got, tt.want)
		}
	}
}

func TestFindClaudeFake(t *testing.T) {
	// A pane shell that runs a program whose executable is named claude.
	fake := helperCmd(t, "block", "claude")
	sh := startBlockingHelper(t, exec.Command("sh", "-c", `"$0"; echo done`, fake.Path))
	shPID := sh.Process.Pid
	var p Proc
	waitFor(t, 5*time.Second, func() (bool, string) {
		var found bool
		var err error
		p, found, err = FindClaude(shPID)
		return found && err == nil && len(p.Cmdline) > 0, fmt.Sprint(found, err)
	})
	if p.PPID != shPID || p.Exe != fake.Path || p.Comm != "claude" {
		t.Errorf("found %+v", p)
	}
	// The claude itself as the pane process.
	if q, found, err := FindClaude(p.PID); !found || err != nil || q.PID != p.PID {
		t.Errorf("FindClaude(claude pid) = %+v, %v, %v", q, found, err)
	}
}

// An upgrade replaces the binary under a running claude; the kernel then
// shows its exe as "... (deleted)".
func TestFindClaudeDeletedExe(t *testing.T) {
	fake := helperCmd(t, "block", "claude.exe")
	c := startBlockingHelper(t, fake)
	settled(t, c.Process.Pid, func(p Proc) bool { return len(p.Cmdline) > 0 })
	if err := os.Remove(fake.Path); err != nil {
		t.Fatal(err)
	}
	raw, err := os.Readlink(pidPath(c.Process.Pid, "exe"))
	if err != nil || raw != fake.Path+" (deleted)" {
		t.Fatalf("kernel says exe %q, %v", raw, err)
	}
	p, found, err := FindClaude(c.Process.Pid)
	if !found || err != nil || p.Exe != fake.Path {
		t.Errorf("FindClaude = %+v, %v, %v", p, found, err)
	}
}

func TestFindClaudeOldNodeStyle(t *testing.T) {
	node := helperCmd(t, "block", "node", "node", "--no-warnings", "/x/node_modules/@anthropic-ai/claude-code/cli.js", "--resume")
	c := startBlockingHelper(t, node)
	settled(t, c.Process.Pid, func(p Proc) bool { return len(p.Cmdline) > 0 })
	p, found, err := FindClaude(c.Process.Pid)
	if !found || err != nil || p.PID != c.Process.Pid {
		t.Errorf("FindClaude = %+v, %v, %v", p, found, err)
	}
}

func TestFindClaudeNegative(t *testing.T) {
	// A shell script merely named claude must not count: its comm is
	// "claude" but its exe is the shell.
	dir := t.TempDir()
	script := filepath.Join(dir, "claude")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nsleep 1000\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	sh := start(t, exec.Command("sh", "-c", `sleep 1000 & "$0" & wait`, script))
	waitFor(t, 5*time.Second, func() (bool, string) {
		d, err := Descendants(sh.Process.Pid)
		for _, pid := range d {
			if p, _ := Stat(pid); p.Comm == "claude" && filepath.Base(p.Exe) != "claude" {
				return true, ""
			}
		}
		return false, fmt.Sprint("decoy not running yet: ", d, err)
	})
	if p, found, err := FindClaude(sh.Process.Pid); found || err != nil {
		t.Errorf("FindClaude = %+v, %v, %v; want not found", p, found, err)
	}
	if _, _, err := FindClaude(deadPID(t)); err == nil {
		t.Error("FindClaude(dead pid) gave no error")
	}
}

func TestStartTimeMatches(t *testing.T) {
	c := startSleep(t)
	pid := c.Process.Pid
	p, err := Stat(pid)
	if err != nil {
		t.Fatal(err)
	}
	start := strconv.FormatUint(p.StartTime, 10)
	if !StartTimeMatches(pid, start) {
		t.Errorf("StartTimeMatches(%d, %q) = false", pid, start)
	}
	for _, wrong := range []string{strconv.FormatUint(p.StartTime+1, 10), "", "abc", "-1"} {
		if StartTimeMatches(pid, wrong) {
			t.Errorf("StartTimeMatches(%d, %q) = true", pid, wrong)
		}
	}
	if StartTimeMatches(deadPID(t), start) {
		t.Error("dead pid matches")
	}
}

// TestRealClaude runs the real Claude Code CLI under a shell in a PTY with
// a throwaway HOME (no network: the API URL points at a closed port) and
// checks what FindClaude, StartTimeMatches and WatchExit make of it.
func TestRealClaude(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the real claude")
	}
	if _, err := exec.LookPath("claude"); err != nil {
		t.Skip("claude is not installed")
	}
	home := t.TempDir()
	proj := filepath.Join(home, "proj")
	if err := os.Mkdir(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	proj, _ = filepath.EvalSymlinks(proj)
	cfg, _ := json.Marshal(map[string]any{
		"hasCompletedOnboarding": true,
		"theme":                  "dark",
		"customApiKeyResponses":  map[string]any{"approved": []string{"sk-test"}, "rejected": []string{}},
		"projects":               map[string]any{proj: map[string]any{"hasTrustDialogAccepted": true}},
	})
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	sh := exec.Command("sh", "-c", "claude; echo claude exited")
	sh.Dir = proj
	sh.Env = []string{
		"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TERM=xterm-256color",
		"ANTHROPIC_BASE_URL=http://127.0.0.1:9", "ANTHROPIC_API_KEY=sk-test",
		"DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
	}
	tty, err := pty.StartWithSize(sh, &pty.Winsize{Cols: 120, Rows: 40})
	if err != nil {
		t.Fatal(err)
	}
	readDone := make(chan struct{})
	go func() { // claude blocks if nobody drains its output
		defer close(readDone)
		io.Copy(io.Discard, tty)
	}()
	var claudePID int
	t.Cleanup(func() {
		if claudePID != 0 {
			syscall.Kill(claudePID, syscall.SIGKILL)
		}
		syscall.Kill(-sh.Process.Pid, syscall.SIGKILL) // pty.Start made it a session leader
		sh.Wait()
		tty.Close()
		<-readDone
	})

	var p Proc
	waitFor(t, 30*time.Second, func() (bool, string) {
		var found bool
		p, found, err = FindClaude(sh.Process.Pid)
		// Right after exec, argv is briefly not readable yet.
		return found && len(p.Cmdline) > 0, fmt.Sprint("claude not found under the shell: ", err)
	})
	claudePID = p.PID
	t.Logf("claude: pid %d comm %q exe %q cmdline %q start %d", p.PID, p.Comm, p.Exe, p.Cmdline, p.StartTime)
	if p.PPID != sh.Process.Pid || p.Comm != "claude" || len(p.Cmdline) == 0 || p.Cmdline[0] != "claude" {
		t.Errorf("unexpected claude process %+v", p)
	}
	if base := filepath.Base(p.Exe); base != "claude.exe" && base != "claude" {
		t.Errorf("exe = %q", p.Exe)
	}

	// Claude's session file names this pid and its start time.
	file := filepath.Join(home, ".claude", "sessions", strconv.Itoa(p.PID)+".json")
	var sess struct {
		PID       int    `json:"pid"`
		ProcStart string `json:"procStart"`
	}
	waitFor(t, 30*time.Second, func() (bool, string) {
		data, err := os.ReadFile(file)
		if err != nil {
			return false, err.Error()
		}
		return json.Unmarshal(data, &sess) == nil && sess.ProcStart != "", string(data)
	})
	t.Logf("session file: pid %d procStart %q", sess.PID, sess.ProcStart)
	if sess.PID != p.PID || sess.ProcStart != strconv.FormatUint(p.StartTime, 10) {
		t.Errorf("session file pid %d procStart %q; /proc says pid %d start %d", sess.PID, sess.ProcStart, p.PID, p.StartTime)
	}
	if !StartTimeMatches(p.PID, sess.ProcStart) {
		t.Error("StartTimeMatches is false for the live claude")
	}

	// claude is our grandchild: WatchExit must still see it go.
	exited, err := WatchExit(t.Context(), p.PID)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
		t.Fatal("exit reported while claude runs")
	default:
	}
	syscall.Kill(p.PID, syscall.SIGKILL)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("no exit notice for claude")
	}
	if StartTimeMatches(p.PID, sess.ProcStart) {
		t.Error("StartTimeMatches is true after claude exited")
	}
}

func TestClaudeAncestorOfNonClaude(t *testing.T) {
	// This test process is not under claude (unless the suite runs inside
	// Claude Code itself, which is fine: then it finds that one).
	p, ok := ClaudeAncestor(os.Getpid(), 6)
	if ok && !IsClaude(p) {
		t.Fatalf("returned a process that is not claude: %+v", p)
	}
	if _, ok := ClaudeAncestor(0, 3); ok {
		t.Fatal("pid 0 has a claude ancestor")
	}
	if _, ok := ClaudeAncestor(os.Getpid(), 0); ok {
		t.Fatal("depth 0 found something")
	}
}
