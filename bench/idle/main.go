// Command idle measures what the corral daemon costs while its sessions sit
// idle: CPU, memory, threads and wakeups of the `corral serve` process
// alone (not claude, not tmux), first with no session and then with
// -sessions real Claude Code sessions started by corral against the fake
// model API and waited until idle. For each case it takes two windows:
//
//  1. untraced: CPU (utime+stime from /proc/<pid>/stat), context switches
//     of every thread, VmRSS/VmHWM/threads, smaps_rollup, and the Go heap
//     from the last GODEBUG=gctrace=1 line;
//  2. under `strace -f -tt`: every syscall of the daemon's threads, and
//     every process it spawns (argv and time), to show what it polls and
//     how often.
//
// Run it through bench/idle.sh, which builds corral and installs strace if
// it is missing.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/corral-dev/corral/bench/internal/benchutil"
	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/testkit/claudeenv"
)

type config struct {
	corral, out  string
	keep         string
	sessions     int
	parallel     int
	window       time.Duration
	settle       time.Duration
	settleZero   time.Duration
	strace       bool
	prompt       bool
	startTimeout time.Duration
	skipZero     bool
}

func main() {
	var c config
	flag.StringVar(&c.corral, "corral", "", "corral binary (required)")
	flag.StringVar(&c.out, "out", "", "also write the markdown report here")
	flag.StringVar(&c.keep, "keep", "", "copy the strace outputs and the daemon's log into this directory")
	flag.IntVar(&c.sessions, "sessions", 20, "idle Claude sessions")
	flag.IntVar(&c.parallel, "parallel", 4, "sessions started at a time")
	flag.DurationVar(&c.window, "window", 60*time.Second, "length of each measurement window")
	flag.DurationVar(&c.settle, "settle", 65*time.Second, "wait after the last session is idle before measuring (Claude sends an idle_prompt Notification 60 s after its last turn)")
	flag.DurationVar(&c.settleZero, "settle-zero", 10*time.Second, "wait after the daemon starts before measuring the no-session case")
	flag.BoolVar(&c.strace, "strace", true, "take the second, traced window")
	flag.BoolVar(&c.prompt, "prompt", false, "give each session one prompt (and mark it viewed) before it idles, so it has a transcript")
	flag.DurationVar(&c.startTimeout, "start-timeout", 120*time.Second, "give up on a session that is not idle after this long")
	flag.BoolVar(&c.skipZero, "skip-zero", false, "skip the no-session case")
	flag.Parse()
	if c.corral == "" {
		fmt.Fprintln(os.Stderr, "idle: -corral is required (use bench/idle.sh)")
		os.Exit(2)
	}
	os.Exit(benchutil.Run(func(ctx context.Context, t *benchutil.TB) error { return run(ctx, t, c) }))
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "idle: "+format+"\n", args...)
}

// result is one case (0 or N sessions).
type result struct {
	sessions   int
	cpu        cpuWindow
	trace      *traceWindow
	hooks      int // hook deliveries the daemon logged during the windows
	apiReqs    int // requests to the fake API during the windows
	heap       gcLine
	claudeRSS  int64 // KiB, all claude processes, for context
	ids        []string
	windowEnd  time.Time
	startSpent time.Duration
}

func run(ctx context.Context, t *benchutil.TB, c config) error {
	if _, err := exec.LookPath("tmux"); err != nil {
		return errors.New("tmux not found (apt-get install -y tmux)")
	}
	if _, err := claudeenv.ClaudePath(); err != nil {
		return err
	}
	if c.strace {
		if _, err := exec.LookPath("strace"); err != nil {
			return errors.New("strace not found (apt-get install -y strace), or pass -strace=false")
		}
	}
	corralBin, err := filepath.Abs(c.corral)
	if err != nil {
		return err
	}
	machine := benchutil.Machine()
	rig, err := benchutil.NewClaudeRig(t, "cidle-")
	if err != nil {
		return err
	}
	root, proj, dataDir, fake, cenv := rig.Root, rig.Proj, rig.DataDir, rig.Fake, rig.Claude
	// gctrace makes the daemon print its heap at every GC. The daemon's
	// environment reaches the sessions too; claude ignores it, and a
	// `corral-hook` process never allocates enough to run a GC.
	env := append(cenv.Environ(), "GODEBUG=gctrace=1")
	logPath := filepath.Join(root, "serve.log")
	serveStart := time.Now()
	serve := benchutil.StartServe(t, corralBin, dataDir, proj, env, logPath, "--log-level", "debug")
	pid := serve.PID()
	logf("corral serve pid %d", pid)
	// The sessions die with their tmux server at cleanup (StartServe
	// kills it); claudeenv then waits for every process using its HOME.

	var results []result
	measure := func(n int, startSpent time.Duration) error {
		r := result{sessions: n, startSpent: startSpent}
		req0 := fake.LastSeq()
		log0 := time.Now()
		logf("%d sessions: window 1 (untraced, %v)", n, c.window)
		w, err := cpuMeasure(ctx, pid, c.window)
		if err != nil {
			return err
		}
		r.cpu = w
		r.windowEnd = time.Now()
		r.heap = lastGC(logPath, serveStart, r.windowEnd)
		if c.strace {
			logf("%d sessions: window 2 (strace -f, %v)", n, c.window)
			tw, err := traceMeasure(ctx, root, pid, c.window)
			if err != nil {
				return err
			}
			r.trace = tw
		}
		r.hooks = countHooks(logPath, log0)
		r.apiReqs = fake.LastSeq() - req0
		r.claudeRSS = claudeRSS(ctx, serve.Client)
		if list, err := serve.Client.Sessions(ctx); err == nil {
			for _, s := range list {
				r.ids = append(r.ids, s.ID)
			}
		}
		results = append(results, r)
		return nil
	}

	if !c.skipZero {
		logf("no sessions: settling %v", c.settleZero)
		if !benchutil.Sleep(ctx, c.settleZero) {
			return ctx.Err()
		}
		if err := measure(0, 0); err != nil {
			return err
		}
	}

	if c.sessions > 0 {
		t0 := time.Now()
		if err := startSessions(ctx, serve, proj, c); err != nil {
			return err
		}
		spent := time.Since(t0)
		logf("%d sessions idle after %v; settling %v", c.sessions, spent.Round(time.Second), c.settle)
		if !benchutil.Sleep(ctx, c.settle) {
			return ctx.Err()
		}
		// Still all idle?
		list, err := serve.Client.Sessions(ctx)
		if err != nil {
			return err
		}
		for _, s := range list {
			if s.Status != api.StatusIdle {
				logf("warning: session %s is %s before the window", s.ID, s.Status)
			}
		}
		if err := measure(c.sessions, spent); err != nil {
			return err
		}
		list, _ = serve.Client.Sessions(ctx)
		for _, s := range list {
			if s.Status != api.StatusIdle {
				logf("warning: session %s is %s after the windows", s.ID, s.Status)
			}
		}
	}
	if c.keep != "" {
		if err := os.MkdirAll(c.keep, 0o755); err != nil {
			return err
		}
		files, _ := filepath.Glob(filepath.Join(root, "strace-*.txt"))
		for _, f := range append(files, logPath) {
			if b, err := os.ReadFile(f); err == nil {
				os.WriteFile(filepath.Join(c.keep, filepath.Base(f)), b, 0o644)
			}
		}
	}
	return benchutil.WriteOutput(c.out, report(c, machine, results))
}

// startSessions starts c.sessions claude sessions, c.parallel at a time,
// each waited until idle.
func startSessions(ctx context.Context, serve *benchutil.Serve, proj string, c config) error {
	sem := make(chan struct{}, c.parallel)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for i := range c.sessions {
		if ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := startOne(ctx, serve, proj, i, c); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return ctx.Err()
}

func startOne(ctx context.Context, serve *benchutil.Serve, proj string, i int, c config) error {
	// `corral new`, as a person would start one.
	cmd := exec.CommandContext(ctx, serve.Cmd.Path, "new", "--dir", proj, "--name", fmt.Sprintf("idle-%02d", i))
	cmd.Env = serve.Cmd.Env
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("corral new: %w", err)
	}
	id := strings.TrimSpace(string(out))
	if err := waitStatus(ctx, serve, id, api.StatusIdle, c.startTimeout); err != nil {
		return err
	}
	if c.prompt {
		if err := serve.Client.SendText(ctx, id, "say hello", true); err != nil {
			return err
		}
		if err := waitStatus(ctx, serve, id, api.StatusReview, c.startTimeout); err != nil {
			return err
		}
		if err := serve.Client.Viewed(ctx, id); err != nil {
			return err
		}
		if err := waitStatus(ctx, serve, id, api.StatusIdle, c.startTimeout); err != nil {
			return err
		}
	}
	logf("session %d (%s) idle", i, id)
	return nil
}

func waitStatus(ctx context.Context, serve *benchutil.Serve, id string, st api.Status, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	last := api.Status("")
	for time.Now().Before(deadline) {
		s, err := serve.Client.Session(ctx, id)
		if err == nil {
			last = s.Status
			if s.Status == st {
				return nil
			}
		}
		if !benchutil.Sleep(ctx, 250*time.Millisecond) {
			return ctx.Err()
		}
	}
	return fmt.Errorf("session %s not %s after %v (last %s)", id, st, timeout, last)
}

// cpuWindow is what /proc says about the daemon over one window.
type cpuWindow struct {
	wall            time.Duration
	ticks           uint64 // utime+stime delta, in USER_HZ (1/100 s)
	vol, nonvol     uint64 // context switches of all threads, delta
	threadsBegin    int
	threadsEnd      int
	rss, hwm        int64 // KiB at the end
	rssBegin        int64
	anon, file      int64 // KiB, smaps_rollup at the end
	childTicks      uint64
	cpuSampleSpread []float64 // % of one core per 10 s slice
	// runNs is the CPU time of the daemon's threads from
	// /proc/<pid>/task/*/schedstat (ns resolution; a thread that exits
	// during the window takes its time with it).
	runNs uint64
}

func schedNs(pid int) uint64 {
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	var sum uint64
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, t.Name()))
		if err != nil {
			continue
		}
		f := strings.Fields(string(b))
		if len(f) > 0 {
			n, _ := strconv.ParseUint(f[0], 10, 64)
			sum += n
		}
	}
	return sum
}

const userHZ = 100 // USER_HZ: the unit of /proc/<pid>/stat times on Linux

type statSnap struct {
	utime, stime, cutime, cstime, minflt uint64
}

func readPidStat(pid int) (statSnap, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return statSnap{}, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return statSnap{}, errors.New("bad stat")
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); field n is f[n-3].
	num := func(n int) uint64 { v, _ := strconv.ParseUint(f[n-3], 10, 64); return v }
	return statSnap{utime: num(14), stime: num(15), cutime: num(16), cstime: num(17), minflt: num(10)}, nil
}

func statusFields(pid int) map[string]int64 {
	out := map[string]int64{}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		if n, err := strconv.ParseInt(f[0], 10, 64); err == nil {
			out[k] = n
		}
	}
	return out
}

func ctxSwitches(pid int) (vol, nonvol uint64) {
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		st := statusFields(tid)
		vol += uint64(st["voluntary_ctxt_switches"])
		nonvol += uint64(st["nonvoluntary_ctxt_switches"])
	}
	return
}

func smapsRollup(pid int) (anon, file int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return -1, -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		n, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "Anonymous:":
			anon = n
		case "Rss:":
			file += n
		}
	}
	return anon, file - anon
}

func cpuMeasure(ctx context.Context, pid int, window time.Duration) (cpuWindow, error) {
	var w cpuWindow
	s0, err := readPidStat(pid)
	if err != nil {
		return w, err
	}
	v0, n0 := ctxSwitches(pid)
	ns0 := schedNs(pid)
	st0 := statusFields(pid)
	w.threadsBegin = int(st0["Threads"])
	w.rssBegin = st0["VmRSS"]
	t0 := time.Now()
	// Slices of 10 s show whether the cost is steady or bursty; reading
	// /proc costs the daemon nothing.
	prev := s0
	prevNs := ns0
	slice := 10 * time.Second
	for elapsed := time.Duration(0); elapsed < window; {
		d := min(slice, window-elapsed)
		if !benchutil.Sleep(ctx, d) {
			return w, ctx.Err()
		}
		elapsed += d
		s, err := readPidStat(pid)
		if err != nil {
			return w, err
		}
		ns := schedNs(pid)
		w.cpuSampleSpread = append(w.cpuSampleSpread, float64(ns-prevNs)/1e9/d.Seconds()*100)
		prev, prevNs = s, ns
	}
	w.wall = time.Since(t0)
	s1 := prev
	v1, n1 := ctxSwitches(pid)
	w.runNs = schedNs(pid) - ns0
	st1 := statusFields(pid)
	w.ticks = (s1.utime + s1.stime) - (s0.utime + s0.stime)
	w.childTicks = (s1.cutime + s1.cstime) - (s0.cutime + s0.cstime)
	w.vol, w.nonvol = v1-v0, n1-n0
	w.threadsEnd = int(st1["Threads"])
	w.rss, w.hwm = st1["VmRSS"], st1["VmHWM"]
	w.anon, w.file = smapsRollup(pid)
	return w, nil
}

func (w cpuWindow) percent() float64 {
	return float64(w.ticks) / userHZ / w.wall.Seconds() * 100
}

func (w cpuWindow) schedPercent() float64 {
	return float64(w.runNs) / 1e9 / w.wall.Seconds() * 100
}

// traceWindow is what strace saw.
type traceWindow struct {
	wall      time.Duration
	threads   int            // daemon threads seen
	syscalls  map[string]int // daemon threads only
	total     int
	execs     []execRec
	procOpens map[string]int // /proc/<pid>/... opened by the daemon, by pid
	procAt    map[string][]time.Time
	callAt    []time.Time // every daemon syscall
}

type execRec struct {
	at   time.Time
	argv string
}

var (
	lineRE = regexp.MustCompile(`^(\d+)\s+(\d\d:\d\d:\d\d\.\d+)\s+(.*)$`)
	callRE = regexp.MustCompile(`^([a-z_0-9]+)\(`)
	openRE = regexp.MustCompile(`^openat\([^,]+, "([^"]*)"`)
	procRE = regexp.MustCompile(`^/proc/(\d+|self)/`)
	execRE = regexp.MustCompile(`^execve\("([^"]*)", \[(.*?)\]`)
)

func traceMeasure(ctx context.Context, dir string, pid int, window time.Duration) (*traceWindow, error) {
	out := filepath.Join(dir, fmt.Sprintf("strace-%d-%d.txt", pid, time.Now().Unix()))
	cctx, cancel := context.WithTimeout(ctx, window+30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(cctx, "strace", "-f", "-tt", "-qq", "-s", "256", "-o", out, "-p", strconv.Itoa(pid))
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	// strace attaches within a few ms; give it a moment before the clock starts.
	time.Sleep(300 * time.Millisecond)
	t0 := time.Now()
	ok := benchutil.Sleep(ctx, window)
	wall := time.Since(t0)
	cmd.Process.Signal(syscall.SIGINT) // detach
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		<-done
	}
	if !ok {
		return nil, ctx.Err()
	}
	tw, err := parseTrace(out, t0, t0.Add(wall))
	if err != nil {
		return nil, err
	}
	tw.wall = wall
	return tw, nil
}

func parseTrace(path string, from, to time.Time) (*traceWindow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	type line struct {
		pid  string
		at   time.Time
		rest string
	}
	var lines []line
	children := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := lineRE.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		tod, err := time.ParseInLocation("15:04:05.000000", m[2], time.Local)
		if err != nil {
			continue
		}
		// strace -tt prints the local time of day.
		y, mo, d := from.In(time.Local).Date()
		at := time.Date(y, mo, d, tod.Hour(), tod.Minute(), tod.Second(), tod.Nanosecond(), time.Local)
		lines = append(lines, line{m[1], at, m[3]})
		if strings.HasPrefix(m[3], "execve(") {
			children[m[1]] = true
		}
	}
	tw := &traceWindow{syscalls: map[string]int{}, procOpens: map[string]int{}, procAt: map[string][]time.Time{}}
	threads := map[string]bool{}
	for _, l := range lines {
		if l.at.Before(from) || l.at.After(to) {
			continue
		}
		if strings.HasPrefix(l.rest, "<...") || strings.HasPrefix(l.rest, "+++") || strings.HasPrefix(l.rest, "---") {
			continue
		}
		if children[l.pid] {
			if m := execRE.FindStringSubmatch(l.rest); m != nil {
				tw.execs = append(tw.execs, execRec{l.at, m[2]})
			}
			continue
		}
		m := callRE.FindStringSubmatch(l.rest)
		if m == nil {
			continue
		}
		threads[l.pid] = true
		tw.callAt = append(tw.callAt, l.at)
		tw.syscalls[m[1]]++
		tw.total++
		if om := openRE.FindStringSubmatch(l.rest); om != nil {
			if pm := procRE.FindStringSubmatch(om[1]); pm != nil {
				tw.procOpens[pm[1]]++
				tw.procAt[pm[1]] = append(tw.procAt[pm[1]], l.at)
			}
		}
	}
	tw.threads = len(threads)
	return tw, nil
}

// execKind shortens a spawned argv to its program and, for tmux, its
// command.
func execKind(argv string) string {
	var args []string
	for _, a := range strings.Split(argv, `", "`) {
		args = append(args, strings.Trim(a, `"`))
	}
	if len(args) == 0 {
		return argv
	}
	prog := filepath.Base(args[0])
	if prog != "tmux" {
		return prog
	}
	for i := 1; i < len(args); i++ {
		switch args[i] {
		case "-S", "-f", "-L":
			i++
			continue
		}
		if strings.HasPrefix(args[i], "-") {
			continue
		}
		return "tmux " + args[i]
	}
	return "tmux"
}

// bursts groups sorted times into bursts separated by more than gap and
// returns the start of each.
func bursts(at []time.Time, gap time.Duration) []time.Time {
	var out []time.Time
	for i, t := range at {
		if i == 0 || t.Sub(at[i-1]) > gap {
			out = append(out, t)
		}
	}
	return out
}

func intervals(at []time.Time) []float64 {
	var out []float64
	for i := 1; i < len(at); i++ {
		out = append(out, at[i].Sub(at[i-1]).Seconds())
	}
	return out
}

func rangeStr(xs []float64, unit string) string {
	if len(xs) == 0 {
		return "—"
	}
	s := benchutil.Summarize(xs)
	return fmt.Sprintf("median %.1f%s (%.1f..%.1f)", s.Median, unit, s.Min, s.Max)
}

// gcLine is one GODEBUG=gctrace=1 line.
type gcLine struct {
	ok                   bool
	n                    int
	at                   time.Time
	before, after, live  float64 // MB: heap at GC start, at GC end, live heap marked
	goal, stacks, global float64
}

var gcRE = regexp.MustCompile(`^gc (\d+) @([0-9.]+)s .*? ([0-9.]+)->([0-9.]+)->([0-9.]+) MB, ([0-9.]+) MB goal, ([0-9.]+) MB stacks, ([0-9.]+) MB globals`)

func lastGC(logPath string, start, before time.Time) gcLine {
	f, err := os.Open(logPath)
	if err != nil {
		return gcLine{}
	}
	defer f.Close()
	var last gcLine
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := gcRE.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		p := func(i int) float64 { v, _ := strconv.ParseFloat(m[i], 64); return v }
		n, _ := strconv.Atoi(m[1])
		g := gcLine{ok: true, n: n, at: start.Add(time.Duration(p(2) * float64(time.Second))),
			before: p(3), after: p(4), live: p(5), goal: p(6), stacks: p(7), global: p(8)}
		if g.at.After(before) {
			break
		}
		last = g
	}
	return last
}

// countHooks counts the hook deliveries the daemon logged (debug level)
// since t0.
func countHooks(logPath string, t0 time.Time) int {
	f, err := os.Open(logPath)
	if err != nil {
		return -1
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, " msg=hook ") {
			continue
		}
		ts, _, _ := strings.Cut(strings.TrimPrefix(line, "time="), " ")
		at, err := time.Parse(time.RFC3339Nano, ts)
		if err == nil && !at.Before(t0) {
			n++
		}
	}
	return n
}

func claudeRSS(ctx context.Context, c interface {
	Sessions(context.Context) ([]api.Session, error)
}) int64 {
	list, err := c.Sessions(ctx)
	if err != nil {
		return -1
	}
	var sum int64
	for _, s := range list {
		if s.ClaudePID > 0 {
			sum += statusFields(s.ClaudePID)["VmRSS"]
		}
	}
	return sum
}

func report(c config, machine string, rs []result) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("## Idle daemon (`bench/idle.sh`)\n\n%s\n", machine)
	w("- run at %s; windows of %v; the %d sessions were started %d at a time with `corral new` (real claude, fake model API), each waited until idle",
		time.Now().Format(time.RFC3339), c.window, c.sessions, c.parallel)
	if c.prompt {
		w(", given one prompt and marked viewed")
	}
	w(", then left alone for %v before the first window (no-session case: %v after start).\n", c.settle, c.settleZero)
	for _, r := range rs {
		if r.sessions > 0 {
			w("- starting the %d sessions took %v.\n", r.sessions, r.startSpent.Round(time.Second))
		}
	}
	w("- only the `corral serve` process is measured (all its threads); claude, tmux and the hook processes are not.\n\n")

	w("### Window 1: untraced\n\n")
	w("%s", "| sessions | CPU, % of one core (utime+stime, 10 ms ticks) | CPU, % of one core (schedstat, ns) | CPU per 10 s slice (schedstat), min..max % | CPU s in window (schedstat) | context switches/s (vol+invol, all threads) | VmRSS MiB (start→end) | VmHWM MiB | anon / file-backed RSS MiB | Go heap (last GC before the end: live→goal) | threads |\n")
	w("%s", "|---:|---:|---:|---|---:|---:|---|---:|---|---|---:|\n")
	for _, r := range rs {
		cw := r.cpu
		sp := benchutil.Summarize(cw.cpuSampleSpread)
		heap := "no GC since start (heap never reached the first 4 MB goal)"
		if r.heap.ok {
			heap = fmt.Sprintf("%g MB live (%g → %g MB at GC), %g MB goal; gc #%d, %s before the end", r.heap.live, r.heap.before, r.heap.after,
				r.heap.goal, r.heap.n, r.windowEnd.Sub(r.heap.at).Round(time.Second))
		}
		w("| %d | %.3f | %.4f | %.3f..%.3f | %.3f | %.1f | %.1f → %.1f | %.1f | %.1f / %.1f | %s | %d→%d |\n",
			r.sessions, cw.percent(), cw.schedPercent(), sp.Min, sp.Max, float64(cw.runNs)/1e9,
			float64(cw.vol+cw.nonvol)/cw.wall.Seconds(),
			float64(cw.rssBegin)/1024, float64(cw.rss)/1024, float64(cw.hwm)/1024,
			float64(cw.anon)/1024, float64(cw.file)/1024, heap, cw.threadsBegin, cw.threadsEnd)
	}
	w("\n")
	w("| sessions | hook deliveries logged during both windows | fake-API requests during both windows | CPU of reaped children (tmux clients) in window 1, s | all claude processes' RSS (context) |\n|---:|---:|---:|---:|---:|\n")
	for _, r := range rs {
		rss := "—"
		if r.sessions > 0 && r.claudeRSS > 0 {
			rss = fmt.Sprintf("%.0f MiB (%.0f MiB each)", float64(r.claudeRSS)/1024, float64(r.claudeRSS)/1024/float64(r.sessions))
		}
		w("| %d | %d | %d | %.2f | %s |\n", r.sessions, r.hooks, r.apiReqs, float64(r.cpu.childTicks)/userHZ, rss)
	}
	w("\n")

	if c.strace {
		w("### Window 2: under `strace -f`\n\n")
		w("What the daemon's own threads did (system calls; the spawned tmux processes' own calls excluded), " +
			"which processes it spawned, and how its activity clusters in time (a *burst* is a run of system calls with no gap over 200 ms; " +
			"a *reconcile* is a run of spawns with no gap over 1 s):\n\n")
		w("| sessions | syscalls/s | top syscalls (count in window) | activity bursts: count, interval s | processes spawned | reconciles: count, interval s, spawns each | spawned commands (count) | /proc/<pid> reads: pids, opens per pid, interval s |\n")
		w("|---:|---:|---|---|---:|---|---|---|\n")
		for _, r := range rs {
			tw := r.trace
			if tw == nil {
				continue
			}
			type kv struct {
				k string
				v int
			}
			var top []kv
			for k, v := range tw.syscalls {
				top = append(top, kv{k, v})
			}
			sort.Slice(top, func(i, j int) bool { return top[i].v > top[j].v || top[i].v == top[j].v && top[i].k < top[j].k })
			var ts []string
			for _, x := range top[:min(8, len(top))] {
				ts = append(ts, fmt.Sprintf("%s %d", x.k, x.v))
			}
			act := bursts(tw.callAt, 200*time.Millisecond)
			var execAt []time.Time
			byKind := map[string]int{}
			for _, e := range tw.execs {
				execAt = append(execAt, e.at)
				byKind[execKind(e.argv)]++
			}
			rec := bursts(execAt, time.Second)
			var kinds []string
			for k, n := range byKind {
				kinds = append(kinds, fmt.Sprintf("`%s` ×%d", k, n))
			}
			sort.Strings(kinds)
			spawnsEach := "—"
			if len(rec) > 0 {
				spawnsEach = fmt.Sprintf("%.1f", float64(len(tw.execs))/float64(len(rec)))
			}
			var per, gaps []float64
			for _, at := range tw.procAt {
				per = append(per, float64(len(at)))
				gaps = append(gaps, intervals(bursts(at, time.Second))...)
			}
			procs := "none"
			if len(per) > 0 {
				ps := benchutil.Summarize(per)
				procs = fmt.Sprintf("%d pids; %.0f..%.0f opens each; %s", ps.N, ps.Min, ps.Max, rangeStr(gaps, ""))
			}
			w("| %d | %.1f | %s | %d; %s | %d | %d; %s; %s | %s | %s |\n", r.sessions, float64(tw.total)/tw.wall.Seconds(), strings.Join(ts, ", "),
				len(act), rangeStr(intervals(act), ""), len(tw.execs), len(rec), rangeStr(intervals(rec), ""), spawnsEach,
				strings.Join(kinds, ", "), procs)
		}
		w("\n")
	}

	w("%s", "### Targets\n\n| target | measured | met? |\n|---|---|---|\n")
	for _, r := range rs {
		if r.sessions == 0 {
			continue
		}
		w("| < 1%% of one core with %d idle sessions | %.3f%% (schedstat), %.3f%% (utime+stime) | %s |\n", r.sessions, r.cpu.schedPercent(), r.cpu.percent(),
			yes(r.cpu.percent() < 1 && r.cpu.schedPercent() < 1))
		w("| < 40 MB memory with %d idle sessions (VmRSS at the end; VmHWM = peak since start) | VmRSS %.1f MiB (%.1f MB), VmHWM %.1f MiB (%.1f MB) | %s |\n", r.sessions,
			float64(r.cpu.rss)/1024, float64(r.cpu.rss)*1024/1e6, float64(r.cpu.hwm)/1024, float64(r.cpu.hwm)*1024/1e6,
			yesNote(float64(r.cpu.rss)*1024/1e6 < 40, float64(r.cpu.hwm)*1024/1e6 < 40))
		if r.trace != nil {
			w("| nothing polled per session faster than every 10 s | %s | %s |\n", pollVerdict(r), yes(pollOK(r)))
		}
	}
	w("\nRerun: `bench/idle.sh -sessions %d -parallel %d -window %v -settle %v`\n", c.sessions, c.parallel, c.window, c.settle)
	return b.String()
}

// pollOK: spawns come in reconciles at least ~10 s apart (1 s of slack
// for timer jitter), no spawned command names a session, and no process's
// /proc files are read in bursts less than ~10 s apart.
func pollOK(r result) bool {
	v := pollCheck(r)
	return v.minReconcileGap >= 9 && v.perSession == 0 && (v.minProcGap == 0 || v.minProcGap >= 9)
}

type pollFacts struct {
	spawns, reconciles, perSession int
	minReconcileGap, minProcGap    float64
	spawnsEach                     float64
}

func pollCheck(r result) pollFacts {
	tw := r.trace
	var f pollFacts
	var execAt []time.Time
	for _, e := range tw.execs {
		execAt = append(execAt, e.at)
		for _, id := range r.ids {
			if strings.Contains(e.argv, id) {
				f.perSession++
				break
			}
		}
	}
	rec := bursts(execAt, time.Second)
	f.spawns, f.reconciles = len(tw.execs), len(rec)
	if len(rec) > 0 {
		f.spawnsEach = float64(len(tw.execs)) / float64(len(rec))
	}
	f.minReconcileGap = 1e9
	for _, g := range intervals(rec) {
		f.minReconcileGap = min(f.minReconcileGap, g)
	}
	for _, at := range tw.procAt {
		for _, g := range intervals(bursts(at, time.Second)) {
			if f.minProcGap == 0 || g < f.minProcGap {
				f.minProcGap = g
			}
		}
	}
	return f
}

func pollVerdict(r result) string {
	f := pollCheck(r)
	gap := "—"
	if f.reconciles > 1 {
		gap = fmt.Sprintf("%.1f s", f.minReconcileGap)
	}
	proc := "no /proc reads"
	if f.minProcGap > 0 {
		proc = fmt.Sprintf("shortest interval between reads of one process's /proc files %.1f s", f.minProcGap)
	}
	return fmt.Sprintf("%d spawns in %d reconciles (%.1f each, shortest interval %s), %d naming a session; %s",
		f.spawns, f.reconciles, f.spawnsEach, gap, f.perSession, proc)
}

func yes(ok bool) string {
	if ok {
		return "**yes**"
	}
	return "**no (missed)**"
}

func yesNote(now, peak bool) string {
	switch {
	case now && peak:
		return "**yes**"
	case now:
		return "**yes** at idle (the peak while starting sessions was higher)"
	}
	return "**no (missed)**"
}
