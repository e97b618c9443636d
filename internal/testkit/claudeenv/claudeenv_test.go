package claudeenv_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corral-dev/corral/internal/testkit/claudeenv"
)

func TestNewSeedsHomeAndEnviron(t *testing.T) {
	t.Setenv("TMUX", "/tmp/outer,1,0")
	t.Setenv("TMUX_PANE", "%9")
	t.Setenv("CLAUDECODE", "1")
	t.Setenv("CLAUDE_CODE_ENTRYPOINT", "cli")
	t.Setenv("ANTHROPIC_API_KEY", "sk-real-key-must-not-leak")
	t.Setenv("CORRAL_SESSION", "outer")
	t.Setenv("XDG_CONFIG_HOME", "/home/someone/.config")
	t.Setenv("CLAUDEENV_TEST_KEEP", "kept")

	base := t.TempDir()
	real := filepath.Join(base, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	e := claudeenv.New(t, claudeenv.Options{
		BaseURL:      "http://127.0.0.1:1234",
		Trust:        []string{link},
		UserSettings: map[string]any{"spinnerTipsEnabled": false},
		Env:          []string{"CLAUDE_CODE_MAX_RETRIES=1"},
	})
	other := t.TempDir()
	if err := e.Trust(other); err != nil {
		t.Fatal(err)
	}
	e.Setenv("CORRAL_SESSION=inner")

	env := map[string]string{}
	for _, kv := range e.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := env[k]; dup {
			t.Errorf("duplicate %s", k)
		}
		env[k] = v
	}
	want := map[string]string{
		"HOME":                e.Home,
		"ANTHROPIC_BASE_URL":  "http://127.0.0.1:1234",
		"ANTHROPIC_API_KEY":   claudeenv.DefaultAPIKey,
		"DISABLE_AUTOUPDATER": "1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
		"DISABLE_TELEMETRY":                        "1",
		"DISABLE_ERROR_REPORTING":                  "1",
		"CLAUDE_CODE_MAX_RETRIES":                  "1",
		"CORRAL_SESSION":                           "inner",
		"XDG_CONFIG_HOME":                          filepath.Join(e.Home, ".config"),
		"CLAUDEENV_TEST_KEEP":                      "kept",
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s=%q, want %q", k, env[k], v)
		}
	}
	for _, k := range []string{"TMUX", "TMUX_PANE", "CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT"} {
		if _, ok := env[k]; ok {
			t.Errorf("%s leaked into the environment", k)
		}
	}
	if !strings.Contains(env["NO_PROXY"], "127.0.0.1") {
		t.Errorf("NO_PROXY=%q", env["NO_PROXY"])
	}

	var cfg struct {
		HasCompletedOnboarding bool
		Theme                  string
		CustomAPIKeyResponses  struct{ Approved, Rejected []string } `json:"customApiKeyResponses"`
		Projects               map[string]struct {
			HasTrustDialogAccepted bool
		}
	}
	b, err := os.ReadFile(e.ClaudeJSONPath())
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	realOther, _ := claudeenv.Realpath(other)
	if !cfg.HasCompletedOnboarding || cfg.Theme == "" || len(cfg.CustomAPIKeyResponses.Approved) != 1 ||
		cfg.CustomAPIKeyResponses.Approved[0] != "sk-test" || !cfg.Projects[real].HasTrustDialogAccepted ||
		!cfg.Projects[realOther].HasTrustDialogAccepted || len(cfg.Projects) != 2 {
		t.Errorf(".claude.json: %s", b)
	}
	if fi, err := os.Stat(e.SessionsDir()); err != nil || !fi.IsDir() {
		t.Errorf("sessions dir: %v", err)
	}
	if b, err := os.ReadFile(e.UserSettingsPath()); err != nil || !strings.Contains(string(b), "spinnerTipsEnabled") {
		t.Errorf("user settings: %s %v", b, err)
	}
	if got := e.SessionFile(42); got != filepath.Join(e.Home, ".claude", "sessions", "42.json") {
		t.Errorf("SessionFile %s", got)
	}
	if got, want := e.TranscriptPath(link, "abc"), filepath.Join(e.Home, ".claude", "projects", claudeenv.ProjectKey(real), "abc.jsonl"); got != want {
		t.Errorf("TranscriptPath %s, want %s", got, want)
	}
}

func TestLongAPIKeyApprovedByLast20(t *testing.T) {
	key := "sk-ant-api03-" + strings.Repeat("x", 30) + "ABCDEFGHIJ"
	e := claudeenv.New(t, claudeenv.Options{APIKey: key})
	b, _ := os.ReadFile(e.ClaudeJSONPath())
	if !strings.Contains(string(b), `"`+key[len(key)-20:]+`"`) || strings.Contains(string(b), key) {
		t.Errorf(".claude.json: %s", b)
	}
}

func TestProjectKey(t *testing.T) {
	for in, want := range map[string]string{
		"/home/dev/proj":          "-home-dev-proj",
		"/tmp/a.b_c d":            "-tmp-a-b-c-d",
		"/x/é":                    "-x--",
		"/x/\U0001F600":           "-x---",
		"/Users/Me/My Project-01": "-Users-Me-My-Project-01",
	} {
		if got := claudeenv.ProjectKey(in); got != want {
			t.Errorf("ProjectKey(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRequireClaudeReportsInstallCommand(t *testing.T) {
	if _, err := claudeenv.ClaudePath(); err == nil {
		t.Skip("claude is installed")
	}
	_, err := claudeenv.ClaudePath()
	if !strings.Contains(err.Error(), claudeenv.InstallHint) {
		t.Errorf("error %v does not name %q", err, claudeenv.InstallHint)
	}
}
