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

	"github.com/spf13/cobra"

	"github.com/corral-dev/corral/internal/agent"
	"github.com/corral-dev/corral/internal/datadir"
	"github.com/corral-dev/corral/internal/httpapi"
	"github.com/corral-dev/corral/internal/identity"
	"github.com/corral-dev/corral/internal/notify"
	"github.com/corral-dev/corral/internal/store"
	"github.com/corral-dev/corral/internal/web"
)

type serveFlags struct {
	logLevel string
	roots    []string
	listen   string
	tlsCert  string
	tlsKey   string
	insecure bool
	webhook  string
}

func newServeCmd(e *env) *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the corral daemon (sessions keep running in tmux when it stops)",
		Long: `Run the corral daemon for a data directory: it owns the tmux server of the
sessions, tracks each session's state, and serves the API on a unix socket in
the data directory. Only one daemon serves a data directory at a time.

The daemon's environment reaches the sessions it starts.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return serve(cmd.Context(), e, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error")
	fl.StringSliceVar(&f.roots, "root", nil, "directories the directory picker may show (repeatable; default: your home)")
	fl.StringVar(&f.listen, "listen", "127.0.0.1:7777", `address of the web dashboard ("" for none)`)
	fl.StringVar(&f.tlsCert, "tls-cert", "", "TLS certificate file (with --tls-key): serve HTTPS")
	fl.StringVar(&f.tlsKey, "tls-key", "", "TLS key file")
	fl.BoolVar(&f.insecure, "insecure", false, "allow plain HTTP on a non-loopback address (a private network only)")
	fl.StringVar(&f.webhook, "webhook", "", "also POST notifications to this URL (ntfy or Slack style); saved for later runs")
	return cmd
}

func newLogger(w interface{ Write([]byte) (int, error) }, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}

func serve(ctx context.Context, e *env, f serveFlags) error {
	log, err := newLogger(e.stderr, f.logLevel)
	if err != nil {
		return err
	}
	dir, err := e.dir()
	if err != nil {
		return err
	}
	if err := datadir.Ensure(dir); err != nil {
		return err
	}
	apiSock := datadir.Socket(dir, datadir.APISocket)
	lock, err := datadir.Acquire(dir, datadir.Owner{PID: os.Getpid(), Socket: apiSock, StartedAt: time.Now()})
	if err != nil {
		return err
	}
	defer lock.Release()

	st, err := store.Open(filepath.Join(dir, datadir.Database))
	if err != nil {
		return err
	}
	defer st.Close()

	roots := make([]string, 0, len(f.roots))
	for _, r := range f.roots {
		abs, err := filepath.Abs(r)
		if err != nil {
			return err
		}
		roots = append(roots, abs)
	}
	ag, err := agent.New(agent.Config{DataDir: dir, Store: st, Logger: log, Roots: roots})
	if err != nil {
		return err
	}
	if err := ag.Start(ctx); err != nil {
		return err
	}
	defer ag.Close()

	errc := make(chan error, 2)
	nctx, stopNotify := context.WithCancel(context.Background())
	defer stopNotify()
	notifier, err := notify.New(nctx, st, notify.Options{Logger: log})
	if err != nil {
		return err
	}
	if f.webhook != "" {
		if err := notifier.SetWebhook(nctx, identity.Local, f.webhook); err != nil {
			return err
		}
	}
	go notifier.Run(nctx, identity.Local, ag.Bus())
	defer notifier.Wait()

	var webSrv *http.Server
	if f.listen != "" {
		webSrv, err = serveWeb(e, f, st, ag, notifier, log, errc)
		if err != nil {
			return err
		}
		lock.Update(datadir.Owner{PID: os.Getpid(), Socket: apiSock, Listen: webSrv.Addr, StartedAt: time.Now()})
	}

	if err := datadir.EnsureSocketDir(apiSock); err != nil {
		return err
	}
	ln, err := listenUnix(apiSock)
	if err != nil {
		if webSrv != nil {
			webSrv.Close()
		}
		return fmt.Errorf("API socket: %w", err)
	}
	h := httpapi.New(localBackend{ag}, httpapi.Options{Logger: log, RefuseBrowsers: true})
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { errc <- srv.Serve(ln) }()
	log.Info("corral is serving", "data_dir", dir, "socket", apiSock, "pid", os.Getpid())

	var failed error
	select {
	case <-ctx.Done():
		log.Info("stopping; sessions keep running in tmux")
	case err := <-errc:
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			failed = err
		}
	}
	// Both servers stop before the agent and the store close (deferred).
	sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	srv.Shutdown(sctx)
	if webSrv != nil {
		webSrv.Shutdown(sctx)
	}
	return failed
}

// serveWeb starts the dashboard and prints its login URL.
func serveWeb(e *env, f serveFlags, st *store.Store, ag *agent.Agent, n *notify.Notifier, log *slog.Logger, errc chan<- error) (*http.Server, error) {
	useTLS := f.tlsCert != "" || f.tlsKey != ""
	if useTLS && (f.tlsCert == "" || f.tlsKey == "") {
		return nil, errors.New("--tls-cert and --tls-key go together")
	}
	loopback, err := web.CheckListen(f.listen, useTLS, f.insecure)
	if err != nil {
		return nil, err
	}
	accounts, err := web.LoadLocalAccounts(context.Background(), st)
	if err != nil {
		return nil, err
	}
	auth, err := web.NewAuth(context.Background(), st, accounts, useTLS)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return nil, fmt.Errorf("web dashboard: %w (pick another address with --listen, or --listen \"\" for none)", err)
	}
	h := web.New(webBackend{localBackend{ag}}, web.Options{Logger: log, Store: st, Notifier: n, Auth: auth, Loopback: loopback})
	srv := &http.Server{Addr: ln.Addr().String(), Handler: h, ReadHeaderTimeout: 10 * time.Second}
	scheme := "http"
	go func() {
		if useTLS {
			errc <- srv.ServeTLS(ln, f.tlsCert, f.tlsKey)
		} else {
			errc <- srv.Serve(ln)
		}
	}()
	if useTLS {
		scheme = "https"
	}
	host := ln.Addr().String()
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && tcp.IP.IsUnspecified() {
		if name, err := os.Hostname(); err == nil {
			host = net.JoinHostPort(name, strconv.Itoa(tcp.Port))
		}
	}
	url := scheme + "://" + host + "/?token=" + accounts.AccessToken()
	log.Info("web dashboard", "url", url)
	fmt.Fprintf(e.stdout, "corral: open %s\n", url)
	return srv, nil
}

// webBackend adapts the agent to the dashboard.
type webBackend struct{ localBackend }

func (b webBackend) OpenTerminal(ctx context.Context, id string, cols, rows int, resume string, offset uint64) (web.Terminal, uint64, bool, error) {
	s, from, reset, err := b.Agent.OpenTerminal(ctx, id, cols, rows, resume, offset)
	if err != nil {
		return nil, 0, false, err
	}
	return s, from, reset, nil
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

// localBackend adapts the agent to the API handler.
type localBackend struct{ *agent.Agent }

func (b localBackend) Subscribe(ctx context.Context, since uint64) (httpapi.Subscription, error) {
	return b.Agent.Subscribe(ctx, since)
}
