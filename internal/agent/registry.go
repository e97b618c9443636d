package agent

import (
	"fmt"
	"sync"
	"unicode/utf8"

	"github.com/corral-dev/corral/internal/api"
)

// registry is the agent's table of sessions, and the lock that guards it
// and every session in it.
type registry struct {
	mu       sync.Mutex
	sessions map[string]*session
	// reserved holds names of sessions being created.
	reserved map[string]bool
	// serverPID is the tmux server's process (panes.watchServer).
	serverPID int
}

// getLocked finds a session. The caller holds a.mu.
func (a *registry) getLocked(id string) (*session, error) {
	if !validID(id) {
		return nil, api.Errorf(api.CodeNotFound, "no session %q", id)
	}
	s, ok := a.sessions[id]
	if !ok {
		return nil, api.Errorf(api.CodeNotFound, "no session %q", id)
	}
	return s, nil
}

func (a *registry) get(id string) (*session, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.getLocked(id)
}

// uniqueNameLocked returns name, or name-2, name-3 ... if it is taken,
// within the length limit. The caller holds a.mu.
func (a *registry) uniqueNameLocked(name string) string {
	taken := map[string]bool{}
	for _, s := range a.sessions {
		taken[s.name] = true
	}
	for n := range a.reserved {
		taken[n] = true
	}
	if !taken[name] {
		return name
	}
	for i := 2; ; i++ {
		suffix := fmt.Sprintf("-%d", i)
		base := name
		for len(base)+len(suffix) > maxNameLen {
			_, size := utf8.DecodeLastRuneInString(base)
			base = base[:len(base)-size]
		}
		if n := base + suffix; !taken[n] {
			return n
		}
	}
}

// runningConversation names the live session (other than except) whose
// Claude runs a conversation, or "" if none does.
func (a *registry) runningConversation(conv, except string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, s := range a.sessions {
		if s.id != except && s.kind != api.KindShell && s.st.ClaudeSessionID == conv && s.st.Status != api.StatusExited {
			return s.name
		}
	}
	return ""
}
