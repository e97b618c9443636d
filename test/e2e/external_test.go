package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/testkit/tmuxtest"
)

// TestExternalClaude: with `corral hooks install --global`, a claude that a
// person starts by hand in their own tmux shows up in corral, can be driven
// through that tmux, and disappears when it exits. The person's own
// settings survive install and uninstall.
func TestExternalClaude(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})

	settings := filepath.Join(h.claude.Home, ".claude", "settings.json")
	mine := `{"theme":"dark","hooks":{"Stop":[{"hooks":[{"type":"command","command":"true # mine"}]}]}}`
	if err := os.WriteFile(settings, []byte(mine), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := h.corral("hooks", "install", "--global"); !strings.Contains(out, "installed") {
		t.Fatalf("install: %q", out)
	}

	// The person's own tmux server, not corral's.
	env := append([]string{}, h.claude.Environ()...)
	tm := tmuxtest.New(t, env)
	claudeBin, _ := exec.LookPath("claude")
	tm.NewSession("mine", h.proj, 140, 40, nil, claudeBin)

	s := h.rec.waitFor(60*time.Second, "the external claude to appear", func(s api.Session) bool {
		return s.Kind == api.KindExternal
	})
	if s.Dir != h.proj || s.ClaudePID == 0 {
		t.Fatalf("external session %+v", s)
	}
	id := s.ID
	// It can be driven: through the person's tmux pane.
	h.send(id, "say hello")
	h.waitStatus(id, api.StatusReview, 30*time.Second)
	// Claude may still be drawing its answer when its Stop hook comes.
	h.waitScreen(id, "Hello from mock", 10*time.Second)
	// corral does not end what it did not start.
	if out, err := h.corralErr("kill", id); err == nil || !strings.Contains(out, "did not start") {
		t.Errorf("kill external: %v %q", err, out)
	}
	h.send(id, "/exit")
	h.rec.waitFor(30*time.Second, "the external session to go away", func(s api.Session) bool { return true })
	waitFor(t, 30*time.Second, "external session removed", func() bool {
		for _, s := range h.ls() {
			if s.ID == id {
				return false
			}
		}
		return true
	})

	if out := h.corral("hooks", "uninstall", "--global"); !strings.Contains(out, "removed") {
		t.Fatalf("uninstall: %q", out)
	}
	b, err := os.ReadFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got["theme"] != "dark" || !strings.Contains(string(b), "true # mine") || strings.Contains(string(b), "corral") {
		t.Errorf("settings after uninstall: %s", b)
	}
}
