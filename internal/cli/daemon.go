package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/corral-dev/corral/internal/agent"
	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/backend"
	"github.com/corral-dev/corral/internal/bound"
	"github.com/corral-dev/corral/internal/datadir"
	"github.com/corral-dev/corral/internal/httpapi"
	"github.com/corral-dev/corral/internal/identity"
	"github.com/corral-dev/corral/internal/metrics"
	"github.com/corral-dev/corral/internal/notify"
	"github.com/corral-dev/corral/internal/store"
	"github.com/corral-dev/corral/internal/store/postgres"
	"github.com/corral-dev/corral/internal/web"
)

// The pieces that serve, agent and hub share.

func newLogger(w interface{ Write([]byte) (int, error) }, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}

// daemon is a data directory held by one process, with its database, and
// the parts that serve it (agent, notifier, hub, links, HTTP servers), each
// a Serve(ctx) error run under one errgroup. They start in order of
// dependency and stop in reverse, one stage at a time (stop): a part is
// stopped, and waited for, before what it uses. A part that fails ends the
// daemon with its error.
type daemon struct {
	dir     string
	apiSock string
	lock    *datadir.Lock
	// store is the data directory's database (the agent's), nil for a
	// hub on PostgreSQL; db is what the dashboard, notifications and hub
	// keep: store, or the hub's PostgreSQL.
	store *store.SQLite
	db    store.Store
	log   *slog.Logger
	// metrics is the daemon's registry, served at GET /metrics.
	metrics *metrics.Metrics

	g      *errgroup.Group
	failed context.Context // ends when a part fails
	parts  []*part
}

// A stage is a rank in the order of dependency: a part uses only parts of
// lower stages. The store is below them all (close).
type stage int

const (
	stageAgent  stage = iota // this machine's agent
	stageNotify              // the notifier
	stageHub                 // the hub
	stageLink                // the device links: in-memory, or to a hub
	stageHTTP                // the API socket and the dashboard
)

// part is one running part of the daemon.
type part struct {
	name   string
	stage  stage
	cancel context.CancelFunc
	done   chan struct{}
}

// Bounds of stop: a part that takes longer than stopWarn is named in the
// log; one still running after stopLimit is left behind (a bug), and the
// daemon exits anyway.
const (
	stopWarn  = 2 * time.Second
	stopLimit = 10 * time.Second
)

func openDaemon(e *env, logLevel string) (*daemon, error) {
	return openDaemonOn(context.Background(), e, logLevel, "")
}

// openDaemonOn is openDaemon with the hub's database at dbURL (a
// postgres:// URL); "" is the data directory's SQLite.
func openDaemonOn(ctx context.Context, e *env, logLevel, dbURL string) (*daemon, error) {
	log, err := newLogger(e.stderr, logLevel)
	if err != nil {
		return nil, err
	}
	dir, err := e.dir()
	if err != nil {
		return nil, err
	}
	if err := datadir.Ensure(dir); err != nil {
		return nil, err
	}
	apiSock := datadir.Socket(dir, datadir.APISocket)
	lock, err := datadir.Acquire(dir, datadir.Owner{PID: os.Getpid(), Socket: apiSock, StartedAt: time.Now()})
	if err != nil {
		return nil, err
	}
	g, failed := errgroup.WithContext(context.Background())
	d := &daemon{dir: dir, apiSock: apiSock, lock: lock, log: log, g: g, failed: failed, metrics: metrics.New()}
	if dbURL != "" {
		d.db, err = postgres.Open(ctx, dbURL)
	} else {
		d.store, err = store.Open(filepath.Join(dir, datadir.Database))
		d.db = d.store
	}
	if err != nil {
		lock.Release()
		return nil, err
	}
	if d.store != nil {
		d.store.ObserveWrites(d.metrics.StoreWrite)
	}
	return d, nil
}

// run starts a part: fn serves until its context ends and returns once
// everything it started has. A part that returns before it is stopped has
// failed, and so has one that returns an error; either ends the daemon.
func (d *daemon) run(name string, s stage, fn func(context.Context) error) {
	ctx, cancel := context.WithCancel(context.Background())
	p := &part{name: name, stage: s, cancel: cancel, done: make(chan struct{})}
	d.parts = append(d.parts, p)
	d.g.Go(func() error {
		defer close(p.done)
		err := fn(ctx)
		switch {
		case ctx.Err() == nil:
			if err == nil {
				err = errors.New("stopped by itself")
			}
			d.log.Error("a part of the daemon failed; stopping", "part", name, "err", err)
		case err != nil:
			d.log.Error("a part of the daemon failed to stop cleanly", "part", name, "err", err)
		default:
			return nil
		}
		return fmt.Errorf("%s: %w", name, err)
	})
}

// await waits for ready (a part has started), or gives up: when ctx ends
// (a signal), a part fails, or after timeout (0: none).
func (d *daemon) await(ctx context.Context, ready <-chan struct{}, what string, timeout time.Duration) error {
	var expired <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expired = t.C
	}
	select {
	case <-ready:
		return nil
	case <-ctx.Done():
		return errStopped
	case <-d.failed.Done():
		return context.Cause(d.failed)
	case <-expired:
		return fmt.Errorf("%s did not start within %v", what, timeout)
	}
}

// wait blocks until ctx ends (a signal) or a part fails, whose error close
// returns.
func (d *daemon) wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
		d.log.Info("stopping; sessions keep running in tmux")
	case <-d.failed.Done():
	}
	return nil
}

// errStopped says a signal stopped the daemon before it was up: no error.
var errStopped = errors.New("stopped while starting")

// close stops the parts, in reverse order of dependency (stop), then closes
// the database and releases the lock. *errp, when nil, gets the error of
// the first part that failed.
func (d *daemon) close(errp *error) {
	if errors.Is(*errp, errStopped) {
		d.log.Info("stopping before the daemon was up; sessions keep running in tmux")
		*errp = nil
	}
	if err := d.stop(); err != nil && *errp == nil {
		*errp = err
	}
	d.db.Close()
	d.lock.Release()
}

// stop stops the parts one stage at a time, from the top: every part of a
// stage is stopped at once, and all are waited for before the stage below.
func (d *daemon) stop() error {
	start := time.Now()
	limit := time.NewTimer(stopLimit)
	defer limit.Stop()
	for s := stageHTTP; s >= stageAgent; s-- {
		var parts []*part
		for _, p := range d.parts {
			if p.stage == s {
				p.cancel()
				parts = append(parts, p)
			}
		}
		for _, p := range parts {
			warn := time.NewTimer(stopWarn)
			select {
			case <-p.done:
			case <-warn.C:
				d.log.Warn("a part of the daemon is slow to stop", "part", p.name, "waited", time.Since(start).Round(time.Millisecond))
				select {
				case <-p.done:
				case <-limit.C:
					warn.Stop()
					d.log.Error("a part of the daemon did not stop; exiting without it", "part", p.name, "waited", stopLimit)
					return fmt.Errorf("%s did not stop within %v", p.name, stopLimit)
				}
			}
			warn.Stop()
		}
	}
	err := d.g.Wait()
	d.log.Debug("stopped", "took", time.Since(start).Round(time.Millisecond))
	return err
}

// newAgent makes this machine's agent; run it with d.run and Serve.
func (d *daemon) newAgent(roots []string) (*agent.Agent, error) {
	abs := make([]string, 0, len(roots))
	for _, r := range roots {
		a, err := filepath.Abs(r)
		if err != nil {
			return nil, err
		}
		abs = append(abs, a)
	}
	return agent.New(agent.Config{DataDir: d.dir, Store: d.store, Logger: d.log, Roots: abs, Metrics: d.metrics})
}

// startAgent runs this machine's agent as the daemon's first part, and
// returns once it serves.
func (d *daemon) startAgent(ctx context.Context, roots []string) (*agent.Agent, error) {
	ag, err := d.newAgent(roots)
	if err != nil {
		return nil, err
	}
	d.run("agent", stageAgent, ag.Serve)
	if err := d.await(ctx, ag.Ready(), "the agent", 0); err != nil {
		return nil, err
	}
	d.metrics.WatchTerminals(ag.TermStats)
	d.metrics.WatchBus("agent", func() metrics.BusStats {
		s := ag.Bus().Stats()
		return metrics.BusStats{Subscribers: s.Subscribers, MaxLag: s.MaxLag, Resyncs: s.FellBehind}
	})
	return ag, nil
}

// watchAgentSessions counts the agent's own sessions in the metrics, as
// this machine's (a daemon with no hub in it; a hub counts its devices').
func (d *daemon) watchAgentSessions(ag *agent.Agent) {
	host, _ := os.Hostname()
	d.metrics.WatchSessions(func(add func(status, machine string)) {
		for _, s := range ag.Bus().Sessions() {
			add(string(s.Status), host)
		}
	})
}

// serveUnix serves the API on the data directory's unix socket. Whoever can
// open it (mode 0600) owns the machine: requests are the local user's.
// admin serves the hub's management (hub.AdminHandler) beside it; a
// daemon that is no hub gives nil, and its socket says so.
func (d *daemon) serveUnix(b backend.Backend, admin http.Handler) error {
	if err := datadir.EnsureSocketDir(d.apiSock); err != nil {
		return err
	}
	ln, err := listenUnix(d.apiSock)
	if err != nil {
		return fmt.Errorf("API socket: %w", err)
	}
	if admin == nil {
		admin = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			httpapi.WriteError(w, api.Errorf(api.CodeBadRequest, "the corral on this data directory is not a hub"))
		})
	}
	mux := http.NewServeMux()
	mux.Handle("/admin/", admin)
	mux.Handle("GET /metrics", d.metrics.Handler())
	mux.Handle("/", httpapi.New(b, httpapi.Options{Logger: d.log, RefuseBrowsers: true}))
	h := http.Handler(mux)
	lim := bound.Unix()
	srv := bound.Server(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(identity.With(r.Context(), identity.Local)))
	}), lim, d.log)
	bln := bound.Listener(ln, lim, d.log)
	d.run("API socket", stageHTTP, func(ctx context.Context) error {
		return bound.Serve(ctx, srv, bln, bound.TLS{}, bound.ShutdownGrace)
	})
	return nil
}

// listenUnix listens on a unix socket with mode 0600. The data directory's
// lock is held, so an existing socket file is stale.
func listenUnix(path string) (net.Listener, error) {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		if strings.Contains(err.Error(), "invalid argument") {
			return nil, fmt.Errorf("%w (socket path too long?)", err)
		}
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

// webFlags are the dashboard's flags.
type webFlags struct {
	listen     string
	tlsCert    string
	tlsKey     string
	insecure   bool
	allowHosts []string
	proxies    []string
	maxConns   int
	// metrics: serve GET /metrics on the dashboard too, behind its login
	// (serve always; a hub of several users only when asked).
	metrics bool
}

// addWebFlags declares the dashboard's flags on a command.
func addWebFlags(fl interface {
	StringVar(*string, string, string, string)
	BoolVar(*bool, string, bool, string)
	StringSliceVar(*[]string, string, []string, string)
	IntVar(*int, string, int, string)
}, f *webFlags, listenHelp string) {
	fl.StringVar(&f.listen, "listen", "127.0.0.1:7777", listenHelp)
	fl.StringVar(&f.tlsCert, "tls-cert", "", "TLS certificate file (with --tls-key): serve HTTPS")
	fl.StringVar(&f.tlsKey, "tls-key", "", "TLS key file")
	fl.BoolVar(&f.insecure, "insecure", false, "allow plain HTTP on a non-loopback address (a private network only)")
	fl.StringSliceVar(&f.allowHosts, "allow-host", nil, "accept this Host name too while listening on loopback: the public name of a TLS reverse proxy in front (repeatable)")
	fl.StringSliceVar(&f.proxies, "trusted-proxy", nil, "a reverse proxy's address or CIDR: from it, X-Forwarded-For names the client, for login limits and the session list (repeatable)")
	fl.IntVar(&f.maxConns, "max-connections", bound.TCP().MaxConns, "connections --listen keeps open at once (browsers, scripts, devices); more are closed at once")
}

// serveWeb starts the dashboard. It returns the address it listens on.
func (d *daemon) serveWeb(f webFlags, b backend.Backend, accounts web.Accounts, n *notify.Notifier, link http.Handler) (string, string, error) {
	useTLS := f.tlsCert != "" || f.tlsKey != ""
	if useTLS && (f.tlsCert == "" || f.tlsKey == "") {
		return "", "", errors.New("--tls-cert and --tls-key go together")
	}
	loopback, err := web.CheckListen(f.listen, useTLS, f.insecure)
	if err != nil {
		return "", "", err
	}
	proxies, err := web.ParseTrustedProxies(f.proxies)
	if err != nil {
		return "", "", err
	}
	auth := web.NewAuth(d.db, accounts, web.AuthOptions{Secure: useTLS, TrustedProxies: proxies})
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return "", "", fmt.Errorf("web dashboard: %w (pick another address with --listen, or --listen \"\" for none)", err)
	}
	var mh http.Handler
	if f.metrics {
		mh = d.metrics.Handler()
	}
	h := web.New(b, web.Options{Logger: d.log, Auth: auth, Loopback: loopback, AllowedHosts: f.allowHosts, Link: link, TLS: useTLS,
		Metrics: mh})
	lim := bound.TCP()
	if f.maxConns > 0 {
		lim.MaxConns = f.maxConns
	}
	if link != nil {
		lim.ConnFiles = 1 // a hub: terminals run on the agents
	}
	srv := bound.Server(h, lim, d.log)
	srv.Addr = ln.Addr().String()
	bln := bound.Listener(ln, lim, d.log)
	d.run("web dashboard", stageHTTP, func(ctx context.Context) error {
		return bound.Serve(ctx, srv, bln, bound.TLS{Cert: f.tlsCert, Key: f.tlsKey}, bound.ShutdownGrace)
	})
	scheme := "http"
	if useTLS {
		scheme = "https"
	}
	host := ln.Addr().String()
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && tcp.IP.IsUnspecified() {
		if name, err := os.Hostname(); err == nil {
			host = net.JoinHostPort(name, strconv.Itoa(tcp.Port))
		}
	}
	base := scheme + "://" + host
	d.lock.Update(datadir.Owner{PID: os.Getpid(), Socket: d.apiSock, Listen: ln.Addr().String(), URL: base, StartedAt: time.Now()})
	if n != nil {
		n.SetBaseURL(base) // the webhooks' links
	}
	return ln.Addr().String(), base, nil
}
