package claude

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/corral-dev/corral/internal/regularfile"
)

// Values of SessionFile.Status written by Claude 2.1.197.
const (
	SessionBusy    = "busy"
	SessionIdle    = "idle"
	SessionWaiting = "waiting"
	// SessionShell is idle with a background shell running.
	SessionShell = "shell"
)

// Values of SessionFile.WaitingFor (set only while Status is "waiting").
const (
	WaitingPermission = "permission prompt"
	WaitingWorker     = "worker request"
	WaitingSandbox    = "sandbox request"
	WaitingDialog     = "dialog open"
	WaitingInput      = "input needed"
)

// SessionFile is ~/.claude/sessions/<pid>.json: Claude's own record of a
// live session, written when it starts, rewritten in place (not atomically)
// on every status change, and removed when it exits.
type SessionFile struct {
	PID       int    `json:"pid"`
	SessionID string `json:"sessionId"`
	CWD       string `json:"cwd"`
	// StartedAt is milliseconds since the epoch.
	StartedAt int64 `json:"startedAt"`
	// ProcStart is field 22 of /proc/<pid>/stat (start time in clock ticks
	// since boot), as a string: compare it with the live process to detect
	// pid reuse.
	ProcStart    string `json:"procStart,omitempty"`
	Version      string `json:"version,omitempty"`
	PeerProtocol int    `json:"peerProtocol,omitempty"`
	// Kind is "interactive", "bg", "daemon" or "daemon-worker".
	Kind       string `json:"kind,omitempty"`
	Entrypoint string `json:"entrypoint,omitempty"`
	Name       string `json:"name,omitempty"`
	NameSource string `json:"nameSource,omitempty"`
	// Status is one of the Session* constants; empty in older versions.
	Status string `json:"status,omitempty"`
	// WaitingFor is one of the Waiting* constants.
	WaitingFor string `json:"waitingFor,omitempty"`
	// UpdatedAt and StatusUpdatedAt are milliseconds since the epoch.
	UpdatedAt           int64  `json:"updatedAt,omitempty"`
	StatusUpdatedAt     int64  `json:"statusUpdatedAt,omitempty"`
	MessagingSocketPath string `json:"messagingSocketPath,omitempty"`
	JobID               string `json:"jobId,omitempty"`
	BridgeSessionID     string `json:"bridgeSessionId,omitempty"`
}

// Started returns StartedAt as a time.
func (s SessionFile) Started() time.Time { return msTime(s.StartedAt) }

// StatusChanged returns StatusUpdatedAt as a time (zero if unknown).
func (s SessionFile) StatusChanged() time.Time { return msTime(s.StatusUpdatedAt) }

func msTime(ms int64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// ParseSessionFile decodes a session file. It needs a positive pid; a
// missing sessionId is allowed (Claude fills it in as the session starts).
func ParseSessionFile(b []byte) (SessionFile, error) {
	if err := checkObject("session file", b, MaxSessionFile); err != nil {
		return SessionFile{}, err
	}
	var s SessionFile
	if err := decodeLoose(b, &s); err != nil {
		return SessionFile{}, fmt.Errorf("session file: %w", err)
	}
	if s.PID <= 0 {
		return SessionFile{}, fmt.Errorf("session file: missing or invalid pid")
	}
	return s, nil
}

// ConfigDir is Claude's configuration directory, as Claude itself picks
// it: $CLAUDE_CONFIG_DIR when that is set, else ~/.claude (claude 2.1.197:
// process.env.CLAUDE_CONFIG_DIR ?? join(homedir(), ".claude")). Settings,
// session files and transcripts all live under it, so every path in this
// package derives from the directory this returns. An empty value counts
// as unset. A relative one, which Claude would resolve against each
// session's own working directory, is taken from the home directory:
// corral watches one directory for all sessions. This package never reads
// the environment itself: getenv is passed in.
func ConfigDir(getenv func(string) string, home string) string {
	if d := getenv("CLAUDE_CONFIG_DIR"); d != "" {
		if !filepath.IsAbs(d) {
			d = filepath.Join(home, d)
		}
		return filepath.Clean(d)
	}
	return filepath.Join(home, ".claude")
}

// SessionsDir is the directory of live-session files under Claude's
// configuration directory (see ConfigDir).
func SessionsDir(claudeDir string) string { return filepath.Join(claudeDir, "sessions") }

// SessionFilePID returns the pid a session file name stands for. Only
// names of the form <digits>.json count, as in Claude's own scan, so temp
// files of an atomic writer are ignored.
func SessionFilePID(name string) (int, bool) {
	digits, ok := strings.CutSuffix(name, ".json")
	if !ok || digits == "" || len(digits) > 10 {
		return 0, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	pid, err := strconv.Atoi(digits)
	if err != nil || pid <= 0 {
		return 0, false
	}
	return pid, true
}

// ReadSessionFile reads and parses one session file.
func ReadSessionFile(path string) (SessionFile, error) {
	b, err := regularfile.ReadFile(path, MaxSessionFile)
	if err != nil {
		return SessionFile{}, err
	}
	s, err := ParseSessionFile(b)
	if err != nil {
		return SessionFile{}, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// ReadSessionFiles reads every session file in dir once. Files that cannot
// be read or parsed (one may be mid-write) are left out; a missing dir is
// an empty result.
func ReadSessionFiles(dir string) ([]SessionFile, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	var out []SessionFile
	for _, e := range ents {
		if _, ok := SessionFilePID(e.Name()); !ok || e.IsDir() {
			continue
		}
		s, err := ReadSessionFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		out = append(out, s)
	}
	return out, nil
}
