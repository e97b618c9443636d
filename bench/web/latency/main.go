// Command latency measures how long a session's status change takes to
// reach a browser connected to corral's dashboard: from just before Claude
// Code would spawn the hook to the arrival of the change on the events
// WebSocket (GET /api/v1/ws/events).
//
// It starts a real `corral serve` (its own data dir, --listen 127.0.0.1:0),
// creates a shell session through the dashboard's API with the access token,
// connects a Go WebSocket client with `Authorization: Bearer <token>` and,
// unless -browser=false, a headless Chromium page logged in with the token
// URL, where a script installed before the page's own records
// performance.timeOrigin+performance.now() for every message on the page's
// own events socket. Then it spawns the hook exactly as Claude does (the
// exec-form command and arguments corral wrote into its Claude settings
// file, CORRAL_SESSION in the environment, a real payload on stdin),
// alternating UserPromptSubmit (→ busy) and Stop (→ review), and times each
// change: spawn → hook exit → Go client → page.
//
// Back to back (the next hook spawned as soon as the previous change
// arrived), then spaced out (-gap apart). Run it through bench/web/latency.sh.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/performance"
	"github.com/chromedp/chromedp"
	"github.com/coder/websocket"

	"github.com/corral-dev/corral/bench/internal/benchutil"
	"github.com/corral-dev/corral/bench/web/internal/webbench"
	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/client"
	"github.com/corral-dev/corral/internal/datadir"
)

type config struct {
	corral, payloads, out, chromium string
	n, spaced, warmup               int
	gap, timeout                    time.Duration
	browser                         bool
	diag                            int
}

func main() {
	var c config
	flag.StringVar(&c.corral, "corral", "", "corral binary, with corral-hook next to it (required)")
	flag.StringVar(&c.payloads, "payloads", "testdata/claude-code-2.1.197/hooks.jsonl", "real hook payloads (the first UserPromptSubmit and Stop are used)")
	flag.StringVar(&c.out, "out", "", "also write the markdown report here")
	flag.IntVar(&c.n, "n", 300, "back-to-back status changes")
	flag.IntVar(&c.spaced, "spaced", 30, "spaced-out status changes")
	flag.IntVar(&c.warmup, "warmup", 10, "changes before the measured ones (not reported)")
	flag.DurationVar(&c.gap, "gap", time.Second, "pause before each spaced-out change")
	flag.DurationVar(&c.timeout, "timeout", 5*time.Second, "give up on one change after this long")
	flag.BoolVar(&c.browser, "browser", true, "also measure in a headless Chromium page")
	flag.IntVar(&c.diag, "page-diag", 40, "with the browser: back-to-back changes per diagnostic block (the page as is, its favicon updates suppressed, favicon and title suppressed; two rounds); 0: none")
	flag.StringVar(&c.chromium, "chromium", "", "Chromium binary (default: $CORRAL_CHROMIUM, /usr/bin/chromium, chromium on PATH)")
	flag.Parse()
	if c.corral == "" {
		fmt.Fprintln(os.Stderr, "latency: -corral is required (use bench/web/latency.sh)")
		os.Exit(2)
	}
	os.Exit(benchutil.Run(func(ctx context.Context, t *benchutil.TB) error { return run(ctx, t, c) }))
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "web-latency: "+format+"\n", args...)
}

// one is one status change.
type one struct {
	phase  string // "b2b" or "spaced"
	want   api.Status
	spawn  time.Time // just before the hook process is started
	exited time.Time // its Wait returned
	goWS   time.Time // the change arrived on the Go client's socket
	seq    uint64
	page   time.Time // the change arrived in the page (Go's clock; zero: not seen)
	missed bool
}

// arrival is one event read by the Go client.
type arrival struct {
	at time.Time
	ev api.Event
}

func run(ctx context.Context, t *benchutil.TB, c config) error {
	corralBin, err := filepath.Abs(c.corral)
	if err != nil {
		return err
	}
	prompt, stop, err := readPayloads(c.payloads)
	if err != nil {
		return err
	}
	machine := benchutil.Machine()
	root := t.MkdirTemp("cwl-")
	home, dataDir, proj := filepath.Join(root, "home"), filepath.Join(root, "data"), filepath.Join(root, "proj")
	for _, d := range []string{home, dataDir, proj} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	env := append(benchutil.CleanEnv(), "HOME="+home, "SHELL=/bin/sh")
	logPath := filepath.Join(root, "serve.log")
	serve := benchutil.StartServe(t, corralBin, dataDir, proj, env, logPath)
	base, link, err := webbench.WebURL(logPath, 10*time.Second)
	if err != nil {
		return err
	}
	// The API token first: making it logs browsers out.
	token, err := benchutil.APIToken(corralBin, dataDir, env, link)
	if err != nil {
		return err
	}
	hookArgv, err := hookCommand(dataDir)
	if err != nil {
		return err
	}
	logf("dashboard %s, hook %q", base, hookArgv)

	// The session, created through the dashboard's API like the UI does.
	cl := client.HTTP(base, token)
	s, err := cl.Create(ctx, api.CreateRequest{Dir: proj, Shell: true, Name: "webbench"})
	if err != nil {
		return fmt.Errorf("create a shell session: %w", err)
	}
	id := s.ID

	// The Go client.
	wsURL := "ws" + strings.TrimPrefix(base, "http") + "/api/v1/ws/events"
	conn, _, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{
		HTTPHeader: http.Header{"Authorization": {"Bearer " + token}},
	})
	if err != nil {
		return fmt.Errorf("events websocket: %w", err)
	}
	defer conn.CloseNow()
	conn.SetReadLimit(16 << 20)
	arrivals := make(chan arrival, 4096)
	go func() {
		defer close(arrivals)
		for {
			_, b, err := conn.Read(ctx)
			at := time.Now()
			if err != nil {
				return
			}
			var ev api.Event
			if json.Unmarshal(b, &ev) != nil {
				continue
			}
			arrivals <- arrival{at, ev}
		}
	}()

	// The browser.
	var br *browser
	if c.browser {
		login, err := benchutil.LoginURL(corralBin, dataDir, env, base, link)
		if err != nil {
			return err
		}
		br, err = startBrowser(ctx, t, c, login)
		if err != nil {
			return fmt.Errorf("chromium: %w", err)
		}
		logf("chromium page connected")
	}

	hookEnv := append(append([]string(nil), env...),
		"CORRAL_SESSION="+id, "CLAUDE_PROJECT_DIR="+proj, "CLAUDECODE=1", "CLAUDE_CODE_ENTRYPOINT=cli")
	// Wait for the session's first state, then start from review so the
	// first change is to busy.
	if _, err := change(ctx, c, hookArgv, hookEnv, proj, stop, api.StatusReview, id, arrivals, "setup"); err != nil {
		return err
	}
	var offsets []clockOffset
	if br != nil {
		offsets = append(offsets, br.calibrate(ctx))
	}

	var runs []one
	next := api.StatusBusy
	do := func(phase string) error {
		payload := prompt
		if next == api.StatusReview {
			payload = stop
		}
		r, err := change(ctx, c, hookArgv, hookEnv, proj, payload, next, id, arrivals, phase)
		if err != nil {
			return err
		}
		if phase != "warmup" {
			runs = append(runs, r)
		}
		if next == api.StatusBusy {
			next = api.StatusReview
		} else {
			next = api.StatusBusy
		}
		return nil
	}
	load0 := benchutil.LoadAvg()
	var perf0, perf1 map[string]float64
	for range c.warmup {
		if err := do("warmup"); err != nil {
			return err
		}
	}
	if br != nil {
		perf0 = br.metrics()
	}
	for range c.n {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := do("b2b"); err != nil {
			return err
		}
	}
	logf("back to back: %d changes", c.n)
	if br != nil {
		perf1 = br.metrics()
		offsets = append(offsets, br.calibrate(ctx))
	}
	for range c.spaced {
		if !benchutil.Sleep(ctx, c.gap) {
			return ctx.Err()
		}
		if err := do("spaced"); err != nil {
			return err
		}
	}
	logf("spaced: %d changes", c.spaced)
	load1 := benchutil.LoadAvg()
	// Diagnosis: where the page's main thread spends a back-to-back change.
	diagTask := map[string][]float64{}
	if br != nil && c.diag > 0 {
		if err := br.eval(diagOverrides); err != nil {
			return err
		}
		for round := range 2 {
			for _, d := range diagBlocks {
				if err := br.eval(d.js); err != nil {
					return err
				}
				m0 := br.metrics()
				for range c.diag {
					if err := do(d.phase); err != nil {
						return err
					}
				}
				m1 := br.metrics()
				diagTask[d.phase] = append(diagTask[d.phase], (m1["TaskDuration"]-m0["TaskDuration"])*1000/float64(c.diag))
			}
			logf("page diagnosis round %d done", round+1)
		}
		br.eval(`window.__benchFreezeIcon = false; window.__benchFreezeTitle = false;`)
	}
	var pageNote string
	if br != nil {
		offsets = append(offsets, br.calibrate(ctx))
		pageNote, err = br.collect(ctx, runs, id, offsets)
		if err != nil {
			return err
		}
	}
	busy := webbench.Busy(3*time.Second, 6)
	rss := webbench.ReadMem(serve.PID())
	if perf0 != nil && perf1 != nil && c.n > 0 {
		var parts []string
		for _, k := range []string{"TaskDuration", "ScriptDuration", "LayoutDuration", "RecalcStyleDuration"} {
			parts = append(parts, fmt.Sprintf("%s %.2f ms", k, (perf1[k]-perf0[k])*1000/float64(c.n)))
		}
		pageNote += fmt.Sprintf("; the page's main thread per back-to-back change (Chrome's Performance.getMetrics): %s, %d layouts, %d style recalcs in all",
			strings.Join(parts, ", "), int(perf1["LayoutCount"]-perf0["LayoutCount"]), int(perf1["RecalcStyleCount"]-perf0["RecalcStyleCount"]))
	}
	md := report(c, machine, runs, hookArgv, pageNote, offsets, load0, load1, busy, rss)
	md += diagReport(runs, diagTask)
	return benchutil.WriteOutput(c.out, md)
}

// change spawns the hook once with payload and waits for the session's
// status to become want on the Go client's socket.
func change(ctx context.Context, c config, argv, env []string, dir string, payload []byte, want api.Status,
	id string, arrivals <-chan arrival, phase string) (one, error) {
	r := one{phase: phase, want: want}
	inR, inW, err := os.Pipe()
	if err != nil {
		return r, err
	}
	inW.Write(payload) // fits the pipe buffer: in place before the spawn
	inW.Close()
	outR, outW, err := os.Pipe()
	if err != nil {
		return r, err
	}
	// As Claude runs a hook: its own process group, stdin the payload then
	// EOF, stdout and stderr captured.
	cmd := &exec.Cmd{Path: argv[0], Args: argv, Env: env, Dir: dir, Stdin: inR, Stdout: outW, Stderr: outW,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true}}
	r.spawn = time.Now()
	err = cmd.Start()
	if err == nil {
		err = cmd.Wait()
	}
	r.exited = time.Now()
	inR.Close()
	outW.Close()
	out, _ := io.ReadAll(outR)
	outR.Close()
	if err != nil {
		return r, fmt.Errorf("hook: %v (%s)", err, out)
	}
	deadline := time.NewTimer(c.timeout)
	defer deadline.Stop()
	for {
		select {
		case a, ok := <-arrivals:
			if !ok {
				return r, errors.New("the events websocket closed")
			}
			if a.ev.Type != api.EventSession || a.ev.Session == nil || a.ev.Session.ID != id || a.ev.Session.Status != want {
				continue
			}
			if a.at.Before(r.spawn) {
				continue // from an earlier change
			}
			r.goWS, r.seq = a.at, a.ev.Seq
			return r, nil
		case <-deadline.C:
			logf("%s: no %s within %v", phase, want, c.timeout)
			r.missed = true
			return r, nil
		case <-ctx.Done():
			return r, ctx.Err()
		}
	}
}

// hookCommand reads the exec-form hook corral registered for Claude.
func hookCommand(dataDir string) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(dataDir, datadir.Settings))
	if err != nil {
		return nil, err
	}
	var s struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Command string   `json:"command"`
				Args    []string `json:"args"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	for _, g := range s.Hooks["UserPromptSubmit"] {
		if len(g.Hooks) == 0 {
			continue
		}
		h := g.Hooks[0]
		if filepath.Base(h.Command) != "corral-hook" {
			return nil, fmt.Errorf("corral registered %q, not corral-hook: build corral-hook next to corral", h.Command)
		}
		return append([]string{h.Command}, h.Args...), nil
	}
	return nil, errors.New("no UserPromptSubmit hook in corral's Claude settings")
}

func readPayloads(path string) (prompt, stop []byte, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		var p struct {
			Event string `json:"hook_event_name"`
		}
		if json.Unmarshal(line, &p) != nil {
			continue
		}
		switch {
		case p.Event == "UserPromptSubmit" && prompt == nil:
			prompt = bytes.TrimSpace(line)
		case p.Event == "Stop" && stop == nil:
			stop = bytes.TrimSpace(line)
		}
	}
	if prompt == nil || stop == nil {
		return nil, nil, fmt.Errorf("%s: no UserPromptSubmit or Stop payload", path)
	}
	return prompt, stop, nil
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// ---- the browser ---------------------------------------------------------

// recorder is installed before the page's own scripts: it timestamps every
// message on the page's events socket before the page's handler runs.
const recorder = `(() => {
  const Orig = window.WebSocket;
  window.__corralBench = [];
  function Recording(url, protocols) {
    const ws = protocols === undefined ? new Orig(url) : new Orig(url, protocols);
    if (String(url).includes('/api/v1/ws/events')) {
      ws.addEventListener('message', (m) => {
        const t = performance.timeOrigin + performance.now();
        if (typeof m.data !== 'string') return;
        try {
          const e = JSON.parse(m.data);
          if (e.session) window.__corralBench.push([t, e.seq, e.session.id, e.session.status]);
        } catch (_) {}
      });
    }
    return ws;
  }
  Recording.prototype = Orig.prototype;
  for (const k of ['CONNECTING', 'OPEN', 'CLOSING', 'CLOSED']) Recording[k] = Orig[k];
  window.WebSocket = Recording;
})();`

type browser struct {
	ctx context.Context
}

// clockOffset is the page's clock (performance.timeOrigin+now(), ms since
// the epoch) minus Go's wall clock, measured with the smallest round trip
// out of many.
type clockOffset struct {
	offsetMs, rttMs float64
}

func chromiumPath(c config) (string, error) {
	for _, p := range []string{c.chromium, os.Getenv("CORRAL_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return exec.LookPath("chromium")
}

func startBrowser(ctx context.Context, t *benchutil.TB, c config, login string) (*browser, error) {
	path, err := chromiumPath(c)
	if err != nil {
		return nil, fmt.Errorf("not found (apt-get install chromium, or -browser=false): %w", err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.UserDataDir(t.MkdirTemp("cwl-chrome-")),
		chromedp.WindowSize(1280, 800),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelB := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelB(); cancelA() })
	if err := chromedp.Do(bctx); err != nil {
		return nil, err
	}
	sctx, cancel := context.WithTimeout(bctx, 30*time.Second)
	defer cancel()
	err = chromedp.Do(sctx,
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			if _, err := cdp.Call(ctx, t, performance.Enable, performance.EnableParams{}); err != nil {
				return err
			}
			_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: recorder})
			return err
		}),
		// Log in with the login link; the page then opens its events socket.
		chromedp.Navigate(login),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="session-row"]`)),
	)
	if err != nil {
		// Say what the page shows instead, so a changed page is found at once.
		dctx, cancel := context.WithTimeout(bctx, 5*time.Second)
		defer cancel()
		text, _ := chromedp.Run(dctx, chromedp.Evaluate[string](`(document.body ? document.body.innerText : '').slice(0, 400)`))
		return nil, fmt.Errorf("no session row on the page (%w); it shows %q", err, text)
	}
	return &browser{ctx: bctx}, nil
}

// diagOverrides lets the diagnosis suppress the UI's favicon and title
// updates (window.__benchFreezeIcon, window.__benchFreezeTitle).
const diagOverrides = `(() => {
  const hd = Object.getOwnPropertyDescriptor(HTMLLinkElement.prototype, 'href');
  Object.defineProperty(HTMLLinkElement.prototype, 'href', {configurable: true, get: hd.get,
    set(v) { if (window.__benchFreezeIcon && String(this.rel).includes('icon')) return; hd.set.call(this, v); }});
  const td = Object.getOwnPropertyDescriptor(Document.prototype, 'title');
  Object.defineProperty(Document.prototype, 'title', {configurable: true, get: td.get,
    set(v) { if (window.__benchFreezeTitle) return; td.set.call(this, v); }});
})();`

var diagBlocks = []struct{ phase, title, js string }{
	{"diag-asis", "the page as is", `window.__benchFreezeIcon = false; window.__benchFreezeTitle = false;`},
	{"diag-icon", "favicon updates suppressed", `window.__benchFreezeIcon = true; window.__benchFreezeTitle = false;`},
	{"diag-icon-title", "favicon and title updates suppressed", `window.__benchFreezeIcon = true; window.__benchFreezeTitle = true;`},
}

func (b *browser) eval(js string) error {
	cctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	_, err := chromedp.Run(cctx, chromedp.Evaluate[chromedp.Void](js))
	return err
}

func diagReport(runs []one, task map[string][]float64) string {
	if len(task) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Diagnosis of the page's lag when changes come back to back (blocks of back-to-back changes, interleaved, two rounds; the suppression is done by the benchmark overriding the DOM setters, not by corral):\n\n")
	fmt.Fprintf(&b, "| page | changes | Go client → page median ms | p90 | page main-thread time per change ms (Performance.getMetrics TaskDuration, per block) |\n|---|---|---|---|---|\n")
	for _, d := range diagBlocks {
		var xs []float64
		for _, r := range runs {
			if r.phase == d.phase && !r.missed && !r.page.IsZero() {
				xs = append(xs, ms(r.page.Sub(r.goWS)))
			}
		}
		s := benchutil.Summarize(xs)
		var ts []string
		for _, t := range task[d.phase] {
			ts = append(ts, fmt.Sprintf("%.2f", t))
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s |\n", d.title, s.N, benchutil.Ms(s.Median), benchutil.Ms(s.P90), strings.Join(ts, ", "))
	}
	b.WriteString("\n")
	return b.String()
}

// metrics reads the page's cumulative run-time metrics (durations in
// seconds of main-thread work: TaskDuration, ScriptDuration,
// LayoutDuration, RecalcStyleDuration, …).
func (b *browser) metrics() map[string]float64 {
	cctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	out := map[string]float64{}
	chromedp.Do(cctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		r, err := cdp.Call(ctx, t, performance.GetMetrics, cdp.Empty{})
		if err != nil {
			return err
		}
		for _, m := range r.Metrics {
			out[m.Name] = m.Value
		}
		return nil
	}))
	return out
}

// calibrate measures the page's clock against Go's.
func (b *browser) calibrate(ctx context.Context) clockOffset {
	best := clockOffset{rttMs: math.Inf(1)}
	for range 40 {
		cctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		t0 := time.Now()
		v, err := chromedp.Run(cctx, chromedp.Evaluate[float64](`performance.timeOrigin + performance.now()`))
		t1 := time.Now()
		cancel()
		if err != nil {
			continue
		}
		rtt := ms(t1.Sub(t0))
		if rtt < best.rttMs {
			mid := float64(t0.UnixNano()+t1.Sub(t0).Nanoseconds()/2) / 1e6
			best = clockOffset{offsetMs: v - mid, rttMs: rtt}
		}
	}
	return best
}

// collect matches the page's recorded messages to the runs by sequence
// number and converts their times to Go's clock (with the offset measured
// nearest in time: before the spaced-out phase for back-to-back runs, at
// the end for spaced-out ones).
func (b *browser) collect(ctx context.Context, runs []one, id string, offsets []clockOffset) (string, error) {
	cctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	rec, err := chromedp.Run(cctx, chromedp.Evaluate[[][4]any](`window.__corralBench`))
	if err != nil {
		return "", err
	}
	bySeq := map[uint64]float64{}
	for _, r := range rec {
		t, _ := r[0].(float64)
		seq, _ := r[1].(float64)
		sid, _ := r[2].(string)
		if sid != id {
			continue
		}
		if _, ok := bySeq[uint64(seq)]; !ok {
			bySeq[uint64(seq)] = t
		}
	}
	seen := 0
	for i := range runs {
		t, ok := bySeq[runs[i].seq]
		if !ok || runs[i].missed {
			continue
		}
		off := offsets[len(offsets)-1].offsetMs
		if runs[i].phase == "b2b" && len(offsets) > 1 {
			off = offsets[1].offsetMs
		}
		goMs := t - off
		runs[i].page = time.Unix(0, int64(goMs*1e6))
		seen++
	}
	return fmt.Sprintf("the page recorded %d session events on its events socket; %d of the %d measured changes matched by sequence number", len(rec), seen, len(runs)), nil
}

// ---- report -------------------------------------------------------------

func report(c config, machine string, runs []one, hookArgv []string, pageNote string, offsets []clockOffset,
	load0, load1, busy string, rss webbench.Mem) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("### Status change → browser WebSocket\n\n")
	p("%s\n", machine)
	p("- load average: %s at the start of the measured changes, %s at the end; busiest other processes just after: %s\n", load0, load1, busy)
	p("- hook: `%s` (exec form, no shell, as corral registers it for Claude), `CORRAL_SESSION` set, real payloads from `%s` alternating UserPromptSubmit (→ busy) and Stop (→ review)\n", strings.Join(hookArgv, " "), c.payloads)
	p("- clock: Go's `time.Now()` just before `exec` of the hook; the Go client timestamps a frame when `Read` returns it; the page timestamps with `performance.timeOrigin + performance.now()` in a listener registered before the UI's own handler")
	if len(offsets) > 0 {
		var parts []string
		for _, o := range offsets {
			parts = append(parts, fmt.Sprintf("%.2f ms (±%.2f)", o.offsetMs, o.rttMs/2))
		}
		p(", converted to Go's clock with an offset measured by `Runtime.evaluate` round trips (best of 40), %s at start / after back-to-back / at the end", strings.Join(parts, ", "))
	}
	p("\n")
	if pageNote != "" {
		p("- %s\n", pageNote)
	}
	p("- daemon after the run: VmRSS %s MiB, VmHWM %s MiB\n", webbench.MiB(rss.RSS), webbench.MiB(rss.HWM))
	p("\n")

	for _, ph := range []struct{ key, title string }{{"b2b", "back to back"}, {"spaced", fmt.Sprintf("%v apart", c.gap)}} {
		var toGo, toPage, toExit, exitToGo, pageAfterGo []float64
		missed, noPage := 0, 0
		for _, r := range runs {
			if r.phase != ph.key {
				continue
			}
			if r.missed {
				missed++
				continue
			}
			toGo = append(toGo, ms(r.goWS.Sub(r.spawn)))
			toExit = append(toExit, ms(r.exited.Sub(r.spawn)))
			exitToGo = append(exitToGo, ms(r.goWS.Sub(r.exited)))
			if !r.page.IsZero() {
				toPage = append(toPage, ms(r.page.Sub(r.spawn)))
				pageAfterGo = append(pageAfterGo, ms(r.page.Sub(r.goWS)))
			} else {
				noPage++
			}
		}
		p("**%s** (%d changes", ph.title, len(toGo))
		if missed > 0 {
			p(", %d missed", missed)
		}
		if noPage > 0 && c.browser {
			p(", %d not seen in the page", noPage)
		}
		p("), ms:\n\n| interval | n | median | p10 | p90 | min | max |\n|---|---|---|---|---|---|---|\n")
		p("| spawn → change on the Go client's WebSocket | %s |\n", webbench.Row(toGo))
		if len(toPage) > 0 {
			p("| spawn → change in the Chromium page | %s |\n", webbench.Row(toPage))
		}
		p("| spawn → hook process exit | %s |\n", webbench.Row(toExit))
		p("| hook exit → change on the Go client | %s |\n", webbench.Row(exitToGo))
		if len(pageAfterGo) > 0 {
			p("| Go client → page (same frame) | %s |\n", webbench.Row(pageAfterGo))
		}
		p("\n")
	}
	target := func(key string, limit float64) string {
		var xs, ys []float64
		for _, r := range runs {
			if r.phase == key && !r.missed {
				xs = append(xs, ms(r.goWS.Sub(r.spawn)))
				if !r.page.IsZero() {
					ys = append(ys, ms(r.page.Sub(r.spawn)))
				}
			}
		}
		s := fmt.Sprintf("median %s ms (Go client)", benchutil.Ms(benchutil.Median(xs)))
		if len(ys) > 0 {
			s += fmt.Sprintf(", %s ms (Chromium)", benchutil.Ms(benchutil.Median(ys)))
		}
		ok := benchutil.Median(xs) < limit && (len(ys) == 0 || benchutil.Median(ys) < limit)
		if ok {
			return s + fmt.Sprintf(" < %v ms: **met**", limit)
		}
		return s + fmt.Sprintf(": **missed** (target < %v ms)", limit)
	}
	p("Target: back to back %s; %v apart %s.\n\n", target("b2b", 5), c.gap, target("spaced", 20))
	// The slowest changes, for a look at outliers.
	var sorted []one
	for _, r := range runs {
		if r.phase == "b2b" || r.phase == "spaced" {
			sorted = append(sorted, r)
		}
	}
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].goWS.Sub(sorted[i].spawn) > sorted[j].goWS.Sub(sorted[j].spawn) })
	var worst []string
	for _, r := range sorted[:min(5, len(sorted))] {
		if r.missed {
			continue
		}
		worst = append(worst, fmt.Sprintf("%s %s→%s ms (exit %s)", r.phase, r.want, benchutil.Ms(ms(r.goWS.Sub(r.spawn))), benchutil.Ms(ms(r.exited.Sub(r.spawn)))))
	}
	p("Slowest five (Go client): %s.\n\n", strings.Join(worst, "; "))
	return b.String()
}
