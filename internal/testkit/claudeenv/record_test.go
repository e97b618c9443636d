package claudeenv_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/testkit/claudeenv"
)

// RecordEnv turns TestRecord on; RecordFlowsEnv picks flows by name
// (comma-separated), all when empty.
const (
	RecordEnv      = "CORRAL_RECORD"
	RecordFlowsEnv = "CORRAL_RECORD_FLOWS"
)

type recordedFlow struct {
	name string
	run  func(t *testing.T, claude, bin string)
}

// TestRecord regenerates testdata/claude-code-2.1.197/flows with the real
// claude: CORRAL_RECORD=1 go test ./internal/testkit/claudeenv -run TestRecord
// (-parallel N runs N flows at once; CORRAL_RECORD_FLOWS=trust,api_key picks
// flows). CI does not run it: the corpus is checked in, and the parser and
// status tests read it.
func TestRecord(t *testing.T) {
	if os.Getenv(RecordEnv) == "" {
		t.Skipf("set %s=1 to record the corpus of Claude's dialogs", RecordEnv)
	}
	claudeenv.RequireTmux(t)
	claude := claudeenv.RequireClaude(t)
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	only := map[string]bool{}
	for _, n := range strings.Split(os.Getenv(RecordFlowsEnv), ",") {
		if n = strings.TrimSpace(n); n != "" {
			only[n] = true
		}
	}
	for _, fl := range recordedFlows() {
		if len(only) > 0 && !only[fl.name] {
			continue
		}
		t.Run(fl.name, func(t *testing.T) {
			t.Parallel()
			fl.run(t, claude, bin)
		})
	}
}

func recordedFlows() []recordedFlow {
	return []recordedFlow{
		{"trust", recordTrust},
		{"trust_no", recordTrustNo},
		{"api_key", recordAPIKey},
		{"api_key_no", recordAPIKeyNo},
		{"permission", recordPermission},
		{"question", recordQuestion},
		{"plan", recordPlan},
		{"elicitation", recordElicitation},
		{"subagent", recordSubagent},
		{"background_agent", recordBackgroundAgent},
		{"background_shell", recordBackgroundShell},
		{"escape_tool", recordEscapeTool},
		{"live_tool", recordLiveTool},
		{"hand_claude", recordHandClaude},
		{"clear_resume", recordClearResume},
		{"drafts", recordDrafts},
		{"todo", recordTodo},
		{"bypass_permissions", recordBypass},
		{"mcp_server", recordMCPServer},
		{"settings_error", recordSettingsError},
	}
}

// readJSONFile decodes a JSON file into a map (nil when unreadable).
func readJSONFile(p string) map[string]any {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil
	}
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

func (f *flow) trusted() any {
	cfg := readJSONFile(f.env.ClaudeJSONPath())
	projects, _ := cfg["projects"].(map[string]any)
	p, _ := projects[f.proj].(map[string]any)
	return p["hasTrustDialogAccepted"]
}

func (f *flow) sessionFiles() int {
	ents, _ := os.ReadDir(f.env.SessionsDir())
	n := 0
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".json") {
			n++
		}
	}
	return n
}

// ---- 1. trust -----------------------------------------------------------------

func recordTrust(t *testing.T, claude, bin string) {
	f := newFlow(t, claude, bin, "trust", flowOptions{Untrusted: true})
	f.launch("Yes, I trust this folder")
	shown := time.Now()
	f.step("1-trust-dialog")
	f.phone("1-trust-dialog")
	f.note("while the trust dialog is open: no session file (%d files), no hook (%d records), `hasTrustDialogAccepted` = %v",
		f.sessionFiles(), len(f.log.hooks(time.Time{})), f.trusted())
	time.Sleep(time.Until(shown.Add(8 * time.Second))) // does anything arrive while it waits?
	f.note("8 s after the dialog was drawn: still no session file (%d), hooks %d", f.sessionFiles(), len(f.log.hooks(time.Time{})))
	f.press("1")
	k := f.mark
	f.ready(30 * time.Second)
	ss := f.log.wait(t, 20*time.Second, "SessionStart", k, nil)
	created := f.sess.wait(t, 20*time.Second, "created", k, func(c sessChange) bool { return !c.Removed })
	f.step("2-trusted")
	f.note("after `1`: `hasTrustDialogAccepted` = %v; SessionStart(source=%s) %s and the session file %s after the key",
		f.trusted(), ss.field("source"), ms(k, ss.time()), ms(k, created.T))
	f.line("say hello")
	f.log.wait(t, 20*time.Second, "Stop", f.mark, nil)
	f.ready(10 * time.Second)
	f.step("3-replied")
	f.press("Escape")
	f.step("4-escape-on-empty-box")
	f.finish("Trust dialog: \"Yes, I trust this folder\"", "A project folder without `hasTrustDialogAccepted` in `~/.claude.json`; claude started in it and the dialog answered with `1`.")
}

func recordTrustNo(t *testing.T, claude, bin string) {
	f := newFlow(t, claude, bin, "trust_no", flowOptions{Untrusted: true})
	f.launch("Yes, I trust this folder")
	f.step("1-trust-dialog")
	f.press("2")
	k := f.mark
	waitFor(t, 20*time.Second, "claude to exit", func() bool { return f.tm.Display(f.pane, "#{pane_dead}") == "1" }, nil)
	f.note("`2` (No, exit): claude exited %s after the key with status %s; `hasTrustDialogAccepted` = %v",
		ms(k, time.Now()), f.tm.Display(f.pane, "#{pane_dead_status}"), f.trusted())
	f.step("2-no-exit")
	f.launch("Yes, I trust this folder")
	f.step("3-trust-dialog-again")
	f.press("Escape")
	k = f.mark
	waitFor(t, 20*time.Second, "claude to exit", func() bool { return f.tm.Display(f.pane, "#{pane_dead}") == "1" }, nil)
	f.note("Escape: claude exited %s after the key with status %s; `hasTrustDialogAccepted` = %v",
		ms(k, time.Now()), f.tm.Display(f.pane, "#{pane_dead_status}"), f.trusted())
	f.step("4-escape-exit")
	f.finish("Trust dialog: \"No, exit\" and Escape", "A project folder without `hasTrustDialogAccepted`; the dialog answered with `2`, then (a second claude) with Escape.")
}

// ---- 2. api_key -----------------------------------------------------------------

func (f *flow) keyResponses() any {
	return readJSONFile(f.env.ClaudeJSONPath())["customApiKeyResponses"]
}

func recordAPIKey(t *testing.T, claude, bin string) {
	f := newFlow(t, claude, bin, "api_key", flowOptions{KeyNotApproved: true})
	f.launch("Do you want to use this API key?")
	f.step("1-api-key-dialog")
	f.phone("1-api-key-dialog")
	f.note("while the API-key dialog is open: %d session files, %d hooks; customApiKeyResponses = %v", f.sessionFiles(), len(f.log.hooks(time.Time{})), f.keyResponses())
	f.press("1")
	k := f.mark
	f.ready(30 * time.Second)
	ss := f.log.wait(t, 20*time.Second, "SessionStart", k, nil)
	f.step("2-key-accepted")
	f.note("after `1` (Yes): customApiKeyResponses = %v; SessionStart %s after the key", f.keyResponses(), ms(k, ss.time()))
	f.line("say hello")
	f.log.wait(t, 20*time.Second, "Stop", f.mark, nil)
	f.ready(10 * time.Second)
	f.step("3-replied")
	f.finish("API-key dialog: \"Yes\"", "`ANTHROPIC_API_KEY` set but not in `customApiKeyResponses.approved` of `~/.claude.json`; the dialog answered with `1`.")
}

func recordAPIKeyNo(t *testing.T, claude, bin string) {
	f := newFlow(t, claude, bin, "api_key_no", flowOptions{KeyNotApproved: true})
	f.launch("Do you want to use this API key?")
	f.step("1-api-key-dialog")
	f.press("Enter")
	k := f.mark
	scr := f.waitScreen("the screen after Enter", 20*time.Second, func(s string) bool { return !strings.Contains(s, "Do you want to use this API key?") })
	f.note("Enter (the focused default, \"No (recommended)\"): the dialog went away %s after the key; customApiKeyResponses = %v; first line now %q",
		ms(k, time.Now()), f.keyResponses(), firstNonBlank(scr))
	time.Sleep(3 * time.Second)
	f.step("2-after-enter")
	f.phone("2-after-enter")
	f.finish("API-key dialog: Enter (\"No (recommended)\" has the focus)", "`ANTHROPIC_API_KEY` set but not approved; the dialog answered with Enter, which picks the focused option 2.")
}

func firstNonBlank(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			return strings.TrimSpace(l)
		}
	}
	return ""
}
