// Package natstest runs a real, throwaway nats-server for tests: on
// 127.0.0.1, on a free port, in a temporary directory, stopped (and waited
// for) at the end of the test. Kill stops it the hard way, to test what a
// hub does when its bus dies.
//
// The binary is Debian's (package nats-server: /usr/sbin/nats-server), the
// one on PATH, or $CORRAL_NATS_SERVER. Missing, a test skips, or fails when
// CORRAL_REQUIRE_CLAUDE is set (CI).
package natstest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// RequireEnv set makes a missing nats-server fail a test instead of
// skipping it.
const RequireEnv = "CORRAL_REQUIRE_CLAUDE"

// Install says how to get the binary.
const Install = "apt-get install nats-server (or scripts/setup.sh --test), or set CORRAL_NATS_SERVER to its path"

// Binary finds nats-server.
func Binary() (string, error) {
	if p := os.Getenv("CORRAL_NATS_SERVER"); p != "" {
		return p, nil
	}
	if p, err := exec.LookPath("nats-server"); err == nil {
		return p, nil
	}
	if _, err := os.Stat("/usr/sbin/nats-server"); err == nil {
		return "/usr/sbin/nats-server", nil
	}
	return "", fmt.Errorf("nats-server not found: %s", Install)
}

// Server is one running nats-server.
type Server struct {
	port int
	dir  string
	cmd  *exec.Cmd
	done chan struct{}
	mu   sync.Mutex
	log  bytes.Buffer
}

// Start runs a nats-server for the test, stopped at its end. It skips the
// test when nats-server is not installed (fails under RequireEnv).
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		if os.Getenv(RequireEnv) != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	s, err := StartBinary(context.Background(), bin, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop() })
	return s
}

// StartBinary runs bin in dir and waits until it accepts connections (5 s).
func StartBinary(ctx context.Context, bin, dir string) (*Server, error) {
	for range 5 { // a free port can be taken between the probe and the bind
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		s := &Server{port: port, dir: dir, done: make(chan struct{})}
		s.cmd = exec.Command(bin, "-a", "127.0.0.1", "-p", strconv.Itoa(port), "--pid", filepath.Join(dir, "nats.pid"))
		s.cmd.Dir = dir
		s.cmd.Stdout, s.cmd.Stderr = (*lockedWriter)(s), (*lockedWriter)(s)
		if err := s.cmd.Start(); err != nil {
			return nil, err
		}
		go func() { s.cmd.Wait(); close(s.done) }()
		if err := s.ready(ctx, 5*time.Second); err == nil {
			return s, nil
		}
		s.Kill()
	}
	return nil, fmt.Errorf("nats-server did not start")
}

type lockedWriter Server

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.log.Len() < 1<<20 { // bounded: the log is for a failure's message
		w.log.Write(p)
	}
	return len(p), nil
}

func (s *Server) ready(ctx context.Context, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return fmt.Errorf("nats-server exited: %s", s.Log())
		default:
		}
		c, err := net.DialTimeout("tcp", s.Addr(), 200*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return fmt.Errorf("nats-server not listening on %s after %s: %s", s.Addr(), wait, s.Log())
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Addr is host:port.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// URL is the nats:// URL clients dial.
func (s *Server) URL() string { return "nats://" + s.Addr() }

// Log is what the server printed.
func (s *Server) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.String()
}

// Stop ends the server (SIGTERM, then SIGKILL after 5 s) and waits for it.
func (s *Server) Stop() {
	select {
	case <-s.done:
		return
	default:
	}
	s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		s.Kill()
	}
}

// Kill ends the server with SIGKILL and waits for it.
func (s *Server) Kill() {
	s.cmd.Process.Kill()
	<-s.done
}
