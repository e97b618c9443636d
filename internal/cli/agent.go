package cli

import (
	"context"
	"errors"
	"os"

	"github.com/spf13/cobra"

	"github.com/corral-dev/corral/internal/agent"
	"github.com/corral-dev/corral/internal/agentlink"
	"github.com/corral-dev/corral/internal/httpapi"
)

type agentFlags struct {
	logLevel string
	roots    []string
	hub      string
	token    string
}

func newAgentCmd(e *env) *cobra.Command {
	var f agentFlags
	cmd := &cobra.Command{
		Use:   "agent --hub URL --token T",
		Short: "Run this machine's sessions for a hub (dials out; listens on no TCP port)",
		Long: `Run corral's agent for a hub: it owns this machine's tmux server and
sessions like 'corral serve', and dials out to the hub over one WebSocket
(docs/protocol.md), reconnecting by itself with backoff. It never listens on
a TCP port: the hub reaches it through that link, and local commands
('corral ls' on this machine) through the unix socket in the data directory.

Make a device token on the hub with 'corral hub device add NAME --user U'.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runAgent(cmd.Context(), e, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.hub, "hub", "", "the hub's URL, https://host[:port] (http only for a hub on this machine)")
	fl.StringVar(&f.token, "token", "", "this device's token (or $CORRAL_DEVICE_TOKEN)")
	fl.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error")
	fl.StringSliceVar(&f.roots, "root", nil, "directories the hub may list (repeatable; default: your home)")
	return cmd
}

func runAgent(ctx context.Context, e *env, f agentFlags) error {
	if f.hub == "" {
		// The global --hub flag is the CLI's; 'corral agent --hub' lands there.
		f.hub = e.hubURL
	}
	if f.token == "" {
		f.token = e.token
	}
	if f.token == "" {
		f.token = os.Getenv("CORRAL_DEVICE_TOKEN")
	}
	if f.hub == "" || f.token == "" {
		return errors.New("give --hub URL and --token T (a device token from 'corral hub device add')")
	}
	if _, err := agentlink.LinkURL(f.hub); err != nil {
		return err
	}
	d, err := openDaemon(e, f.logLevel)
	if err != nil {
		return err
	}
	defer d.close()
	ag, err := d.startAgent(ctx, f.roots)
	if err != nil {
		return err
	}
	defer ag.Close()
	if err := d.serveUnix(agentBackend{ag}); err != nil {
		return err
	}
	d.log.Info("agent running", "hub", f.hub, "data_dir", d.dir)
	go agentlink.Run(ctx, f.hub, f.token, agentlink.Options{Agent: ag, Logger: d.log})
	return d.wait(ctx)
}

// agentBackend serves the agent itself on the local socket.
type agentBackend struct{ *agent.Agent }

func (b agentBackend) Subscribe(ctx context.Context, since uint64) (httpapi.Subscription, error) {
	return b.Agent.Subscribe(ctx, since)
}
