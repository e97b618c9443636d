package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/client"
	"github.com/corral-dev/corral/internal/datadir"
	"github.com/corral-dev/corral/internal/testkit/testio"
)

// mainEnv makes the test binary, re-executed, run corral's Main: the
// daemon under test is this very code in a process of its own.
const mainEnv = "CORRAL_CLI_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" {
		os.Exit(Main(os.Args[1:]))
	}
	os.Exit(m.Run())
}

func testExe(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// install is one isolated corral installation: data directory, HOME and a
// project directory.
type install struct {
	t       *testing.T
	dataDir string
	home    string
	proj    string
	c       *client.Client

	serve *exec.Cmd
	log   *testio.SyncBuffer
	// env holds further variables of the CLI's environment.
	env map[string]string
	// serveArgs replace the default --listen= of corral serve.
	serveArgs []string
}

func newInstall(t *testing.T) *install {
	t.Helper()
	in := &install{t: t, dataDir: testio.TempDir(t, "corral-"), home: testio.TempDir(t, "corral-home-"), log: &testio.SyncBuffer{}}
	in.proj = filepath.Join(in.home, "proj")
	if err := os.Mkdir(in.proj, 0o755); err != nil {
		t.Fatal(err)
	}
	in.c = client.Unix(datadir.Socket(in.dataDir, datadir.APISocket))
	return in
}

// getenv is the environment the CLI sees.
func (in *install) getenv(k string) string {
	switch k {
	case "CORRAL_HOME":
		return in.dataDir
	case "HOME":
		return in.home
	case "PATH":
		return os.Getenv("PATH")
	}
	return in.env[k]
}

// environ is the environment of a corral process of this installation.
func (in *install) environ() []string {
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + in.home,
		"CORRAL_HOME=" + in.dataDir,
		"SHELL=/bin/sh",
		"PS1=$ ",
		mainEnv + "=1",
		// A binary built with -race sleeps a second at exit by default.
		"GORACE=atexit_sleep_ms=0",
	}
	for k, v := range in.env {
		env = append(env, k+"="+v)
	}
	return env
}

// startDaemon runs `corral serve` (this binary) and waits until it answers.
func (in *install) startDaemon() {
	t := in.t
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	// No web dashboard unless asked: its fixed default port would collide
	// between tests.
	args := []string{"serve", "--log-level", "debug", "--listen="}
	if in.serveArgs != nil {
		args = append(args[:3], in.serveArgs...)
	}
	cmd := exec.Command(testExe(t), args...)
	cmd.Env = in.environ()
	cmd.Dir = in.proj
	cmd.Stdout, cmd.Stderr = in.log, in.log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	in.serve = cmd
	t.Cleanup(func() {
		in.stopDaemon()
		exec.Command("tmux", "-S", datadir.Socket(in.dataDir, datadir.TmuxSocket), "kill-server").Run()
		if t.Failed() {
			t.Logf("corral serve log:\n%s", in.log.String())
		}
	})
	deadline := time.Now().Add(15 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := in.c.Version(ctx)
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("corral serve did not answer within 15 s: %v\n%s", err, in.log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (in *install) stopDaemon() {
	if in.serve == nil {
		return
	}
	in.serve.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { in.serve.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		in.serve.Process.Kill()
		<-done
	}
	in.serve = nil
}

// result is the outcome of one CLI run.
type result struct {
	stdout, stderr string
	code           int
	err            error
}

// run runs the CLI in-process, as Main does, with stdin.
func (in *install) runIn(stdin string, args ...string) result {
	in.t.Helper()
	var stdout, stderr bytes.Buffer
	e := &env{stdin: strings.NewReader(stdin), stdout: &stdout, stderr: &stderr, getenv: in.getenv}
	root := newRoot(e)
	root.SetArgs(args)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := root.ExecuteContext(ctx)
	r := result{err: err}
	var ee exitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.code
	default:
		printError(&stderr, err)
		r.code = 1
	}
	r.stdout, r.stderr = stdout.String(), stderr.String()
	return r
}

func (in *install) run(args ...string) result {
	in.t.Helper()
	return in.runIn("", args...)
}

// must runs the CLI and fails the test unless it exits 0.
func (in *install) must(args ...string) string {
	in.t.Helper()
	r := in.run(args...)
	if r.code != 0 {
		in.t.Fatalf("corral %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// shell creates a shell session through the CLI and returns its id.
func (in *install) shell(name string) string {
	in.t.Helper()
	id := strings.TrimSpace(in.must("new", "--shell", "--dir", in.proj, "--name", name))
	if id == "" || strings.ContainsAny(id, " \n") {
		in.t.Fatalf("corral new printed %q", id)
	}
	return id
}

// waitScreen waits until the session's screen contains substr.
func (in *install) waitScreen(id, substr string) {
	in.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		r := in.run("capture", id)
		last = r.stdout
		if r.code == 0 && strings.Contains(r.stdout, substr) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	in.t.Fatalf("screen of %s never showed %q:\n%s", id, substr, last)
}

// waitStatus follows the event stream until the session has status st.
func (in *install) waitStatus(id string, st api.Status) {
	in.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	found := errors.New("found")
	match := func(s api.Session) bool { return s.ID == id && s.Status == st }
	err := in.c.StreamEvents(ctx, 0, func(ev api.Event) error {
		for _, s := range ev.Sessions {
			if match(s) {
				return found
			}
		}
		if ev.Session != nil && match(*ev.Session) {
			return found
		}
		return nil
	})
	if !errors.Is(err, found) {
		in.t.Fatalf("session %s never became %s: %v", id, st, err)
	}
}

// runProcess runs this binary as corral in a process, with stdin, and
// returns its output, exit code and duration.
func runProcess(t *testing.T, env []string, stdin io.Reader, args ...string) (string, string, int, time.Duration) {
	t.Helper()
	cmd := exec.Command(testExe(t), args...)
	cmd.Env = env
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code, took
}
