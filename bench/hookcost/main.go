// Command hookcost measures what one Claude Code hook costs Claude: the time
// from spawning `/bin/sh -c "<command>"` (with a real hook payload on stdin,
// the way Claude runs hooks) to that process's exit, for corral's hook and
// for the common alternative, a sh script posting the payload with curl to a
// local HTTP receiver, plus the floor (sh alone, /bin/true, an empty Go
// binary).
//
// Calls run back to back (interleaved in blocks so that drift hits every
// command alike) and spaced out (one call every -gap, interleaved). It prints
// a markdown report. Run it through bench/hookcost.sh, which builds what it
// needs:
//
//	bench/hookcost.sh [-n 300] [-spaced 30] [-out docs/x.md]
package main

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/corral-dev/corral/bench/internal/benchutil"
	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/claude/hooks"
	"github.com/corral-dev/corral/internal/shellquote"
)

type config struct {
	corral, empty, payloads, curl, out string
	corralStatic, corralHook, altHook  string
	n, block, spaced, initRuns         int
	gap                                time.Duration
}

func main() {
	var c config
	receiver := flag.Bool("receiver", false, "internal: run the HTTP receiver the curl script posts to")
	flag.StringVar(&c.corral, "corral", "", "corral binary (required)")
	flag.StringVar(&c.empty, "empty", "", "an empty Go binary (package main; func main() {}) built like corral (required)")
	flag.StringVar(&c.payloads, "payloads", "testdata/claude-code-2.1.197/hooks.jsonl", "hook payloads, one JSON object a line; calls rotate through them")
	flag.StringVar(&c.curl, "curl", "curl", "curl binary for the script")
	flag.StringVar(&c.out, "out", "", "also write the markdown report here")
	flag.IntVar(&c.n, "n", 300, "back-to-back calls per command")
	flag.IntVar(&c.block, "block", 10, "calls per block in the back-to-back phase")
	flag.IntVar(&c.spaced, "spaced", 30, "spaced-out calls per command (0: skip)")
	flag.DurationVar(&c.gap, "gap", time.Second, "pause before each spaced-out call")
	flag.IntVar(&c.initRuns, "inittrace", 20, "runs of corral hook with GODEBUG=inittrace=1")
	flag.StringVar(&c.corralStatic, "corral-static", "", "what-if: corral built with CGO_ENABLED=0 (optional)")
	flag.StringVar(&c.corralHook, "corral-hook", "", "the corral-hook binary Claude runs (required)")
	flag.StringVar(&c.altHook, "alt-hook", "", "what-if: another build of corral-hook, measured routed beside it (an A/B of a change in one run; optional)")
	flag.Parse()
	if *receiver {
		runReceiver()
		return
	}
	if c.corral == "" || c.empty == "" || c.corralHook == "" {
		fmt.Fprintln(os.Stderr, "hookcost: -corral, -corral-hook and -empty are required (use bench/hookcost.sh)")
		os.Exit(2)
	}
	os.Exit(benchutil.Run(func(ctx context.Context, t *benchutil.TB) error { return run(ctx, t, c) }))
}

// variant is one command measured.
type variant struct {
	name string
	cmd  string
	// argv, when set, is spawned directly instead of `sh -c cmd` (Claude's
	// exec form of a hook, "command" + "args").
	argv []string
	env  []string
	// dest is where the payload goes: destUnrouted, destRouted, destHTTP or
	// "" (nowhere).
	dest   string
	whatIf bool
}

const (
	destUnrouted = "unrouted"
	destRouted   = "routed"
	destHTTP     = "http"
)

// sample is one call.
type sample struct {
	wall        time.Duration
	cpu         time.Duration // user+sys of sh and everything it waited for
	minflt      int64
	failed      bool
	wroteStdout bool
	// logged: the daemon logs this payload's event when routed (it maps
	// every event but SubagentStop to a status event, and logs those).
	logged bool
}

func run(ctx context.Context, t *benchutil.TB, c config) error {
	payloads, err := readPayloads(c.payloads)
	if err != nil {
		return err
	}
	for _, p := range []*string{&c.corral, &c.empty, &c.corralStatic, &c.corralHook, &c.altHook} {
		if *p == "" {
			continue
		}
		if *p, err = filepath.Abs(*p); err != nil {
			return err
		}
	}
	curlPath, err := exec.LookPath(c.curl)
	if err != nil {
		return fmt.Errorf("curl not found (apt-get install -y curl): %w", err)
	}

	root := t.MkdirTemp("chc-")
	home := filepath.Join(root, "home")
	dataDir := filepath.Join(root, "data")
	proj := filepath.Join(root, "proj")
	for _, d := range []string{home, dataDir, proj} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	base := append(benchutil.CleanEnv(), "HOME="+home)

	// The daemon, with its own data dir and HOME. Debug logging lets the
	// bench count deliveries afterwards.
	serve := benchutil.StartServe(t, c.corral, dataDir, proj, base, filepath.Join(root, "serve.log"), "--log-level", "debug")

	// The HTTP receiver, a process of its own like the daemon.
	recv, recvURL := startReceiver(t)

	script := filepath.Join(root, "hook.sh")
	body := "#!/bin/sh\n" + shellquote.Quote(curlPath) + " -s -m 2 -X POST -H 'Content-Type: application/json' --data-binary @- " + recvURL + "/hook >/dev/null\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		return err
	}

	// What Claude adds to a hook's environment (docs/claude-observations.md §2).
	hookEnv := append(append([]string(nil), base...),
		"CLAUDE_PROJECT_DIR="+proj, "CLAUDE_CODE_SESSION_ID=bcc27dbc-b3d2-457e-9e21-34e69eba33f2",
		"CLAUDECODE=1", "CLAUDE_CODE_ENTRYPOINT=cli", "CLAUDE_CODE_CHILD_SESSION=1",
		"AI_AGENT=claude-code_2-1-197_harness", "COLUMNS=140", "LINES=40")

	hookArgs := []string{"hook", "--data-dir", dataDir}
	hookCmd := shellquote.Join(append([]string{c.corral}, hookArgs...)...)
	// What Claude runs (the settings corral writes): corral-hook in exec
	// form, with the data directory and the ownership marker.
	shipped := []string{c.corralHook, "--data-dir", dataDir, hooks.OwnArg}
	s, err := serve.Client.Create(ctx, api.CreateRequest{Dir: proj, Shell: true, Name: "hookbench"})
	if err != nil {
		return fmt.Errorf("create a shell session: %w", err)
	}
	routedID := s.ID
	routedEnv := append(append([]string(nil), hookEnv...), "CORRAL_SESSION="+routedID)
	variants := []variant{
		{name: "`true` (sh builtin: sh alone)", cmd: "true"},
		{name: "`/bin/true`", cmd: "/bin/true"},
		{name: "empty Go binary", cmd: shellquote.Join(c.empty)},
		{name: "**`corral-hook`, exec form (what Claude runs)** → corral serve, routed to a live session", argv: shipped, env: routedEnv, dest: destRouted},
		{name: "`corral-hook`, exec form → corral serve, unrouted", argv: shipped, dest: destUnrouted},
		{name: "`corral hook` through `sh -c` (the full binary, as before) → corral serve", cmd: hookCmd, dest: destUnrouted},
	}
	variants = append(variants, variant{name: "**sh script + curl** → Go HTTP receiver", cmd: shellquote.Quote(script), dest: destHTTP})
	// What-ifs: where the time goes, and what a change would save.
	variants = append(variants, variant{name: "`corral hook`, exec form (no sh)", argv: append([]string{c.corral}, hookArgs...), dest: destUnrouted, whatIf: true})
	if c.altHook != "" {
		variants = append(variants, variant{name: "the other `corral-hook` build (-alt-hook), routed",
			argv: []string{c.altHook, "--data-dir", dataDir, hooks.OwnArg}, env: routedEnv, dest: destRouted, whatIf: true})
	}
	if c.corralStatic != "" {
		variants = append(variants, variant{name: "`corral hook` built with CGO_ENABLED=0 (static)",
			cmd: shellquote.Join(append([]string{c.corralStatic}, hookArgs...)...), dest: destUnrouted, whatIf: true})
	}
	for i := range variants {
		if variants[i].env == nil {
			variants[i].env = hookEnv
		}
	}
	idx := func(name string) int {
		for i, v := range variants {
			if strings.Contains(v.name, name) {
				return i
			}
		}
		return -1
	}
	iCorral, iCurl := idx("what Claude runs"), idx("curl")

	// Warm up every command (page cache, daemon, receiver).
	for i := range variants {
		for k := range 5 {
			callOnce(variants[i], proj, payloads[k%len(payloads)])
		}
	}
	delivered0 := countDeliveries(serve.LogPath, routedID)
	recvCalls0, _ := recv.stats()

	// Phase 1: back to back, in blocks, rotating which command starts a round.
	b2b := make([][]sample, len(variants))
	type roundMed struct{ corral, curl float64 }
	var rounds []roundMed
	rounds0 := c.n / c.block
	for r := range rounds0 {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		meds := make([]float64, len(variants))
		for j := range variants {
			i := (r + j) % len(variants)
			var ws []float64
			for k := range c.block {
				s := callOnce(variants[i], proj, payloads[(r*c.block+k)%len(payloads)])
				b2b[i] = append(b2b[i], s)
				ws = append(ws, ms(s.wall))
			}
			meds[i] = benchutil.Median(ws)
		}
		rounds = append(rounds, roundMed{meds[iCorral], meds[iCurl]})
	}
	fmt.Fprintf(os.Stderr, "hookcost: back-to-back phase done (%d calls per command)\n", rounds0*c.block)

	// Phase 2: spaced out, one call every gap, round-robin.
	spaced := make([][]sample, len(variants))
	for k := range c.spaced {
		for j := range variants {
			if !benchutil.Sleep(ctx, c.gap) {
				return ctx.Err()
			}
			i := (k + j) % len(variants)
			spaced[i] = append(spaced[i], callOnce(variants[i], proj, payloads[k%len(payloads)]))
		}
	}
	if c.spaced > 0 {
		fmt.Fprintf(os.Stderr, "hookcost: spaced phase done (%d calls per command)\n", c.spaced)
	}

	// Did every call arrive? The daemon logs each delivery at debug level;
	// let it catch up first.
	time.Sleep(500 * time.Millisecond)
	delivered := countDeliveries(serve.LogPath, routedID)
	recvCalls, _ := recv.stats()
	want := map[string]int{}
	logged := 0
	for i, v := range variants {
		want[v.dest] += len(b2b[i]) + len(spaced[i])
		if v.dest == destRouted {
			for _, s := range append(append([]sample(nil), b2b[i]...), spaced[i]...) {
				if s.logged {
					logged++
				}
			}
		}
	}
	deliveryNote := fmt.Sprintf("deliveries checked: corral serve logged %d of %d unrouted deliveries", delivered.unrouted-delivered0.unrouted, want[destUnrouted])
	if want[destRouted] > 0 {
		deliveryNote += fmt.Sprintf(" and applied %d of the %d routed ones it logs (all but SubagentStop, %d calls)",
			delivered.routed-delivered0.routed, logged, want[destRouted]-logged)
	}
	deliveryNote += fmt.Sprintf("; the HTTP receiver got %d of %d POSTs.", recvCalls-recvCalls0, want[destHTTP])

	inits := initTrace(c, variants[iCorral], proj, payloads[0])
	emptyInits := initTrace(c, variants[idx("empty Go")], proj, payloads[0])

	md := report(c, variants, b2b, spaced, iCorral, iCurl, func() (out []float64) {
		for _, r := range rounds {
			out = append(out, r.corral/r.curl)
		}
		return out
	}(), deliveryNote, inits, emptyInits, curlPath, payloads)
	return benchutil.WriteOutput(c.out, md)
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func readPayloads(path string) ([][]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for _, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if len(line) > 60000 {
			return nil, fmt.Errorf("%s: a payload over 60000 bytes would not fit the pipe buffer", path)
		}
		out = append(out, line)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no payloads", path)
	}
	return out, nil
}

// callOnce runs `/bin/sh -c cmd` as Claude does: own process group, the
// payload on stdin followed by EOF, stdout and stderr captured through a
// pipe, in the project directory. The payload is in the pipe before the
// spawn (it fits the pipe buffer), so the clock covers spawn to exit only.
func callOnce(v variant, dir string, payload []byte) sample {
	inR, inW, err := os.Pipe()
	if err != nil {
		panic(err)
	}
	if _, err := inW.Write(payload); err != nil {
		panic(err)
	}
	inW.Close()
	outR, outW, err := os.Pipe()
	if err != nil {
		panic(err)
	}
	argv := v.argv
	if argv == nil {
		argv = []string{"/bin/sh", "-c", v.cmd}
	}
	cmd := &exec.Cmd{
		Path: argv[0], Args: argv, Env: v.env, Dir: dir,
		Stdin: inR, Stdout: outW, Stderr: outW,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	t0 := time.Now()
	err = cmd.Start()
	if err == nil {
		err = cmd.Wait()
	}
	wall := time.Since(t0)
	inR.Close()
	outW.Close()
	out, _ := io.ReadAll(outR)
	outR.Close()
	s := sample{wall: wall, failed: err != nil, wroteStdout: len(out) > 0,
		logged: !bytes.Contains(payload, []byte(`"hook_event_name":"SubagentStop"`))}
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			s.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			s.minflt = ru.Minflt
		}
	}
	return s
}

// deliveries counts what corral serve logged about hook deliveries.
type deliveries struct{ unrouted, routed int }

func countDeliveries(logPath, routedID string) deliveries {
	f, err := os.Open(logPath)
	if err != nil {
		return deliveries{}
	}
	defer f.Close()
	var d deliveries
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.Contains(line, "delivery from a process corral does not run"):
			d.unrouted++
		case routedID != "" && strings.Contains(line, "msg=hook ") && strings.Contains(line, "session="+routedID):
			d.routed++
		case routedID != "" && strings.Contains(line, "session="+routedID) &&
			(strings.Contains(line, "bad hook payload") || strings.Contains(line, "bad status line")):
			d.routed++
		}
	}
	return d
}

// initStats is what GODEBUG=inittrace=1 says about package initialisation.
type initStats struct {
	runs      int
	sumClock  []float64 // ms, per run: sum of the init functions' clock time
	end       []float64 // ms since runtime start when the last init finished
	lines     []float64 // number of packages with init work
	perPkg    map[string][]float64
	allocsKiB []float64
}

func initTrace(c config, v variant, dir string, payload []byte) initStats {
	st := initStats{perPkg: map[string][]float64{}}
	env := append(append([]string(nil), v.env...), "GODEBUG=inittrace=1")
	for range c.initRuns {
		inR, inW, _ := os.Pipe()
		inW.Write(payload)
		inW.Close()
		cmd := exec.Command("/bin/sh", "-c", v.cmd)
		cmd.Env, cmd.Dir, cmd.Stdin = env, dir, inR
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		_ = cmd.Run()
		inR.Close()
		var sum, end, kib float64
		n := 0
		for _, line := range strings.Split(stderr.String(), "\n") {
			// init net @1.2 ms, 0.038 ms clock, 1768 bytes, 23 allocs
			f := strings.Fields(line)
			if len(f) < 8 || f[0] != "init" || !strings.HasPrefix(f[2], "@") {
				continue
			}
			at, err1 := strconv.ParseFloat(strings.TrimPrefix(f[2], "@"), 64)
			clk, err2 := strconv.ParseFloat(f[4], 64)
			bytes, err3 := strconv.ParseFloat(f[7], 64)
			if err1 != nil || err2 != nil || err3 != nil {
				continue
			}
			n++
			sum += clk
			kib += bytes / 1024
			end = max(end, at+clk)
			st.perPkg[f[1]] = append(st.perPkg[f[1]], clk)
		}
		if n == 0 {
			continue
		}
		st.runs++
		st.sumClock = append(st.sumClock, sum)
		st.end = append(st.end, end)
		st.lines = append(st.lines, float64(n))
		st.allocsKiB = append(st.allocsKiB, kib)
	}
	return st
}

func report(c config, vs []variant, b2b, spaced [][]sample, iCorral, iCurl int, roundRatios []float64,
	deliveryNote string, inits, emptyInits initStats, curlPath string, payloads [][]byte) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	sizes := make([]float64, len(payloads))
	for i, p := range payloads {
		sizes[i] = float64(len(p))
	}
	ps := benchutil.Summarize(sizes)

	w("## Hook cost (`bench/hookcost.sh`)\n\n")
	w("%s\n", benchutil.Machine())
	w("- run at %s; %d payloads from `%s` (%.0f..%.0f bytes, median %.0f), rotated; each call is\n", time.Now().Format(time.RFC3339), len(payloads), c.payloads, ps.Min, ps.Max, ps.Median)
	w("  `/bin/sh -c \"<command>\"` in its own process group, payload on a stdin pipe, stdout/stderr on a pipe,\n")
	w("  timed from just before the spawn to the return of wait (Go's os/exec).\n")
	w("- %s\n\n", deliveryNote)

	table := func(title string, data [][]sample) {
		if len(data[0]) == 0 {
			return
		}
		var curlWalls []float64
		for _, smp := range data[iCurl] {
			curlWalls = append(curlWalls, ms(smp.wall))
		}
		curlMed := benchutil.Median(curlWalls)
		w("### %s\n\n", title)
		w("| command (run as `/bin/sh -c \"<command>\"` unless marked exec form) | n | median ms | p10 | p90 | max | mean | median ÷ sh+curl median | CPU ms/call (user+sys, median) | minor page faults (median) |\n")
		w("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		sep := false
		for i, v := range vs {
			if v.whatIf && !sep {
				w("| *what-ifs (not what ships; same run, same interleaving)* | | | | | | | | | |\n")
				sep = true
			}
			var wall, cpu, flt []float64
			fails, stdout := 0, 0
			for _, smp := range data[i] {
				wall = append(wall, ms(smp.wall))
				cpu = append(cpu, ms(smp.cpu))
				flt = append(flt, float64(smp.minflt))
				if smp.failed {
					fails++
				}
				if smp.wroteStdout {
					stdout++
				}
			}
			ws := benchutil.Summarize(wall)
			name := v.name
			if fails > 0 {
				name += fmt.Sprintf(" (%d failed)", fails)
			}
			if stdout > 0 {
				name += fmt.Sprintf(" (%d wrote output)", stdout)
			}
			w("| %s | %d | %s | %s | %s | %s | %s | %.2f | %s | %.0f |\n", name, ws.N, benchutil.Ms(ws.Median), benchutil.Ms(ws.P10),
				benchutil.Ms(ws.P90), benchutil.Ms(ws.Max), benchutil.Ms(ws.Mean), ws.Median/curlMed, benchutil.Ms(benchutil.Median(cpu)), benchutil.Median(flt))
		}
		w("\n")
	}
	table(fmt.Sprintf("Back to back (%d calls per command, blocks of %d, commands interleaved)", len(b2b[0]), c.block), b2b)
	table(fmt.Sprintf("Spaced out (%d calls per command, one call every %v, interleaved)", len(spaced[0]), c.gap), spaced)

	med := func(data [][]sample, i int) float64 {
		var xs []float64
		for _, s := range data[i] {
			xs = append(xs, ms(s.wall))
		}
		return benchutil.Median(xs)
	}
	rr := benchutil.Summarize(roundRatios)
	cb, kb := med(b2b, iCorral), med(b2b, iCurl)
	w("### Targets\n\n")
	w("| target | measured | met? |\n|---|---|---|\n")
	w("| the hook Claude runs (`corral-hook`, exec form) median < 3 ms back to back | %s ms | %s |\n", benchutil.Ms(cb), yes(cb < 3))
	w("| the hook ≤ ¼ of sh+curl, back to back (ratio of medians) | %.2f (%s / %s ms); per-round ratio median %.2f, range %.2f..%.2f over %d rounds | %s |\n",
		cb/kb, benchutil.Ms(cb), benchutil.Ms(kb), rr.Median, rr.Min, rr.Max, rr.N, yes(cb/kb <= 0.25))
	if len(spaced[0]) > 0 {
		cs, ks := med(spaced, iCorral), med(spaced, iCurl)
		w("| the hook ≤ ¼ of sh+curl, spaced out (ratio of medians) | %.2f (%s / %s ms) | %s |\n", cs/ks, benchutil.Ms(cs), benchutil.Ms(ks), yes(cs/ks <= 0.25))
	}
	w("\n")

	w("### Where the time goes\n\n")
	w("| binary | size | linking |\n|---|---:|---|\n")
	for _, p := range [][2]string{{"corral-hook", c.corralHook}, {"corral", c.corral}, {"corral, CGO_ENABLED=0", c.corralStatic},
		{"empty Go binary", c.empty}, {"curl", curlPath}, {"/bin/sh", "/bin/sh"}} {
		if p[1] != "" {
			w("| %s | %s | %s |\n", p[0], size(p[1]), linking(p[1]))
		}
	}
	w("\n")
	if inits.runs > 0 {
		w("`GODEBUG=inittrace=1` over %d runs of `corral hook` (medians): %.0f packages run init work, their init functions take %s ms of clock in total "+
			"and allocate %.0f KiB; the last one finishes %s ms after the runtime started (range %s..%s).",
			inits.runs, benchutil.Median(inits.lines), benchutil.Ms(benchutil.Median(inits.sumClock)), benchutil.Median(inits.allocsKiB),
			benchutil.Ms(benchutil.Median(inits.end)), benchutil.Ms(benchutil.Summarize(inits.end).Min), benchutil.Ms(benchutil.Summarize(inits.end).Max))
		if emptyInits.runs > 0 {
			w(" For the empty Go binary: %.0f packages, %s ms, done %s ms after start.", benchutil.Median(emptyInits.lines),
				benchutil.Ms(benchutil.Median(emptyInits.sumClock)), benchutil.Ms(benchutil.Median(emptyInits.end)))
		}
		w(" Slowest inits (median ms): ")
		type pk struct {
			name string
			ms   float64
		}
		var pks []pk
		for name, xs := range inits.perPkg {
			pks = append(pks, pk{name, benchutil.Median(xs)})
		}
		sort.Slice(pks, func(i, j int) bool { return pks[i].ms > pks[j].ms })
		for i, p := range pks[:min(6, len(pks))] {
			if i > 0 {
				w(", ")
			}
			w("%s %.3f", p.name, p.ms)
		}
		w(".\n\n")
	}
	w("Rerun: `bench/hookcost.sh -n %d -block %d -spaced %d -gap %v`\n", c.n, c.block, c.spaced, c.gap)
	return b.String()
}

func yes(ok bool) string {
	if ok {
		return "**yes**"
	}
	return "**no (missed)**"
}

func size(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return "?"
	}
	return fmt.Sprintf("%.1f MB", float64(fi.Size())/1e6)
}

func linking(path string) string {
	f, err := elf.Open(path)
	if err != nil {
		return "?"
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			libs, _ := f.ImportedLibraries()
			return "dynamic (" + strings.Join(libs, ", ") + ")"
		}
	}
	return "static"
}

// The receiver: a minimal HTTP server that reads each POST body.

type receiverProc struct {
	url string
}

func startReceiver(t *benchutil.TB) (*receiverProc, string) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-receiver")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("receiver: %v", err)
	}
	r := &receiverProc{url: strings.TrimSpace(line)}
	return r, r.url
}

func (r *receiverProc) stats() (calls, bytes int64) {
	resp, err := http.Get(r.url + "/stats")
	if err != nil {
		return -1, -1
	}
	defer resp.Body.Close()
	fmt.Fscan(resp.Body, &calls, &bytes)
	return
}

func runReceiver() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var calls, nbytes atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("POST /hook", func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		calls.Add(1)
		nbytes.Add(n)
	})
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%d %d\n", calls.Load(), nbytes.Load())
	})
	fmt.Printf("http://%s\n", ln.Addr())
	os.Stdout.Sync()
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	// Bounded: the parent kills it; a stray one stops after an hour.
	time.AfterFunc(time.Hour, func() { os.Exit(0) })
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
