package tmux

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Config returns the content of corral's tmux config file. The terminal
// type is tmux-256color when its terminfo entry exists, else screen-256color.
func Config() string {
	term := "screen-256color"
	if terminfoExists("tmux-256color") {
		term = "tmux-256color"
	}
	return config(term)
}

func config(defaultTerminal string) string {
	return `# corral's tmux config, written by corral on every server start: edits are lost.
# Sessions are driven by corral and browsers, not by tmux key bindings.
set -g prefix None
set -g prefix2 None
unbind-key C-b
set -g status off
# Mouse off: the wheel scrolls the viewer's own scrollback (a browser's
# xterm.js, a person's terminal) instead of entering tmux's copy mode.
set -g mouse off
# No alternate screen in attached terminals, so lines that scroll off the
# top land in the viewer's scrollback; and no multi-line scroll (indn),
# which xterm.js does not keep in scrollback: one newline per line.
set -ga terminal-overrides ",*:smcup@:rmcup@:indn@"
set -g history-limit 50000
# Pass the pane title (Claude sets one) through to attached terminals.
set -g set-titles on
set -g set-titles-string "#T"
set -s focus-events on
# The server outlives its last session: corral keeps using the socket.
set -s exit-empty off
# Escape reaches Claude at once instead of waiting for a key sequence.
set -s escape-time 0
set -g default-terminal ` + defaultTerminal + `
# Browser terminals (xterm.js) show 24-bit colour.
set -as terminal-features "xterm*:RGB"
set -gw allow-rename off
set -gw aggressive-resize on
# The most recently active client decides the size, so a phone viewer
# does not shrink everyone for good.
set -gw window-size latest
`
}

// terminfoExists reports whether a compiled terminfo entry for name is
// installed where ncurses looks for it.
func terminfoExists(name string) bool {
	var dirs []string
	if d := os.Getenv("TERMINFO"); d != "" {
		dirs = append(dirs, d)
	}
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, ".terminfo"))
	}
	system := []string{"/etc/terminfo", "/lib/terminfo", "/usr/share/terminfo", "/usr/lib/terminfo", "/usr/share/lib/terminfo"}
	if list := os.Getenv("TERMINFO_DIRS"); list != "" {
		for _, d := range strings.Split(list, ":") {
			if d == "" {
				dirs = append(dirs, system...) // an empty entry means the defaults
			} else {
				dirs = append(dirs, d)
			}
		}
	}
	dirs = append(dirs, system...)
	for _, d := range dirs {
		// ncurses files entries by first letter, or by its hex code on
		// case-insensitive file systems.
		for _, sub := range []string{name[:1], fmt.Sprintf("%02x", name[0])} {
			if fi, err := os.Stat(filepath.Join(d, sub, name)); err == nil && fi.Mode().IsRegular() {
				return true
			}
		}
	}
	return false
}

// WriteConfig writes the config file atomically, creating its directory
// (mode 0700) if needed.
func (s *Server) WriteConfig() error {
	dir := filepath.Dir(s.configPath)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("tmux: config dir: %w", err)
	}
	f, err := os.CreateTemp(dir, ".tmux.conf-*")
	if err != nil {
		return fmt.Errorf("tmux: write config: %w", err)
	}
	defer os.Remove(f.Name()) // fails harmlessly after the rename
	if _, err := f.WriteString(s.configText); err != nil {
		f.Close()
		return fmt.Errorf("tmux: write config: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("tmux: write config: %w", err)
	}
	if err := os.Rename(f.Name(), s.configPath); err != nil {
		return fmt.Errorf("tmux: write config: %w", err)
	}
	return nil
}

// Running reports whether a tmux server answers on the socket. It is false
// without an error only when none runs: tmux said "no server running", or
// the socket is missing or refuses connections. Any other failure (tmux
// out of file descriptors, a timeout, tmux missing) is returned as it is:
// the server may well be alive, and nobody may act as if it were gone.
func (s *Server) Running(ctx context.Context) (bool, error) {
	_, err := s.ServerPID(ctx)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrNoServer):
		return false, nil
	}
	return false, err
}

// ServerPID returns the process id of the tmux server. No server gives an
// error matching ErrNoServer.
func (s *Server) ServerPID(ctx context.Context) (int, error) {
	out, err := s.run(ctx, "display-message", "-p", "#{pid}")
	if err != nil {
		return 0, err
	}
	return atoi(strings.TrimSpace(out))
}

// EnsureRunning starts the server unless one answers on the socket. The
// config file is rewritten first and then sourced by an explicit command,
// so that an error in it is returned here: tmux would otherwise keep
// config errors to show them in the first attached terminal. A dead socket
// left by a killed server is replaced; any other file at the socket path
// is an error, never removed.
func (s *Server) EnsureRunning(ctx context.Context) error {
	if up, err := s.Running(ctx); up || err != nil {
		return err
	}
	fi, err := os.Lstat(s.socket)
	switch {
	case err == nil && fi.Mode().Type() != fs.ModeSocket:
		return fmt.Errorf("tmux: %s exists and is not a socket; not touching it", s.socket)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("tmux: socket: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(s.socket), 0o700); err != nil {
		return fmt.Errorf("tmux: socket dir: %w", err)
	}
	if err := s.WriteConfig(); err != nil {
		return err
	}
	// exit-empty off comes first so that the new, empty server does not
	// exit before the config has been read.
	_, err = s.runCommands(ctx, os.DevNull, [][]string{
		{"start-server"},
		{"set-option", "-s", "exit-empty", "off"},
		{"source-file", s.configPath},
	})
	if err != nil {
		return fmt.Errorf("tmux: starting server on %s: %w", s.socket, err)
	}
	return nil
}

// KillServer stops the server and every session in it, and returns once
// that server process is gone (a new one may already answer on the socket,
// started by someone else). No server is not an error.
func (s *Server) KillServer(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	pid, err := s.ServerPID(ctx)
	if errors.Is(err, ErrNoServer) {
		return nil
	}
	if _, err := s.run(ctx, "kill-server"); err != nil && !errors.Is(err, ErrNoServer) {
		return err
	}
	// Gone: none answers, or another one (started since). A server going
	// away may answer "server exited unexpectedly": ask again.
	gone := func() bool {
		cur, err := s.ServerPID(ctx)
		return errors.Is(err, ErrNoServer) || err == nil && pid > 0 && cur != pid
	}
	for !gone() {
		if err := pause(ctx); err != nil {
			return fmt.Errorf("tmux: server on %s still runs after kill-server: %w", s.socket, err)
		}
	}
	return nil
}
