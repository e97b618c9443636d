// Package benchutil holds what corral's benchmarks under bench/ share:
// order statistics, a description of the machine, a stand-in testing.TB for
// the test kits, and a `corral serve` started for a benchmark.
package benchutil

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/client"
	"github.com/corral-dev/corral/internal/datadir"
	"github.com/corral-dev/corral/internal/testkit/claudeenv"
	"github.com/corral-dev/corral/internal/testkit/fakeapi"
	"github.com/corral-dev/corral/internal/testkit/testio"
)

// Summary describes a sample.
type Summary struct {
	N                          int
	Min, P10, Median, P90, Max float64
	Mean                       float64
}

// Summarize computes order statistics of xs (which it does not modify).
func Summarize(xs []float64) Summary {
	if len(xs) == 0 {
		return Summary{}
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	sum := 0.0
	for _, x := range s {
		sum += x
	}
	return Summary{
		N: len(s), Min: s[0], Max: s[len(s)-1],
		P10: Quantile(s, 0.10), Median: Quantile(s, 0.5), P90: Quantile(s, 0.90),
		Mean: sum / float64(len(s)),
	}
}

// Quantile returns the q-quantile of sorted xs, interpolating linearly.
func Quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	pos := q * float64(len(sorted)-1)
	i := int(pos)
	if i >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	f := pos - float64(i)
	return sorted[i]*(1-f) + sorted[i+1]*f
}

// Median of xs.
func Median(xs []float64) float64 { return Summarize(xs).Median }

// Ms formats milliseconds with a sensible precision.
func Ms(x float64) string {
	switch {
	case x < 10 && x > -10:
		return strconv.FormatFloat(x, 'f', 2, 64)
	case x < 100 && x > -100:
		return strconv.FormatFloat(x, 'f', 1, 64)
	}
	return strconv.FormatFloat(x, 'f', 0, 64)
}

// Machine describes where a benchmark ran, as markdown lines.
func Machine() string {
	var b strings.Builder
	model := "?"
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	kernel := strings.TrimSpace(readFile("/proc/sys/kernel/osrelease"))
	mem := "?"
	for _, line := range strings.Split(readFile("/proc/meminfo"), "\n") {
		if strings.HasPrefix(line, "MemTotal:") {
			f := strings.Fields(line)
			if len(f) >= 2 {
				if kb, err := strconv.Atoi(f[1]); err == nil {
					mem = fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
				}
			}
		}
	}
	fmt.Fprintf(&b, "- machine: %d CPUs (nproc), %s, kernel %s, %s RAM\n", runtime.NumCPU(), model, kernel, mem)
	fmt.Fprintf(&b, "- load average at start: %s\n", LoadAvg())
	fmt.Fprintf(&b, "- %s; %s\n", runtime.Version(), toolVersions())
	fmt.Fprintf(&b, "- %s", Source())
	return b.String()
}

// Source names the corral source measured: $BENCH_SOURCE when set (for a
// snapshot outside the checkout), else the working tree's commit and how
// many tracked files differ from it.
func Source() string {
	if s := os.Getenv("BENCH_SOURCE"); s != "" {
		return "corral built from " + s
	}
	out, err := exec.Command("git", "log", "-1", "--format=%h (%cI)").Output()
	if err != nil {
		return "corral source: not a git checkout"
	}
	s := "corral built from the working tree at commit " + strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil {
		if t := strings.TrimSpace(string(st)); t != "" {
			s += fmt.Sprintf(", with %d modified tracked file(s)", strings.Count(t, "\n")+1)
		} else {
			s += ", no modified tracked files"
		}
	}
	return s
}

func toolVersions() string {
	var parts []string
	for _, c := range [][]string{{"tmux", "-V"}, {"claude", "--version"}, {"curl", "--version"}} {
		out, err := exec.Command(c[0], c[1:]...).Output()
		if err != nil {
			continue
		}
		line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
		if c[0] == "curl" {
			f := strings.Fields(line)
			if len(f) >= 2 {
				line = "curl " + f[1]
			}
		}
		if c[0] == "claude" {
			line = "claude " + line
		}
		parts = append(parts, line)
	}
	return strings.Join(parts, ", ")
}

func readFile(p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}

// TB is a stand-in testing.TB for the test kits (claudeenv, fakeapi) in a
// plain program: Fatal panics with a *Fatal, which Run turns into an exit
// code after running the cleanups.
type TB struct {
	testing.TB // nil: calling anything not defined here panics

	mu       sync.Mutex
	cleanups []func()
}

// Fatal is what TB.Fatal panics with.
type Fatal struct{ Msg string }

func (t *TB) Helper()                         {}
func (t *TB) Name() string                    { return "bench" }
func (t *TB) Logf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
func (t *TB) Log(args ...any)                 { fmt.Fprintln(os.Stderr, args...) }
func (t *TB) Errorf(format string, args ...any) {
	t.Fatalf(format, args...)
}
func (t *TB) Fatal(args ...any) { panic(&Fatal{Msg: fmt.Sprint(args...)}) }
func (t *TB) Fatalf(format string, args ...any) {
	panic(&Fatal{Msg: fmt.Sprintf(format, args...)})
}
func (t *TB) Skipf(format string, args ...any) { t.Fatalf("skip: "+format, args...) }
func (t *TB) Failed() bool                     { return false }
func (t *TB) TempDir() string {
	d, err := os.MkdirTemp("", "corral-bench-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// Cleanup registers f to run (last in, first out) when Run ends.
func (t *TB) Cleanup(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cleanups = append(t.cleanups, f)
}

// Run calls fn, then the cleanups, and returns an exit code: 1 when fn
// called Fatal (the message goes to stderr) or returned an error. SIGINT
// and SIGTERM cancel ctx.
func Run(fn func(ctx context.Context, t *TB) error) (code int) {
	t := &TB{}
	ctx, stop := signalContext()
	defer stop()
	defer func() {
		t.mu.Lock()
		cs := t.cleanups
		t.cleanups = nil
		t.mu.Unlock()
		for i := len(cs) - 1; i >= 0; i-- {
			cs[i]()
		}
	}()
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(*Fatal)
			if !ok {
				panic(r)
			}
			fmt.Fprintln(os.Stderr, "bench:", f.Msg)
			code = 1
		}
	}()
	if err := fn(ctx, t); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	return 0
}

// MkdirTemp makes a temporary directory (symlinks resolved) removed at the
// end. Keep prefixes short: unix socket paths must fit in 108 bytes.
func (t *TB) MkdirTemp(prefix string) string { return testio.TempDir(t, prefix) }

// Serve is a `corral serve` started for a benchmark.
type Serve struct {
	Cmd     *exec.Cmd
	DataDir string
	Client  *client.Client
	LogPath string
	done    chan struct{}
}

// PID of the daemon.
func (s *Serve) PID() int { return s.Cmd.Process.Pid }

// StartServe starts `corral serve` with env (which must not set
// CORRAL_HOME: dataDir is added), logging to logPath, and waits (at most
// 20 s) until its API answers. It is stopped with SIGTERM, and its tmux
// server killed, at cleanup.
func StartServe(t *TB, corralBin, dataDir, dir string, env []string, logPath string, args ...string) *Serve {
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	// The web dashboard (when this corral has one) listens on 127.0.0.1:7777
	// by default; a free port keeps the benchmark from clashing with a
	// daemon already running there.
	if help, err := exec.Command(corralBin, "serve", "--help").CombinedOutput(); err == nil && strings.Contains(string(help), "--listen") {
		args = append([]string{"--listen", "127.0.0.1:0"}, args...)
	}
	cmd := exec.Command(corralBin, append([]string{"serve"}, args...)...)
	cmd.Env = append(append([]string(nil), env...), "CORRAL_HOME="+dataDir)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &Serve{Cmd: cmd, DataDir: dataDir, LogPath: logPath, done: make(chan struct{}),
		Client: client.Unix(datadir.Socket(dataDir, datadir.APISocket))}
	go func() { cmd.Wait(); logf.Close(); close(s.done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-s.done
		}
		exec.Command("tmux", "-S", datadir.Socket(dataDir, datadir.TmuxSocket), "kill-server").Run()
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := s.Client.Version(ctx)
		cancel()
		if err == nil {
			return s
		}
		select {
		case <-s.done:
			t.Fatalf("corral serve exited at start; log %s:\n%s", logPath, readFile(logPath))
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("corral serve did not answer in 20 s: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// APIToken returns a bearer token for the dashboard of the corral serve
// of dataDir: `corral token rotate` makes one (the login link the daemon
// prints works once, in a browser). An older corral has no such command
// and takes its printed URL's token for both: then that is the answer.
func APIToken(corralBin, dataDir string, env []string, urlToken string) (string, error) {
	if help, err := exec.Command(corralBin, "token", "--help").CombinedOutput(); err != nil || !strings.Contains(string(help), "rotate") {
		return urlToken, nil
	}
	cmd := exec.Command(corralBin, "token", "rotate")
	cmd.Env = append(append([]string(nil), env...), "CORRAL_HOME="+dataDir)
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("corral token rotate: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// LoginURL returns a URL that logs a browser in to the dashboard at base: a
// fresh one-time link from `corral login-link` (the one `corral serve`
// prints is spent or revoked once APIToken has rotated the token), or, for
// a corral without that command, base/?token=urlToken.
func LoginURL(corralBin, dataDir string, env []string, base, urlToken string) (string, error) {
	if _, err := exec.Command(corralBin, "login-link", "--help").CombinedOutput(); err != nil {
		return base + "/?token=" + urlToken, nil
	}
	cmd := exec.Command(corralBin, "login-link")
	cmd.Env = append(append([]string(nil), env...), "CORRAL_HOME="+dataDir)
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("corral login-link: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// CleanEnv is the current environment without the variables that would tie
// a child to an outer tmux, Claude or corral.
func CleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "TMUX" || k == "TMUX_PANE" || strings.HasPrefix(k, "CORRAL_") || strings.HasPrefix(k, "CLAUDE") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// WriteOutput prints md and, when path is set, writes it there too.
func WriteOutput(path, md string) error {
	fmt.Print(md)
	if path == "" {
		return nil
	}
	return os.WriteFile(path, []byte(md), 0o644)
}

func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// Mem is a process's memory and threads, from /proc/<pid>/status.
type Mem struct {
	RSS, HWM int64 // VmRSS and VmHWM, bytes
	Threads  int
}

// ReadMem reads VmRSS, VmHWM and Threads of a process.
func ReadMem(pid int) (Mem, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return Mem{}, err
	}
	defer f.Close()
	var m Mem
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		fs := strings.Fields(v)
		if len(fs) == 0 {
			continue
		}
		n, _ := strconv.ParseInt(fs[0], 10, 64)
		switch k {
		case "VmRSS":
			m.RSS = n << 10
		case "VmHWM":
			m.HWM = n << 10
		case "Threads":
			m.Threads = int(n)
		}
	}
	return m, sc.Err()
}

// ClaudeRig is what a benchmark of real Claude sessions starts from: a
// temporary root holding a project and a data directory, the fake model
// API, and an isolated Claude home that trusts the project.
type ClaudeRig struct {
	Root, Proj, DataDir string
	Fake                *fakeapi.Server
	Claude              *claudeenv.Env
}

// NewClaudeRig makes a ClaudeRig under a new temporary directory named
// after prefix; t's cleanups remove it and stop the fake API.
func NewClaudeRig(t *TB, prefix string) (*ClaudeRig, error) {
	r := &ClaudeRig{Root: t.MkdirTemp(prefix)}
	r.Proj = filepath.Join(r.Root, "proj")
	r.DataDir = filepath.Join(r.Root, "data")
	for _, d := range []string{r.Proj, r.DataDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	r.Fake = fakeapi.New(fakeapi.Options{ToolDir: r.Proj})
	if err := r.Fake.Listen(); err != nil {
		return nil, err
	}
	t.Cleanup(r.Fake.Close)
	r.Claude = claudeenv.New(t, claudeenv.Options{BaseURL: r.Fake.URL(), Trust: []string{r.Proj}})
	return r, nil
}

// Sleep waits d, or less when ctx ends first; it reports whether it slept
// the whole time.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// LoadAvg is /proc/loadavg's first three fields.
func LoadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
