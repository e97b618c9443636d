// Package service runs corral as a service of the machine: a systemd unit
// on Linux (a user unit for serve and agent, a hardened system unit for the
// hub) or a launchd agent on macOS. It writes the unit from a Spec, drives
// systemctl or launchctl (each call with a timeout), and reads the state
// back. It knows nothing of corral's flags: the caller checks them and
// hands over the final argument list.
package service

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Kind is which corral command a service runs.
type Kind string

// The kinds of service.
const (
	Serve Kind = "serve"
	Agent Kind = "agent"
	Hub   Kind = "hub"
)

// Kinds lists every kind, in the order status shows them.
func Kinds() []Kind { return []Kind{Serve, Agent, Hub} }

// ParseKind accepts a kind's name.
func ParseKind(s string) (Kind, error) {
	for _, k := range Kinds() {
		if string(k) == s {
			return k, nil
		}
	}
	return "", fmt.Errorf("no service %q: serve, agent or hub", s)
}

// Unit is the systemd unit's file name.
func (k Kind) Unit() string { return "corral-" + string(k) + ".service" }

// Label is the launchd job's label.
func (k Kind) Label() string { return "dev.corral." + string(k) }

// System tells whether the kind runs as a system service (the hub, on
// Linux) rather than one of the user's.
func (k Kind) System() bool { return k == Hub }

// Spec is one service to write.
type Spec struct {
	Kind Kind
	// Exe is the absolute path of the corral binary.
	Exe string
	// Args follow the kind on the command line: the flags the person gave,
	// with paths made absolute, and --data-dir.
	Args []string
	// DataDir is where the service keeps its data; the hub's unit may
	// write there and nowhere else.
	DataDir string
	// Env is carried into the service (NAME=value): what the sessions need
	// from the installing shell, such as PATH to find claude and tmux.
	Env []string
	// HomePath sets PATH to the usual places under the user's home and the
	// system's, for a unit shipped in a package (systemd user units only).
	HomePath bool
	// Version is the corral that wrote the unit, for its header comment.
	Version string

	// For the hub's system unit:
	// User runs it; its home is the data directory.
	User string
	// Credentials are files systemd reads (as root) and hands the service
	// in $CREDENTIALS_DIRECTORY: each becomes --Flag=%d/Flag.
	Credentials []Credential
	// Privileged is set when the hub listens on a port below 1024.
	Privileged bool
}

// Credential is a file flag of the hub passed through LoadCredential.
type Credential struct {
	Flag string // tls-cert
	Path string // /etc/letsencrypt/live/hub.example.com/fullchain.pem
}

// StateDir is where a system hub keeps its data by default: systemd's
// StateDirectory=corral.
const StateDir = "/var/lib/corral"

// SystemUser is the account the hub's system unit runs as.
const SystemUser = "corral"

// State is what the service manager says of a service.
type State struct {
	Kind      Kind   `json:"kind"`
	Manager   string `json:"manager"` // systemd-user, systemd-system, launchd
	Path      string `json:"path"`    // the unit or plist file
	Installed bool   `json:"installed"`
	Enabled   string `json:"enabled,omitempty"` // systemd's UnitFileState: enabled, disabled, ...
	Active    string `json:"active,omitempty"`  // active, inactive, failed, activating, ... (launchd: running, not running)
	Sub       string `json:"sub,omitempty"`     // running, dead, auto-restart, ...
	PID       int    `json:"pid,omitempty"`
	Since     string `json:"since,omitempty"`
	// Linger is for systemd user units: whether the user's manager runs
	// without a login (and so starts the service at boot).
	Linger *bool `json:"linger,omitempty"`
	// Logs says how to read the service's log.
	Logs string `json:"logs,omitempty"`
}

// Running tells whether the manager reports the service up.
func (s State) Running() bool { return s.Active == "active" || s.Active == "running" }

// Runner runs a program and returns its combined output.
type Runner func(ctx context.Context, name string, args ...string) ([]byte, error)

// Exec is the Runner that runs the real program, bounded in time.
func Exec(ctx context.Context, name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if msg == "" {
			return out, fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
		}
		return out, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, msg)
	}
	return out, nil
}

// sameContent tells whether path holds exactly data.
func sameContent(path string, data []byte) bool {
	b, err := os.ReadFile(path)
	return err == nil && bytes.Equal(b, data)
}
