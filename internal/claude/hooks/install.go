package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/corral-dev/corral/internal/atomicfile"
	"github.com/corral-dev/corral/internal/claude"
	"github.com/corral-dev/corral/internal/jsonobject"
	"github.com/corral-dev/corral/internal/regularfile"
)

// SettingsPath is the user's Claude settings file in Claude's configuration
// directory claudeDir (see ConfigDir): ~/.claude/settings.json by default.
func SettingsPath(claudeDir string) string { return filepath.Join(claudeDir, "settings.json") }

// StatusLineSidecarPath is where InstallGlobal keeps the user's own
// statusLine while corral's replaces it, for UninstallGlobal to restore
// and for UserStatusLine to keep running it. It is a file of its own
// because Claude drops unknown fields when it rewrites settings.json.
func StatusLineSidecarPath(claudeDir string) string {
	return filepath.Join(claudeDir, "corral-statusline-original.json")
}

// backupSuffix starts the name of the backups written next to settings.json.
const backupSuffix = ".corral-backup-"

// InstallResult says what InstallGlobal or UninstallGlobal did.
type InstallResult struct {
	// Path is the settings file (after following a symlink).
	Path    string `json:"path"`
	Changed bool   `json:"changed"`
	// Backup is the copy of the previous file, when one was written.
	Backup       string `json:"backup,omitempty"`
	HooksAdded   int    `json:"hooks_added"`
	HooksRemoved int    `json:"hooks_removed"`
	// OriginalStatusLine is the user's own statusLine object that corral's
	// replaced (install) or that was put back (uninstall); JSON null when
	// there was none. It is kept in SidecarPath in between.
	OriginalStatusLine json.RawMessage `json:"original_status_line,omitempty"`
	SidecarPath        string          `json:"sidecar_path,omitempty"`
}

// statusLineSidecar is the content of the sidecar file.
type statusLineSidecar struct {
	StatusLine json.RawMessage `json:"statusLine"`
	SavedAt    time.Time       `json:"savedAt"`
}

// InstallGlobal registers corral's hooks and status line in
// ~/.claude/settings.json, for claude started outside corral. Everything
// else in the file is kept: unknown fields, key order, other hooks (corral
// adds its own matcher group next to them). Running it twice changes
// nothing the second time; a moved binary replaces the old entries. The
// user's own statusLine is saved in the sidecar file and still shown (see
// UserStatusLine). A file that is not a JSON object is refused, untouched.
// Before writing, the old file is copied to settings.json.corral-backup-<time>.
// An empty statusLineCommand leaves the statusLine alone.
func InstallGlobal(claudeDir string, hook Exec, statusLineCommand string) (InstallResult, error) {
	return installGlobal(claudeDir, hook, statusLineCommand, time.Now())
}

// UninstallGlobal removes exactly corral's entries (recognised by
// IsOwnCommand) from ~/.claude/settings.json and puts the user's saved
// statusLine back, if corral's is still the one set. A missing file is
// not an error.
func UninstallGlobal(claudeDir string) (InstallResult, error) {
	return uninstallGlobal(claudeDir, time.Now())
}

func installGlobal(claudeDir string, hookCmd Exec, statusCmd string, now time.Time) (InstallResult, error) {
	if err := checkExec(hookCmd); err != nil {
		return InstallResult{}, err
	}
	if statusCmd != "" {
		if err := checkCommand("status line", statusCmd); err != nil {
			return InstallResult{}, err
		}
	}
	sf, err := loadSettings(SettingsPath(claudeDir))
	if err != nil {
		return InstallResult{}, err
	}
	res := InstallResult{Path: sf.path}
	hooks, err := sf.hooksObject()
	if err != nil {
		return res, err
	}
	// Our entries for events we no longer register go away.
	for _, ev := range hooks.Keys() {
		if isRegistered(ev) {
			continue
		}
		n, err := editEvent(hooks, ev, nil)
		if err != nil {
			return res, err
		}
		res.HooksRemoved += n
	}
	for _, ev := range Events() {
		g := ownGroup(ev, hookCmd)
		removed, err := editEvent(hooks, ev, &g)
		if err != nil {
			return res, err
		}
		if removed >= 0 {
			res.HooksRemoved += removed
			res.HooksAdded++
		}
	}
	hraw, err := hooks.MarshalJSON()
	if err != nil {
		return res, err
	}
	sf.obj.Set("hooks", hraw)

	var sidecar *statusLineSidecar
	if statusCmd != "" {
		want, _ := json.Marshal(ownStatusLine(statusCmd))
		cur, has := sf.obj.Get("statusLine")
		if has && statusLineIsOwn(cur) {
			if sc, err := readSidecar(claudeDir); err == nil {
				res.OriginalStatusLine = sc.StatusLine
			}
		} else {
			orig := json.RawMessage("null")
			if has {
				orig = cur
			}
			sidecar = &statusLineSidecar{StatusLine: orig, SavedAt: now.UTC()}
			res.OriginalStatusLine = orig
		}
		if !has || !jsonEqual(cur, want) {
			sf.obj.Set("statusLine", want)
		}
	}
	out, err := sf.obj.Indented()
	if err != nil {
		return res, err
	}
	if sf.exists && bytes.Equal(out, sf.data) {
		res.HooksAdded, res.HooksRemoved = 0, 0
		return res, nil
	}
	if !sf.exists {
		if err := os.MkdirAll(filepath.Dir(sf.path), 0o700); err != nil {
			return res, err
		}
	}
	// Sidecar first: a crash before the settings write leaves the user's
	// statusLine in place and a harmless copy of it.
	if sidecar != nil {
		b, err := marshalIndent(sidecar)
		if err != nil {
			return res, err
		}
		if err := atomicfile.Write(StatusLineSidecarPath(claudeDir), b, 0o600); err != nil {
			return res, fmt.Errorf("save original statusLine: %w", err)
		}
		res.SidecarPath = StatusLineSidecarPath(claudeDir)
	}
	if err := sf.write(out, now, &res); err != nil {
		return res, err
	}
	return res, nil
}

func uninstallGlobal(claudeDir string, now time.Time) (InstallResult, error) {
	sidecarPath := StatusLineSidecarPath(claudeDir)
	sf, err := loadSettings(SettingsPath(claudeDir))
	if err != nil {
		return InstallResult{}, err
	}
	res := InstallResult{Path: sf.path}
	if !sf.exists {
		removeIfExists(sidecarPath)
		return res, nil
	}
	if raw, ok := sf.obj.Get("hooks"); ok && string(raw) != "null" {
		hooks, err := sf.hooksObject()
		if err != nil {
			return res, err
		}
		for _, ev := range hooks.Keys() {
			n, err := editEvent(hooks, ev, nil)
			if err != nil {
				return res, err
			}
			res.HooksRemoved += n
		}
		if res.HooksRemoved > 0 {
			if hooks.Len() == 0 {
				sf.obj.Del("hooks")
			} else {
				hraw, err := hooks.MarshalJSON()
				if err != nil {
					return res, err
				}
				sf.obj.Set("hooks", hraw)
			}
		}
	}
	if cur, ok := sf.obj.Get("statusLine"); ok && statusLineIsOwn(cur) {
		sc, err := readSidecar(claudeDir)
		if err == nil && len(sc.StatusLine) > 0 && string(sc.StatusLine) != "null" {
			sf.obj.Set("statusLine", sc.StatusLine)
			res.OriginalStatusLine = sc.StatusLine
		} else {
			sf.obj.Del("statusLine")
		}
	}
	out, err := sf.obj.Indented()
	if err != nil {
		return res, err
	}
	if !bytes.Equal(out, sf.data) {
		if err := sf.write(out, now, &res); err != nil {
			return res, err
		}
	}
	removeIfExists(sidecarPath)
	return res, nil
}

// removeIfExists deletes a file that may be gone already. A leftover
// sidecar is harmless (UserStatusLine only uses it while corral's
// statusLine is set), so a failure is not worth failing the uninstall.
func removeIfExists(path string) { _ = os.Remove(path) }

func isRegistered(event string) bool {
	for _, ev := range Events() {
		if ev == event {
			return true
		}
	}
	return false
}

// settingsFile is a loaded settings.json.
type settingsFile struct {
	path   string
	exists bool
	mode   fs.FileMode
	data   []byte
	obj    *jsonobject.Object
}

// loadSettings reads a settings file, following a symlink (dotfile
// managers link it) so the write replaces the target, not the link.
func loadSettings(path string) (*settingsFile, error) {
	sf := &settingsFile{path: path, mode: 0o600, obj: jsonobject.New()}
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		target, err := filepath.EvalSymlinks(path)
		if err != nil {
			return nil, fmt.Errorf("%s: cannot follow symlink: %w", path, err)
		}
		sf.path = target
	}
	fi, err := os.Stat(sf.path)
	if errors.Is(err, fs.ErrNotExist) {
		return sf, nil
	}
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", sf.path)
	}
	b, err := regularfile.ReadFile(sf.path, MaxSettingsFile)
	if err != nil {
		return nil, err
	}
	sf.exists, sf.mode, sf.data = true, fi.Mode().Perm(), b
	if len(bytes.TrimSpace(b)) == 0 {
		return sf, nil // an empty file is an empty object
	}
	obj, err := jsonobject.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("refusing to edit %s: it is not a valid JSON object (%v); fix or move it first", sf.path, err)
	}
	sf.obj = obj
	return sf, nil
}

// hooksObject returns the "hooks" object (empty if absent or null).
func (sf *settingsFile) hooksObject() (*jsonobject.Object, error) {
	raw, ok := sf.obj.Get("hooks")
	if !ok || string(bytes.TrimSpace(raw)) == "null" {
		return jsonobject.New(), nil
	}
	h, err := jsonobject.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("refusing to edit %s: \"hooks\" is not an object", sf.path)
	}
	return h, nil
}

// write backs up the old file and writes the new one atomically with the
// old file's mode.
func (sf *settingsFile) write(out []byte, now time.Time, res *InstallResult) error {
	if sf.exists {
		b, err := writeBackup(sf.path, sf.data, now)
		if err != nil {
			return fmt.Errorf("back up %s: %w", sf.path, err)
		}
		res.Backup = b
	}
	if err := atomicfile.Write(sf.path, out, sf.mode); err != nil {
		return err
	}
	res.Changed = true
	return nil
}

// writeBackup copies data to path.corral-backup-<UTC time>, never over an
// existing file.
func writeBackup(path string, data []byte, now time.Time) (string, error) {
	base := path + backupSuffix + now.UTC().Format("20060102T150405.000Z")
	for i := 0; i < 100; i++ {
		name := base
		if i > 0 {
			name += "-" + strconv.Itoa(i)
		}
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		if _, err := f.Write(data); err != nil {
			f.Close()
			os.Remove(name)
			return "", err
		}
		if err := f.Sync(); err != nil {
			f.Close()
			os.Remove(name)
			return "", err
		}
		return name, f.Close()
	}
	return "", fmt.Errorf("too many backups named %s*", base)
}

// editEvent removes corral's hooks from one event's list and, if want is
// set, makes want the only corral group. It returns how many of corral's
// hooks it removed, or -1 when want was already there exactly (nothing
// changed). Groups and hooks that are not corral's are kept verbatim.
func editEvent(hooks *jsonobject.Object, event string, want *hookGroup) (int, error) {
	var groups []json.RawMessage
	if raw, ok := hooks.Get(event); ok && string(bytes.TrimSpace(raw)) != "null" {
		if err := json.Unmarshal(raw, &groups); err != nil {
			return 0, fmt.Errorf("refusing to edit settings: hooks.%s is not a list", event)
		}
	}
	var wantRaw []byte
	if want != nil {
		wantRaw, _ = json.Marshal(want)
	}
	var kept []json.RawMessage
	removed := 0
	exact := false
	for _, g := range groups {
		obj, err := jsonobject.Parse(g)
		if err != nil {
			kept = append(kept, g)
			continue
		}
		hraw, ok := obj.Get("hooks")
		var hs []json.RawMessage
		if !ok || json.Unmarshal(hraw, &hs) != nil {
			kept = append(kept, g)
			continue
		}
		var keptH []json.RawMessage
		for _, h := range hs {
			var hc struct {
				Command string   `json:"command"`
				Args    []string `json:"args"`
			}
			if json.Unmarshal(h, &hc) == nil && IsOwnHook(hc.Command, hc.Args) {
				removed++
				continue
			}
			keptH = append(keptH, h)
		}
		switch {
		case len(keptH) == len(hs):
			kept = append(kept, g)
		case len(keptH) == 0:
			if want != nil && len(hs) == 1 && jsonEqual(g, wantRaw) {
				exact = true
			}
		default:
			obj.Set("hooks", rawArray(keptH))
			b, err := obj.MarshalJSON()
			if err != nil {
				return 0, err
			}
			kept = append(kept, b)
		}
	}
	if want != nil && exact && removed == 1 {
		return -1, nil
	}
	if want != nil {
		kept = append(kept, wantRaw)
	} else if removed == 0 {
		return 0, nil
	}
	if len(kept) == 0 {
		hooks.Del(event)
	} else {
		hooks.Set(event, rawArray(kept))
	}
	return removed, nil
}

func rawArray(items []json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i, it := range items {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(it)
	}
	buf.WriteByte(']')
	return buf.Bytes()
}

// jsonEqual compares two JSON texts ignoring whitespace.
func jsonEqual(a, b []byte) bool {
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return false
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}

// statusLineIsOwn reports whether a statusLine value is corral's.
func statusLineIsOwn(raw json.RawMessage) bool {
	var sl struct {
		Command string `json:"command"`
	}
	return json.Unmarshal(raw, &sl) == nil && IsOwnCommand(sl.Command)
}

func readSidecar(claudeDir string) (statusLineSidecar, error) {
	var sc statusLineSidecar
	b, err := regularfile.ReadFile(StatusLineSidecarPath(claudeDir), MaxSettingsFile)
	if err != nil {
		return sc, err
	}
	if err := claude.CheckObject("statusLine sidecar", b, MaxSettingsFile); err != nil {
		return sc, err
	}
	if err := json.Unmarshal(b, &sc); err != nil {
		return sc, fmt.Errorf("statusLine sidecar: %w", err)
	}
	return sc, nil
}

// statusLineCommandOf returns the command of a statusLine value of type
// "command".
func statusLineCommandOf(raw json.RawMessage) (string, bool) {
	var sl struct {
		Type    string `json:"type"`
		Command string `json:"command"`
	}
	if json.Unmarshal(raw, &sl) != nil || sl.Type != "command" || strings.TrimSpace(sl.Command) == "" {
		return "", false
	}
	return sl.Command, true
}
