// Package tmux drives corral's own tmux server: one server on a dedicated
// socket with corral's config, never the user's server or ~/.tmux.conf.
// It creates, lists and kills sessions, types text and keys into panes,
// captures screens, and gives the argv that attaches a terminal.
//
// Every call runs the tmux client with exec (an argument list, never a
// shell string), a context and a timeout. Sessions are always addressed
// exactly ("=name", panes "=name:" or a pane id "%N"), since a bare name
// prefix-matches another session. tmux treats an argument that ends in ';'
// as a command separator and expands '#' in some option values; this
// package escapes both, so names, paths, environment values, argv and text
// arrive as given.
package tmux

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Default values; see the options.
const (
	DefaultBinary  = "tmux"
	DefaultTimeout = 10 * time.Second
	// DefaultCols and DefaultRows size a new session when the caller does
	// not; an attached client resizes it to fit (window-size latest).
	DefaultCols = 200
	DefaultRows = 50
)

// maxSocketPath is sizeof(sockaddr_un.sun_path) on Linux, NUL included.
const maxSocketPath = 108

// Server is one tmux server on a dedicated socket. It holds no mutable
// state, so its methods are safe for concurrent use.
type Server struct {
	bin        string
	socket     string
	configPath string
	configText string
	extraEnv   []string
	timeout    time.Duration
}

// Option configures a Server.
type Option func(*Server)

// WithBinary runs the given tmux executable (a path, or a name looked up
// in PATH) instead of "tmux".
func WithBinary(bin string) Option { return func(s *Server) { s.bin = bin } }

// WithEnv adds "KEY=VALUE" entries to the environment of every tmux
// command, overriding inherited ones. A server started by this Server
// inherits them, and so do its panes.
func WithEnv(kv ...string) Option {
	return func(s *Server) { s.extraEnv = append(s.extraEnv, kv...) }
}

// WithTimeout bounds each tmux command (DefaultTimeout if not set); a
// shorter deadline on the context wins.
func WithTimeout(d time.Duration) Option { return func(s *Server) { s.timeout = d } }

// New returns a Server for the tmux server on socketPath, configured by the
// file at configPath (written by WriteConfig and on every start). Nothing
// runs until a method is called.
func New(socketPath, configPath string, opts ...Option) *Server {
	s := &Server{
		bin:        DefaultBinary,
		socket:     socketPath,
		configPath: configPath,
		configText: Config(),
		timeout:    DefaultTimeout,
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// SocketPath returns the server's socket path.
func (s *Server) SocketPath() string { return s.socket }

// ConfigPath returns the path of the server's config file.
func (s *Server) ConfigPath() string { return s.configPath }

// Env returns the environment tmux commands run with: this process's
// environment without TMUX and TMUX_PANE (which would point tmux at
// another server, or make it refuse to nest), plus the WithEnv entries.
// Use it to run AttachCommand.
func (s *Server) Env() []string {
	override := map[string]bool{"TMUX": true, "TMUX_PANE": true}
	for _, kv := range s.extraEnv {
		k, _, _ := strings.Cut(kv, "=")
		override[k] = true
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !override[k] {
			env = append(env, kv)
		}
	}
	return append(env, s.extraEnv...)
}

// globalArgs are the tmux client flags before the command: -u because a
// client in a non-UTF-8 locale (LANG=C, common for daemons) makes tmux
// print every non-ASCII character as '_'; -f so that any command that
// happens to start the server loads corral's config.
func (s *Server) globalArgs(config string) []string {
	return []string{"-u", "-S", s.socket, "-f", config}
}

// AttachCommand returns the argv that attaches a terminal to session name,
// for `corral attach` and for the PTY behind each browser viewer. Run it
// with Env() and a real terminal (TERM set).
func (s *Server) AttachCommand(name string) []string {
	argv := append([]string{s.bin}, s.globalArgs(s.configPath)...)
	return append(argv, escapeArgs([]string{"attach-session", "-t", sessionTarget(name)})...)
}

// escapeArg protects an argument from tmux's command parser, which takes
// a trailing ';' as the end of a command (and "\;" as a literal ';').
func escapeArg(a string) string {
	if strings.HasSuffix(a, ";") {
		return a[:len(a)-1] + `\;`
	}
	return a
}

func escapeArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = escapeArg(a)
	}
	return out
}

// escapeFormat makes s literal where tmux expands formats (#{...}, #S).
func escapeFormat(s string) string { return strings.ReplaceAll(s, "#", "##") }

// run runs one tmux command and returns its standard output.
func (s *Server) run(ctx context.Context, args ...string) (string, error) {
	return s.runCommands(ctx, s.configPath, [][]string{args})
}

// runCommands runs several tmux commands in one client invocation, so they
// execute back to back in the server with nothing in between.
func (s *Server) runCommands(ctx context.Context, config string, cmds [][]string) (string, error) {
	return s.runFor(ctx, s.timeout, config, cmds)
}

// runFor is runCommands with its own time limit.
func (s *Server) runFor(ctx context.Context, timeout time.Duration, config string, cmds [][]string) (string, error) {
	if len(s.socket) >= maxSocketPath {
		return "", fmt.Errorf("tmux: socket path %q is too long (%d bytes, the limit is %d)", s.socket, len(s.socket), maxSocketPath-1)
	}
	argv := s.globalArgs(config)
	for i, c := range cmds {
		if i > 0 {
			argv = append(argv, ";")
		}
		argv = append(argv, escapeArgs(c)...)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.bin, argv...)
	cmd.Env = s.Env()
	// A server started by this command daemonizes and drops our pipes; the
	// delay only guards against anything else holding them.
	cmd.WaitDelay = time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err == nil {
		return stdout.String(), nil
	}
	e := &Error{Args: shortArgs(cmds), Stderr: strings.TrimSpace(stderr.String()), Err: err}
	switch {
	case errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist):
		e.Err = fmt.Errorf("%w (%q: %w)", ErrNotInstalled, s.bin, err)
	case ctx.Err() != nil && !errors.Is(err, ctx.Err()):
		e.Err = fmt.Errorf("%w (%w)", ctx.Err(), err) // err is only "signal: killed"
	}
	return stdout.String(), e
}

// shortArgs keeps error messages small: long arguments (typed text) are
// cut, and commands are joined the way tmux reads them.
func shortArgs(cmds [][]string) []string {
	const max = 64
	var out []string
	for i, c := range cmds {
		if i > 0 {
			out = append(out, ";")
		}
		for _, a := range c {
			if strings.Contains(a, fieldSep) {
				a = "<format>" // our own -F format: long and unreadable
			} else if len(a) > max {
				a = fmt.Sprintf("%s...(%d bytes)", a[:max], len(a))
			}
			out = append(out, a)
		}
	}
	return out
}

// Version returns the tmux version, such as "3.3a".
func (s *Server) Version(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.bin, "-V")
	cmd.Env = s.Env()
	out, err := cmd.Output()
	if err != nil {
		e := &Error{Args: []string{"-V"}, Err: err}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			e.Stderr = strings.TrimSpace(string(ee.Stderr))
		}
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
			e.Err = fmt.Errorf("%w (%q: %w)", ErrNotInstalled, s.bin, err)
		}
		return "", e
	}
	v := strings.TrimSpace(string(out))
	_, after, ok := strings.Cut(v, " ")
	if !ok || after == "" {
		return "", fmt.Errorf("tmux -V: unexpected output %q", v)
	}
	return after, nil
}
