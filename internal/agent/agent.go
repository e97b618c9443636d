// Package agent is everything corral does on one machine: it owns the tmux
// server, starts and ends sessions, runs Claude with corral's hooks, and
// fuses every signal about a session (hooks, Claude's session files, the
// transcript, the process tree, the screen) into one state through the
// status engine. It never listens on TCP; hooks reach it over a unix socket.
package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
	"golang.org/x/time/rate"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/backend"
	"github.com/corral-dev/corral/internal/claude"
	"github.com/corral-dev/corral/internal/datadir"
	"github.com/corral-dev/corral/internal/events"
	"github.com/corral-dev/corral/internal/lifetime"
	"github.com/corral-dev/corral/internal/status"
	"github.com/corral-dev/corral/internal/store"
	"github.com/corral-dev/corral/internal/term"
	"github.com/corral-dev/corral/internal/tmux"
	"github.com/corral-dev/corral/internal/version"
)

// Config configures an Agent.
type Config struct {
	// DataDir holds the database, sockets, tmux config and Claude settings.
	DataDir string
	// Home is the user's home directory (default $HOME of Env).
	Home string
	// ClaudeDir is Claude's configuration directory, whose session files
	// and transcripts corral reads (default: $CLAUDE_CONFIG_DIR of Env,
	// else Home/.claude, as Claude picks it; see claude.ConfigDir). Claude
	// in corral's sessions gets Env, so both agree.
	ClaudeDir string
	// ClaudeBin and TmuxBin name the programs (default: found in PATH).
	ClaudeBin string
	TmuxBin   string
	// GitBin is the git that reads sessions' repositories (default: found
	// in Env's PATH).
	GitBin string
	// CorralBin is the binary Claude runs for hooks (default: this one).
	CorralBin string
	// Env is the environment sessions start with (default os.Environ()).
	Env []string
	// Roots bound directory listings (default: Home).
	Roots []string
	// SafetyPoll is the interval of the one global safety check of tmux and
	// processes (default 10 s). Everything else is event-driven.
	SafetyPoll time.Duration
	// Store is the open database (the caller owns it).
	Store *store.SQLite
	// Bus receives every change (default: a new one).
	Bus    *events.Bus
	Logger *slog.Logger
}

// Agent runs one machine's sessions.
type Agent struct {
	cfg      Config
	log      *slog.Logger
	tmux     *tmux.Server
	store    *store.SQLite
	bus      *events.Bus
	settings string // path of the generated Claude settings file
	started  time.Time
	// streams are the terminals attached by viewers.
	streams *term.Registry

	mu       sync.Mutex
	sessions map[string]*session
	// transcripts maps a transcript's directory to the sessions whose
	// transcripts live there, for the one fsnotify watcher.
	twatch    *fsnotify.Watcher
	tdirs     map[string]bool
	reconcile chan struct{}
	persistCh chan struct{}
	dirty     map[string]bool
	// deletes are sessions whose database row is still to be deleted.
	deletes map[string]bool
	// persistErr is the last failed database write, since persistFailing;
	// nil once a write succeeds.
	persistErr     error
	persistFailing time.Time
	serverPID      int
	// reserved holds names of sessions being created.
	reserved map[string]bool
	// adopted: the tmux sessions the database did not know were taken in.
	adopted bool

	// storeMu orders database writes, so a late batch of states cannot
	// bring back a session that Kill just deleted.
	storeMu sync.Mutex

	// warns limits warnings about untrusted input (bad hook deliveries):
	// any process of the user can send them, as fast as it likes.
	warns      *rate.Limiter
	suppressed atomic.Int64

	// mux is the table of the operations the agent answers (backend.go).
	mux *backend.Mux
	// git reads sessions' repositories (git.go).
	git *gitState

	// g owns every goroutine the agent starts: its loops, the hook
	// connections, the exit watches, the timers of rechecks and wakes.
	g      lifetime.Group
	ctx    context.Context
	cancel context.CancelFunc
	ready  chan struct{} // closed once Serve has started the agent
}

// New prepares an agent; Start runs it.
func New(cfg Config) (*Agent, error) {
	if cfg.DataDir == "" {
		return nil, errors.New("agent: no data directory")
	}
	if cfg.Store == nil {
		return nil, errors.New("agent: no store")
	}
	if cfg.Env == nil {
		cfg.Env = os.Environ()
	}
	if cfg.Home == "" {
		cfg.Home = envGet(cfg.Env, "HOME")
		if cfg.Home == "" {
			cfg.Home, _ = os.UserHomeDir()
		}
	}
	if cfg.ClaudeDir == "" {
		cfg.ClaudeDir = claude.ConfigDir(func(k string) string { return envGet(cfg.Env, k) }, cfg.Home)
	}
	if cfg.ClaudeBin == "" {
		cfg.ClaudeBin = "claude"
	}
	if cfg.TmuxBin == "" {
		cfg.TmuxBin = "tmux"
	}
	if cfg.CorralBin == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("agent: cannot find corral's own binary: %w", err)
		}
		if r, err := filepath.EvalSymlinks(exe); err == nil {
			exe = r
		}
		cfg.CorralBin = exe
	}
	if len(cfg.Roots) == 0 {
		cfg.Roots = []string{cfg.Home}
	}
	if cfg.SafetyPoll <= 0 {
		cfg.SafetyPoll = 10 * time.Second
	}
	if cfg.Bus == nil {
		cfg.Bus = events.New(events.Options{})
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	ts := tmux.New(datadir.Socket(cfg.DataDir, datadir.TmuxSocket), filepath.Join(cfg.DataDir, datadir.TmuxConfig),
		tmux.WithBinary(cfg.TmuxBin), tmux.WithEnv(sessionEnv(cfg.Env, "")...))
	a := &Agent{
		cfg:       cfg,
		log:       cfg.Logger,
		tmux:      ts,
		store:     cfg.Store,
		bus:       cfg.Bus,
		settings:  filepath.Join(cfg.DataDir, datadir.Settings),
		streams:   term.NewRegistry(streamGrace),
		sessions:  map[string]*session{},
		tdirs:     map[string]bool{},
		reconcile: make(chan struct{}, 1),
		persistCh: make(chan struct{}, 1),
		dirty:     map[string]bool{},
		deletes:   map[string]bool{},
		reserved:  map[string]bool{},
		warns:     rate.NewLimiter(rate.Every(time.Second), 10),
		git:       newGitState(cfg.GitBin, cfg.Env),
		ready:     make(chan struct{}),
	}
	a.mux = a.newMux()
	return a, nil
}

// warn logs a warning about untrusted input, at most about one a second
// after a burst; the ones left out are counted in the next.
func (a *Agent) warn(msg string, args ...any) {
	if !a.warns.Allow() {
		a.suppressed.Add(1)
		return
	}
	if n := a.suppressed.Swap(0); n > 0 {
		args = append(args, "suppressed_before", n)
	}
	a.log.Warn(msg, args...)
}

// Bus is where the agent publishes.
func (a *Agent) Bus() *events.Bus { return a.bus }

// Roots are the directories the agent lists (Config.Roots, or the home).
func (a *Agent) Roots() []string { return append([]string(nil), a.cfg.Roots...) }

// Home is the user's home directory.
func (a *Agent) Home() string { return a.cfg.Home }

// Tmux is the agent's tmux server (terminal streaming attaches to it).
func (a *Agent) Tmux() *tmux.Server { return a.tmux }

// HookExec is what Claude runs for every hook, without a shell: the small
// corral-hook binary next to corral's own, else corral itself.
func (a *Agent) HookExec() claude.Exec {
	return HookExec(a.cfg.CorralBin, a.cfg.DataDir)
}

// HookExec is the hook command for the corral binary at corralBin and a
// data directory.
func HookExec(corralBin, dataDir string) claude.Exec {
	small := filepath.Join(filepath.Dir(corralBin), "corral-hook")
	if fi, err := os.Stat(small); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		return claude.Exec{Path: small, Args: []string{"--data-dir", dataDir}}
	}
	return claude.Exec{Path: corralBin, Args: []string{"hook", "--data-dir", dataDir}}
}

// StatusLineCommand is the command line of corral's status line.
func (a *Agent) StatusLineCommand() string {
	return claude.CommandLine(a.cfg.CorralBin, "statusline", "--data-dir", a.cfg.DataDir)
}

// Serve starts the agent (Start) and serves until ctx ends, then stops it
// (Close): it returns once every goroutine it started has returned and the
// last states are written, or at once with Start's error. Ready is closed
// once it serves. The tmux sessions keep running.
func (a *Agent) Serve(ctx context.Context) error {
	if err := a.Start(ctx); err != nil {
		return err
	}
	close(a.ready)
	<-ctx.Done()
	return a.Close()
}

// Ready is closed once Serve has started the agent.
func (a *Agent) Ready() <-chan struct{} { return a.ready }

// Start restores sessions from the database, opens the hook socket and
// starts the watchers. It returns once the agent serves; Close stops it.
func (a *Agent) Start(ctx context.Context) error {
	a.ctx, a.cancel = context.WithCancel(context.Background())
	a.started = time.Now()

	// Claude's settings: regenerated whenever corral's path or data
	// directory changes (the content names both).
	settings, err := claude.SettingsJSON(a.HookExec(), a.StatusLineCommand())
	if err != nil {
		return err
	}
	if _, err := claude.WriteIfChanged(a.settings, settings, 0o600); err != nil {
		return fmt.Errorf("write claude settings: %w", err)
	}
	if err := a.tmux.WriteConfig(); err != nil {
		return fmt.Errorf("write tmux config: %w", err)
	}

	hookSock := datadir.Socket(a.cfg.DataDir, datadir.HookSocket)
	if err := datadir.EnsureSocketDir(hookSock); err != nil {
		return err
	}
	ln, err := listenHooks(hookSock)
	if err != nil {
		return fmt.Errorf("hook socket: %w", err)
	}

	if err := a.restore(ctx); err != nil {
		ln.Close()
		return err
	}

	tw, err := fsnotify.NewWatcher()
	if err != nil {
		ln.Close()
		return fmt.Errorf("file watcher: %w", err)
	}
	a.twatch = tw

	a.goLoop("hooks", func() { a.serveHooks(ln) })
	a.goLoop("transcripts", a.watchTranscripts)
	a.goLoop("session-files", func() {
		err := claude.WatchSessionFiles(a.ctx, claude.SessionsDir(a.cfg.ClaudeDir), a.onSessionFile)
		if err != nil && a.ctx.Err() == nil {
			a.log.Error("session file watcher stopped", "err", err)
		}
	})
	a.goLoop("reconcile", a.reconcileLoop)
	a.goLoop("persist", a.persistLoop)
	a.goLoop("git", a.gitLoop)
	a.goLoop("streams", func() {
		t := time.NewTicker(10 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-a.ctx.Done():
				return
			case now := <-t.C:
				a.streams.Sweep(now)
			}
		}
	})
	a.goLoop("closer", func() {
		<-a.ctx.Done()
		ln.Close()
		tw.Close()
	})
	// First reconciliation now: recreate what a dead tmux server lost,
	// re-verify what was busy.
	a.kickReconcile()
	return nil
}

// goLoop runs fn on a goroutine of the agent's, unless the agent is
// stopping (then it reports false).
func (a *Agent) goLoop(name string, fn func()) bool {
	return a.g.Go(func() {
		fn()
		a.log.Debug("loop ended", "loop", name)
	})
}

// Close stops the agent, leaving every tmux session running, and writes
// the last states. It returns once every goroutine of the agent's has, and
// every terminal stream is closed.
func (a *Agent) Close() error {
	if a.cancel != nil {
		a.cancel()
	}
	a.g.Wait()
	a.streams.Close()
	if err := a.flush(context.Background()); err != nil {
		a.mu.Lock()
		n := len(a.dirty) + len(a.deletes)
		a.mu.Unlock()
		a.log.Error("database: session changes not saved at exit", "count", n, "err", err)
		return err
	}
	return nil
}

// ClaudeInstalled says whether the agent finds the claude it would start.
func (a *Agent) ClaudeInstalled() bool {
	_, err := a.lookPath(a.cfg.ClaudeBin)
	return err == nil
}

// Version describes the agent.
func (a *Agent) Version(ctx context.Context) api.VersionInfo {
	b := version.Get()
	v := api.VersionInfo{Version: b.Version, Commit: b.Commit, BuildDate: b.Date, DataDir: a.cfg.DataDir, PID: os.Getpid(), StartedAt: a.started}
	if tv, err := a.tmux.Version(ctx); err == nil {
		v.Tmux = tv
	}
	if p := a.persistProblem(); p != "" {
		v.Problems = append(v.Problems, p)
	}
	return v
}

func envGet(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

// sessionEnv is the environment a session's pane starts with: the daemon's
// own (so ANTHROPIC_BASE_URL and the like reach Claude), minus tmux's
// variables, plus CORRAL_SESSION.
func sessionEnv(env []string, id string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "TMUX", "TMUX_PANE", "CORRAL_SESSION":
			continue
		}
		out = append(out, kv)
	}
	if id != "" {
		out = append(out, "CORRAL_SESSION="+id)
	}
	return out
}

// lookPath finds bin in the PATH of the sessions' environment.
func (a *Agent) lookPath(bin string) (string, error) {
	if strings.Contains(bin, "/") {
		if fi, err := os.Stat(bin); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return "", fmt.Errorf("%s is not an executable file", bin)
		}
		return bin, nil
	}
	for _, dir := range filepath.SplitList(envGet(a.cfg.Env, "PATH")) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, bin)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return exec.LookPath(bin)
}

// now is the agent's clock.
func now() time.Time { return time.Now() }

// apply folds one event into a session's state and publishes the result.
// The caller holds a.mu.
func (a *Agent) applyLocked(s *session, ev status.Event) {
	prev, out := s.track(ev)
	ns := s.st
	// A held signal, or a dialog a hook announced, is settled by the screen.
	if out.Recheck || out.Changed && ns.Status == api.StatusNeedsInput && ns.OnScreen == "" {
		a.recheck(s)
	}
	if out.Wake > 0 {
		a.wakeAfter(s.id, out.Wake)
	}
	if !out.Changed {
		return
	}
	if prev != ns.Status {
		a.log.Debug("status", "session", s.id, "from", prev, "to", ns.Status, "by", ev.Kind)
	}
	a.publishLocked(s, prev, out.Notify)
}

// wakeAfter sends the session a Tick after d, as the engine asked.
func (a *Agent) wakeAfter(id string, d time.Duration) {
	if a.ctx == nil {
		return
	}
	a.goLoop("wake", func() {
		select {
		case <-a.ctx.Done():
			return
		case <-time.After(d):
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		if s, ok := a.sessions[id]; ok {
			a.applyLocked(s, status.Event{Kind: status.Tick})
		}
	})
}

// publishLocked publishes a session's current state. The caller holds a.mu.
func (a *Agent) publishLocked(s *session, prev api.Status, notify bool) {
	s.updated = now()
	a.bus.Update(s.toAPI(), prev, notify)
	a.markDirtyLocked(s.id)
}

// listenHooks opens the hook socket at path (mode 0600), removing a stale
// socket file left by a daemon that died. The caller holds the data
// directory's lock, so nothing alive can own the old file.
func listenHooks(path string) (*net.UnixListener, error) {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, err
	}
	l.SetUnlinkOnClose(true)
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}
