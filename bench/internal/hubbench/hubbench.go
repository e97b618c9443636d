// Package hubbench holds what the hub benchmarks share: a `corral hub`, a
// `corral agent` and a `corral serve` started for a benchmark on 127.0.0.1,
// and a process's memory and CPU from /proc.
package hubbench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/corral-dev/corral/bench/internal/benchutil"
	"github.com/corral-dev/corral/internal/client"
	"github.com/corral-dev/corral/internal/datadir"
)

// Proc is a corral process started for a benchmark, stopped with SIGTERM
// at cleanup.
type Proc struct {
	Cmd     *exec.Cmd
	DataDir string
	LogPath string
	done    chan struct{}
}

// PID of the process.
func (p *Proc) PID() int { return p.Cmd.Process.Pid }

// Done is closed once the process has exited and been reaped.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has ended.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func start(t *benchutil.TB, corral, dataDir string, env []string, logPath string, args ...string) *Proc {
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(corral, args...)
	cmd.Env = append(append([]string(nil), env...), "CORRAL_HOME="+dataDir)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &Proc{Cmd: cmd, DataDir: dataDir, LogPath: logPath, done: make(chan struct{})}
	go func() { cmd.Wait(); logf.Close(); close(p.done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-p.done
		}
		exec.Command("tmux", "-S", datadir.Socket(dataDir, datadir.TmuxSocket), "kill-server").Run()
	})
	return p
}

// waitLog waits (at most 20 s) until the process's log matches re, and
// returns the first submatch of its last match.
func (p *Proc) waitLog(t *benchutil.TB, re *regexp.Regexp, what string) string {
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, _ := os.ReadFile(p.LogPath)
		if all := re.FindAllSubmatch(b, -1); len(all) > 0 {
			return string(all[len(all)-1][1])
		}
		if p.Exited() {
			t.Fatalf("%s exited at start; log %s:\n%s", what, p.LogPath, b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not start in 20 s; log %s:\n%s", what, p.LogPath, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Hub is a `corral hub`.
type Hub struct {
	*Proc
	URL  string // http://127.0.0.1:port
	Addr string // 127.0.0.1:port
}

var hubURLRe = regexp.MustCompile(`corral hub: (http://\S+)`)

// StartHub starts `corral hub` on a free port of 127.0.0.1 and waits until
// it listens.
func StartHub(t *benchutil.TB, corral, dataDir string, env []string, logPath string, args ...string) *Hub {
	p := start(t, corral, dataDir, env, logPath, append([]string{"hub", "--listen", "127.0.0.1:0"}, args...)...)
	u := p.waitLog(t, hubURLRe, "corral hub")
	return &Hub{Proc: p, URL: u, Addr: strings.TrimPrefix(u, "http://")}
}

// Admin runs `corral hub ARGS` on a hub's data directory and returns its
// stdout, trimmed.
func Admin(t *benchutil.TB, corral, dataDir string, env []string, args ...string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, corral, append([]string{"--data-dir", dataDir, "hub"}, args...)...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("corral hub %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return strings.TrimSpace(out.String())
}

// Local is a corral process that serves the API on its data directory's
// unix socket: an agent, or corral serve.
type Local struct {
	*Proc
	Client *client.Client
}

func startLocal(t *benchutil.TB, corral, dataDir string, env []string, logPath string, args ...string) *Local {
	p := start(t, corral, dataDir, env, logPath, args...)
	l := &Local{Proc: p, Client: client.Unix(datadir.Socket(dataDir, datadir.APISocket))}
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := l.Client.Version(ctx)
		cancel()
		if err == nil {
			return l
		}
		if p.Exited() {
			b, _ := os.ReadFile(logPath)
			t.Fatalf("%s exited at start; log:\n%s", args[0], b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not answer in 20 s: %v", args[0], err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// StartAgent starts `corral agent --hub URL` with its enrolment token in
// $CORRAL_DEVICE_TOKEN and waits until its unix socket answers (not until
// it has joined the hub).
func StartAgent(t *benchutil.TB, corral, dataDir, hubURL, token string, env []string, logPath string) *Local {
	env = append(append([]string(nil), env...), "CORRAL_DEVICE_TOKEN="+token)
	return startLocal(t, corral, dataDir, env, logPath, "agent", "--log-level", "warn", "--hub", hubURL)
}

// Serve is `corral serve` with its dashboard on a free port.
type Serve struct {
	*Local
	URL   string // http://127.0.0.1:port
	Token string // an API token of the dashboard
}

var serveURLRe = regexp.MustCompile(`corral: open (http://\S+)`)

// StartServe starts `corral serve` with the dashboard on 127.0.0.1:0.
func StartServe(t *benchutil.TB, corral, dataDir string, env []string, logPath string) *Serve {
	l := startLocal(t, corral, dataDir, env, logPath, "serve", "--log-level", "warn", "--listen", "127.0.0.1:0")
	u := l.waitLog(t, serveURLRe, "corral serve")
	base, link, ok := strings.Cut(u, "/?token=")
	if !ok {
		t.Fatalf("corral serve printed %q", u)
	}
	tok, err := benchutil.APIToken(corral, dataDir, env, link)
	if err != nil {
		t.Fatal(err)
	}
	return &Serve{Local: l, URL: base, Token: tok}
}

// Mem is a process's memory, from /proc/<pid>/status.
// Mem is benchutil.Mem.
type Mem = benchutil.Mem

// ReadMem reads VmRSS, VmHWM and Threads.
func ReadMem(pid int) (Mem, error) { return benchutil.ReadMem(pid) }

// CPU returns the process's user+system CPU time, from /proc/<pid>/stat
// (clock ticks of 10 ms).
func CPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: %q", pid, b)
	}
	f := strings.Fields(string(b[i+1:]))
	// After the command: state is field 3, utime 14 and stime 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %q", pid, b)
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond, nil
}

// MiB formats bytes as MiB.
func MiB(b int64) string { return strconv.FormatFloat(float64(b)/(1<<20), 'f', 1, 64) }

// StartHubOn starts `corral hub` listening on addr (a port it can be
// started on again after a kill).
func StartHubOn(t *benchutil.TB, corral, dataDir string, env []string, logPath, addr string, args ...string) *Hub {
	p := start(t, corral, dataDir, env, logPath, append([]string{"hub", "--listen", addr}, args...)...)
	u := p.waitLog(t, hubURLRe, "corral hub")
	return &Hub{Proc: p, URL: u, Addr: strings.TrimPrefix(u, "http://")}
}
