package agent

import (
	"github.com/corral-dev/corral/internal/claude/sessionfile"
	"github.com/corral-dev/corral/internal/proc"
)

// liveSessionFiles are the session files of Claude processes alive now
// (a file whose pid was reused by another process does not count).
func liveSessionFiles(claudeDir string) []sessionfile.File {
	files, err := sessionfile.ReadDir(sessionfile.Dir(claudeDir))
	if err != nil {
		return nil
	}
	out := files[:0]
	for _, f := range files {
		if f.PID > 0 && proc.StartTimeMatches(f.PID, f.ProcStart) {
			out = append(out, f)
		}
	}
	return out
}

// liveConversations are the conversation ids live Claude processes run,
// in corral or not.
func liveConversations(claudeDir string) map[string]bool {
	m := map[string]bool{}
	for _, f := range liveSessionFiles(claudeDir) {
		if f.SessionID != "" {
			m[f.SessionID] = true
		}
	}
	return m
}

// claudeRunning is the pid of a live claude running conversation conv, or 0.
func claudeRunning(claudeDir, conv string) int {
	for _, f := range liveSessionFiles(claudeDir) {
		if f.SessionID == conv {
			return f.PID
		}
	}
	return 0
}
