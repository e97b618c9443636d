package tmux

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestConfigAccepted(t *testing.T) {
	t.Parallel()
	s := startedServer(t)
	data, err := os.ReadFile(s.ConfigPath())
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != Config() {
		t.Error("config file differs from Config()")
	}
	if fi, _ := os.Stat(s.ConfigPath()); fi.Mode().Perm() != 0o600 {
		t.Errorf("config mode %v", fi.Mode().Perm())
	}
	// The options really took effect.
	want := map[string][]string{
		"prefix":            {"show-options", "-gv", "prefix"},
		"off":               {"show-options", "-gv", "status"},
		"mouse off":         {"show-options", "-g", "mouse"},
		"smcup@:rmcup@":     {"show-options", "-s", "terminal-overrides"},
		"50000":             {"show-options", "-gv", "history-limit"},
		"latest":            {"show-options", "-gwv", "window-size"},
		"0":                 {"show-options", "-sv", "escape-time"},
		"tmux-256color":     {"show-options", "-gv", "default-terminal"},
		"exit-empty off":    {"show-options", "-s", "exit-empty"},
		"focus-events on":   {"show-options", "-s", "focus-events"},
		"allow-rename off":  {"show-options", "-gw", "allow-rename"},
		"set-titles on":     {"show-options", "-g", "set-titles"},
		"aggressive-resize": {"show-options", "-gw", "aggressive-resize"},
	}
	want["None"] = want["prefix"]
	delete(want, "prefix")
	for value, args := range want {
		out, err := s.run(t.Context(), args...)
		if err != nil {
			t.Errorf("%v: %v", args, err)
			continue
		}
		if !strings.Contains(out, value) {
			t.Errorf("%v = %q, want %q", args, out, value)
		}
	}
	if out, err := s.run(t.Context(), "show-options", "-s", "terminal-features"); err != nil || !strings.Contains(out, "xterm*:RGB") {
		t.Errorf("terminal-features = %q, %v", out, err)
	}
	// The server outlives its last session.
	newSession(t, s, NewSessionOptions{Name: "one", Argv: []string{"sleep", "1000"}})
	if err := s.KillSession(t.Context(), "one"); err != nil {
		t.Fatal(err)
	}
	if !running(t, s, t.Context()) {
		t.Error("server exited with its last session")
	}
}

// The fallback terminal type is accepted too.
func TestConfigScreenTerminal(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	s.configText = config("screen-256color")
	if err := s.EnsureRunning(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !terminfoExists("tmux-256color") {
		t.Log("no tmux-256color terminfo here; Config() uses screen-256color")
	}
	if terminfoExists("no-such-terminal") {
		t.Error("terminfoExists(no-such-terminal)")
	}
}

// An option tmux refuses must make EnsureRunning fail, not vanish into the
// first attached terminal.
func TestConfigErrorCaught(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	s.configText = Config() + "set -g no-such-option on\n"
	err := s.EnsureRunning(t.Context())
	if err == nil || !strings.Contains(err.Error(), "invalid option: no-such-option") {
		t.Fatalf("EnsureRunning = %v, want the invalid option reported", err)
	}
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	s := startedServer(t)
	impatient := New(s.SocketPath(), s.ConfigPath(), WithTimeout(time.Nanosecond))
	if _, err := impatient.ServerPID(t.Context()); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("ServerPID with a 1ns timeout = %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.ServerPID(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("ServerPID with a cancelled context = %v", err)
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	v, err := newServer(t).Version(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^(next-)?[0-9]+\.[0-9]+[a-z]?$`).MatchString(v) {
		t.Errorf("Version = %q", v)
	}
}

func TestMissingBinary(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, bin := range []string{filepath.Join(dir, "tmux"), "corral-no-such-tmux"} {
		s := New(filepath.Join(dir, "sock"), filepath.Join(dir, "conf"), WithBinary(bin))
		err := s.EnsureRunning(t.Context())
		if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "install tmux") {
			t.Errorf("EnsureRunning with %s = %v", bin, err)
		}
		if _, err := s.Version(t.Context()); !errors.Is(err, ErrNotInstalled) {
			t.Errorf("Version with %s = %v", bin, err)
		}
	}
}

func TestNoServer(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	ctx := t.Context()
	if running(t, s, ctx) {
		t.Fatal("running before start")
	}
	if _, err := s.ServerPID(ctx); !errors.Is(err, ErrNoServer) {
		t.Errorf("ServerPID = %v", err)
	}
	if l, err := s.ListSessions(ctx); err != nil || len(l) != 0 {
		t.Errorf("ListSessions = %v, %v", l, err)
	}
	if ok, err := s.HasSession(ctx, "x"); ok || err != nil {
		t.Errorf("HasSession = %v, %v", ok, err)
	}
	err := s.KillSession(ctx, "x")
	if !errors.Is(err, ErrNoServer) || errors.Is(err, ErrNoSession) {
		t.Errorf("KillSession = %v", err)
	}
	if _, err := s.PaneInfo(ctx, "x"); !errors.Is(err, ErrNoServer) {
		t.Errorf("PaneInfo = %v", err)
	}
	if err := s.KillServer(ctx); err != nil {
		t.Errorf("KillServer = %v", err)
	}
}

func TestServerKilledUnderUs(t *testing.T) {
	t.Parallel()
	s := startedServer(t)
	ctx := t.Context()
	newSession(t, s, NewSessionOptions{Name: "a", Argv: []string{"sleep", "1000"}})
	pid1, err := s.ServerPID(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// Politely.
	if err := s.KillServer(ctx); err != nil {
		t.Fatal(err)
	}
	if running(t, s, ctx) {
		t.Fatal("running after KillServer")
	}
	if ok, err := s.HasSession(ctx, "a"); ok || err != nil {
		t.Errorf("HasSession after kill = %v, %v", ok, err)
	}
	if err := s.EnsureRunning(ctx); err != nil {
		t.Fatal(err)
	}
	pid2, err := s.ServerPID(ctx)
	if err != nil || pid2 == pid1 {
		t.Fatalf("new server pid %d (old %d), %v", pid2, pid1, err)
	}

	// Brutally: the socket file stays behind, nobody listens on it.
	newSession(t, s, NewSessionOptions{Name: "b", Argv: []string{"sleep", "1000"}})
	if err := syscall.Kill(pid2, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, func() (bool, string) {
		up, err := s.Running(ctx)
		return !up && err == nil, fmt.Sprintf("server still answers (%v)", err)
	})
	if fi, err := os.Lstat(s.SocketPath()); err != nil || fi.Mode().Type() != os.ModeSocket {
		t.Fatalf("want a stale socket left behind: %v, %v", fi, err)
	}
	if _, err := s.ListSessions(ctx); err != nil {
		t.Errorf("ListSessions on a dead socket: %v", err)
	}
	if _, err := s.PaneInfo(ctx, "b"); !errors.Is(err, ErrNoServer) {
		t.Errorf("PaneInfo on a dead socket: %v", err)
	}
	if err := s.EnsureRunning(ctx); err != nil {
		t.Fatal(err)
	}
	p := newSession(t, s, NewSessionOptions{Name: "b", Argv: []string{"sleep", "1000"}})
	if p.SessionName != "b" {
		t.Errorf("session %+v", p)
	}
}

func TestStaleSocketFile(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: s.SocketPath(), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false)
	l.Close()
	if err := s.EnsureRunning(t.Context()); err != nil {
		t.Fatalf("EnsureRunning over a stale socket: %v", err)
	}
	if !running(t, s, t.Context()) {
		t.Error("not running")
	}
}

func TestSocketPathNotASocket(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	if err := os.WriteFile(s.SocketPath(), []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureRunning(t.Context()); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Errorf("EnsureRunning = %v", err)
	}
	if data, _ := os.ReadFile(s.SocketPath()); string(data) != "precious" {
		t.Error("the file at the socket path was touched")
	}
}

func TestSocketPathTooLong(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := New(filepath.Join(dir, strings.Repeat("x", 120)), filepath.Join(dir, "conf"))
	if err := s.EnsureRunning(t.Context()); err == nil || !strings.Contains(err.Error(), "too long") {
		t.Errorf("EnsureRunning = %v", err)
	}
}

func TestEnsureRunningConcurrent(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() { errs <- s.EnsureRunning(t.Context()) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if !running(t, s, t.Context()) {
		t.Error("not running")
	}
}

func TestEnv(t *testing.T) {
	t.Setenv("TMUX", "/tmp/someone-elses-socket,1,0")
	t.Setenv("TMUX_PANE", "%7")
	s := New("/x/sock", "/x/conf", WithEnv("HOME=/h", "EXTRA=1"))
	env := strings.Join(s.Env(), "\n") + "\n"
	for _, bad := range []string{"TMUX=", "TMUX_PANE="} {
		if strings.Contains("\n"+env, "\n"+bad) {
			t.Errorf("env keeps %s", bad)
		}
	}
	if strings.Count(env, "HOME=") != 1 || !strings.Contains(env, "\nHOME=/h\n") || !strings.Contains(env, "\nEXTRA=1\n") {
		t.Errorf("env = %q", env)
	}
}

// TestTransientFailureIsNotNoServer: a tmux client that runs out of file
// descriptors ("error connecting to ... (Too many open files)", or no
// message at all) says nothing about the server. Running reports the
// failure instead of "no server", and EnsureRunning and NewSession fail
// without starting anything, leaving the live server and its session be.
func TestTransientFailureIsNotNoServer(t *testing.T) {
	t.Parallel()
	s := startedServer(t)
	p := newSession(t, s, NewSessionOptions{Name: "keep", Argv: []string{"sleep", "1000"}})
	tmuxBin, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux not installed")
	}
	for _, limit := range []int{5, 6} {
		wrapper := filepath.Join(t.TempDir(), "tmux")
		script := fmt.Sprintf("#!/bin/sh\nulimit -n %d\nexec %s \"$@\"\n", limit, tmuxBin)
		if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		starved := New(s.SocketPath(), s.ConfigPath(), WithBinary(wrapper), WithEnv(s.Env()...))
		up, err := starved.Running(t.Context())
		if up || err == nil || errors.Is(err, ErrNoServer) {
			t.Errorf("limit %d: Running = %v, %v; want a failure that is not ErrNoServer", limit, up, err)
		}
		if err := starved.EnsureRunning(t.Context()); err == nil {
			t.Errorf("limit %d: EnsureRunning succeeded", limit)
		}
		if _, err := starved.NewSession(t.Context(), NewSessionOptions{Name: "keep", Argv: []string{"true"}}); err == nil {
			t.Errorf("limit %d: NewSession succeeded", limit)
		}
		if _, err := starved.ListSessions(t.Context()); err == nil || errors.Is(err, ErrNoServer) {
			t.Errorf("limit %d: ListSessions = %v, want a failure", limit, err)
		}
		t.Logf("limit %d: %v", limit, err)
	}
	list, err := s.ListSessions(t.Context())
	if err != nil || len(list) != 1 || list[0].Pane.PID != p.PID {
		t.Errorf("after the failures: %+v, %v; want the one session, same pane", list, err)
	}
}

func TestNoServerWording(t *testing.T) {
	for msg, want := range map[string]bool{
		"no server running on /tmp/x/sock":                            true,
		"error connecting to /tmp/x/sock (No such file or directory)": true,
		"error connecting to /tmp/x/sock (Connection refused)":        true,
		"error connecting to /tmp/x/sock (Too many open files)":       false,
		"server exited unexpectedly":                                  false,
		"lost server":                                                 false,
		"":                                                            false,
		"[warn] evutil_make_internal_pipe_: pipe: Too many open files": false,
	} {
		if got := errors.Is(&Error{Stderr: msg}, ErrNoServer); got != want {
			t.Errorf("%q: no server %v, want %v", msg, got, want)
		}
	}
}
