package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/corral-dev/corral/internal/agent"
	"github.com/corral-dev/corral/internal/agentlink"
	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/backend"
	"github.com/corral-dev/corral/internal/hub"
	"github.com/corral-dev/corral/internal/identity"
	"github.com/corral-dev/corral/internal/link"
	"github.com/corral-dev/corral/internal/notify"
)

type serveFlags struct {
	webFlags
	notifyFlags
	logLevel string
	roots    []string
	webhook  string
}

func newServeCmd(e *env) *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run corral on this machine: the sessions' daemon and the web dashboard",
		Long: `Run corral for a data directory: it owns the tmux server of the sessions,
tracks each session's state, serves the API on a unix socket in the data
directory and the web dashboard on --listen. Only one daemon serves a data
directory at a time; sessions keep running in tmux when it stops.

corral serve is a hub (see 'corral hub') with this machine's agent inside,
joined by an in-memory link that speaks the same protocol as remote agents.

The daemon's environment reaches the sessions it starts.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return serve(cmd.Context(), e, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error")
	fl.StringSliceVar(&f.roots, "root", nil, "directories the directory picker may show (repeatable; default: your home)")
	addWebFlags(fl, &f.webFlags, `address of the web dashboard ("" for none)`)
	fl.StringVar(&f.webhook, "webhook", "", "also POST notifications to this URL (ntfy or Slack style); saved for later runs")
	addNotifyFlags(fl, &f.notifyFlags)
	return cmd
}

func serve(ctx context.Context, e *env, f serveFlags) (err error) {
	d, err := openDaemon(e, f.logLevel)
	if err != nil {
		return err
	}
	// Stops every part started below, in reverse order (daemon.stop).
	defer d.close(&err)
	ag, err := d.startAgent(ctx, f.roots)
	if err != nil {
		return err
	}

	notifier, err := notify.New(ctx, d.store, f.notifyFlags.options(d.log, f.webFlags, d.metrics))
	if err != nil {
		return err
	}
	if f.webhook != "" {
		if err := notifier.SetWebhook(ctx, identity.Local, f.webhook); err != nil {
			return err
		}
	}
	d.run("notifier", stageNotify, notifier.Run)
	hb, err := hub.New(ctx, hub.Options{Logger: d.log, OnUser: notifier.FollowUser, Notifier: notifier, Metrics: d.metrics})
	if err != nil {
		return err
	}
	hb.WatchMetrics(d.metrics)
	d.run("hub", stageHub, hb.Run)
	if err := joinLocal(ctx, hb, ag, d); err != nil {
		return err
	}

	if f.listen != "" {
		accounts, err := hub.LocalAccounts(ctx, d.store)
		if err != nil {
			return err
		}
		f.webFlags.metrics = true // one user: the dashboard's own
		_, base, err := d.serveWeb(f.webFlags, hb, accounts, notifier, nil)
		if err != nil {
			return err
		}
		// A fresh one-time link at every start; only stdout sees it.
		link, err := accounts.NewLoginLink(ctx, accounts.User(), hub.LoginLinkLife)
		if err != nil {
			return err
		}
		d.log.Info("web dashboard", "url", base)
		fmt.Fprintf(e.stdout, "corral: open %s (a one-time login link, valid for %s; `corral login-link` makes another)\n",
			loginURL(base, link), lifeText(hub.LoginLinkLife))
	}
	// The API socket last: everything it serves is up.
	if err := d.serveUnix(serveBackend(hb, ag), nil); err != nil {
		return err
	}
	d.log.Info("corral is serving", "data_dir", d.dir, "socket", d.apiSock, "pid", os.Getpid())
	return d.wait(ctx)
}

// serveBackend is the hub, whose version info on this machine is its own
// agent's: data directory, tmux, and the problems of both.
func serveBackend(hb *hub.Hub, ag *agent.Agent) backend.Backend {
	return backend.Override(hb, api.OpVersion, func(ctx context.Context, _ api.Empty) (api.VersionInfo, error) {
		v := ag.Version(ctx)
		v.Problems = append(v.Problems, hb.Version(ctx).Problems...)
		return v, nil
	})
}

// joinLocal connects the machine's own agent to the hub through an
// in-memory link, the same protocol a remote agent speaks, and keeps it
// joined (localLink, a part of the daemon). It returns once the agent's
// first sync reached the hub.
func joinLocal(ctx context.Context, hb *hub.Hub, ag *agent.Agent, d *daemon) error {
	host, _ := os.Hostname()
	l := localLink{hb: hb, ag: ag, log: d.log, info: hub.DeviceIdentity{ID: "local", Name: host, Owner: identity.Local, Local: true}}
	synced := hb.WaitSynced(l.info.ID)
	d.run("local link", stageLink, l.Run)
	return d.await(ctx, synced, "the local agent's link to the hub", 30*time.Second)
}

// localLink is the in-memory link between the machine's agent and the hub.
type localLink struct {
	hb   *hub.Hub
	ag   *agent.Agent
	log  *slog.Logger
	info hub.DeviceIdentity
}

// Run keeps the link up until ctx ends, joining again after a failure,
// and returns once both of its ends have.
func (l localLink) Run(ctx context.Context) error {
	for {
		hubEnd, agentEnd := link.Pipe()
		done := make(chan struct{})
		go func() {
			defer close(done)
			if err := agentlink.Serve(ctx, agentEnd, agentlink.Options{Agent: l.ag, Logger: l.log, Policy: agentlink.FullPolicy()}); err != nil && ctx.Err() == nil {
				l.log.Error("local link (agent end) ended", "err", err)
			}
		}()
		if err := l.hb.ServeLocal(ctx, l.info, hubEnd); err != nil && ctx.Err() == nil {
			l.log.Error("local link (hub end) ended", "err", err)
		}
		agentEnd.Close(link.StatusGoingAway, "")
		<-done
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(100 * time.Millisecond):
		}
	}
}
