package cli

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/corral-dev/corral/internal/client"
	"github.com/corral-dev/corral/internal/datadir"
	"github.com/corral-dev/corral/internal/hub"
	"github.com/corral-dev/corral/internal/notify"
	"github.com/corral-dev/corral/internal/store"
	"github.com/corral-dev/corral/internal/store/postgres"
)

type hubFlags struct {
	webFlags
	notifyFlags
	logLevel    string
	maxSessions int
	bus         string
}

func newHubCmd(e *env) *cobra.Command {
	var f hubFlags
	cmd := &cobra.Command{
		Use:   "hub",
		Short: "Run a hub: one dashboard for the sessions of many machines",
		Long: `Run a hub: machines running 'corral agent --hub URL' dial in to it, each
proving its own key, and its users see their machines' sessions in one
dashboard and API.

Users and devices are managed with the subcommands (they work while the hub
runs):
  corral hub user add NAME            prints the user's API token (for --hub/--token)
  corral hub device add NAME --user U prints the machine's one-time enrolment token
                                      (for corral agent --token-file)

Serve it with TLS (--tls-cert/--tls-key) or behind a TLS reverse proxy on
loopback (docs/hub.md).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runHub(cmd.Context(), e, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error")
	addWebFlags(fl, &f.webFlags, "address to serve the dashboard, the API and the device link on")
	addNotifyFlags(fl, &f.notifyFlags)
	fl.BoolVar(&f.webFlags.metrics, "web-metrics", false, "serve GET /metrics on --listen too, to any logged-in user (it counts every user's sessions and names their machines); the API socket always serves it")
	fl.StringVar(&f.bus, "bus", "", "run as one replica of several: route between them over NATS at this nats:// URL ($"+busEnv+"); needs --db postgres://")
	fl.IntVar(&f.maxSessions, "max-device-sessions", hub.DefaultMaxSessions, "sessions one device may have listed (and kept); more are ignored")
	// Persistent: the user and device commands work on the same database.
	cmd.PersistentFlags().StringVar(&e.hubDB, "db", "", "keep users, devices and sessions in PostgreSQL at this postgres:// URL ($"+dbEnv+"), for a hub of several processes; default: the data directory's SQLite")
	cmd.AddCommand(newHubUserCmd(e), newHubDeviceCmd(e))
	return cmd
}

func runHub(ctx context.Context, e *env, f hubFlags) (err error) {
	dbURL, err := e.hubDatabase()
	if err != nil {
		return err
	}
	d, err := openDaemonOn(ctx, e, f.logLevel, dbURL)
	if err != nil {
		return err
	}
	// Stops every part started below, in reverse order (daemon.stop); the
	// hub saves its devices' sessions before the database closes.
	defer d.close(&err)
	accounts := hub.NewAccounts(d.db)
	notifier, err := notify.New(ctx, d.db, f.notifyFlags.options(d.log, f.webFlags, d.metrics))
	if err != nil {
		return err
	}
	d.run("notifier", stageNotify, notifier.Run)
	cl, err := hubCluster(ctx, e, d, f, dbURL)
	if err != nil {
		return err
	}
	hb, err := hub.New(ctx, hub.Options{Logger: d.log, Store: d.db, Accounts: accounts, MaxSessions: f.maxSessions,
		OnUser: notifier.FollowUser, Notifier: notifier, Metrics: d.metrics, Cluster: cl})
	if err != nil {
		return err
	}
	hb.WatchMetrics(d.metrics)
	d.run("hub", stageHub, hb.Run)
	addr, base, err := d.serveWeb(f.webFlags, hb, accounts, notifier, hb.LinkHandler())
	if err != nil {
		return err
	}
	if err := d.serveUnix(hb, hb.AdminHandler()); err != nil {
		return err
	}
	d.log.Info("hub serving", "listen", addr, "data_dir", d.dir, "database", databaseName(dbURL))
	fmt.Fprintf(e.stdout, "corral hub: %s (link: %s/api/v1/link)\n", base, base)
	return d.wait(ctx)
}

// withStore runs fn with the data directory's database open for just that
// long: commands that change settings work while the daemon runs (SQLite
// in WAL mode).
func withStore(e *env, fn func(*store.SQLite) error) error {
	dir, err := e.dir()
	if err != nil {
		return err
	}
	if err := datadir.Ensure(dir); err != nil {
		return err
	}
	st, err := store.Open(filepath.Join(dir, datadir.Database))
	if err != nil {
		return err
	}
	defer st.Close()
	return fn(st)
}

// dbEnv names the hub's database when --db is not given.
const dbEnv = "CORRAL_DB"

// hubDatabase is the hub's PostgreSQL URL, "" for the data directory's
// SQLite.
func (e *env) hubDatabase() (string, error) {
	u := e.hubDB
	if u == "" {
		u = e.getenv(dbEnv)
	}
	if u != "" && !strings.HasPrefix(u, "postgres://") && !strings.HasPrefix(u, "postgresql://") {
		return "", fmt.Errorf("--db (or $%s) takes a postgres:// URL; without it the hub keeps its data in the data directory's SQLite", dbEnv)
	}
	return u, nil
}

// databaseName describes the hub's database for the log, without the
// URL's password.
func databaseName(dbURL string) string {
	if dbURL == "" {
		return "sqlite"
	}
	u, err := url.Parse(dbURL)
	if err != nil {
		return "postgres"
	}
	// The query may hold a password too (password=...): only where.
	name := "postgres://" + u.Host + u.Path
	if u.User != nil {
		name = "postgres://" + u.User.Username() + "@" + u.Host + u.Path
	}
	return name
}

// withHubStore runs fn with the hub's database open for just that long:
// PostgreSQL with --db or $CORRAL_DB, else the data directory's SQLite
// (see withStore). The commands work while the hub runs.
func withHubStore(ctx context.Context, e *env, fn func(store.Store) error) error {
	dbURL, err := e.hubDatabase()
	if err != nil {
		return err
	}
	if dbURL == "" {
		return withStore(e, func(st *store.SQLite) error { return fn(st) })
	}
	st, err := postgres.Open(ctx, dbURL)
	if err != nil {
		return err
	}
	defer st.Close()
	return fn(st)
}

// withHubAccounts runs fn on a hub's accounts (see withHubStore).
func withHubAccounts(e *env, fn func(*hub.Accounts) error) error {
	return withHubStore(context.Background(), e, func(st store.Store) error { return fn(hub.NewAccounts(st)) })
}

// onRunningHub asks the hub running on the data directory to make a
// change it must act on at once (cut a device's link): POST req to path of
// its admin socket (hub.AdminHandler). ran is false when no daemon runs
// there: the caller then changes the database itself, and a hub started
// later reads it.
func onRunningHub(ctx context.Context, e *env, path string, req hub.AdminRequest) (ran bool, err error) {
	dir, err := e.dir()
	if err != nil {
		return false, err
	}
	err = client.Unix(datadir.Socket(dir, datadir.APISocket)).Admin(ctx, path, req, nil)
	if errors.Is(err, client.ErrNoDaemon) {
		return false, nil
	}
	return true, err
}

func newHubUserCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{Use: "user", Short: "Manage the hub's users"}
	var pwStdin, asJSON bool
	add := &cobra.Command{
		Use:   "add NAME [--password-stdin]",
		Short: "Add a user; prints their API token once",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			pw := ""
			if pwStdin {
				var err error
				if pw, err = readPassword(e, true); err != nil {
					return err
				}
			}
			return withHubAccounts(e, func(acc *hub.Accounts) error {
				tok, err := acc.AddUser(cmd.Context(), args[0], pw)
				if err != nil {
					return err
				}
				fmt.Fprintln(e.stdout, tok)
				fmt.Fprintf(e.stderr, "user %s added; the line above is their API token (shown once): corral --hub URL --token TOKEN ls\n", safe(args[0]))
				return nil
			})
		},
	}
	add.Flags().BoolVar(&pwStdin, "password-stdin", false, "also set a password for the web login, read from stdin")
	passwd := &cobra.Command{
		Use:   "passwd NAME",
		Short: "Set a user's web password (from the terminal, or --stdin); ends their browser sessions",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			pw, err := readPassword(e, pwStdin)
			if err != nil {
				return err
			}
			return withHubAccounts(e, func(acc *hub.Accounts) error {
				return acc.SetPassword(cmd.Context(), args[0], pw)
			})
		},
	}
	passwd.Flags().BoolVar(&pwStdin, "stdin", false, "read the password from stdin")
	token := &cobra.Command{
		Use:   "token NAME",
		Short: "Give a user a new API token (the old one stops working, and so do their browser sessions)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withHubAccounts(e, func(acc *hub.Accounts) error {
				tok, err := acc.RotateToken(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				fmt.Fprintln(e.stdout, tok)
				return nil
			})
		},
	}
	rm := &cobra.Command{
		Use:   "rm NAME",
		Short: "Remove a user, their devices and their browser sessions",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// The running hub cuts the user's devices off at once.
			if ran, err := onRunningHub(cmd.Context(), e, hub.AdminRemoveUser, hub.AdminRequest{User: args[0]}); ran || err != nil {
				return err
			}
			return withHubAccounts(e, func(acc *hub.Accounts) error {
				return acc.RemoveUser(cmd.Context(), args[0])
			})
		},
	}
	ls := &cobra.Command{
		Use:   "ls",
		Short: "List users",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withHubAccounts(e, func(acc *hub.Accounts) error {
				users, err := acc.Users(cmd.Context())
				if err != nil {
					return err
				}
				if asJSON {
					return newJSON(e.stdout).Encode(users)
				}
				tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "USER\tPASSWORD\tCREATED")
				for _, u := range users {
					fmt.Fprintf(tw, "%s\t%v\t%s\n", safe(u.Name), u.HasPassword, u.CreatedAt.Local().Format(time.DateTime))
				}
				return tw.Flush()
			})
		},
	}
	ls.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	var sf sessionsFlags
	sessions := &cobra.Command{
		Use:   "sessions NAME [--revoke ID | --revoke-all]",
		Short: "List a user's browser sessions, or sign them out",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withHubAccounts(e, func(acc *hub.Accounts) error { return sf.run(cmd.Context(), e, acc, args[0]) })
		},
	}
	sf.add(sessions)
	cmd.AddCommand(add, passwd, token, rm, ls, sessions)
	return cmd
}

func newHubDeviceCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{Use: "device", Short: "Manage the machines that may connect"}
	var user string
	var asJSON bool
	var ttl time.Duration
	printToken := func(name, tok string, expires time.Time) {
		fmt.Fprintln(e.stdout, tok)
		fmt.Fprintf(e.stderr, "the line above is %s's one-time enrolment token (shown once; good until %s, for one machine).\n"+
			"On that machine, put it in a file only you can read and run\n"+
			"  corral agent --hub URL --token-file FILE\n"+
			"(or set $%s); the machine then proves its own key, and the token is spent.\n",
			safe(name), expires.Local().Format(time.DateTime), tokenEnv)
	}
	add := &cobra.Command{
		Use:   "add NAME --user U [--ttl D]",
		Short: "Allow a machine to connect; prints its one-time enrolment token",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withHubAccounts(e, func(acc *hub.Accounts) error {
				d, tok, err := acc.AddDevice(cmd.Context(), user, args[0], ttl)
				if err != nil {
					return err
				}
				printToken(args[0], tok, d.EnrollExpires)
				return nil
			})
		},
	}
	enroll := &cobra.Command{
		Use:   "enroll NAME --user U [--ttl D]",
		Short: "Give a machine a new enrolment token: one that lost its key, or one from before device keys",
		Long: `Give a machine a new one-time enrolment token. Its sessions and name stay.
The key it has, if any, keeps working until the token is used; then the key
of the machine that used it replaces it, and a connection with the old key
is cut off.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withHubAccounts(e, func(acc *hub.Accounts) error {
				d, tok, err := acc.Enroll(cmd.Context(), user, args[0], ttl)
				if err != nil {
					return err
				}
				printToken(args[0], tok, d.EnrollExpires)
				return nil
			})
		},
	}
	for _, c := range []*cobra.Command{add, enroll} {
		c.Flags().StringVar(&user, "user", "", "the user who owns the machine")
		c.MarkFlagRequired("user")
		c.Flags().DurationVar(&ttl, "ttl", hub.DefaultEnrollTTL, "how long the enrolment token stays good (at most a week)")
	}
	revoke := &cobra.Command{
		Use:   "revoke NAME --user U",
		Short: "Revoke a machine (a connected machine is cut off at once)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// The running hub revokes it and cuts its link at once; with
			// no hub running, the database is all there is.
			if ran, err := onRunningHub(cmd.Context(), e, hub.AdminRevokeDevice, hub.AdminRequest{User: user, Name: args[0]}); ran || err != nil {
				return err
			}
			return withHubAccounts(e, func(acc *hub.Accounts) error {
				_, err := acc.RevokeDevice(cmd.Context(), user, args[0])
				return err
			})
		},
	}
	revoke.Flags().StringVar(&user, "user", "", "the user who owns the machine")
	revoke.MarkFlagRequired("user")
	ls := &cobra.Command{
		Use:   "ls [--user U]",
		Short: "List machines",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withHubAccounts(e, func(acc *hub.Accounts) error {
				list, err := acc.Devices(cmd.Context(), user)
				if err != nil {
					return err
				}
				if asJSON {
					return newJSON(e.stdout).Encode(list)
				}
				tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "USER\tDEVICE\tHOST\tKEY\tLAST SEEN")
				for _, d := range list {
					seen := ""
					if !d.LastSeen.IsZero() {
						seen = d.LastSeen.Local().Format(time.DateTime)
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", safe(d.Owner), safe(d.Name), safe(d.Hostname), safe(keyColumn(d)), seen)
				}
				return tw.Flush()
			})
		},
	}
	ls.Flags().StringVar(&user, "user", "", "only this user's machines")
	ls.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.AddCommand(add, enroll, revoke, ls)
	return cmd
}

// keyColumn says how a device proves itself: its key's fingerprint, or
// that it has yet to enrol.
func keyColumn(d hub.Registration) string {
	switch {
	case d.Key != "" && !d.EnrollExpires.IsZero() && d.EnrollExpires.After(time.Now()):
		return d.Key + " (enrolment token open)"
	case d.Key != "":
		return d.Key
	case !d.EnrollExpires.IsZero() && d.EnrollExpires.After(time.Now()):
		return "not enrolled (token good until " + d.EnrollExpires.Local().Format(time.DateTime) + ")"
	}
	return "not enrolled (corral hub device enroll)"
}
