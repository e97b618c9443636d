package service

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// Manager installs, removes and reports one machine's services.
type Manager interface {
	Path(Kind) string
	Install(ctx context.Context, s Spec, start bool) (string, error)
	Uninstall(ctx context.Context, k Kind) (string, error)
	Status(ctx context.Context, k Kind) (State, error)
}

// Platform is what the choice of a manager depends on.
type Platform struct {
	GOOS       string
	Home       string
	ConfigHome string // $XDG_CONFIG_HOME, else ~/.config
	UID        int
	UserName   string
	Run        Runner
	// Root is prefixed to the system paths (/etc, /run, /var): "" on a
	// real machine.
	Root string
}

// SystemdRunning tells whether systemd manages this machine (sd_booted).
func (p Platform) SystemdRunning() bool {
	fi, err := os.Stat(filepath.Join(p.Root, "/run/systemd/system"))
	return err == nil && fi.IsDir()
}

// ForKind returns the manager of a kind's service on this platform.
func (p Platform) ForKind(k Kind) (Manager, error) {
	switch p.GOOS {
	case "linux":
		if !p.SystemdRunning() {
			return nil, fmt.Errorf("this machine does not run systemd (no /run/systemd/system): start 'corral %s' with your own supervisor (docs/operations.md)", k)
		}
		if k.System() {
			return Systemd{System: true, UnitDir: filepath.Join(p.Root, "/etc/systemd/system"), Run: p.Run}, nil
		}
		return Systemd{UnitDir: filepath.Join(p.ConfigHome, "systemd", "user"), Run: p.Run,
			LingerDir: filepath.Join(p.Root, "/var/lib/systemd/linger"), UserName: p.UserName}, nil
	case "darwin":
		return Launchd{AgentDir: filepath.Join(p.Home, "Library", "LaunchAgents"),
			LogDir: filepath.Join(p.Home, "Library", "Logs", "corral"), UID: p.UID, Run: p.Run}, nil
	}
	return nil, fmt.Errorf("no service manager corral knows on %s: start 'corral %s' with your own supervisor", p.GOOS, k)
}
