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
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/corral-dev/corral/internal/agent"
	"github.com/corral-dev/corral/internal/datadir"
	"github.com/corral-dev/corral/internal/httpapi"
	"github.com/corral-dev/corral/internal/store"
)

type serveFlags struct {
	logLevel string
	roots    []string
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
	cmd.Flags().StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error")
	cmd.Flags().StringSliceVar(&f.roots, "root", nil, "directories the directory picker may show (repeatable; default: your home)")
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

	if err := datadir.EnsureSocketDir(apiSock); err != nil {
		return err
	}
	ln, err := listenUnix(apiSock)
	if err != nil {
		return fmt.Errorf("API socket: %w", err)
	}
	h := httpapi.New(localBackend{ag}, httpapi.Options{Logger: log, RefuseBrowsers: true})
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("corral is serving", "data_dir", dir, "socket", apiSock, "pid", os.Getpid())

	select {
	case <-ctx.Done():
		log.Info("stopping; sessions keep running in tmux")
	case err := <-errc:
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	}
	sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	srv.Shutdown(sctx)
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

// localBackend adapts the agent to the API handler.
type localBackend struct{ *agent.Agent }

func (b localBackend) Subscribe(ctx context.Context, since uint64) (httpapi.Subscription, error) {
	return b.Agent.Subscribe(ctx, since)
}
