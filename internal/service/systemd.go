package service

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/corral-dev/corral/internal/atomicfile"
)

// describe is each kind's one-line description.
func describe(k Kind) string {
	switch k {
	case Serve:
		return "corral serve: Claude Code sessions in tmux, and their dashboard"
	case Agent:
		return "corral agent: this machine's Claude Code sessions, for a corral hub"
	default:
		return "corral hub: one dashboard for the sessions of many machines"
	}
}

const docURL = "https://github.com/corral-dev/corral/blob/main/docs/operations.md"

// SystemdUnit returns the unit file for a spec: a user unit for serve and
// agent, a hardened system unit for the hub.
func SystemdUnit(s Spec) []byte {
	var b bytes.Buffer
	w := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	w("# Written by corral %s ('corral service install %s'); 'corral service uninstall %s' removes it.", s.Version, s.Kind, s.Kind)
	w("[Unit]")
	w("Description=%s", describe(s.Kind))
	w("Documentation=%s", docURL)
	if s.Kind.System() {
		w("Wants=network-online.target")
		w("After=network-online.target")
	}
	w("")
	w("[Service]")
	w("Type=exec")
	if s.Kind.System() && s.User != "" {
		w("User=%s", s.User)
		w("Group=%s", s.User)
	}
	args := append([]string{s.Exe, string(s.Kind)}, s.Args...)
	quoted := make([]string, 0, len(args)+len(s.Credentials))
	for _, a := range args {
		quoted = append(quoted, execArg(a))
	}
	for _, c := range s.Credentials {
		// %d is systemd's credentials directory; the flag name is its id.
		quoted = append(quoted, "--"+c.Flag+"=%d/"+c.Flag)
	}
	w("ExecStart=%s", strings.Join(quoted, " "))
	for _, c := range s.Credentials {
		w("LoadCredential=%s:%s", c.Flag, specifierEscape(c.Path))
	}
	if s.HomePath && !s.Kind.System() {
		w(`Environment="PATH=%%h/.local/bin:%%h/bin:/usr/local/bin:/usr/bin:/bin"`)
	}
	if len(s.Env) > 0 {
		env := make([]string, 0, len(s.Env))
		for _, e := range s.Env {
			env = append(env, `"`+quoteEscape(specifierEscape(e))+`"`)
		}
		w("Environment=%s", strings.Join(env, " "))
	}
	if !s.Kind.System() {
		// A place for what must not be in a unit file: ANTHROPIC_API_KEY,
		// CORRAL_DEVICE_TOKEN. Optional (the leading "-").
		w("EnvironmentFile=-%%h/.config/corral/%s.env", s.Kind)
		w("# corral starts the sessions' tmux server, and it runs in this service's")
		w("# control group: stopping or restarting corral must leave it, and the")
		w("# sessions, running.")
		w("KillMode=process")
	}
	w("Restart=on-failure")
	w("RestartSec=2s")
	w("TimeoutStopSec=20s")
	if s.Kind.System() {
		hardening(&b, s)
	}
	w("")
	w("[Install]")
	if s.Kind.System() {
		w("WantedBy=multi-user.target")
	} else {
		w("WantedBy=default.target")
	}
	return b.Bytes()
}

// hardening is the hub's sandbox. The hub serves HTTP and WebSockets on
// TCP, its API on a unix socket in its data directory, and sends Web Push
// and webhooks out; it starts no program and needs no device, no other
// file to write, and no privilege. systemd-analyze verifies and scores
// it; internal/cli's TestHubRunsInItsSandbox runs a hub under the file
// system, user and privilege limits without systemd; the rest is argued in
// docs/operations.md.
func hardening(b *bytes.Buffer, s Spec) {
	w := func(format string, a ...any) { fmt.Fprintf(b, format+"\n", a...) }
	w("# The data directory is the only place the hub writes.")
	if s.DataDir == StateDir {
		w("StateDirectory=corral")
		w("StateDirectoryMode=0700")
	} else {
		w("ReadWritePaths=%s", execArg(s.DataDir))
	}
	w("UMask=0077")
	w("NoNewPrivileges=yes")
	w("ProtectSystem=strict")
	w("ProtectHome=yes")
	w("PrivateTmp=yes")
	w("PrivateDevices=yes")
	if !s.Privileged {
		// Not with a port below 1024: capabilities held in a user
		// namespace do not reach the host's network.
		w("PrivateUsers=yes")
	}
	w("ProtectKernelTunables=yes")
	w("ProtectKernelModules=yes")
	w("ProtectKernelLogs=yes")
	w("ProtectControlGroups=yes")
	w("ProtectClock=yes")
	w("ProtectHostname=yes")
	w("ProtectProc=invisible")
	w("ProcSubset=pid")
	w("RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6")
	w("RestrictNamespaces=yes")
	w("RestrictRealtime=yes")
	w("RestrictSUIDSGID=yes")
	w("LockPersonality=yes")
	w("MemoryDenyWriteExecute=yes")
	w("RemoveIPC=yes")
	if s.Privileged {
		w("CapabilityBoundingSet=CAP_NET_BIND_SERVICE")
		w("AmbientCapabilities=CAP_NET_BIND_SERVICE")
	} else {
		w("CapabilityBoundingSet=")
	}
	w("SystemCallArchitectures=native")
	w("SystemCallFilter=@system-service")
	w("SystemCallFilter=~@privileged")
	w("SystemCallErrorNumber=EPERM")
}

// Sysusers is the systemd-sysusers line that makes the hub's account.
func Sysusers(user, home string) []byte {
	return fmt.Appendf(nil, "# corral hub's account (corral service install hub, or the package)\nu %s - \"corral hub\" %s\n", user, home)
}

// execArg quotes one word of ExecStart: specifiers (%) and variables ($)
// are taken literally, and a word with spaces or quotes stays one word.
func execArg(s string) string {
	e := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`, "%", "%%", "$", "$$").Replace(s)
	if s == "" || strings.ContainsAny(s, " \t\n'\";\\") {
		return `"` + e + `"`
	}
	return e
}

func specifierEscape(s string) string { return strings.ReplaceAll(s, "%", "%%") }

func quoteEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}

// Systemd installs units with systemctl, the user's manager (--user) or
// the system's.
type Systemd struct {
	System  bool
	UnitDir string // ~/.config/systemd/user or /etc/systemd/system
	// LingerDir holds a file per user whose manager runs without a login
	// (systemd-logind's /var/lib/systemd/linger).
	LingerDir string
	UserName  string
	Run       Runner
}

// ErrNotInstalled is returned by Uninstall for a service that is not.
var ErrNotInstalled = errors.New("not installed")

func (m Systemd) ctl(ctx context.Context, args ...string) ([]byte, error) {
	if !m.System {
		args = append([]string{"--user"}, args...)
	}
	out, err := m.Run(ctx, "systemctl", args...)
	if err != nil && !m.System && bytes.Contains(out, []byte("bus")) {
		return out, fmt.Errorf("%w\n(systemctl --user cannot reach your user manager: run this from a login session of yours, not through sudo or su)", err)
	}
	return out, err
}

// Path is where a kind's unit file goes.
func (m Systemd) Path(k Kind) string { return filepath.Join(m.UnitDir, k.Unit()) }

// Install writes the unit, enables it and, with start, (re)starts it.
func (m Systemd) Install(ctx context.Context, s Spec, start bool) (string, error) {
	path := m.Path(s.Kind)
	if err := os.MkdirAll(m.UnitDir, 0o755); err != nil {
		return "", err
	}
	unit := SystemdUnit(s)
	changed := !sameContent(path, unit)
	if err := atomicfile.Write(path, unit, 0o644); err != nil {
		return "", err
	}
	if _, err := m.ctl(ctx, "daemon-reload"); err != nil {
		return path, err
	}
	if _, err := m.ctl(ctx, "enable", s.Kind.Unit()); err != nil {
		return path, err
	}
	if start {
		verb := "start"
		if changed {
			verb = "restart" // a running one picks up the new flags
		}
		if _, err := m.ctl(ctx, verb, s.Kind.Unit()); err != nil {
			return path, err
		}
	}
	return path, nil
}

// Uninstall stops and disables the service and removes its unit. A user
// service's tmux sessions keep running (KillMode=process).
func (m Systemd) Uninstall(ctx context.Context, k Kind) (string, error) {
	path := m.Path(k)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return path, ErrNotInstalled
	}
	if _, err := m.ctl(ctx, "disable", "--now", k.Unit()); err != nil {
		return path, err
	}
	if err := os.Remove(path); err != nil {
		return path, err
	}
	_, err := m.ctl(ctx, "daemon-reload")
	return path, err
}

// Status asks systemd about a kind's service.
func (m Systemd) Status(ctx context.Context, k Kind) (State, error) {
	st := State{Kind: k, Manager: "systemd-user", Path: m.Path(k), Logs: "journalctl --user -u " + k.Unit()}
	if m.System {
		st.Manager, st.Logs = "systemd-system", "journalctl -u "+k.Unit()
	} else if m.LingerDir != "" && m.UserName != "" {
		_, err := os.Stat(filepath.Join(m.LingerDir, m.UserName))
		linger := err == nil
		st.Linger = &linger
	}
	if _, err := os.Stat(st.Path); err == nil {
		st.Installed = true
	}
	out, err := m.ctl(ctx, "show", k.Unit(), "--property=LoadState,ActiveState,SubState,UnitFileState,MainPID,ActiveEnterTimestamp")
	if err != nil {
		return st, err
	}
	props := parseProps(out)
	if props["LoadState"] == "loaded" {
		st.Installed = true // e.g. the package's unit in /usr/lib/systemd
	}
	st.Enabled = props["UnitFileState"]
	st.Active = props["ActiveState"]
	st.Sub = props["SubState"]
	st.PID, _ = strconv.Atoi(props["MainPID"])
	if t := props["ActiveEnterTimestamp"]; t != "" && t != "n/a" && st.Running() {
		st.Since = t
	}
	return st, nil
}

// parseProps reads systemctl show's NAME=value lines.
func parseProps(out []byte) map[string]string {
	props := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			props[k] = v
		}
	}
	return props
}
