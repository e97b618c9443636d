package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/corral-dev/corral/internal/agentlink"
	"github.com/corral-dev/corral/internal/datadir"
	"github.com/corral-dev/corral/internal/devicekey"
)

type agentFlags struct {
	logLevel  string
	roots     []string
	hub       string
	token     string // refused: argv is readable by every local user
	tokenFile string
	// What the hub may do beyond the dashboard (agentlink.Policy).
	allowRun, allowArgs, allowDangerous bool
}

// tokenEnv holds the enrolment token when it is not in a file.
const tokenEnv = "CORRAL_DEVICE_TOKEN"

func newAgentCmd(e *env) *cobra.Command {
	var f agentFlags
	cmd := &cobra.Command{
		Use:   "agent --hub URL [--token-file FILE]",
		Short: "Run this machine's sessions for a hub (dials out; listens on no TCP port)",
		Long: `Run corral's agent for a hub: it owns this machine's tmux server and
sessions like 'corral serve', and dials out to the hub over one WebSocket
(docs/protocol.md), reconnecting by itself with backoff. It never listens on
a TCP port: the hub reaches it through that link, and local commands
('corral ls' on this machine) through the unix socket in the data directory.

The machine proves who it is with a key it makes at its first start
(device.key in the data directory). The first time, it also needs the
one-time enrolment token that 'corral hub device add NAME --user U' prints:
put it in a file only you can read and give --token-file FILE, or set
$CORRAL_DEVICE_TOKEN. After that the key alone lets it in.

The agent decides what its hub may do (docs/security.md). Always: list,
start (inside --root) and end sessions, watch and type into them. Only with
a flag: run commands (--allow-run), pass arguments to claude
(--allow-claude-args), or pass ones that bypass Claude's permission prompts
or load code, such as --dangerously-skip-permissions
(--allow-dangerous-claude-args).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runAgent(cmd.Context(), e, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.hub, "hub", "", "the hub's URL, https://host[:port] (http only for a hub on this machine)")
	fl.StringVar(&f.tokenFile, "token-file", "", "a file holding the one-time enrolment token, for the first start (or $"+tokenEnv+")")
	fl.StringVar(&f.token, "token", "", "refused: use --token-file or $"+tokenEnv+" (a token in the command line is readable by every user of this machine)")
	fl.MarkHidden("token")
	fl.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error")
	fl.StringSliceVar(&f.roots, "root", nil, "directories the hub may use: start sessions in, list, download into (repeatable; default: your home)")
	fl.BoolVar(&f.allowRun, "allow-run", false, "let the hub run commands beside a session (corral run)")
	fl.BoolVar(&f.allowArgs, "allow-claude-args", false, "let the hub pass arguments to claude (not the dangerous ones)")
	fl.BoolVar(&f.allowDangerous, "allow-dangerous-claude-args", false, "let the hub pass any arguments to claude, --dangerously-skip-permissions included")
	return cmd
}

// errTokenInArgv is the answer to a token on the command line.
var errTokenInArgv = errors.New("a token on the command line is readable by every user of this machine (/proc/PID/cmdline): " +
	"put the enrolment token in a file only you can read and give --token-file FILE, or set $" + tokenEnv)

func runAgent(ctx context.Context, e *env, f agentFlags) (err error) {
	if f.token != "" || e.token != "" {
		return errTokenInArgv
	}
	if f.hub == "" {
		// The global --hub flag is the CLI's; 'corral agent --hub' lands there.
		f.hub = e.hubURL
	}
	if f.hub == "" {
		return errors.New("give --hub URL (and, the first time, the enrolment token from 'corral hub device add' in --token-file FILE or $" + tokenEnv + ")")
	}
	token, err := enrolToken(e, f.tokenFile)
	if err != nil {
		return err
	}
	// The daemon's environment reaches its sessions, and so Claude and
	// every command it runs: the token stays with the agent.
	os.Unsetenv(tokenEnv)
	if _, err := agentlink.LinkURL(f.hub); err != nil {
		return err
	}
	d, err := openDaemon(e, f.logLevel)
	if err != nil {
		return err
	}
	// Stops every part started below, in reverse order (daemon.stop).
	defer d.close(&err)
	key, created, err := devicekey.LoadOrCreate(filepath.Join(d.dir, datadir.DeviceKey))
	if err != nil {
		return err
	}
	if created {
		d.log.Info("made this machine's device key", "key", key.Fingerprint(), "file", filepath.Join(d.dir, datadir.DeviceKey))
	}
	ag, err := d.startAgent(ctx, f.roots)
	if err != nil {
		return err
	}
	d.watchAgentSessions(ag)
	if err := d.serveUnix(ag.Backend(), nil); err != nil {
		return err
	}
	policy := agentlink.Policy{Roots: ag.Roots(), Home: ag.Home(), AllowRun: f.allowRun, AllowClaudeArgs: f.allowArgs, AllowDangerousArgs: f.allowDangerous}
	d.log.Info("agent running", "hub", f.hub, "data_dir", d.dir, "key", key.Fingerprint(), "roots", strings.Join(policy.Roots, ","),
		"allow_run", f.allowRun, "allow_claude_args", f.allowArgs, "allow_dangerous_claude_args", f.allowDangerous)
	d.run("hub link", stageLink, func(ctx context.Context) error {
		return agentlink.Run(ctx, f.hub, token, agentlink.Options{Agent: ag, Logger: d.log, Key: key, Policy: policy, Metrics: d.metrics})
	})
	return d.wait(ctx)
}

// maxTokenFile bounds what --token-file reads.
const maxTokenFile = 4 << 10

// enrolToken is the enrolment token from --token-file, else the
// environment, else none (an enrolled machine needs none).
func enrolToken(e *env, file string) (string, error) {
	if file == "" {
		return strings.TrimSpace(e.getenv(tokenEnv)), nil
	}
	fh, err := os.Open(file)
	if err != nil {
		return "", fmt.Errorf("--token-file: %w", err)
	}
	defer fh.Close()
	if fi, err := fh.Stat(); err == nil && fi.Mode().Perm()&0o077 != 0 {
		fmt.Fprintf(e.stderr, "corral: warning: %s may be read by other users (mode %04o); `chmod 600` it, or delete it once this machine is enrolled\n", file, fi.Mode().Perm())
	}
	b, err := io.ReadAll(io.LimitReader(fh, maxTokenFile+1))
	if err != nil {
		return "", fmt.Errorf("--token-file: %w", err)
	}
	if len(b) > maxTokenFile {
		return "", fmt.Errorf("--token-file %s: too big for a token", file)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" || strings.ContainsAny(tok, " \t\r\n") {
		return "", fmt.Errorf("--token-file %s: want one token (ce_…) on one line", file)
	}
	return tok, nil
}
