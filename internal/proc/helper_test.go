//go:build linux

package proc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperEnv makes the test binary act as a small helper process instead of
// running tests, so tests get processes with chosen names and argv.
const helperEnv = "CORRAL_PROC_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		os.Exit(m.Run())
	case "block":
		// Live until stdin closes or a signal kills us.
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	case "listen":
		helperListen()
	default:
		fmt.Fprintln(os.Stderr, "unknown helper", os.Getenv(helperEnv))
		os.Exit(2)
	}
}

// helperListen listens on loopback (IPv4 and, when available, IPv6),
// prints the ports on one line and lives until stdin closes.
func helperListen() {
	var ports []string
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0"} {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			if addr == "[::1]:0" {
				continue
			}
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer l.Close()
		ports = append(ports, fmt.Sprint(l.Addr().(*net.TCPAddr).Port))
	}
	fmt.Println(strings.Join(ports, " "))
	io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// start starts cmd and makes sure it is killed and reaped when the test
// ends. It retries ETXTBSY: a binary this test just wrote can be briefly
// held open by a fork in another goroutine (golang.org/issue/22315).
func start(t testing.TB, cmd *exec.Cmd) *exec.Cmd {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		c := exec.Command(cmd.Path, cmd.Args[1:]...)
		c.Args[0] = cmd.Args[0]
		c.Env, c.Dir, c.Stdin, c.Stdout, c.Stderr = cmd.Env, cmd.Dir, cmd.Stdin, cmd.Stdout, cmd.Stderr
		// Its own process group, so that cleanup also kills what a shell
		// started in the background.
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		err := c.Start()
		if errors.Is(err, syscall.ETXTBSY) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if err != nil {
			t.Fatalf("start %v: %v", cmd.Args, err)
		}
		t.Cleanup(func() {
			syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
			c.Wait()
		})
		return c
	}
}

// startSleep starts `sleep 1000` as our child and waits until it has
// exec'd: Start returns a moment before the new program's argv is readable.
func startSleep(t testing.TB) *exec.Cmd {
	t.Helper()
	c := start(t, exec.Command("sleep", "1000"))
	settled(t, c.Process.Pid, func(p Proc) bool { return p.Comm == "sleep" && len(p.Cmdline) > 0 })
	return c
}

// settled polls Stat(pid) until ok accepts it, and returns it.
func settled(t testing.TB, pid int, ok func(Proc) bool) Proc {
	t.Helper()
	var p Proc
	waitFor(t, 5*time.Second, func() (bool, string) {
		var err error
		p, err = Stat(pid)
		return err == nil && ok(p), spew(p, err)
	})
	return p
}

// helperCmd returns a command running this test binary as helper kind,
// optionally from a copy named exeName in a temp dir (to fake a program).
func helperCmd(t testing.TB, kind, exeName string, argv ...string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := self
	if exeName != "" {
		bin = filepath.Join(t.TempDir(), exeName)
		copyFile(t, self, bin)
	}
	cmd := exec.Command(bin)
	if len(argv) > 0 {
		cmd.Args = argv
	}
	cmd.Env = append(os.Environ(), helperEnv+"="+kind)
	return cmd
}

func copyFile(t testing.TB, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o755); err != nil {
		t.Fatal(err)
	}
}

// startBlockingHelper starts a helper that lives until the test ends;
// stdin is a pipe that stays open until then.
func startBlockingHelper(t testing.TB, cmd *exec.Cmd) *exec.Cmd {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin = r
	c := start(t, cmd)
	r.Close()
	t.Cleanup(func() { w.Close() })
	return c
}

// readLine reads the first line the command prints.
func startReadLine(t testing.TB, cmd *exec.Cmd) (*exec.Cmd, string) {
	t.Helper()
	out, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = w
	c := startBlockingHelper(t, cmd)
	w.Close()
	line, err := bufio.NewReader(out).ReadString('\n')
	out.Close()
	if err != nil {
		t.Fatalf("reading from %v: %v", cmd.Args, err)
	}
	return c, strings.TrimSpace(line)
}

// waitFor polls cond every 10 ms until it holds or timeout passes, then
// fails with the last description cond gave.
func waitFor(t testing.TB, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v: %s", timeout, why)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func containsAll(have, want []int) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// deadPID returns the pid of a process that has exited and been reaped.
func deadPID(t testing.TB) int {
	t.Helper()
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	return c.Process.Pid
}
