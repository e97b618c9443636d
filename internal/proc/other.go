//go:build !linux

package proc

import (
	"context"
	"errors"
)

// Elsewhere than Linux there is no /proc and no pidfd: every call says
// so, and the agent goes without what it would have learned (which
// process is Claude, when a pane's program exits). The hub and the CLI
// need none of it.

// ErrNoProcess is returned for a pid that does not exist.
var ErrNoProcess = errors.New("no such process")

// Proc is what Linux's /proc says of a process (proc.go).
type Proc struct {
	PID       int
	PPID      int
	Comm      string
	State     string
	StartTime uint64
	Exe       string
	Cmdline   []string
}

func Stat(int) (Proc, error)                                  { return Proc{}, errors.ErrUnsupported }
func ReadChars(int) (uint64, error)                           { return 0, errors.ErrUnsupported }
func FindClaude(int) (Proc, bool, error)                      { return Proc{}, false, errors.ErrUnsupported }
func IsClaude(Proc) bool                                      { return false }
func StartTimeMatches(int, string) bool                       { return false }
func ClaudeAncestor(int, int) (Proc, bool)                    { return Proc{}, false }
func Children(int) ([]int, error)                             { return nil, errors.ErrUnsupported }
func Descendants(int) ([]int, error)                          { return nil, errors.ErrUnsupported }
func WatchExit(context.Context, int) (<-chan struct{}, error) { return nil, errors.ErrUnsupported }
func OpenExit(int) (*Exit, error)                             { return nil, errors.ErrUnsupported }
func ListeningTCPPorts(int) ([]int, error)                    { return nil, errors.ErrUnsupported }
func HasListeningTCP(int) (bool, error)                       { return false, errors.ErrUnsupported }
func Getenv(int, string) (string, bool, error)                { return "", false, errors.ErrUnsupported }

// Exit is a watch of a process's exit (watch.go); OpenExit makes none here.
type Exit struct{}

// Wait reports false: nothing is watched.
func (*Exit) Wait(context.Context) bool { return false }
