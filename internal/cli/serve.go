package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/corral-dev/corral/internal/agent"
	"github.com/corral-dev/corral/internal/agentlink"
	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/backend"
	"github.com/corral-dev/corral/internal/events"
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

func serve(ctx context.Context, e *env, f serveFlags) error {
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

	nctx, stopNotify := context.WithCancel(context.Background())
	defer stopNotify()
	notifier, err := notify.New(nctx, d.store, f.notifyFlags.options(d.log, f.webFlags))
	if err != nil {
		return err
	}
	defer notifier.Wait()
	if f.webhook != "" {
		if err := notifier.SetWebhook(nctx, identity.Local, f.webhook); err != nil {
			return err
		}
	}
	hb, err := hub.New(ctx, hub.Options{Logger: d.log, OnUser: func(user string, bus *events.Bus) { notifier.Run(nctx, user, bus) }})
	if err != nil {
		return err
	}
	if err := joinLocal(ctx, hb, ag, d); err != nil {
		return err
	}

	if f.listen != "" {
		accounts, err := hub.LocalAccounts(ctx, d.store)
		if err != nil {
			return err
		}
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
	if err := d.serveUnix(serveBackend(hb, ag)); err != nil {
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
// joined. It returns once the agent's first sync reached the hub.
func joinLocal(ctx context.Context, hb *hub.Hub, ag *agent.Agent, d *daemon) error {
	host, _ := os.Hostname()
	info := hub.DeviceInfo{ID: "local", Name: host, Owner: identity.Local, Local: true}
	synced := hb.WaitSynced(info.ID)
	go func() {
		for ctx.Err() == nil {
			hubEnd, agentEnd := link.Pipe()
			done := make(chan struct{})
			go func() {
				defer close(done)
				if err := agentlink.Serve(ctx, agentEnd, agentlink.Options{Agent: ag, Logger: d.log, Policy: agentlink.FullPolicy()}); err != nil && ctx.Err() == nil {
					d.log.Error("local link (agent end) ended", "err", err)
				}
			}()
			if err := hb.Attach(ctx, info, hubEnd); err != nil && ctx.Err() == nil {
				d.log.Error("local link (hub end) ended", "err", err)
			}
			agentEnd.Close(link.StatusGoingAway, "")
			<-done
			if ctx.Err() == nil {
				time.Sleep(100 * time.Millisecond)
			}
		}
	}()
	select {
	case <-synced:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(30 * time.Second):
		return fmt.Errorf("the local agent did not join the hub")
	}
}
