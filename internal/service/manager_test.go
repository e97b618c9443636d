package service

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder stands in for systemctl and launchctl, which need a running
// manager that this machine may not have: it records the calls and
// answers `show` and `print` as they answer.
type recorder struct {
	calls []string
	show  string
}

func (r *recorder) run(_ context.Context, name string, args ...string) ([]byte, error) {
	call := name + " " + strings.Join(args, " ")
	r.calls = append(r.calls, call)
	switch {
	case strings.Contains(call, " show "), strings.Contains(call, " print "):
		return []byte(r.show), nil
	}
	return nil, nil
}

func TestSystemdInstallUninstall(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	linger := filepath.Join(dir, "linger")
	os.Mkdir(linger, 0o755)
	r := &recorder{show: "LoadState=loaded\nActiveState=active\nSubState=running\nUnitFileState=enabled\nMainPID=4242\nActiveEnterTimestamp=Tue 2026-12-01 10:00:00 UTC\n"}
	m := Systemd{UnitDir: filepath.Join(dir, "systemd", "user"), LingerDir: linger, UserName: "me", Run: r.run}
	s := specs()["serve"]

	path, err := m.Install(ctx, s, true)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != string(SystemdUnit(s)) || path != filepath.Join(dir, "systemd/user/corral-serve.service") {
		t.Fatalf("unit at %s:\n%s", path, b)
	}
	want := []string{"systemctl --user daemon-reload", "systemctl --user enable corral-serve.service", "systemctl --user restart corral-serve.service"}
	if strings.Join(r.calls, "\n") != strings.Join(want, "\n") {
		t.Errorf("install ran %q, want %q", r.calls, want)
	}
	// The same unit again: start (a no-op when running), not restart.
	r.calls = nil
	m.Install(ctx, s, true)
	if r.calls[len(r.calls)-1] != "systemctl --user start corral-serve.service" {
		t.Errorf("installing the same unit again ran %q", r.calls)
	}

	st, err := m.Status(ctx, Serve)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Installed || !st.Running() || st.PID != 4242 || st.Enabled != "enabled" || st.Sub != "running" ||
		st.Linger == nil || *st.Linger || st.Logs != "journalctl --user -u corral-serve.service" {
		t.Errorf("status %+v", st)
	}
	os.WriteFile(filepath.Join(linger, "me"), nil, 0o644)
	if st, _ := m.Status(ctx, Serve); st.Linger == nil || !*st.Linger {
		t.Errorf("linger on: %+v", st)
	}

	r.calls = nil
	if _, err := m.Uninstall(ctx, Serve); err != nil {
		t.Fatal(err)
	}
	want = []string{"systemctl --user disable --now corral-serve.service", "systemctl --user daemon-reload"}
	if strings.Join(r.calls, "\n") != strings.Join(want, "\n") {
		t.Errorf("uninstall ran %q, want %q", r.calls, want)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the unit is still there: %v", err)
	}
	if _, err := m.Uninstall(ctx, Serve); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("uninstalling again: %v", err)
	}

	// The hub: the system manager, no --user.
	r.calls = nil
	sys := Systemd{System: true, UnitDir: filepath.Join(dir, "system"), Run: r.run}
	if _, err := sys.Install(ctx, specs()["hub"], false); err != nil {
		t.Fatal(err)
	}
	if strings.Join(r.calls, "\n") != "systemctl daemon-reload\nsystemctl enable corral-hub.service" {
		t.Errorf("the hub's install without start ran %q", r.calls)
	}
}

func TestLaunchdInstallUninstall(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	r := &recorder{show: "gui/501/dev.corral.serve = {\n\tactive count = 1\n\tstate = running\n\tpid = 777\n\tjob state = running\n}\n"}
	m := Launchd{AgentDir: filepath.Join(dir, "LaunchAgents"), LogDir: filepath.Join(dir, "Logs", "corral"), UID: 501, Run: r.run}
	path, err := m.Install(ctx, specs()["serve"], true)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"launchctl bootout gui/501/dev.corral.serve", "launchctl bootstrap gui/501 " + path}
	if strings.Join(r.calls, "\n") != strings.Join(want, "\n") {
		t.Errorf("install ran %q, want %q", r.calls, want)
	}
	st, _ := m.Status(ctx, Serve)
	if !st.Installed || !st.Running() || st.PID != 777 {
		t.Errorf("status %+v", st)
	}
	if _, err := m.Uninstall(ctx, Serve); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the plist is still there: %v", err)
	}
}
