// Package claudeenv prepares an isolated environment for running the real
// Claude Code CLI in tests: a temporary HOME with a pre-seeded ~/.claude.json
// (onboarding done, theme chosen, the fake API key approved, project
// directories trusted), and an environment that points Claude at a fake API
// and keeps it quiet and deterministic.
//
// See docs/claude-observations.md for what Claude Code 2.1.197 does in such an
// environment, and testdata/claude-code-2.1.197/README.md for the recording.
package claudeenv

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// DefaultAPIKey is the fake API key put in ANTHROPIC_API_KEY.
const DefaultAPIKey = "sk-test"

// InstallHint is the command that installs the Claude Code version corral is
// tested against.
const InstallHint = "npm install -g @anthropic-ai/claude-code@2.1.197"

// RequireEnv is the environment variable that turns "claude is missing" from a
// skip into a failure (set it in CI).
const RequireEnv = "CORRAL_REQUIRE_CLAUDE"

// Options configure New.
type Options struct {
	// BaseURL is ANTHROPIC_BASE_URL, e.g. a fakeapi.Server's URL().
	BaseURL string
	// APIKey is ANTHROPIC_API_KEY; empty means DefaultAPIKey. It is pre-approved
	// in ~/.claude.json (Claude stores the key's last 20 characters).
	APIKey string
	// Trust lists project directories to mark trusted (by realpath). Without
	// trust, Claude shows a trust dialog and runs no hooks and no status line.
	Trust []string
	// UserSettings, when non-nil, is written as ~/.claude/settings.json.
	UserSettings any
	// ClaudeJSON holds extra top-level keys merged into ~/.claude.json.
	ClaudeJSON map[string]any
	// Env holds extra KEY=VALUE entries appended to Environ (they win).
	Env []string
	// ConfigDir, when set, is Claude's configuration directory, relative to
	// HOME: Environ sets CLAUDE_CONFIG_DIR to it, and .claude.json,
	// settings.json, sessions and projects live there instead of ~/.claude
	// and ~/.claude.json, as Claude does.
	ConfigDir string
}

// Env is an isolated Claude home and environment.
type Env struct {
	// Home is the temporary HOME directory.
	Home string

	opts Options

	mu       sync.Mutex
	trusted  []string
	extraEnv []string
}

// New creates a temporary HOME for t, seeds ~/.claude.json and returns the
// environment. It fails t if a file cannot be written.
func New(t testing.TB, opts Options) *Env {
	t.Helper()
	home, err := os.MkdirTemp("", "claudehome-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeHome(t, home) })
	// Resolve symlinks (e.g. /tmp -> /private/tmp) so paths match Claude's.
	if r, err := filepath.EvalSymlinks(home); err == nil {
		home = r
	}
	e := &Env{Home: home, opts: opts}
	if e.opts.APIKey == "" {
		e.opts.APIKey = DefaultAPIKey
	}
	for _, d := range []string{
		e.SessionsDir(),
		filepath.Join(home, ".config"),
		filepath.Join(home, ".cache"),
		filepath.Join(home, ".local", "share"),
		filepath.Join(home, ".local", "state"),
	} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range opts.Trust {
		if err := e.trust(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.writeClaudeJSON(); err != nil {
		t.Fatal(err)
	}
	if opts.UserSettings != nil {
		if err := e.WriteUserSettings(opts.UserSettings); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// removeHome waits (up to 10 s) for every process running with this HOME
// (claude and its children, typically exiting after their tmux server was
// killed by an earlier cleanup) to exit, since claude writes its transcript
// while exiting, and then removes the directory.
func removeHome(t testing.TB, home string) {
	deadline := time.Now().Add(10 * time.Second)
	for len(processesWithHome(home)) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if pids := processesWithHome(home); len(pids) > 0 {
		t.Logf("claudeenv: processes %v still use HOME=%s; removing it anyway", pids, home)
	}
	if err := os.RemoveAll(home); err != nil {
		t.Logf("claudeenv: remove %s: %v", home, err)
	}
}

// processesWithHome lists the processes (readable by us) whose environment
// has HOME=home.
func processesWithHome(home string) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	needle := "\x00HOME=" + home + "\x00"
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		if strings.Contains("\x00"+string(b), needle) && !zombie(pid) {
			out = append(out, pid)
		}
	}
	return out
}

func zombie(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(b), ')')
	return i >= 0 && strings.HasPrefix(string(b[i+1:]), " Z")
}

// Trust marks dir (by its realpath) as a trusted project in ~/.claude.json.
// Call it before claude starts: a running claude rewrites ~/.claude.json.
func (e *Env) Trust(dir string) error {
	if err := e.trust(dir); err != nil {
		return err
	}
	return e.writeClaudeJSON()
}

func (e *Env) trust(dir string) error {
	p, err := Realpath(dir)
	if err != nil {
		return fmt.Errorf("claudeenv: trust %s: %w", dir, err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, d := range e.trusted {
		if d == p {
			return nil
		}
	}
	e.trusted = append(e.trusted, p)
	return nil
}

// Realpath returns the absolute path of dir with symlinks resolved, the form
// Claude Code uses for project keys, session cwd and transcript folders.
func Realpath(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// ClaudeJSONPath is ~/.claude.json, or .claude.json in Options.ConfigDir.
func (e *Env) ClaudeJSONPath() string {
	if e.opts.ConfigDir != "" {
		return filepath.Join(e.ClaudeDir(), ".claude.json")
	}
	return filepath.Join(e.Home, ".claude.json")
}

// ClaudeDir is Claude's configuration directory: ~/.claude, or
// Options.ConfigDir.
func (e *Env) ClaudeDir() string {
	if e.opts.ConfigDir != "" {
		return filepath.Join(e.Home, e.opts.ConfigDir)
	}
	return filepath.Join(e.Home, ".claude")
}

// SessionsDir is ~/.claude/sessions, where Claude keeps <pid>.json per live
// interactive process. New creates it, so it can be watched before claude starts.
func (e *Env) SessionsDir() string { return filepath.Join(e.ClaudeDir(), "sessions") }

// SessionFile is ~/.claude/sessions/<pid>.json.
func (e *Env) SessionFile(pid int) string {
	return filepath.Join(e.SessionsDir(), fmt.Sprintf("%d.json", pid))
}

// UserSettingsPath is ~/.claude/settings.json.
func (e *Env) UserSettingsPath() string { return filepath.Join(e.ClaudeDir(), "settings.json") }

// ProjectDir is the folder of a project's transcripts:
// ~/.claude/projects/<realpath with every non-alphanumeric byte replaced by '-'>.
func (e *Env) ProjectDir(projectDir string) string {
	p, err := Realpath(projectDir)
	if err != nil {
		p = projectDir
	}
	return filepath.Join(e.ClaudeDir(), "projects", ProjectKey(p))
}

// TranscriptPath is the transcript of a Claude session id in a project.
func (e *Env) TranscriptPath(projectDir, sessionID string) string {
	return filepath.Join(e.ProjectDir(projectDir), sessionID+".jsonl")
}

// ProjectKey turns an absolute path into Claude's project folder name
// ("/home/dev/proj" -> "-home-dev-proj"): every character other than an ASCII
// letter or digit becomes '-', counted in UTF-16 units as JavaScript does.
// (Claude shortens very long names with a hash; this does not.)
func ProjectKey(path string) string {
	var b strings.Builder
	for _, r := range path {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9':
			b.WriteRune(r)
		case r > 0xFFFF:
			b.WriteString("--")
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}

// WriteUserSettings writes v as ~/.claude/settings.json.
func (e *Env) WriteUserSettings(v any) error {
	return writeJSONFile(e.UserSettingsPath(), v)
}

// Setenv adds KEY=VALUE entries to Environ (later entries win).
func (e *Env) Setenv(kv ...string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.extraEnv = append(e.extraEnv, kv...)
}

func (e *Env) writeClaudeJSON() error {
	e.mu.Lock()
	projects := map[string]any{}
	for _, d := range e.trusted {
		projects[d] = map[string]any{
			"hasTrustDialogAccepted":        true,
			"hasCompletedProjectOnboarding": true,
			"projectOnboardingSeenCount":    5,
		}
	}
	e.mu.Unlock()
	key := e.opts.APIKey
	if len(key) > 20 {
		key = key[len(key)-20:]
	}
	cfg := map[string]any{
		"hasCompletedOnboarding": true,
		"theme":                  "dark",
		"customApiKeyResponses":  map[string]any{"approved": []string{key}, "rejected": []string{}},
		"projects":               projects,
		// A returning user: compact logo instead of the "Welcome back!" box with
		// tips and "What's new", and no release notes.
		"numStartups":          20,
		"lastReleaseNotesSeen": "2.1.197",
		// No terminal-setup or IDE prompts, no auto-updates, no marketplace clone.
		"shiftEnterKeyBindingInstalled":           true,
		"hasIdeOnboardingBeenShown":               map[string]any{"vscode": true, "cursor": true, "windsurf": true},
		"autoUpdates":                             false,
		"officialMarketplaceAutoInstallAttempted": true,
		"bypassPermissionsModeAccepted":           false,
	}
	for k, v := range e.opts.ClaudeJSON {
		cfg[k] = v
	}
	return writeJSONFile(e.ClaudeJSONPath(), cfg)
}

// writeJSONFile writes v to path atomically (temp file and rename).
func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	_, werr := f.Write(append(b, '\n'))
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(f.Name())
		return err
	}
	if err := os.Chmod(f.Name(), 0o600); err != nil {
		_ = os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), path)
}

// QuietEnv returns the variables Environ sets besides HOME, the API URL and
// key: no auto-update, telemetry, error reporting, surveys, non-essential
// network traffic, installation checks, IDE auto-install or plugin
// marketplace clone.
func QuietEnv() []string {
	return []string{
		"DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"DISABLE_INSTALLATION_CHECKS=1",
		"CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY=1",
		"CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL=1",
		"CLAUDE_CODE_IDE_SKIP_AUTO_INSTALL=1",
		"DISABLE_COST_WARNINGS=1",
	}
}

// dropped reports whether an inherited variable must not reach Claude: the
// outer tmux, an outer Claude Code session, API settings, telemetry, corral's
// own session variables, and the XDG dirs (replaced by ones inside HOME).
func dropped(name string) bool {
	switch name {
	case "HOME", "TMUX", "TMUX_PANE", "CLAUDECODE", "AI_AGENT", "NO_PROXY", "no_proxy",
		"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR",
		"DISABLE_AUTOUPDATER", "DISABLE_TELEMETRY", "DISABLE_ERROR_REPORTING":
		return true
	}
	for _, p := range []string{"CLAUDE_", "ANTHROPIC_", "OTEL_", "CORRAL_"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// Environ returns the environment for claude (and for the tmux server that
// runs it): the current process environment without TMUX, TMUX_PANE, any
// CLAUDE_*, ANTHROPIC_*, OTEL_*, CORRAL_* or XDG_* variable, plus HOME, the
// XDG dirs inside HOME, ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY,
// CLAUDE_CONFIG_DIR for Options.ConfigDir, QuietEnv, NO_PROXY for loopback,
// Options.Env and Setenv entries.
func (e *Env) Environ() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !dropped(name) {
			env = append(env, kv)
		}
	}
	noProxy := "127.0.0.1,localhost,::1"
	if v := os.Getenv("NO_PROXY"); v != "" {
		noProxy += "," + v
	}
	env = append(env,
		"HOME="+e.Home,
		"XDG_CONFIG_HOME="+filepath.Join(e.Home, ".config"),
		"XDG_DATA_HOME="+filepath.Join(e.Home, ".local", "share"),
		"XDG_CACHE_HOME="+filepath.Join(e.Home, ".cache"),
		"XDG_STATE_HOME="+filepath.Join(e.Home, ".local", "state"),
		"NO_PROXY="+noProxy, "no_proxy="+noProxy,
		"ANTHROPIC_API_KEY="+e.opts.APIKey,
	)
	if e.opts.BaseURL != "" {
		env = append(env, "ANTHROPIC_BASE_URL="+e.opts.BaseURL)
	}
	if e.opts.ConfigDir != "" {
		env = append(env, "CLAUDE_CONFIG_DIR="+e.ClaudeDir())
	}
	env = append(env, QuietEnv()...)
	env = append(env, e.opts.Env...)
	e.mu.Lock()
	env = append(env, e.extraEnv...)
	e.mu.Unlock()
	return dedupe(env)
}

// dedupe keeps the last entry of each variable, in first-seen order.
func dedupe(env []string) []string {
	idx := map[string]int{}
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if i, ok := idx[name]; ok {
			out[i] = kv
			continue
		}
		idx[name] = len(out)
		out = append(out, kv)
	}
	return out
}

// ClaudePath finds the claude executable on PATH.
func ClaudePath() (string, error) {
	p, err := exec.LookPath("claude")
	if err != nil {
		return "", fmt.Errorf("claude not found on PATH (install it with: %s): %w", InstallHint, err)
	}
	return p, nil
}

// RequireClaude returns the path of claude. When it is missing the test is
// skipped with the install command, or fails if CORRAL_REQUIRE_CLAUDE is set.
func RequireClaude(t testing.TB) string {
	t.Helper()
	p, err := ClaudePath()
	if err != nil {
		if os.Getenv(RequireEnv) != "" {
			t.Fatalf("%v (%s is set)", err, RequireEnv)
		}
		t.Skipf("skipping: %v; set %s=1 to fail instead", err, RequireEnv)
	}
	return p
}

// RequireTmux returns the path of tmux, skipping (or failing, with
// CORRAL_REQUIRE_CLAUDE set) when it is missing.
func RequireTmux(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv(RequireEnv) != "" {
			t.Fatalf("tmux not found on PATH (apt-get install tmux) (%s is set)", RequireEnv)
		}
		t.Skipf("skipping: tmux not found on PATH (apt-get install tmux)")
	}
	return p
}
