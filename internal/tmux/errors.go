package tmux

import (
	"errors"
	"strings"
)

var (
	// ErrNoServer matches errors from a command that found no server
	// running on the socket.
	ErrNoServer = errors.New("no tmux server running")
	// ErrNoSession matches errors from a command whose target session,
	// window or pane does not exist (the server does).
	ErrNoSession = errors.New("no such tmux session or pane")
	// ErrNotInstalled matches errors from a missing tmux executable.
	ErrNotInstalled = errors.New("tmux is not installed: install tmux 3.2 or newer (e.g. apt-get install tmux)")
	// ErrInvalid matches errors about an argument refused before running
	// tmux: a bad session name, key name, size or environment entry.
	ErrInvalid = errors.New("invalid argument")
	// ErrOtherSize says SuspendAlone left a client alone because another
	// client of its session has a different size.
	ErrOtherSize = errors.New("tmux: another client of the session has another size")
)

// Error is a failed tmux command.
type Error struct {
	// Args are the command's arguments after the global flags, with long
	// ones (typed text) shortened.
	Args []string
	// Stderr is tmux's own message, such as "can't find session: x".
	Stderr string
	// Err is the underlying failure: an *exec.ExitError, a context error,
	// or one matching ErrNotInstalled.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("tmux")
	for _, a := range e.Args {
		b.WriteByte(' ')
		b.WriteString(a)
	}
	if e.Stderr != "" {
		b.WriteString(": ")
		b.WriteString(e.Stderr)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrNoServer) and errors.Is(err, ErrNoSession)
// work by reading tmux's message (tmux 3.3a wording).
func (e *Error) Is(target error) bool {
	switch target {
	case ErrNoServer:
		return isNoServer(e.Stderr)
	case ErrNoSession:
		return isNoSession(e.Stderr)
	}
	return false
}

// isNoServer reads tmux's own word that no server runs: "no server
// running", or a socket that is missing (ENOENT) or that nobody listens on
// (ECONNREFUSED). Nothing else counts: "error connecting to ... (Too many
// open files)", "server exited unexpectedly" or "lost server" (tmux out of
// descriptors, or a server going away mid-command) say nothing for sure, and
// reading them as "no server" once made corral recreate every session of a
// live server.
func isNoServer(msg string) bool {
	return strings.Contains(msg, "no server running on") ||
		(strings.Contains(msg, "error connecting to") &&
			(strings.Contains(msg, "No such file or directory") || strings.Contains(msg, "Connection refused")))
}

func isNoSession(msg string) bool {
	// "no current target": tmux 3.3a's answer to any target when the
	// server has no sessions at all.
	for _, s := range []string{"can't find session", "can't find pane", "can't find window", "no such session", "session not found", "no current target"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
