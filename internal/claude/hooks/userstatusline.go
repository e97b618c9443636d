package hooks

import (
	"path/filepath"

	"github.com/corral-dev/corral/internal/jsonobject"
	"github.com/corral-dev/corral/internal/regularfile"
)

// UserStatusLine returns the user's own status-line command, so corral's
// status line can run it and show its output. It reads, lowest precedence
// first, ~/.claude/settings.json, <projectDir>/.claude/settings.json and
// <projectDir>/.claude/settings.local.json (the last one that sets a
// command wins, as in Claude). corral's own statusLine is skipped; where it
// replaced the user's in ~/.claude/settings.json (InstallGlobal), the saved
// original is used. projectDir may be empty.
func UserStatusLine(claudeDir, projectDir string) (command string, ok bool) {
	files := []string{SettingsPath(claudeDir)}
	if projectDir != "" {
		files = append(files,
			filepath.Join(projectDir, ".claude", "settings.json"),
			filepath.Join(projectDir, ".claude", "settings.local.json"))
	}
	for i := len(files) - 1; i >= 0; i-- {
		raw, found := statusLineIn(files[i])
		if !found {
			continue
		}
		if statusLineIsOwn(raw) {
			if i == 0 {
				if sc, err := readSidecar(claudeDir); err == nil && !statusLineIsOwn(sc.StatusLine) {
					if cmd, ok := statusLineCommandOf(sc.StatusLine); ok {
						return cmd, true
					}
				}
			}
			continue
		}
		if cmd, ok := statusLineCommandOf(raw); ok {
			return cmd, true
		}
	}
	return "", false
}

// statusLineIn returns the statusLine value of a settings file, if the
// file is readable, valid and sets one.
func statusLineIn(path string) ([]byte, bool) {
	b, err := regularfile.ReadFile(path, MaxSettingsFile)
	if err != nil {
		return nil, false
	}
	obj, err := jsonobject.Parse(b)
	if err != nil {
		return nil, false
	}
	raw, ok := obj.Get("statusLine")
	if !ok || string(raw) == "null" {
		return nil, false
	}
	return raw, true
}
