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

	"github.com/corral-dev/corral/internal/agent"
	"github.com/corral-dev/corral/internal/backend"
	"github.com/corral-dev/corral/internal/bound"
	"github.com/corral-dev/corral/internal/datadir"
	"github.com/corral-dev/corral/internal/httpapi"
	"github.com/corral-dev/corral/internal/identity"
	"github.com/corral-dev/corral/internal/notify"
	"github.com/corral-dev/corral/internal/store"
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

// daemon is a data directory held by one process, with its database.
type daemon struct {
	dir     string
	apiSock string
	lock    *datadir.Lock
	store   *store.Store
	log     *slog.Logger
	errc    chan error
	servers []*http.Server
}

func openDaemon(e *env, logLevel string) (*daemon, error) {
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
	st, err := store.Open(filepath.Join(dir, datadir.Database))
	if err != nil {
		lock.Release()
		return nil, err
	}
	return &daemon{dir: dir, apiSock: apiSock, lock: lock, store: st, log: log, errc: make(chan error, 4)}, nil
}

// close stops the servers, then the database and the lock.
func (d *daemon) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	for _, s := range d.servers {
		s.Shutdown(ctx)
	}
	d.store.Close()
	d.lock.Release()
}

// wait blocks until ctx ends or a server fails.
func (d *daemon) wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
		d.log.Info("stopping; sessions keep running in tmux")
		return nil
	case err := <-d.errc:
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}

// startAgent runs this machine's agent.
func (d *daemon) startAgent(ctx context.Context, roots []string) (*agent.Agent, error) {
	abs := make([]string, 0, len(roots))
	for _, r := range roots {
		a, err := filepath.Abs(r)
		if err != nil {
			return nil, err
		}
		abs = append(abs, a)
	}
	ag, err := agent.New(agent.Config{DataDir: d.dir, Store: d.store, Logger: d.log, Roots: abs})
	if err != nil {
		return nil, err
	}
	if err := ag.Start(ctx); err != nil {
		return nil, err
	}
	return ag, nil
}

// serveUnix serves the API on the data directory's unix socket. Whoever can
// open it (mode 0600) owns the machine: requests are the local user's.
func (d *daemon) serveUnix(b backend.Backend) error {
	if err := datadir.EnsureSocketDir(d.apiSock); err != nil {
		return err
	}
	ln, err := listenUnix(d.apiSock)
	if err != nil {
		return fmt.Errorf("API socket: %w", err)
	}
	h := httpapi.New(b, httpapi.Options{Logger: d.log, RefuseBrowsers: true})
	lim := bound.Unix()
	srv := bound.Server(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(identity.With(r.Context(), identity.Local)))
	}), lim, d.log)
	d.servers = append(d.servers, srv)
	go func() { d.errc <- srv.Serve(bound.Listener(ln, lim.MaxConns, d.log)) }()
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
	auth := web.NewAuth(d.store, accounts, web.AuthOptions{Secure: useTLS, TrustedProxies: proxies})
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return "", "", fmt.Errorf("web dashboard: %w (pick another address with --listen, or --listen \"\" for none)", err)
	}
	h := web.New(b, web.Options{Logger: d.log, Store: d.store, Notifier: n, Auth: auth, Loopback: loopback, AllowedHosts: f.allowHosts, Link: link, TLS: useTLS})
	lim := bound.TCP()
	if f.maxConns > 0 {
		lim.MaxConns = f.maxConns
	}
	srv := bound.Server(h, lim, d.log)
	srv.Addr = ln.Addr().String()
	d.servers = append(d.servers, srv)
	bln := bound.Listener(ln, lim.MaxConns, d.log)
	go func() {
		if useTLS {
			d.errc <- srv.ServeTLS(bln, f.tlsCert, f.tlsKey)
		} else {
			d.errc <- srv.Serve(bln)
		}
	}()
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
	return ln.Addr().String(), base, nil
}
