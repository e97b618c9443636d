package hooks

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

var testHook = Exec{Path: "/usr/local/bin/corral-hook", Args: []string{"--data-dir", "/home/u/.local/share/corral"}}

const testStatus = "/usr/local/bin/corral statusline"

// userSettings is a settings file with the user's own hooks, statusLine
// and fields corral knows nothing about.
const userSettings = `{
  "zeta": {"nested": [1, 2, {"x": "<&>"}]},
  "permissions": {"allow": ["Bash(ls:*)"]},
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "/home/u/guard.sh", "timeout": 5}]}
    ],
    "SubagentStop": [
      {"hooks": [{"type": "command", "command": "notify-send done"}]}
    ]
  },
  "statusLine": {"type": "command", "command": "~/.claude/my-status.sh", "padding": 1},
  "alpha": true
}
`

func decodeJSON(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	return m
}

func readSettings(t *testing.T, home string) []byte {
	t.Helper()
	b, err := os.ReadFile(SettingsPath(home))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ownHooks counts corral's hook commands per event.
func ownHooks(t *testing.T, settings []byte) map[string]int {
	t.Helper()
	var s struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Command string
				Args    []string
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(settings, &s); err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for ev, gs := range s.Hooks {
		for _, g := range gs {
			for _, h := range g.Hooks {
				if IsOwnHook(h.Command, h.Args) {
					out[ev]++
				}
			}
		}
	}
	return out
}

func backups(t *testing.T, home string) []string {
	t.Helper()
	m, _ := filepath.Glob(SettingsPath(home) + backupSuffix + "*")
	return m
}

func TestInstallIntoUserSettings(t *testing.T) {
	home := t.TempDir()
	writeFile(t, SettingsPath(home), userSettings)
	if err := os.Chmod(SettingsPath(home), 0o640); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

	res, err := installGlobal(home, testHook, testStatus, t0)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Changed || res.HooksAdded != len(Events()) || res.HooksRemoved != 0 || res.Backup == "" || res.SidecarPath == "" {
		t.Fatalf("result %+v", res)
	}
	if !jsonEqual(res.OriginalStatusLine, []byte(`{"type":"command","command":"~/.claude/my-status.sh","padding":1}`)) {
		t.Fatalf("original statusLine %s", res.OriginalStatusLine)
	}
	after := readSettings(t, home)
	m := decodeJSON(t, after)
	orig := decodeJSON(t, []byte(userSettings))
	for _, k := range []string{"zeta", "permissions", "alpha"} {
		if !reflect.DeepEqual(m[k], orig[k]) {
			t.Errorf("field %s changed: %v", k, m[k])
		}
	}
	// Key order is kept; new keys would go at the end.
	if strings.Index(string(after), `"zeta"`) > strings.Index(string(after), `"alpha"`) {
		t.Errorf("key order changed:\n%s", after)
	}
	if !strings.Contains(string(after), `"<&>"`) {
		t.Errorf("HTML characters escaped:\n%s", after)
	}
	own := ownHooks(t, after)
	for _, ev := range Events() {
		if own[ev] != 1 {
			t.Errorf("%s: %d corral hooks", ev, own[ev])
		}
	}
	if !strings.Contains(string(after), "/home/u/guard.sh") || !strings.Contains(string(after), "notify-send done") {
		t.Errorf("user hooks lost:\n%s", after)
	}
	if sl := m["statusLine"].(map[string]any); sl["command"] != testStatus+" "+OwnMarker {
		t.Errorf("statusLine %v", sl)
	}
	if fi, _ := os.Stat(SettingsPath(home)); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v", fi.Mode())
	}
	if b, _ := os.ReadFile(res.Backup); string(b) != userSettings {
		t.Errorf("backup content differs")
	}
	if !strings.Contains(res.Backup, "20260102T030405.000Z") {
		t.Errorf("backup name %s", res.Backup)
	}
	// corral's status line still runs the user's.
	if cmd, ok := UserStatusLine(home, ""); !ok || cmd != "~/.claude/my-status.sh" {
		t.Errorf("UserStatusLine = %q %v", cmd, ok)
	}

	// Twice: nothing to do, no new backup.
	res2, err := installGlobal(home, testHook, testStatus, t0.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if res2.Changed || res2.Backup != "" || len(backups(t, home)) != 1 {
		t.Fatalf("second install %+v, backups %v", res2, backups(t, home))
	}
	if b := readSettings(t, home); string(b) != string(after) {
		t.Fatal("second install changed the file")
	}
	if !jsonEqual(res2.OriginalStatusLine, res.OriginalStatusLine) {
		t.Errorf("second install forgot the original: %s", res2.OriginalStatusLine)
	}

	// The binary moved: entries are replaced, not duplicated, and the
	// saved original statusLine is still the user's.
	res3, err := installGlobal(home, Exec{Path: "/new place/corral-hook"}, "'/new place/corral' statusline", t0.Add(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	moved := readSettings(t, home)
	if !res3.Changed || res3.HooksRemoved != len(Events()) || strings.Contains(string(moved), "/usr/local/bin/corral-hook") {
		t.Fatalf("after move %+v\n%s", res3, moved)
	}
	for ev, n := range ownHooks(t, moved) {
		if n != 1 {
			t.Errorf("%s: %d corral hooks after move", ev, n)
		}
	}
	if cmd, ok := UserStatusLine(home, ""); !ok || cmd != "~/.claude/my-status.sh" {
		t.Errorf("UserStatusLine after move = %q %v", cmd, ok)
	}

	// Uninstall: back to the user's content exactly (as data).
	ures, err := uninstallGlobal(home, t0.Add(3*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	final := readSettings(t, home)
	if !ures.Changed || ures.HooksRemoved != len(Events()) || !reflect.DeepEqual(decodeJSON(t, final), orig) {
		t.Fatalf("uninstall %+v\n%s", ures, final)
	}
	if _, err := os.Stat(StatusLineSidecarPath(home)); !os.IsNotExist(err) {
		t.Errorf("sidecar left behind: %v", err)
	}
	if fi, _ := os.Stat(SettingsPath(home)); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode after uninstall %v", fi.Mode())
	}
	// And again: nothing to remove.
	if ures, err := uninstallGlobal(home, t0.Add(4*time.Second)); err != nil || ures.Changed {
		t.Fatalf("second uninstall %+v %v", ures, err)
	}
}

func TestInstallMissingAndEmpty(t *testing.T) {
	for name, content := range map[string]*string{"missing": nil, "empty": new(string), "braces": ptr("{}\n")} {
		t.Run(name, func(t *testing.T) {
			home := t.TempDir()
			if content != nil {
				writeFile(t, SettingsPath(home), *content)
			}
			res, err := InstallGlobal(home, testHook, testStatus)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Changed || (res.Backup != "") != (content != nil) || string(res.OriginalStatusLine) != "null" {
				t.Fatalf("%+v", res)
			}
			if fi, _ := os.Stat(SettingsPath(home)); content == nil && fi.Mode().Perm() != 0o600 {
				t.Errorf("new file mode %v", fi.Mode())
			}
			if _, ok := UserStatusLine(home, ""); ok {
				t.Error("a user statusLine appeared")
			}
			if _, err := UninstallGlobal(home); err != nil {
				t.Fatal(err)
			}
			if m := decodeJSON(t, readSettings(t, home)); len(m) != 0 {
				t.Fatalf("left behind: %v", m)
			}
		})
	}
}

func ptr(s string) *string { return &s }

func TestInstallRefusesBadFiles(t *testing.T) {
	cases := map[string]string{
		"invalid":     `{"hooks": {`,
		"array":       `[1, 2]`,
		"trailing":    `{} {}`,
		"hooks array": `{"hooks": []}`,
		"event obj":   `{"hooks": {"Stop": {"command": "x"}}}`,
	}
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			home := t.TempDir()
			writeFile(t, SettingsPath(home), content)
			if _, err := InstallGlobal(home, testHook, testStatus); err == nil {
				t.Fatal("install succeeded")
			}
			if b := readSettings(t, home); string(b) != content {
				t.Fatalf("file changed to %s", b)
			}
			if len(backups(t, home)) != 0 {
				t.Fatal("backup written for a refused file")
			}
			if _, err := os.Stat(StatusLineSidecarPath(home)); !os.IsNotExist(err) {
				t.Fatal("sidecar written for a refused file")
			}
		})
	}
	if _, err := InstallGlobal(t.TempDir(), Exec{}, testStatus); err == nil {
		t.Fatal("empty hook command accepted")
	}
	if _, err := InstallGlobal(t.TempDir(), Exec{Path: "corral-hook"}, testStatus); err == nil {
		t.Fatal("relative hook program accepted")
	}
	if _, err := InstallGlobal(t.TempDir(), Exec{Path: "/x/corral-hook", Args: []string{"a\nb"}}, testStatus); err == nil {
		t.Fatal("newline in a hook argument accepted")
	}
	if _, err := InstallGlobal(t.TempDir(), testHook, "a\nb"); err == nil {
		t.Fatal("newline in status command accepted")
	}
}

func TestInstallKeepsUserHooksInSharedGroup(t *testing.T) {
	// A group that mixes a user hook with a corral hook (edited by hand):
	// uninstall removes only corral's.
	home := t.TempDir()
	writeFile(t, SettingsPath(home), `{"hooks":{"Stop":[{"hooks":[
		{"type":"command","command":"corral hook"},
		{"type":"command","command":"say done"}]}]}}`)
	if _, err := UninstallGlobal(home); err != nil {
		t.Fatal(err)
	}
	got := decodeJSON(t, readSettings(t, home))
	want := decodeJSON(t, []byte(`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"say done"}]}]}}`))
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v", got)
	}
}

func TestInstallUserChangedStatusLineMeanwhile(t *testing.T) {
	home := t.TempDir()
	writeFile(t, SettingsPath(home), `{"statusLine":{"type":"command","command":"old.sh"}}`)
	if _, err := InstallGlobal(home, testHook, testStatus); err != nil {
		t.Fatal(err)
	}
	// The user sets another status line over corral's; uninstall leaves it.
	b := strings.Replace(string(readSettings(t, home)), testStatus+" "+OwnMarker, "new.sh", 1)
	writeFile(t, SettingsPath(home), b)
	if _, err := UninstallGlobal(home); err != nil {
		t.Fatal(err)
	}
	m := decodeJSON(t, readSettings(t, home))
	if m["statusLine"].(map[string]any)["command"] != "new.sh" {
		t.Fatalf("statusLine %v", m["statusLine"])
	}
}

func TestInstallFollowsSymlink(t *testing.T) {
	home := t.TempDir()
	target := filepath.Join(home, "dotfiles", "claude-settings.json")
	writeFile(t, target, `{"a":1}`)
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, SettingsPath(home)); err != nil {
		t.Fatal(err)
	}
	res, err := InstallGlobal(home, testHook, testStatus)
	if err != nil {
		t.Fatal(err)
	}
	if res.Path != target || !strings.HasPrefix(res.Backup, target) {
		t.Fatalf("%+v", res)
	}
	if fi, err := os.Lstat(SettingsPath(home)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("symlink replaced by a file")
	}
	if len(ownHooks(t, readSettings(t, home))) != len(Events()) {
		t.Fatal("hooks not written through the link")
	}
}

func TestUserStatusLinePrecedence(t *testing.T) {
	home := t.TempDir()
	proj := filepath.Join(home, "proj")
	if _, ok := UserStatusLine(home, proj); ok {
		t.Fatal("statusLine out of nothing")
	}
	writeFile(t, SettingsPath(home), `{"statusLine":{"type":"command","command":"user.sh"}}`)
	if cmd, _ := UserStatusLine(home, proj); cmd != "user.sh" {
		t.Fatalf("user level: %q", cmd)
	}
	writeFile(t, filepath.Join(proj, ".claude", "settings.json"), `{"statusLine":{"type":"command","command":"project.sh"}}`)
	if cmd, _ := UserStatusLine(home, proj); cmd != "project.sh" {
		t.Fatalf("project level: %q", cmd)
	}
	writeFile(t, filepath.Join(proj, ".claude", "settings.local.json"), `{"statusLine":{"type":"command","command":"local.sh"}}`)
	if cmd, _ := UserStatusLine(home, proj); cmd != "local.sh" {
		t.Fatalf("local level: %q", cmd)
	}
	// corral's own entry is skipped, as are broken files and other types.
	writeFile(t, filepath.Join(proj, ".claude", "settings.local.json"), `{"statusLine":{"type":"command","command":"corral statusline"}}`)
	writeFile(t, filepath.Join(proj, ".claude", "settings.json"), `{"statusLine":`)
	if cmd, _ := UserStatusLine(home, proj); cmd != "user.sh" {
		t.Fatalf("skipping own and broken: %q", cmd)
	}
	writeFile(t, SettingsPath(home), `{"statusLine":{"type":"static","command":"x"}}`)
	if cmd, ok := UserStatusLine(home, proj); ok {
		t.Fatalf("non-command statusLine: %q", cmd)
	}
}

func TestBackupNamesNeverCollide(t *testing.T) {
	home := t.TempDir()
	writeFile(t, SettingsPath(home), `{"a":1}`)
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r1, err := installGlobal(home, testHook, testStatus, t0)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := uninstallGlobal(home, t0) // same instant
	if err != nil {
		t.Fatal(err)
	}
	if r1.Backup == "" || r2.Backup == "" || r1.Backup == r2.Backup || !strings.HasSuffix(r2.Backup, "-1") {
		t.Fatalf("backups %q %q", r1.Backup, r2.Backup)
	}
	if b, _ := os.ReadFile(r1.Backup); string(b) != `{"a":1}` {
		t.Fatalf("first backup %s", b)
	}
}
