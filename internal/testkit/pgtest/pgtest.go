// Package pgtest runs a real, throwaway PostgreSQL for tests: initdb in a
// temporary directory, a server that listens only on a unix socket in that
// directory (no TCP port, nothing another test or the machine's own
// PostgreSQL could collide with), one fresh database per test, and
// everything stopped and removed at the end.
//
// PostgreSQL refuses to run as root. Run as root (CI), the cluster is
// made and run as the unprivileged user nobody, in a directory that
// belongs to it; the test process, root, reaches the socket anyway.
//
// The binaries are Debian's (package postgresql: /usr/lib/postgresql/N/bin),
// those on PATH, or $CORRAL_PG_BIN. Missing, a test skips, or fails when
// CORRAL_REQUIRE_CLAUDE is set (CI).
package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// RequireEnv set makes a missing PostgreSQL fail a test instead of
// skipping it.
const RequireEnv = "CORRAL_REQUIRE_CLAUDE"

// Install says how to get the binaries.
const Install = "apt-get install postgresql (or scripts/setup.sh --test), or set CORRAL_PG_BIN to the directory of initdb and postgres"

// ErrMissing: no PostgreSQL binaries were found.
var ErrMissing = errors.New("PostgreSQL not found")

// superuser is the cluster's one role; the socket trusts it.
const superuser = "corral"

// BinDir finds the directory of initdb and postgres.
func BinDir() (string, error) {
	if d := os.Getenv("CORRAL_PG_BIN"); d != "" {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err != nil {
			return "", fmt.Errorf("CORRAL_PG_BIN=%s: %w", d, err)
		}
		return d, nil
	}
	// Debian keeps them off PATH, one directory per major version: take
	// the newest.
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", fmt.Errorf("%w: %s", ErrMissing, Install)
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// Server is one running cluster.
type Server struct {
	dir  string // holds data/, the socket and the log
	cmd  *exec.Cmd
	done chan struct{} // closed when the server has exited
	err  error         // its exit, once done is closed

	mu sync.Mutex
	n  int // databases made
}

// Start makes a cluster in a new temporary directory and starts its
// server; Stop ends it and removes the directory.
func Start(ctx context.Context) (*Server, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	// Short: the socket's path must fit in 107 bytes. As root, in /tmp:
	// nobody must reach it, and $TMPDIR may be root's own.
	base := ""
	if os.Geteuid() == 0 {
		base = "/tmp"
	}
	dir, err := os.MkdirTemp(base, "corral-pg-")
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir, done: make(chan struct{})}
	fail := func(err error) (*Server, error) {
		os.RemoveAll(dir)
		return nil, err
	}
	cred, err := runAs(dir)
	if err != nil {
		return fail(err)
	}
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", filepath.Join(dir, "data"), "-U", superuser,
		"--auth=trust", "-E", "UTF8", "--no-locale", "--no-sync", "--no-instructions")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return fail(fmt.Errorf("initdb: %v\n%s", err, out))
	}
	logf, err := os.Create(filepath.Join(dir, "postgres.log"))
	if err != nil {
		return fail(err)
	}
	defer logf.Close()
	// Durability is not what a test is about: no fsync keeps it fast on a
	// loaded machine. Room for the pools of many stores at once.
	s.cmd = exec.Command(filepath.Join(bin, "postgres"), "-D", filepath.Join(dir, "data"), "-k", dir,
		"-c", "listen_addresses=", "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=300", "-c", "shared_buffers=32MB")
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	s.cmd.SysProcAttr = sysProcAttr(cred)
	if err := s.cmd.Start(); err != nil {
		return fail(fmt.Errorf("postgres: %w", err))
	}
	go func() {
		s.err = s.cmd.Wait()
		close(s.done)
	}()
	if err := s.ready(ctx, 30*time.Second); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// runAs returns who the cluster runs as: nil (this process's user), or
// nobody when this process is root, which then gets dir.
func runAs(dir string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		return nil, fmt.Errorf("running as root, PostgreSQL needs an unprivileged user: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
}

// ready waits until the server takes connections.
func (s *Server) ready(ctx context.Context, wait time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var last error
	for {
		select {
		case <-s.done:
			return fmt.Errorf("postgres exited at start (%v):\n%s", s.err, s.Log())
		default:
		}
		c, err := pgx.Connect(ctx, s.URL("postgres"))
		if err == nil {
			c.Close(ctx)
			return nil
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("postgres did not take connections within %v (%v):\n%s", wait, last, s.Log())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// URL is the connection string of database db, over the socket.
func (s *Server) URL(db string) string {
	return fmt.Sprintf("postgres:///%s?host=%s&user=%s&sslmode=disable", db, s.dir, superuser)
}

// Dir is the directory of the socket (the URL's host).
func (s *Server) Dir() string { return s.dir }

// Log is what the server has logged.
func (s *Server) Log() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "postgres.log"))
	if len(b) > 8<<10 {
		b = append([]byte("…"), b[len(b)-8<<10:]...)
	}
	return string(bytes.TrimSpace(b))
}

// NewDatabase makes an empty database and returns its URL.
func (s *Server) NewDatabase(ctx context.Context) (string, error) {
	s.mu.Lock()
	s.n++
	name := fmt.Sprintf("test_%d", s.n)
	s.mu.Unlock()
	c, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		return "", err
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", fmt.Errorf("create database: %w", err)
	}
	return s.URL(name), nil
}

// Stop ends the server (a fast shutdown: clients are disconnected) and
// removes its directory.
func (s *Server) Stop() error {
	if s.cmd.Process != nil {
		s.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-s.done:
		case <-time.After(20 * time.Second):
			s.cmd.Process.Kill()
			<-s.done
		}
	}
	return os.RemoveAll(s.dir)
}

// Shared is one server for a package's tests, started by the first test
// that asks for a database. The package's TestMain calls Stop after
// m.Run.
type Shared struct {
	once sync.Once
	srv  *Server
	err  error
}

// Server returns the running server, starting it on first use. A missing
// PostgreSQL skips the test (fails it with CORRAL_REQUIRE_CLAUDE set).
func (sh *Shared) Server(t testing.TB) *Server {
	t.Helper()
	sh.once.Do(func() { sh.srv, sh.err = Start(context.Background()) })
	switch {
	case sh.err == nil:
		return sh.srv
	case errors.Is(sh.err, ErrMissing) && os.Getenv(RequireEnv) == "":
		t.Skipf("skipping: %v; set %s=1 to fail instead", sh.err, RequireEnv)
	case errors.Is(sh.err, ErrMissing):
		t.Fatalf("%v (%s is set)", sh.err, RequireEnv)
	default:
		t.Fatalf("PostgreSQL: %v", sh.err)
	}
	return nil
}

// Database makes a fresh database for t and returns its URL.
func (sh *Shared) Database(t testing.TB) string {
	t.Helper()
	srv := sh.Server(t)
	url, err := srv.NewDatabase(context.Background())
	if err != nil {
		t.Fatalf("PostgreSQL: %v\n%s", err, srv.Log())
	}
	return url
}

// Stop stops the server if it was started.
func (sh *Shared) Stop() {
	if sh.srv != nil {
		sh.srv.Stop()
	}
}
