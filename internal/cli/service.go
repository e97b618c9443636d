package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/corral-dev/corral/internal/datadir"
	"github.com/corral-dev/corral/internal/service"
	"github.com/corral-dev/corral/internal/version"
)

func newServiceCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "service",
		Short: "Run corral as a service that starts by itself: install, uninstall, status",
		Long: `Run corral under the machine's service manager, so that it starts at login or
boot and comes back after a failure:

  corral service install [serve]                   a systemd user unit (Linux) or a launchd agent (macOS)
  corral service install agent --hub URL ...       the same for an agent of a hub
  sudo corral service install hub --listen ...     a hardened systemd system unit for a hub

The flags after the kind are those of 'corral serve', 'corral agent' or 'corral
hub', and the unit carries them. Logs go to the journal (journalctl --user -u
corral-serve). A user unit runs while you are logged in; 'loginctl
enable-linger $USER' makes it start at boot and keep running after you log out.
See docs/operations.md.`,
	}
	install := &cobra.Command{
		Use:   "install [serve|agent|hub] [FLAGS]",
		Short: "Install and start corral as a service (default: serve)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return serviceInstall(cmd.Context(), e, service.Serve, newServeCmd(&env{getenv: e.getenv}), serviceFlags{})
		},
	}
	printCmd := &cobra.Command{
		Use:   "print serve|agent|hub [FLAGS]",
		Short: "Print the unit (or plist) that install would write, and change nothing",
	}
	var sf serviceFlags
	printCmd.PersistentFlags().StringVar(&sf.exe, "exe", "", "the corral binary the unit runs (default: this one)")
	printCmd.PersistentFlags().BoolVar(&sf.pkg, "package", false, "the unit a package ships: /usr/bin/corral, no flags, nothing of this shell")
	printCmd.PersistentFlags().StringVar(&sf.goos, "os", runtime.GOOS, "linux (systemd) or darwin (launchd)")
	printCmd.PersistentFlags().MarkHidden("package")
	printCmd.PersistentFlags().MarkHidden("os")
	for _, k := range service.Kinds() {
		install.AddCommand(serviceKindCmd(e, k, "Install and start 'corral "+string(k)+"' as a service, with these flags", func(ctx context.Context, real *cobra.Command) error {
			return serviceInstall(ctx, e, k, real, serviceFlags{})
		}))
		printCmd.AddCommand(serviceKindCmd(e, k, "Print the unit of 'corral "+string(k)+"' with these flags", func(ctx context.Context, real *cobra.Command) error {
			return serviceInstall(ctx, e, k, real, sf)
		}))
	}
	var asJSON bool
	status := &cobra.Command{
		Use:   "status [serve|agent|hub] [--json]",
		Short: "Show what the service manager says of corral's services",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			kinds := service.Kinds()
			if len(args) == 1 {
				k, err := service.ParseKind(args[0])
				if err != nil {
					return err
				}
				kinds = []service.Kind{k}
			}
			var states []service.State
			for _, k := range kinds {
				st, err := e.serviceState(cmd.Context(), k)
				if err != nil {
					return err
				}
				states = append(states, st)
			}
			if asJSON {
				return json.NewEncoder(e.stdout).Encode(states)
			}
			for _, st := range states {
				e.printState(st)
			}
			return nil
		},
	}
	status.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	uninstall := &cobra.Command{
		Use:   "uninstall [serve|agent|hub]",
		Short: "Stop corral's service and remove it (sessions keep running in tmux)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			k := service.Serve
			if len(args) == 1 {
				var err error
				if k, err = service.ParseKind(args[0]); err != nil {
					return err
				}
			}
			m, err := e.serviceManager(k)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), time.Minute)
			defer cancel()
			path, err := m.Uninstall(ctx, k)
			if errors.Is(err, service.ErrNotInstalled) {
				return fmt.Errorf("corral %s is not installed as a service (no %s)", k, path)
			} else if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "stopped corral %s and removed %s\n", k, path)
			if !k.System() {
				fmt.Fprintln(e.stdout, "its sessions keep running in tmux; a 'corral serve' started by hand takes them over")
			}
			return nil
		},
	}
	cmd.AddCommand(install, uninstall, status, printCmd)
	return cmd
}

// serviceFlags are print's own.
type serviceFlags struct {
	exe  string
	pkg  bool
	goos string
}

// serviceKindCmd is one kind under install or print: it takes exactly the
// flags of the corral command the service runs, so cobra checks them, and
// --help and completion show them.
func serviceKindCmd(e *env, k service.Kind, short string, run func(context.Context, *cobra.Command) error) *cobra.Command {
	real := kindCommand(e, k)
	c := &cobra.Command{
		Use:   string(k),
		Short: short,
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return run(cmd.Context(), real) },
	}
	// The same flag objects: what cobra parses here shows as Changed there.
	c.Flags().AddFlagSet(real.Flags())
	return c
}

// kindCommand builds the command a service runs, only for its flags.
func kindCommand(e *env, k service.Kind) *cobra.Command {
	scratch := &env{getenv: e.getenv}
	switch k {
	case service.Agent:
		return newAgentCmd(scratch)
	case service.Hub:
		return newHubCmd(scratch)
	}
	return newServeCmd(scratch)
}

// Flags whose value is a file or directory: the service runs elsewhere,
// so they are made absolute.
func isPathFlag(name string) bool {
	if name == "root" || name == "data-dir" {
		return true
	}
	for _, suf := range []string{"-file", "-dir", "-cert", "-key"} {
		if strings.HasSuffix(name, suf) {
			return true
		}
	}
	return false
}

// secretFlags would put a secret into the unit file and the process list.
func isSecretFlag(name string) bool { return name == "token" || name == "password" }

// hubCredentialFlags are read by systemd (as root) and handed to the hub.
func isCredentialFlag(name string) bool { return name == "tls-cert" || name == "tls-key" }

// serviceEnv names the variables a serve or agent unit takes from the
// installing shell: where claude and tmux are, the locale tmux draws
// with, and where Claude keeps its files.
var serviceEnvNames = []string{"PATH", "LANG", "LC_ALL", "LC_CTYPE", "CLAUDE_CONFIG_DIR"}

// serviceInstall builds the spec from the flags given and installs it
// (or, with sf.goos set, prints it).
func serviceInstall(ctx context.Context, e *env, k service.Kind, real *cobra.Command, sf serviceFlags) error {
	printOnly := sf.goos != ""
	goos := runtime.GOOS
	if printOnly {
		goos = sf.goos
	}
	if k != service.Agent && (e.hubURL != "" || e.token != "") {
		return fmt.Errorf("--hub and --token are the agent's flags, not corral %s's", k)
	}
	s := service.Spec{Kind: k, Version: version.String()}
	exe := sf.exe
	if sf.pkg {
		exe = "/usr/bin/corral"
	}
	if exe == "" {
		p, err := os.Executable()
		if err != nil {
			return err
		}
		if p, err = filepath.EvalSymlinks(p); err != nil {
			return err
		}
		exe = p
	}
	s.Exe = exe
	systemUnit := k.System() && goos == "linux"

	var err error
	switch {
	case systemUnit && e.dataDir == "":
		s.DataDir = service.StateDir
	case systemUnit:
		s.DataDir, err = filepath.Abs(e.dataDir)
	default:
		s.DataDir, err = e.dir()
	}
	if err != nil {
		return err
	}
	if !sf.pkg || systemUnit {
		s.Args = append(s.Args, "--data-dir="+s.DataDir)
	}
	var flagErr error
	real.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Changed || flagErr != nil {
			return
		}
		if isSecretFlag(f.Name) {
			flagErr = fmt.Errorf("--%s would be readable in the unit file and in every process list: put it in a file (--%s-file FILE, mode 0600, where the command has it) or in %s", f.Name, f.Name, envFileHint(k))
			return
		}
		vals := []string{f.Value.String()}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			vals = sv.GetSlice()
		}
		for _, v := range vals {
			if isPathFlag(f.Name) && v != "" {
				abs, err := filepath.Abs(v)
				if err != nil {
					flagErr = err
					return
				}
				v = abs
			}
			if systemUnit && isCredentialFlag(f.Name) {
				s.Credentials = append(s.Credentials, service.Credential{Flag: f.Name, Path: v})
				continue
			}
			s.Args = append(s.Args, "--"+f.Name+"="+v)
		}
	})
	if flagErr != nil {
		return flagErr
	}
	if k == service.Agent {
		if f := real.Flags().Lookup("hub"); f == nil || !f.Changed {
			return errors.New("the agent's service needs --hub URL (and, before the device is enrolled, --token-file FILE)")
		}
	}
	if systemUnit {
		s.User = service.SystemUser
		if l := real.Flags().Lookup("listen"); l != nil {
			s.Privileged = privilegedPort(l.Value.String())
		}
		if err := checkHubPaths(s); err != nil && !printOnly {
			return err
		}
	} else if sf.pkg {
		s.HomePath = true
	} else {
		for _, name := range serviceEnvNames {
			if v := e.getenv(name); v != "" && !strings.ContainsAny(v, "\n\x00") {
				s.Env = append(s.Env, name+"="+v)
			}
		}
	}

	if printOnly {
		switch goos {
		case "linux":
			e.stdout.Write(service.SystemdUnit(s))
		case "darwin":
			e.stdout.Write(service.LaunchdPlist(s, filepath.Join(e.home(), "Library", "Logs", "corral")))
		default:
			return fmt.Errorf("--os %s: linux or darwin", goos)
		}
		return nil
	}
	return e.installSpec(ctx, s)
}

func envFileHint(k service.Kind) string {
	if k.System() {
		return "a file given with a -file flag"
	}
	return "~/.config/corral/" + string(k) + ".env (mode 0600), which the unit reads"
}

// privilegedPort tells whether a listen address needs CAP_NET_BIND_SERVICE.
func privilegedPort(addr string) bool {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	n, err := strconv.Atoi(port)
	return err == nil && n > 0 && n < 1024
}

// checkHubPaths refuses what the hub's sandbox would hide from it: home
// directories (ProtectHome) and /tmp (PrivateTmp).
func checkHubPaths(s service.Spec) error {
	hidden := func(p string) bool {
		for _, d := range []string{"/home", "/root", "/run/user", "/tmp", "/var/tmp"} {
			if p == d || strings.HasPrefix(p, d+"/") {
				return true
			}
		}
		return false
	}
	if hidden(s.Exe) {
		return fmt.Errorf("the hub's service cannot run %s: its sandbox hides home directories and /tmp. Install the package, or copy corral (and corral-hook) to /usr/local/bin and run that one", s.Exe)
	}
	if hidden(s.DataDir) {
		return fmt.Errorf("the hub's service cannot keep its data in %s (its sandbox hides home directories and /tmp): leave --data-dir out for %s", s.DataDir, service.StateDir)
	}
	for _, c := range s.Credentials {
		if _, err := os.Stat(c.Path); err != nil {
			return fmt.Errorf("--%s: %w", c.Flag, err)
		}
	}
	return nil
}

// home is the user's home directory.
func (e *env) home() string {
	if h := e.getenv("HOME"); h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}

// platform describes this machine for the service package.
func (e *env) platform() service.Platform {
	cfg := e.getenv("XDG_CONFIG_HOME")
	if cfg == "" {
		cfg = filepath.Join(e.home(), ".config")
	}
	name := e.getenv("USER")
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	return service.Platform{GOOS: runtime.GOOS, Home: e.home(), ConfigHome: cfg, UID: os.Getuid(), UserName: name, Run: service.Exec}
}

func (e *env) serviceManager(k service.Kind) (service.Manager, error) {
	if k.System() && runtime.GOOS == "linux" && os.Geteuid() != 0 {
		return nil, fmt.Errorf("the hub's service is a system unit: run it with sudo (sudo corral service ... hub)")
	}
	return e.platform().ForKind(k)
}

// serviceState is a kind's state, or "no manager" where there is none.
func (e *env) serviceState(ctx context.Context, k service.Kind) (service.State, error) {
	p := e.platform()
	m, err := p.ForKind(k)
	if err != nil {
		return service.State{Kind: k, Manager: "none", Active: err.Error()}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	st, err := m.Status(ctx, k)
	if err != nil {
		// The user's manager may be out of reach (sudo, ssh without a
		// session): say so rather than fail.
		st.Active = "unknown: " + err.Error()
	}
	return st, nil
}

func (e *env) printState(st service.State) {
	name := st.Kind.Unit()
	if st.Manager == "launchd" {
		name = st.Kind.Label()
	}
	if st.Manager == "none" {
		fmt.Fprintf(e.stdout, "%-20s %s\n", name, st.Active)
		return
	}
	if !st.Installed {
		fmt.Fprintf(e.stdout, "%-20s not installed (corral service install %s)\n", name, st.Kind)
		return
	}
	line := st.Active
	if st.Sub != "" {
		line += " (" + st.Sub + ")"
	}
	if st.PID > 0 {
		line += fmt.Sprintf(", pid %d", st.PID)
	}
	if st.Since != "" {
		line += ", since " + st.Since
	}
	if st.Enabled != "" {
		line += ", " + st.Enabled
	}
	fmt.Fprintf(e.stdout, "%-20s %s\n", name, line)
	fmt.Fprintf(e.stdout, "%-20s unit %s\n", "", st.Path)
	fmt.Fprintf(e.stdout, "%-20s logs: %s\n", "", st.Logs)
	if st.Linger != nil && !*st.Linger {
		fmt.Fprintf(e.stdout, "%-20s lingering is off: it runs only while you are logged in; to start it at boot: loginctl enable-linger %s\n", "", e.platform().UserName)
	}
}

// installSpec installs s with this machine's manager and says what
// happened and what is left to do.
func (e *env) installSpec(ctx context.Context, s service.Spec) error {
	m, err := e.serviceManager(s.Kind)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if s.Kind.System() && runtime.GOOS == "linux" {
		if err := ensureHubUser(ctx, s); err != nil {
			return err
		}
	}
	// A daemon started by hand holds the data directory: the service would
	// only fail on the lock, again and again.
	start := true
	if o, held := datadir.ReadOwner(s.DataDir); held {
		if st, err := m.Status(ctx, s.Kind); err != nil || !st.Running() || st.PID != o.PID {
			start = false
			defer fmt.Fprintf(e.stdout, "not started: corral is already running for %s (pid %d), not as this service. Stop it, then: %s\n",
				s.DataDir, o.PID, startHint(s.Kind))
		}
	}
	path, err := m.Install(ctx, s, start)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "installed %s\n", path)
	st, err := m.Status(ctx, s.Kind)
	if err != nil {
		return err
	}
	e.printState(st)
	return nil
}

func startHint(k service.Kind) string {
	switch {
	case runtime.GOOS == "darwin":
		return "launchctl kickstart gui/" + strconv.Itoa(os.Getuid()) + "/" + k.Label()
	case k.System():
		return "systemctl start " + k.Unit()
	}
	return "systemctl --user start " + k.Unit()
}

// ensureHubUser makes the hub's system account with systemd-sysusers when
// it is missing, and gives it a data directory outside StateDirectory.
func ensureHubUser(ctx context.Context, s service.Spec) error {
	u, err := user.Lookup(s.User)
	if err != nil {
		conf := "/etc/sysusers.d/corral.conf"
		if err := os.MkdirAll(filepath.Dir(conf), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(conf, service.Sysusers(s.User, service.StateDir), 0o644); err != nil {
			return err
		}
		if _, err := service.Exec(ctx, "systemd-sysusers", conf); err != nil {
			return fmt.Errorf("making the hub's account %s: %w", s.User, err)
		}
		if u, err = user.Lookup(s.User); err != nil {
			return fmt.Errorf("making the hub's account %s: %w", s.User, err)
		}
	}
	if s.DataDir == service.StateDir {
		return nil // systemd makes it and gives it to the user
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.MkdirAll(s.DataDir, 0o700); err != nil {
		return err
	}
	return os.Chown(s.DataDir, uid, gid)
}

// serviceChecks are `corral doctor`'s lines about services.
func (e *env) serviceChecks(ctx context.Context) []check {
	var out []check
	for _, k := range service.Kinds() {
		st, _ := e.serviceState(ctx, k)
		if st.Manager == "none" {
			return []check{{name: "service", ok: true, detail: st.Active}}
		}
		if !st.Installed {
			continue
		}
		c := check{name: "service " + string(k), ok: st.Running(), detail: st.Active}
		if st.Sub != "" {
			c.detail += " (" + st.Sub + ")"
		}
		if st.PID > 0 {
			c.detail += fmt.Sprintf(", pid %d", st.PID)
		}
		if st.Linger != nil && !*st.Linger {
			c.detail += "; runs only while you are logged in (loginctl enable-linger " + e.platform().UserName + " starts it at boot)"
		}
		if !c.ok {
			c.fix = startHint(k) + "; see why: " + st.Logs
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		out = append(out, check{name: "service", ok: true, detail: "none installed ('corral service install' starts corral at login or boot)"})
	}
	return out
}
