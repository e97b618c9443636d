package datadir_test

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/datadir"
)

// helperEnv makes the test binary, re-executed, take a data directory's lock
// and hold it until it is killed (see TestMain).
const helperEnv = "CORRAL_DATADIR_TEST_LOCK_HELPER"

func TestMain(m *testing.M) {
	if dir := os.Getenv(helperEnv); dir != "" {
		os.Exit(holdLock(dir))
	}
	os.Exit(m.Run())
}

// holdLock is the child process of TestLockDiesWithProcess: it takes the
// lock, says so on stdout, and waits to be killed.
func holdLock(dir string) int {
	l, err := datadir.Acquire(dir, datadir.Owner{PID: os.Getpid(), Socket: filepath.Join(dir, datadir.APISocket), StartedAt: time.Now()})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	defer l.Release()
	fmt.Println("locked")
	time.Sleep(time.Minute) // killed long before
	return 0
}

func env(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

func TestResolveOrder(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]string{
		"CORRAL_HOME":   "/srv/corral-home",
		"XDG_DATA_HOME": "/srv/xdg",
		"HOME":          "/home/someone",
	}
	tests := []struct {
		name string
		flag string
		env  map[string]string
		want string
	}{
		{"flag wins over everything", "/opt/flagdir", all, "/opt/flagdir"},
		{"CORRAL_HOME next", "", all, "/srv/corral-home"},
		{"XDG_DATA_HOME/corral next", "", map[string]string{"XDG_DATA_HOME": "/srv/xdg", "HOME": "/home/someone"}, "/srv/xdg/corral"},
		{"~/.local/share/corral last", "", map[string]string{"HOME": "/home/someone"}, "/home/someone/.local/share/corral"},
		{"relative flag is made absolute", "rel/dir", all, filepath.Join(wd, "rel/dir")},
		{"relative CORRAL_HOME is made absolute", "", map[string]string{"CORRAL_HOME": "data"}, filepath.Join(wd, "data")},
		{"flag is cleaned", "/opt//x/../flagdir/", nil, "/opt/flagdir"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := datadir.Resolve(tt.flag, env(tt.env))
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Resolve(%q) = %q, want %q", tt.flag, got, tt.want)
			}
		})
	}
}

func TestResolveNilGetenvUsesProcessEnv(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(datadir.EnvHome, dir)
	got, err := datadir.Resolve("", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got != dir {
		t.Errorf("Resolve with nil getenv = %q, want $CORRAL_HOME %q", got, dir)
	}
}

func TestResolveTildeUsesGivenHome(t *testing.T) {
	for _, flag := range []string{"~/x", "~"} {
		got, err := datadir.Resolve(flag, env(map[string]string{"HOME": "/home/someone"}))
		if err != nil {
			t.Fatal(err)
		}
		want := filepath.Join("/home/someone", strings.TrimPrefix(flag, "~"))
		if got != want {
			t.Errorf("Resolve(%q) with HOME=/home/someone = %q, want %q", flag, got, want)
		}
	}
}

func TestEnsure(t *testing.T) {
	base := t.TempDir()

	t.Run("creates a private directory", func(t *testing.T) {
		dir := filepath.Join(base, "a", "b")
		if err := datadir.Ensure(dir); err != nil {
			t.Fatal(err)
		}
		assertMode(t, dir, 0o700)
	})
	t.Run("tightens a 0755 directory to 0700", func(t *testing.T) {
		dir := filepath.Join(base, "open")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, 0o755); err != nil { // whatever the umask
			t.Fatal(err)
		}
		if err := datadir.Ensure(dir); err != nil {
			t.Fatal(err)
		}
		assertMode(t, dir, 0o700)
	})
	t.Run("leaves a 0700 directory alone", func(t *testing.T) {
		dir := filepath.Join(base, "private")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := datadir.Ensure(dir); err != nil {
			t.Fatal(err)
		}
		assertMode(t, dir, 0o700)
	})
	t.Run("refuses a file", func(t *testing.T) {
		f := filepath.Join(base, "file")
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		err := datadir.Ensure(f)
		if err == nil {
			t.Fatal("Ensure on a regular file succeeded")
		}
		if !strings.Contains(err.Error(), f) && !strings.Contains(err.Error(), "not a directory") {
			t.Errorf("error does not say what is wrong: %v", err)
		}
	})
}

func assertMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != want {
		t.Errorf("mode of %s = %#o, want %#o", path, got, want)
	}
}

func TestSocket(t *testing.T) {
	short := "/tmp/corral-x"
	if got := datadir.Socket(short, datadir.APISocket); got != filepath.Join(short, datadir.APISocket) {
		t.Errorf("short dir: Socket = %q, want it inside the data directory", got)
	}

	long := "/tmp/" + strings.Repeat("deep-directory/", 8) + "corral"
	a := datadir.Socket(long, datadir.APISocket)
	if strings.HasPrefix(a, long) {
		t.Fatalf("long dir (%d bytes): Socket = %q, still inside the data directory", len(long), a)
	}
	if len(a) > 100 {
		t.Errorf("fallback socket path is %d bytes (%q), over the sun_path budget", len(a), a)
	}
	if !strings.HasPrefix(a, filepath.Join(os.TempDir(), "corral-"+strconv.Itoa(os.Getuid()))+"/") {
		t.Errorf("fallback %q is not in the per-user temp directory", a)
	}
	if b := datadir.Socket(long, datadir.APISocket); b != a {
		t.Errorf("Socket is not stable: %q then %q", a, b)
	}
	if h := datadir.Socket(long, datadir.HookSocket); h == a || filepath.Dir(h) != filepath.Dir(a) {
		t.Errorf("hook socket %q vs API socket %q: want distinct names in one directory", h, a)
	}
	if o := datadir.Socket(long+"2", datadir.APISocket); o == a {
		t.Errorf("two data directories share the fallback socket %q", a)
	}
}

func TestEnsureSocketDir(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	long := "/tmp/" + strings.Repeat("deep-directory/", 8) + "corral"
	sock := datadir.Socket(long, datadir.HookSocket)
	if err := datadir.EnsureSocketDir(sock); err != nil {
		t.Fatal(err)
	}
	assertMode(t, filepath.Dir(sock), 0o700)
}

func TestEnsureSocketDirRefusesOpenDirectory(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	long := "/tmp/" + strings.Repeat("deep-directory/", 8) + "corral"
	sock := datadir.Socket(long, datadir.HookSocket)
	if err := os.Mkdir(filepath.Dir(sock), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(sock), 0o777); err != nil {
		t.Fatal(err)
	}
	err := datadir.EnsureSocketDir(sock)
	if err == nil {
		fi, _ := os.Stat(filepath.Dir(sock))
		if fi.Mode().Perm() != 0o700 {
			t.Errorf("EnsureSocketDir left %s at mode %#o", filepath.Dir(sock), fi.Mode().Perm())
		}
	}
}

func owner(dir string) datadir.Owner {
	return datadir.Owner{PID: os.Getpid(), Socket: filepath.Join(dir, datadir.APISocket), StartedAt: time.Now().Round(0)}
}

func TestAcquireTwice(t *testing.T) {
	dir := t.TempDir()
	me := owner(dir)
	l, err := datadir.Acquire(dir, me)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()

	_, err = datadir.Acquire(dir, datadir.Owner{PID: 1})
	var le *datadir.ErrLocked
	if !errors.As(err, &le) {
		t.Fatalf("second Acquire: %v (%T), want *ErrLocked", err, err)
	}
	if le.Dir != dir || le.Owner.PID != me.PID || le.Owner.Socket != me.Socket {
		t.Errorf("ErrLocked = %+v, want dir %s, pid %d, socket %s", le, dir, me.PID, me.Socket)
	}
	msg := err.Error()
	for _, want := range []string{dir, strconv.Itoa(me.PID), me.Socket} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not mention %q", msg, want)
		}
	}

	// Update is seen by the next contender.
	me.Listen = "127.0.0.1:7777"
	if err := l.Update(me); err != nil {
		t.Fatal(err)
	}
	_, err = datadir.Acquire(dir, datadir.Owner{PID: 1})
	if !errors.As(err, &le) || le.Owner.Listen != me.Listen || !strings.Contains(err.Error(), me.Listen) {
		t.Errorf("after Update: %v, want the listen address %s", err, me.Listen)
	}
}

func TestReleaseThenAcquire(t *testing.T) {
	dir := t.TempDir()
	l, err := datadir.Acquire(dir, owner(dir))
	if err != nil {
		t.Fatal(err)
	}
	l.Release()
	l.Release() // twice is harmless
	var nilLock *datadir.Lock
	nilLock.Release()

	if o, held := datadir.ReadOwner(dir); held {
		t.Errorf("ReadOwner after Release = %+v, held", o)
	}
	l2, err := datadir.Acquire(dir, owner(dir))
	if err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	l2.Release()
}

func TestAcquireMissingDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "missing")
	if _, err := datadir.Acquire(dir, owner(dir)); err == nil {
		t.Fatal("Acquire in a missing directory succeeded")
	}
}

func TestReadOwner(t *testing.T) {
	dir := t.TempDir()
	if o, held := datadir.ReadOwner(dir); held || o != (datadir.Owner{}) {
		t.Errorf("no lock file: ReadOwner = %+v, %v", o, held)
	}
	me := owner(dir)
	me.Listen = "127.0.0.1:1"
	l, err := datadir.Acquire(dir, me)
	if err != nil {
		t.Fatal(err)
	}
	o, held := datadir.ReadOwner(dir)
	if !held {
		t.Fatal("ReadOwner while held: not held")
	}
	if o.PID != me.PID || o.Socket != me.Socket || o.Listen != me.Listen || !o.StartedAt.Equal(me.StartedAt) {
		t.Errorf("ReadOwner = %+v, want %+v", o, me)
	}
	// Reading must not disturb the holder.
	if _, err := datadir.Acquire(dir, datadir.Owner{PID: 1}); err == nil {
		t.Error("Acquire succeeded while the lock is held (after ReadOwner)")
	}
	l.Release()
	if _, held := datadir.ReadOwner(dir); held {
		t.Error("ReadOwner after Release: held")
	}
	// A lock file left behind with content but no holder is not an owner.
	if err := os.WriteFile(filepath.Join(dir, datadir.LockFile), []byte(`{"pid":4242}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if o, held := datadir.ReadOwner(dir); held {
		t.Errorf("stale lock file: ReadOwner = %+v, held", o)
	}
}

func TestLockDiesWithProcess(t *testing.T) {
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- s
	}()
	select {
	case s := <-line:
		if strings.TrimSpace(s) != "locked" {
			t.Fatalf("helper said %q", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("helper did not take the lock within 10 s")
	}

	_, err = datadir.Acquire(dir, owner(dir))
	var le *datadir.ErrLocked
	if !errors.As(err, &le) || le.Owner.PID != cmd.Process.Pid {
		t.Fatalf("Acquire while the child holds the lock: %v, want *ErrLocked naming pid %d", err, cmd.Process.Pid)
	}
	if o, held := datadir.ReadOwner(dir); !held || o.PID != cmd.Process.Pid {
		t.Errorf("ReadOwner = %+v, %v; want the child's pid %d", o, held, cmd.Process.Pid)
	}

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	killed = true

	l, err := datadir.Acquire(dir, owner(dir))
	if err != nil {
		t.Fatalf("Acquire after the holder was killed -9: %v", err)
	}
	defer l.Release()
	if o, held := datadir.ReadOwner(dir); !held || o.PID != os.Getpid() {
		t.Errorf("ReadOwner after taking over = %+v, %v; want this pid", o, held)
	}
}
