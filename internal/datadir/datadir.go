// Package datadir finds corral's data directory, names the files in it, and
// guards it so that only one daemon serves a data directory at a time.
package datadir

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// EnvHome is the environment variable that names the data directory.
const EnvHome = "CORRAL_HOME"

// Resolve returns the data directory: flag, then $CORRAL_HOME, then
// $XDG_DATA_HOME/corral, then ~/.local/share/corral. The result is absolute.
func Resolve(flag string, getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	dir := flag
	if dir == "" {
		dir = getenv(EnvHome)
	}
	if dir == "" {
		if x := getenv("XDG_DATA_HOME"); x != "" {
			dir = filepath.Join(x, "corral")
		}
	}
	if dir == "" {
		home := getenv("HOME")
		if home == "" {
			h, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("cannot find the data directory: set --data-dir or $%s: %w", EnvHome, err)
			}
			home = h
		}
		dir = filepath.Join(home, ".local", "share", "corral")
	}
	if dir == "~" || strings.HasPrefix(dir, "~/") {
		home := getenv("HOME")
		if home == "" {
			h, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("cannot expand %q: %w", dir, err)
			}
			home = h
		}
		dir = filepath.Join(home, strings.TrimPrefix(dir, "~"))
	}
	return filepath.Abs(dir)
}

// Ensure creates dir (mode 0700) if needed and tightens its mode if it is
// readable by others: it holds sockets and tokens.
func Ensure(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("data directory %s is not a directory", dir)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("data directory: %w", err)
		}
	}
	return nil
}

// maxSocketPath is below the 108 bytes of sockaddr_un.sun_path.
const maxSocketPath = 100

// Socket returns the path of the named unix socket of a data directory. A
// data directory deep enough to overflow sun_path gets its sockets in a
// per-user directory under the temp dir, named by a hash of the data
// directory so that every process finds the same one.
func Socket(dir, name string) string {
	p := filepath.Join(dir, name)
	if len(p) <= maxSocketPath {
		return p
	}
	sum := sha256.Sum256([]byte(dir))
	return filepath.Join(os.TempDir(), fmt.Sprintf("corral-%d", os.Getuid()), hex.EncodeToString(sum[:6])+"-"+name)
}

// Names of the files in a data directory.
const (
	APISocket  = "corral.sock" // HTTP+JSON API
	HookSocket = "hook.sock"   // hook and status line deliveries
	TmuxSocket = "tmux.sock"
	Database   = "corral.db"
	LockFile   = "serve.lock"
	Settings   = "claude-settings.json"
	TmuxConfig = "tmux.conf"
	// DeviceKey is the agent's Ed25519 key, which it proves to its hub
	// (internal/devicekey).
	DeviceKey = "device.key"
)

// EnsureSocketDir makes the directory of a socket path (0700). The shared
// fallback under the temp dir must be a real directory of ours that nobody
// else can write to: otherwise someone could put their socket in our place.
func EnsureSocketDir(sock string) error {
	dir := filepath.Dir(sock)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if fi.Mode()&os.ModeSymlink != 0 || !fi.IsDir() {
		return fmt.Errorf("socket directory %s is not a plain directory", dir)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("socket directory %s belongs to another user (uid %d)", dir, st.Uid)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return os.Chmod(dir, 0o700)
	}
	return nil
}

// Owner describes the daemon that holds a data directory.
type Owner struct {
	PID    int    `json:"pid"`
	Socket string `json:"socket"`
	Listen string `json:"listen,omitempty"`
	// URL is the dashboard's base URL (for `corral login-link`).
	URL       string    `json:"url,omitempty"`
	StartedAt time.Time `json:"started_at"`
}

// Lock is a held data-directory lock.
type Lock struct {
	f *os.File
}

// ErrLocked is returned by Acquire when another daemon serves the directory.
type ErrLocked struct {
	Dir   string
	Owner Owner
}

func (e *ErrLocked) Error() string {
	msg := fmt.Sprintf("corral is already serving %s", e.Dir)
	if e.Owner.PID != 0 {
		msg += fmt.Sprintf(" (pid %d, API socket %s", e.Owner.PID, e.Owner.Socket)
		if e.Owner.Listen != "" {
			msg += ", web " + e.Owner.Listen
		}
		msg += ")"
	}
	return msg
}

// Acquire takes the data directory's lock for this process, or returns
// *ErrLocked describing the daemon that has it. The kernel drops the lock
// when the process dies, so a kill -9 leaves nothing to clean up.
func Acquire(dir string, me Owner) (*Lock, error) {
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			le := &ErrLocked{Dir: dir}
			if b, rerr := os.ReadFile(path); rerr == nil {
				_ = json.Unmarshal(b, &le.Owner)
			}
			return nil, le
		}
		return nil, fmt.Errorf("lock: %w", err)
	}
	l := &Lock{f: f}
	if err := l.Update(me); err != nil {
		l.Release()
		return nil, err
	}
	return l, nil
}

// Update rewrites the owner description (e.g. once the listen address is known).
func (l *Lock) Update(me Owner) error {
	b, err := json.Marshal(me)
	if err != nil {
		return err
	}
	if err := l.f.Truncate(0); err != nil {
		return fmt.Errorf("lock: %w", err)
	}
	if _, err := l.f.WriteAt(append(b, '\n'), 0); err != nil {
		return fmt.Errorf("lock: %w", err)
	}
	return nil
}

// Release drops the lock.
func (l *Lock) Release() {
	if l == nil || l.f == nil {
		return
	}
	_ = l.f.Truncate(0)
	_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	_ = l.f.Close()
	l.f = nil
}

// ReadOwner reads who holds dir's lock, if anyone does.
func ReadOwner(dir string) (Owner, bool) {
	path := filepath.Join(dir, LockFile)
	f, err := os.Open(path)
	if err != nil {
		return Owner{}, false
	}
	defer f.Close()
	// If we can take a shared lock, nobody holds the exclusive one.
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err == nil {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return Owner{}, false
	}
	var o Owner
	b, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(b, &o) != nil {
		return Owner{}, true
	}
	return o, true
}
