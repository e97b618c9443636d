// Package attach connects the user's terminal to a tmux client through a PTY
// of its own, so that one key detaches. corral's tmux has no prefix key
// (Claude Code uses Ctrl-B itself) and browser viewers attach through the
// same tmux, so the detach key cannot be a tmux binding: it is caught here,
// on the way in, and only for this terminal.
package attach

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/term"
)

// DefaultKey is Ctrl-\, the detach key of dtach and abduco. Claude Code
// binds neither it nor a use for the SIGQUIT it sends in a cooked terminal.
const DefaultKey = 0x1c

// ParseKey reads a detach key: "ctrl-X" (X one of a-z, [, \, ], ^, _),
// "^X", or "none" (0: no detach key).
func ParseKey(s string) (byte, error) {
	l := strings.ToLower(strings.TrimSpace(s))
	if l == "none" || l == "" {
		return 0, nil
	}
	var c string
	for _, prefix := range []string{"ctrl-", "ctrl+", "c-", "^"} {
		if rest, ok := strings.CutPrefix(l, prefix); ok {
			c = rest
			break
		}
	}
	if len(c) == 1 {
		ch := c[0]
		if ch >= 'a' && ch <= 'z' {
			return ch - 'a' + 1, nil
		}
		if ch > '@' && ch <= '_' {
			return ch - '@', nil
		}
	}
	return 0, fmt.Errorf("detach key %q: want ctrl-X (X a letter or one of [ \\ ] ^ _), ^X, or none", s)
}

// KeyName is the name ParseKey reads for key.
func KeyName(key byte) string {
	switch {
	case key == 0:
		return "none"
	case key >= 1 && key <= 26:
		return "ctrl-" + string(rune('a'+key-1))
	case key < 0x20:
		return "ctrl-" + string(rune('@'+key))
	}
	return fmt.Sprintf("%#x", key)
}

// Options says what to attach and to which terminal.
type Options struct {
	// Argv and Env run the tmux client (tmux.Server.AttachCommand and Env).
	Argv []string
	Env  []string
	// In and Out are the user's terminal. In must be a terminal.
	In, Out *os.File
	// Key detaches when typed; 0 disables it.
	Key byte
	// Detach asks tmux to detach the client on tty (the PTY this package
	// made), so the client exits the way tmux's own detach makes it. If it
	// fails, the client is sent SIGTERM.
	Detach func(ctx context.Context, tty string) error
}

// Run attaches until the tmux client exits: on the detach key, when the
// session ends, or when tmux detaches it. The user's terminal is put in raw
// mode and restored. It returns the client's failure, if any.
func Run(ctx context.Context, o Options) error {
	if len(o.Argv) == 0 {
		return errors.New("attach: no command")
	}
	inFd := int(o.In.Fd())
	if !term.IsTerminal(inFd) {
		return errors.New("attach needs a terminal: standard input is not one (use `corral capture` or the web UI)")
	}
	ptmx, tty, err := pty.Open()
	if err != nil {
		return fmt.Errorf("attach: open a pty: %w", err)
	}
	defer ptmx.Close()
	ttyName := tty.Name()
	if err := pty.InheritSize(o.In, ptmx); err != nil {
		tty.Close()
		return fmt.Errorf("attach: terminal size: %w", err)
	}
	cmd := exec.Command(o.Argv[0], o.Argv[1:]...)
	cmd.Env = o.Env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	err = cmd.Start()
	tty.Close() // the client holds it now
	if err != nil {
		return fmt.Errorf("attach: start %s: %w", o.Argv[0], err)
	}

	state, err := term.MakeRaw(inFd)
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return fmt.Errorf("attach: raw mode: %w", err)
	}
	defer term.Restore(inFd, state)

	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	defer signal.Stop(winch)

	out := make(chan struct{})
	go func() {
		// Ends when the client exits and the PTY reports EIO.
		_, _ = io.Copy(o.Out, ptmx)
		close(out)
	}()
	detach := make(chan struct{}, 1)
	go func() {
		// Blocks in Read after the client is gone; the process is about to
		// return from attach, and in tests In is closed.
		_ = copyInput(ptmx, o.In, o.Key, func() {
			select {
			case detach <- struct{}{}:
			default:
			}
		})
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	for {
		select {
		case <-winch:
			_ = pty.InheritSize(o.In, ptmx)
		case <-detach:
			dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			if o.Detach == nil || o.Detach(dctx, ttyName) != nil {
				_ = cmd.Process.Signal(syscall.SIGTERM)
			}
			cancel()
		case <-ctx.Done():
			_ = cmd.Process.Signal(syscall.SIGTERM)
		case err := <-exited:
			// Let the client's last words ("[detached ...]") through.
			select {
			case <-out:
			case <-time.After(time.Second):
			}
			if err != nil {
				return fmt.Errorf("attach: tmux: %w", err)
			}
			return nil
		}
	}
}

// copyInput copies r to w up to the detach key, calls onKey for it and
// drops it (and anything typed after it in the same read).
func copyInput(w io.Writer, r io.Reader, key byte, onKey func()) error {
	buf := make([]byte, 32*1024)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			p, hit := cut(buf[:n], key)
			if len(p) > 0 {
				if _, werr := w.Write(p); werr != nil {
					return werr
				}
			}
			if hit {
				onKey()
			}
		}
		if err != nil {
			return err
		}
	}
}

// cut returns p up to the detach key, and whether the key was in it.
func cut(p []byte, key byte) ([]byte, bool) {
	if key == 0 {
		return p, false
	}
	for i, b := range p {
		if b == key {
			return p[:i], true
		}
	}
	return p, false
}
