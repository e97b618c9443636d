package sessionfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/corral-dev/corral/internal/claude"
	"github.com/corral-dev/corral/internal/regularfile"
)

// MaxSize bounds a session file (about 400 bytes in practice).
const MaxSize = 1 << 20

// Values of File.Status written by Claude 2.1.197.
const (
	Busy    = "busy"
	Idle    = "idle"
	Waiting = "waiting"
	// Shell is idle with a background shell running.
	Shell = "shell"
)

// Values of File.WaitingFor (set only while Status is "waiting").
const (
	WaitingPermission = "permission prompt"
	WaitingWorker     = "worker request"
	WaitingSandbox    = "sandbox request"
	WaitingDialog     = "dialog open"
	WaitingInput      = "input needed"
)

// File is ~/.claude/sessions/<pid>.json: Claude's own record of a
// live session, written when it starts, rewritten in place (not atomically)
// on every status change, and removed when it exits.
type File struct {
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
func (s File) Started() time.Time { return msTime(s.StartedAt) }

// StatusChanged returns StatusUpdatedAt as a time (zero if unknown).
func (s File) StatusChanged() time.Time { return msTime(s.StatusUpdatedAt) }

func msTime(ms int64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// Parse decodes a session file. It needs a positive pid; a
// missing sessionId is allowed (Claude fills it in as the session starts).
func Parse(b []byte) (File, error) {
	if err := claude.CheckObject("session file", b, MaxSize); err != nil {
		return File{}, err
	}
	var s File
	if err := claude.DecodeLoose(b, &s); err != nil {
		return File{}, fmt.Errorf("session file: %w", err)
	}
	if s.PID <= 0 {
		return File{}, fmt.Errorf("session file: missing or invalid pid")
	}
	return s, nil
}

// Dir is the directory of live-session files under Claude's
// configuration directory (see ConfigDir).
func Dir(claudeDir string) string { return filepath.Join(claudeDir, "sessions") }

// PID returns the pid a session file name stands for. Only
// names of the form <digits>.json count, as in Claude's own scan, so temp
// files of an atomic writer are ignored.
func PID(name string) (int, bool) {
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

// Read reads and parses one session file.
func Read(path string) (File, error) {
	b, err := regularfile.ReadFile(path, MaxSize)
	if err != nil {
		return File{}, err
	}
	s, err := Parse(b)
	if err != nil {
		return File{}, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// ReadDir reads every session file in dir once. Files that cannot
// be read or parsed (one may be mid-write) are left out; a missing dir is
// an empty result.
func ReadDir(dir string) ([]File, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	var out []File
	for _, e := range ents {
		if _, ok := PID(e.Name()); !ok || e.IsDir() {
			continue
		}
		s, err := Read(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		out = append(out, s)
	}
	return out, nil
}
