package tmuxtest

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestPrivateServer(t *testing.T) {
	env := append(os.Environ(), "TMUX=/tmp/outer-server,1,0", "TMUX_PANE=%99", "TMUXTEST_VAR=hello")
	s := New(t, env)
	dir := t.TempDir()
	pane := s.NewSession("t", dir, 100, 30, []string{"EXTRA=x y"},
		"sh", "-c", `printf 'var=%s extra=%s pane=%s pwd=%s\n' "$TMUXTEST_VAR" "$EXTRA" "$TMUX_PANE" "$(pwd -P)"; exec cat`)
	if !strings.HasPrefix(pane, "%") {
		t.Fatalf("pane id %q", pane)
	}
	scr := s.WaitText(pane, "var=hello", 5*time.Second)
	if !strings.Contains(scr, "extra=x y pane="+pane) {
		t.Fatalf("screen:\n%s", scr)
	}
	if w := s.Display(pane, "#{window_width}x#{window_height}"); w != "100x30" {
		t.Errorf("size %s", w)
	}
	pid := s.PanePID(pane)
	if comm, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm"); strings.TrimSpace(string(comm)) != "cat" {
		t.Errorf("pane pid %d runs %q (want cat: multi-word argv is exec'd without a shell wrapper)", pid, comm)
	}
	s.SendText(pane, "typed text")
	s.SendKeys(pane, "Enter")
	s.WaitScreen(pane, 5*time.Second, "echo of typed text", func(scr string) bool {
		return strings.Count(scr, "typed text") >= 2 // the tty echo and cat's copy
	})
	s.SendKeys(pane, "C-d")
	s.WaitScreen(pane, 5*time.Second, "pane dead", func(string) bool { return s.Display(pane, "#{pane_dead}") == "1" })
	if _, err := s.Cmd("no-such-command"); err == nil || !strings.Contains(err.Error(), "no-such-command") {
		t.Errorf("bad command error %v", err)
	}
}
