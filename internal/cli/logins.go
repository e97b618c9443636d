package cli

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/corral-dev/corral/internal/datadir"
	"github.com/corral-dev/corral/internal/hub"
	"github.com/corral-dev/corral/internal/store"
)

// The single machine's logins: the one-time login link, the API token and
// the browser sessions. These commands write the database directly, as
// `corral passwd` and `corral hub user …` do: SQLite in WAL mode takes a
// second writer safely, and the daemon keeps nothing of them in memory (it
// reads the rows on every request), so a change holds at once.

// withLocalAccounts runs fn on the single machine's accounts.
func withLocalAccounts(ctx context.Context, e *env, fn func(*hub.Accounts) error) error {
	if e.hubURL != "" || e.getenv("CORRAL_HUB") != "" {
		return errors.New("this command manages this machine's corral serve; for a hub use `corral hub user …` on the hub's host")
	}
	return withStore(e, func(st *store.Store) error {
		acc, err := hub.LocalAccounts(ctx, st)
		if err != nil {
			return err
		}
		return fn(acc)
	})
}

// lifeText says how long a login link lives: "10 minutes".
func lifeText(d time.Duration) string {
	switch {
	case d >= time.Minute && d%time.Minute == 0:
		if d == time.Minute {
			return "1 minute"
		}
		return fmt.Sprintf("%d minutes", d/time.Minute)
	default:
		return d.String()
	}
}

// loginURL is the dashboard's address with a login link's token.
func loginURL(base, token string) string {
	return base + "/?token=" + url.QueryEscape(token)
}

func newLoginLinkCmd(e *env) *cobra.Command {
	var life time.Duration
	cmd := &cobra.Command{
		Use:   "login-link",
		Short: "Print a one-time login link for the running dashboard",
		Long: `Print a new login link for the dashboard of the running 'corral serve'. The
link logs one browser in, once, within --expires (10 minutes unless told,
at most an hour); then it is spent. 'corral serve' prints one at every
start too.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := e.dir()
			if err != nil {
				return err
			}
			// The daemon alone knows the address it serves (scheme, host,
			// a port picked at start): it records it with its lock.
			owner, running := datadir.ReadOwner(dir)
			if !running {
				return fmt.Errorf("corral is not serving %s: start `corral serve` (it prints a login link)", dir)
			}
			if owner.URL == "" {
				return errors.New("the running corral serves no dashboard (it was started with --listen \"\")")
			}
			return withLocalAccounts(cmd.Context(), e, func(acc *hub.Accounts) error {
				tok, err := acc.NewLoginLink(cmd.Context(), acc.User(), life)
				if err != nil {
					return err
				}
				fmt.Fprintln(e.stdout, loginURL(owner.URL, tok))
				fmt.Fprintf(e.stderr, "a one-time login link, valid for %s\n", lifeText(life))
				return nil
			})
		},
	}
	cmd.Flags().DurationVar(&life, "expires", hub.LoginLinkLife, "how long the link stays valid (at most 1h)")
	return cmd
}

func newTokenCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{Use: "token", Short: "Manage the API token of this machine's dashboard"}
	rotate := &cobra.Command{
		Use:   "rotate",
		Short: "Make a new API token and print it once; the old one stops working",
		Long: `Make a new long-lived API token for scripts that call the dashboard's HTTP
API over TCP (Authorization: Bearer TOKEN). It is printed once and stored
only as a hash; the old token stops working, and every browser is logged
out. The CLI on this machine needs no token: it uses the daemon's socket.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withLocalAccounts(cmd.Context(), e, func(acc *hub.Accounts) error {
				tok, err := acc.RotateToken(cmd.Context(), acc.User())
				if err != nil {
					return err
				}
				fmt.Fprintln(e.stdout, tok)
				fmt.Fprintln(e.stderr, "the line above is the new API token (shown once); every browser was logged out")
				return nil
			})
		},
	}
	cmd.AddCommand(rotate)
	return cmd
}

// sessionsFlags are the flags of `corral sessions` and `corral hub user
// sessions`.
type sessionsFlags struct {
	asJSON    bool
	revoke    string
	revokeAll bool
}

func (f *sessionsFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.BoolVar(&f.asJSON, "json", false, "print JSON")
	fl.StringVar(&f.revoke, "revoke", "", "sign out the browser session with this id (or a unique prefix of it)")
	fl.BoolVar(&f.revokeAll, "revoke-all", false, "sign out every browser session")
	cmd.MarkFlagsMutuallyExclusive("revoke", "revoke-all")
}

// run lists, or revokes, a user's browser sessions.
func (f *sessionsFlags) run(ctx context.Context, e *env, acc *hub.Accounts, user string) error {
	switch {
	case f.revoke != "":
		ws, err := acc.EndWebSession(ctx, user, f.revoke)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "signed out %s (%s)\n", safe(ws.ID[:8]), safe(clientOf(ws)))
		return nil
	case f.revokeAll:
		n, err := acc.EndWebSessions(ctx, user)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "signed out %d browser sessions\n", n)
		return nil
	}
	list, err := acc.WebSessions(ctx, user)
	if err != nil {
		return err
	}
	if f.asJSON {
		return newJSON(e.stdout).Encode(list)
	}
	tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tCREATED\tLAST SEEN\tCLIENT")
	for _, ws := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", safe(ws.ID[:8]), ws.CreatedAt.Local().Format(time.DateTime),
			ws.LastSeen.Local().Format(time.DateTime), safe(clientOf(ws)))
	}
	return tw.Flush()
}

// clientOf describes a session's browser: its address and user agent
// (kept printable and short when stored, see web.clientText).
func clientOf(ws store.WebSession) string {
	ua := ws.UserAgent
	if r := []rune(ua); len(r) > 60 {
		ua = string(r[:59]) + "…"
	}
	if ua == "" {
		return ws.Address
	}
	return ws.Address + " " + ua
}

func newSessionsCmd(e *env) *cobra.Command {
	var f sessionsFlags
	cmd := &cobra.Command{
		Use:   "sessions [--revoke ID | --revoke-all]",
		Short: "List the browsers logged in to this machine's dashboard, or sign them out",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withLocalAccounts(cmd.Context(), e, func(acc *hub.Accounts) error {
				return f.run(cmd.Context(), e, acc, acc.User())
			})
		},
	}
	f.add(cmd)
	return cmd
}
