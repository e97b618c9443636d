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
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"golang.org/x/time/rate"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/atomicfile"
	"github.com/corral-dev/corral/internal/backend"
	"github.com/corral-dev/corral/internal/claude"
	"github.com/corral-dev/corral/internal/claude/hooks"
	"github.com/corral-dev/corral/internal/claude/sessionfile"
	"github.com/corral-dev/corral/internal/datadir"
	"github.com/corral-dev/corral/internal/events"
	"github.com/corral-dev/corral/internal/lifetime"
	"github.com/corral-dev/corral/internal/metrics"
	"github.com/corral-dev/corral/internal/shellquote"
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
	// Metrics counts hook deliveries and status changes (nil: none).
	Metrics *metrics.Metrics
	// Store is the open database (the caller owns it).
	Store *store.SQLite
	// Bus receives every change (default: a new one).
	Bus    *events.Feed
	Logger *slog.Logger
}

// Agent runs one machine's sessions. It answers the operations (files by
// subject: sessions.go, input.go's gate, run.go, files.go, and the views in
// terminal.go) and owns the parts that do the work, each a type with one
// job: the registry and its lock, the intake that folds signals into
// states, the signal sources (hooks, Claude's files, transcripts, panes and
// processes, the screen), persistence, reconciliation, git, the input gate
// and the terminal views. The parts embed the agent, for the registry and
// what they share (config, log, tmux, bus, goroutines), and name their
// receiver a like the agent's own methods, so code reads the same wherever
// it lives.
type Agent struct {
	cfg      Config
	log      *slog.Logger
	tmux     *tmux.Server
	store    *store.SQLite
	bus      *events.Feed
	settings string // path of the generated Claude settings file
	started  time.Time
	metrics  *metrics.Metrics

	// registry is the table of sessions and the lock that guards it and
	// every session (registry.go).
	registry
	// warner limits warnings about untrusted input (warn.go).
	warner

	in      *intake        // folds signals into states, publishes (intake.go)
	persist *persister     // writes states to the database (persist.go)
	hooks   *hookListener  // the hook socket (hooksock.go)
	sig     *claudeSignals // hook, status line and session file signals (signals.go)
	trs     *transcripts   // transcript signals (transcripts.go)
	panes   *panes         // tmux panes and their processes (panes.go)
	screen  *screens       // screen signals (screen.go)
	rec     *reconciler    // checks belief against tmux and /proc (reconcile.go)
	git     *gitState      // sessions' repositories (git.go)
	input   *inputGate     // every path that types into a session (input.go)
	views   *views         // terminals, timeline, capture (terminal.go)

	// mux is the table of the operations the agent answers (backend.go).
	mux *backend.Mux

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
		cfg:      cfg,
		log:      cfg.Logger,
		tmux:     ts,
		store:    cfg.Store,
		bus:      cfg.Bus,
		settings: filepath.Join(cfg.DataDir, datadir.Settings),
		metrics:  cfg.Metrics,
		registry: registry{sessions: map[string]*session{}, reserved: map[string]bool{}},
		warner:   warner{log: cfg.Logger, warns: rate.NewLimiter(rate.Every(time.Second), 10)},
		git:      newGitState(cfg.GitBin, cfg.Env),
		ready:    make(chan struct{}),
	}
	a.in = &intake{a}
	a.persist = &persister{Agent: a, persistCh: make(chan struct{}, 1), dirty: map[string]bool{}, deletes: map[string]bool{}}
	a.hooks = &hookListener{a}
	a.sig = &claudeSignals{a}
	a.trs = &transcripts{Agent: a, tdirs: map[string]bool{}}
	a.panes = &panes{a}
	a.screen = &screens{a}
	a.rec = &reconciler{Agent: a, reconcile: make(chan struct{}, 1)}
	a.git.Agent = a
	a.input = &inputGate{a}
	a.views = &views{Agent: a, streams: term.NewRegistry(streamGrace), opened: make(chan struct{}, 1)}
	a.mux = a.newMux()
	return a, nil
}

// Bus is where the agent publishes.
func (a *Agent) Bus() *events.Feed { return a.bus }

// Roots are the directories the agent lists (Config.Roots, or the home).
func (a *Agent) Roots() []string { return append([]string(nil), a.cfg.Roots...) }

// Home is the user's home directory.
func (a *Agent) Home() string { return a.cfg.Home }

// Tmux is the agent's tmux server (terminal streaming attaches to it).
func (a *Agent) Tmux() *tmux.Server { return a.tmux }

// HookExec is what Claude runs for every hook, without a shell: the small
// corral-hook binary next to corral's own, else corral itself.
func (a *Agent) HookExec() hooks.Exec {
	return HookExec(a.cfg.CorralBin, a.cfg.DataDir)
}

// HookExec is the hook command for the corral binary at corralBin and a
// data directory.
func HookExec(corralBin, dataDir string) hooks.Exec {
	small := filepath.Join(filepath.Dir(corralBin), "corral-hook")
	if fi, err := os.Stat(small); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		return hooks.Exec{Path: small, Args: []string{"--data-dir", dataDir}}
	}
	return hooks.Exec{Path: corralBin, Args: []string{"hook", "--data-dir", dataDir}}
}

// StatusLineCommand is the command line of corral's status line.
func (a *Agent) StatusLineCommand() string {
	return shellquote.Join(a.cfg.CorralBin, "statusline", "--data-dir", a.cfg.DataDir)
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
	settings, err := hooks.SettingsJSON(a.HookExec(), a.StatusLineCommand())
	if err != nil {
		return err
	}
	if _, err := atomicfile.WriteIfChanged(a.settings, settings, 0o600); err != nil {
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

	if err := a.rec.restore(ctx); err != nil {
		ln.Close()
		return err
	}

	tw, err := fsnotify.NewWatcher()
	if err != nil {
		ln.Close()
		return fmt.Errorf("file watcher: %w", err)
	}
	a.trs.twatch = tw

	a.goLoop("hooks", func() { a.hooks.serveHooks(ln) })
	a.goLoop("transcripts", a.trs.watchTranscripts)
	a.goLoop("session-files", func() {
		err := sessionfile.Watch(a.ctx, sessionfile.Dir(a.cfg.ClaudeDir), a.sig.onSessionFile)
		if err != nil && a.ctx.Err() == nil {
			a.log.Error("session file watcher stopped", "err", err)
		}
	})
	a.goLoop("reconcile", a.rec.reconcileLoop)
	a.goLoop("persist", a.persist.persistLoop)
	a.goLoop("git", a.git.gitLoop)
	a.goLoop("streams", func() {
		t := time.NewTicker(10 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-a.ctx.Done():
				return
			case now := <-t.C:
				a.views.streams.Sweep(now)
			}
		}
	})
	a.goLoop("window-sizes", a.views.watchWindowSizes)
	a.goLoop("closer", func() {
		<-a.ctx.Done()
		ln.Close()
		tw.Close()
	})
	// First reconciliation now: recreate what a dead tmux server lost,
	// re-verify what was busy.
	a.rec.kickReconcile()
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
	a.views.streams.Close()
	if err := a.persist.flush(context.Background()); err != nil {
		a.mu.Lock()
		n := len(a.persist.dirty) + len(a.persist.deletes)
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
	if p := a.persist.persistProblem(); p != "" {
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
