// Command throughput measures terminal throughput through corral's dashboard:
// `cat` of a large text file in a 120x40 shell session, timed
//
//   - without a viewer: until the shell has run the command (it writes to a
//     FIFO the benchmark holds open, right after echoing an end marker);
//   - with a viewer: a Go WebSocket client attached to
//     /api/v1/sessions/{id}/terminal?cols=120&rows=40, reading as fast as it
//     can, until the end marker arrives in its output frames;
//   - through gotty (when -gotty is given): the same command typed into a
//     gotty terminal (bash under gotty -w) by a Go WebSocket client speaking
//     gotty's protocol, until the end marker arrives;
//   - through gotty on the tmux session: a second gotty running tmux
//     attach-session to the corral session, the way a tmux-based tool would
//     serve it with gotty, timed the same way;
//
// interleaved (the order rotates every repetition), after one warm-up run
// of each. The daemon's VmRSS and VmHWM are sampled every -sample
// throughout. Run it through bench/web/throughput.sh.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	mrand "math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/coder/websocket"

	"github.com/corral-dev/corral/bench/internal/benchutil"
	"github.com/corral-dev/corral/bench/web/internal/webbench"
	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/client"
	"github.com/corral-dev/corral/internal/datadir"
	"github.com/corral-dev/corral/internal/proc"
)

type config struct {
	corral, gotty, gottyNote, out, file string
	corralB, noteB                      string
	size                                int64
	reps                                int
	cols, rows                          int
	sample, timeout, settle             time.Duration
	variants                            string
}

func main() {
	var c config
	flag.StringVar(&c.corral, "corral", "", "corral binary (required)")
	flag.StringVar(&c.corralB, "corral-b", "", "a second corral binary measured the same way in the same run (A/B of a change; optional)")
	flag.StringVar(&c.noteB, "b-note", "", "what the second corral binary is, for the report")
	flag.StringVar(&c.gotty, "gotty", "", "gotty binary (optional: without it the gotty runs are skipped)")
	flag.StringVar(&c.gottyNote, "gotty-note", "", "how the gotty binary was built, for the report")
	flag.StringVar(&c.out, "out", "", "also write the markdown report here")
	flag.StringVar(&c.file, "file", "", "text file to cat (default: a generated one of -size bytes)")
	flag.Int64Var(&c.size, "size", 50<<20, "size of the generated text file")
	flag.IntVar(&c.reps, "reps", 7, "measured runs of each variant")
	flag.IntVar(&c.cols, "cols", 120, "terminal columns")
	flag.IntVar(&c.rows, "rows", 40, "terminal rows")
	flag.DurationVar(&c.sample, "sample", 50*time.Millisecond, "memory sampling interval")
	flag.DurationVar(&c.timeout, "timeout", 180*time.Second, "give up on one run after this long")
	flag.DurationVar(&c.settle, "settle", time.Second, "pause between runs (and quiet time a new terminal must show before a run)")
	flag.StringVar(&c.variants, "variants", "none,viewer,gotty,gotty-tmux", "what to run (diagnosis: e.g. viewer alone under perf)")
	flag.Parse()
	if c.corral == "" {
		fmt.Fprintln(os.Stderr, "throughput: -corral is required (use bench/web/throughput.sh)")
		os.Exit(2)
	}
	os.Exit(benchutil.Run(func(ctx context.Context, t *benchutil.TB) error { return run(ctx, t, c) }))
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "web-throughput: "+format+"\n", args...)
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

const (
	vNone   = "no viewer"
	vViewer = "corral viewer"
	vGotty  = "gotty"
	// vGottyTmux is gotty serving `tmux attach` of corral's session: a
	// viewer of the same tmux session, as gotty would be in a tmux-based
	// tool, next to corral's own viewer.
	vGottyTmux = "gotty on the tmux session"
)

// result is one run.
type result struct {
	variant string
	d       *daemon // nil for gotty
	warmup  bool
	start   time.Time
	// done: the shell wrote the FIFO (after the marker); marker: the
	// marker arrived at the WebSocket client (viewer and gotty runs).
	done, marker time.Time
	// bytes: terminal output bytes the client received during the run
	// (after decoding, for gotty); wire: WebSocket payload bytes; frames:
	// messages.
	bytes, wire, frames int64
	redraws             int
	// CPU time used during the run (user+sys), seconds.
	cpuDaemon, cpuTmux, cpuGotty, cpuSelf float64
	cpuAttach                             float64 // the daemon's children: the viewer's `tmux attach` client
	maxRSS                                int64
	clientsBefore                         int
	// settleRedraws: new streams (redraws) seen while waiting for a new
	// terminal to go quiet; settleRetries: terminals given up and opened
	// again because they never did.
	settleRedraws, settleRetries int
}

func (r result) elapsed() time.Duration {
	if strings.HasPrefix(r.variant, vNone) {
		return r.done.Sub(r.start)
	}
	return r.marker.Sub(r.start)
}

// daemon is one `corral serve` with its shell session.
type daemon struct {
	label    string // "" for A, " (B)" for B
	cl       *client.Client
	base     string
	token    string
	id       string
	tmuxSock string
	tmuxPID  int
	pid      int
	sampler  *webbench.Sampler
	idle     webbench.Mem
}

type env struct {
	c        config
	gottyURL string
	gottyPID int
	// the gotty that attaches to daemon A's tmux session (vGottyTmux)
	gottyTmuxURL string
	gottyTmuxPID int
	file         string
	fifo         *os.File
	fifoPath     string
	fifoR        *bufio.Reader
}

func run(ctx context.Context, t *benchutil.TB, c config) error {
	corralBin, err := filepath.Abs(c.corral)
	if err != nil {
		return err
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		return errors.New("tmux not found (apt-get install -y tmux)")
	}
	machine := benchutil.Machine()
	root := t.MkdirTemp("cwt-")
	home, proj := filepath.Join(root, "home"), filepath.Join(root, "proj")
	for _, d := range []string{home, proj} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	e := &env{c: c}
	e.file = c.file
	if e.file == "" {
		e.file = filepath.Join(root, "big.txt")
		if err := writeText(e.file, c.size); err != nil {
			return err
		}
	}
	fi, err := os.Stat(e.file)
	if err != nil {
		return err
	}
	// The FIFO the shell writes when a run's command is done. Held open
	// read-write, so a read blocks until a line comes and the shell's
	// open never waits.
	e.fifoPath = filepath.Join(root, "done.fifo")
	if err := syscall.Mkfifo(e.fifoPath, 0o600); err != nil {
		return err
	}
	e.fifo, err = os.OpenFile(e.fifoPath, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer e.fifo.Close()
	e.fifoR = bufio.NewReader(e.fifo)

	shellEnv := append(benchutil.CleanEnv(), "HOME="+home, "SHELL=/bin/bash")
	bins := []string{corralBin}
	if c.corralB != "" {
		b, err := filepath.Abs(c.corralB)
		if err != nil {
			return err
		}
		bins = append(bins, b)
	}
	var daemons []*daemon
	for i, bin := range bins {
		d := &daemon{}
		if i == 1 {
			d.label = " (B)"
		}
		dataDir := filepath.Join(root, fmt.Sprintf("data%d", i))
		if err := os.MkdirAll(dataDir, 0o700); err != nil {
			return err
		}
		logPath := filepath.Join(root, fmt.Sprintf("serve%d.log", i))
		serve := benchutil.StartServe(t, bin, dataDir, proj, shellEnv, logPath)
		d.pid = serve.PID()
		d.base, d.token, err = webbench.WebURL(logPath, 10*time.Second)
		if err != nil {
			return err
		}
		if d.token, err = benchutil.APIToken(bin, dataDir, shellEnv, d.token); err != nil {
			return err
		}
		d.cl = client.HTTP(d.base, d.token)
		s, err := d.cl.Create(ctx, api.CreateRequest{Dir: proj, Shell: true, Name: "throughput", Cols: c.cols, Rows: c.rows})
		if err != nil {
			return fmt.Errorf("create a shell session: %w", err)
		}
		d.id = s.ID
		d.tmuxSock = datadir.Socket(dataDir, datadir.TmuxSocket)
		if out, err := exec.Command("tmux", "-S", d.tmuxSock, "display-message", "-p", "#{pid}").Output(); err == nil {
			d.tmuxPID, _ = strconv.Atoi(strings.TrimSpace(string(out)))
		}
		if err := e.waitPrompt(ctx, d); err != nil {
			return err
		}
		d.idle = webbench.ReadMem(d.pid)
		daemons = append(daemons, d)
	}
	want := map[string]bool{}
	for _, v := range strings.Split(c.variants, ",") {
		want[strings.TrimSpace(v)] = true
	}
	if c.gotty != "" && want["gotty"] {
		if e.gottyURL, e.gottyPID, err = e.startGotty(t, root, "gotty", shellEnv, "/bin/bash"); err != nil {
			return err
		}
	}
	if c.gotty != "" && want["gotty-tmux"] {
		d := daemons[0]
		if e.gottyTmuxURL, e.gottyTmuxPID, err = e.startGotty(t, root, "gotty-tmux", shellEnv, "tmux", "-S", d.tmuxSock, "attach-session", "-t", "="+d.id); err != nil {
			return err
		}
	}
	logf("%d daemon(s), %dx%d, file %s (%d bytes), gotty %v", len(daemons), c.cols, c.rows, e.file, fi.Size(), e.gottyURL != "")

	// A run is a variant (none, viewer, gotty) on a daemon (nil: gotty).
	type variant struct {
		kind string
		d    *daemon
	}
	var variants []variant
	for _, d := range daemons {
		for _, v := range strings.Split(c.variants, ",") {
			switch strings.TrimSpace(v) {
			case "none":
				variants = append(variants, variant{vNone, d})
			case "viewer":
				variants = append(variants, variant{vViewer, d})
			case "gotty", "gotty-tmux":
			default:
				return fmt.Errorf("-variants: unknown %q", v)
			}
		}
	}
	if e.gottyURL != "" {
		variants = append(variants, variant{vGotty, nil})
	}
	if e.gottyTmuxURL != "" {
		variants = append(variants, variant{vGottyTmux, daemons[0]})
	}
	for _, d := range daemons {
		d.sampler = webbench.StartSampler(d.pid, c.sample)
	}
	load0 := benchutil.LoadAvg()
	var results []result
	for rep := -1; rep < c.reps; rep++ {
		for j := range variants {
			v := variants[(max(rep, 0)+j)%len(variants)]
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if !benchutil.Sleep(ctx, c.settle) {
				return ctx.Err()
			}
			r, err := e.runOne(ctx, v.kind, v.d)
			if err != nil {
				return fmt.Errorf("%s, repetition %d: %w", v.kind, rep+1, err)
			}
			r.warmup = rep < 0
			results = append(results, r)
			logf("%s%s: %s ms (shell done %s ms), %d bytes to the client, daemon max RSS %s MiB", r.variant,
				map[bool]string{true: " (warm-up)", false: ""}[r.warmup], benchutil.Ms(ms(r.elapsed())),
				benchutil.Ms(ms(r.done.Sub(r.start))), r.bytes, webbench.MiB(r.maxRSS))
		}
	}
	load1 := benchutil.LoadAvg()
	var samples [][]webbench.Mem
	var ends []webbench.Mem
	for _, d := range daemons {
		ss, _ := d.sampler.Stop()
		samples = append(samples, ss)
		ends = append(ends, webbench.ReadMem(d.pid))
	}
	busy := webbench.Busy(3*time.Second, 6)
	var gottyMem webbench.Mem
	if e.gottyPID != 0 {
		gottyMem = webbench.ReadMem(e.gottyPID)
	}
	md := report(c, machine, fi.Size(), results, daemons, samples, ends, gottyMem, load0, load1, busy)
	return benchutil.WriteOutput(c.out, md)
}

// writeText writes size bytes of text: lines of 20 to 119 characters of
// words, like a log or source file, from a fixed seed.
func writeText(path string, size int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	rng := mrand.New(mrand.NewPCG(1, 2))
	words := strings.Fields("the quick brown fox jumps over lazy dog corral session terminal stream output buffer tmux hook status review busy idle error func return if else for range struct byte int string main package import const var type 0 1 2 42 100 200 404 500 x y z")
	var line []byte
	var n int64
	for n < size {
		line = line[:0]
		want := 20 + rng.IntN(100)
		for len(line) < want {
			if len(line) > 0 {
				line = append(line, ' ')
			}
			line = append(line, words[rng.IntN(len(words))]...)
		}
		if int64(len(line))+1 > size-n {
			line = line[:max(0, size-n-1)]
		}
		line = append(line, '\n')
		w.Write(line)
		n += int64(len(line))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

func nonce() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// command is what is typed: cat, the marker (written so that the typed line
// does not contain it: the shell joins "EN""D"), then a line to the FIFO.
func (e *env) command(n string) string {
	return fmt.Sprintf(`cat %s; echo "EN""D-%s"; echo %s > %s`, e.file, n, n, e.fifoPath)
}

// waitFIFO waits for the shell to write n to the FIFO.
func (e *env) waitFIFO(n string, deadline time.Time) (time.Time, error) {
	e.fifo.SetReadDeadline(deadline)
	for {
		line, err := e.fifoR.ReadString('\n')
		at := time.Now()
		if err != nil {
			return at, fmt.Errorf("waiting for the shell: %w", err)
		}
		if strings.TrimSpace(line) == n {
			return at, nil
		}
	}
}

// waitPrompt runs a trivial command in the session and waits for it, so
// the shell is known to be up.
func (e *env) waitPrompt(ctx context.Context, d *daemon) error {
	n := nonce()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if err := d.cl.SendText(ctx, d.id, fmt.Sprintf("echo %s > %s", n, e.fifoPath), true); err == nil {
			break
		} else if time.Now().After(deadline) {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
	_, err := e.waitFIFO(n, deadline)
	return err
}

// detachAll detaches every tmux client of the session: a viewer that left
// keeps its stream (and its tmux client) for a minute in case it comes
// back; "no viewer" means none.
func detachAll(d *daemon) int {
	out, _ := exec.Command("tmux", "-S", d.tmuxSock, "list-clients", "-t", "="+d.id, "-F", "#{client_name}").Output()
	n := 0
	for _, c := range strings.Fields(string(out)) {
		exec.Command("tmux", "-S", d.tmuxSock, "detach-client", "-t", c).Run()
		n++
	}
	return n
}

func cpuSeconds(pid int) float64 {
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return float64(ut+st) / 100
}

// childrenCPU sums the CPU time of pid's live children (the daemon's: the
// `tmux attach` client of each open terminal).
func childrenCPU(pid int) float64 {
	kids, _ := proc.Children(pid)
	sum := 0.0
	for _, c := range kids {
		sum += cpuSeconds(c)
	}
	return sum
}

func (e *env) runOne(ctx context.Context, v string, d *daemon) (result, error) {
	r := result{variant: v, d: d}
	if d != nil {
		r.variant += d.label
		r.clientsBefore = detachAll(d)
	}
	time.Sleep(100 * time.Millisecond)
	n := nonce()
	marker := []byte("END-" + n)
	cmd := e.command(n)
	ctx, cancel := context.WithTimeout(ctx, e.c.timeout)
	defer cancel()
	deadline := time.Now().Add(e.c.timeout)

	var conn *websocket.Conn
	var frames <-chan frame
attempt:
	switch v {
	case vViewer:
		u := "ws" + strings.TrimPrefix(d.base, "http") + fmt.Sprintf("/api/v1/sessions/%s/terminal?cols=%d&rows=%d", d.id, e.c.cols, e.c.rows)
		c, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + d.token}}})
		if err != nil {
			return r, err
		}
		conn = c
	case vGotty, vGottyTmux:
		u := e.gottyURL
		if v == vGottyTmux {
			u = e.gottyTmuxURL
		}
		c, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{Subprotocols: []string{"webtty"}})
		if err != nil {
			return r, err
		}
		conn = c
		// gotty's client speaks first: the init message with the auth
		// token, then the terminal size.
		if err := c.Write(ctx, websocket.MessageText, []byte(`{"Arguments":"","AuthToken":""}`)); err != nil {
			return r, err
		}
		if err := c.Write(ctx, websocket.MessageText, []byte(fmt.Sprintf(`3{"columns":%d,"rows":%d}`, e.c.cols, e.c.rows))); err != nil {
			return r, err
		}
	}
	if conn != nil {
		defer conn.CloseNow()
		conn.SetReadLimit(64 << 20)
		frames = readFrames(ctx, conn, v)
		// Let the new terminal draw (scrollback, screen, prompt) and go
		// quiet before the clock starts. A terminal that keeps being
		// redrawn is given up after a while and opened again.
		restarts, err := quiet(ctx, frames, e.c.settle/2, 15*time.Second)
		r.settleRedraws += restarts
		if err != nil {
			if r.settleRetries < 3 && ctx.Err() == nil {
				r.settleRetries++
				logf("%s: the new terminal did not settle (%v, %d redraws); opening it again", r.variant, err, restarts)
				conn.CloseNow()
				if d != nil {
					detachAll(d)
				}
				time.Sleep(e.c.settle)
				goto attempt
			}
			return r, fmt.Errorf("the new terminal did not settle: %w", err)
		}
	}

	var dpid, tpid int
	if d != nil {
		dpid, tpid = d.pid, d.tmuxPID
	}
	gpid := e.gottyPID
	if v == vGottyTmux {
		gpid = e.gottyTmuxPID
	}
	cpu0 := [5]float64{cpuSeconds(dpid), cpuSeconds(tpid), cpuSeconds(gpid), cpuSeconds(os.Getpid()), childrenCPU(dpid)}
	mem0 := 0
	if d != nil {
		mem0 = len(d.sampler.Snapshot())
	}
	r.start = time.Now()
	var err error
	switch v {
	case vNone, vViewer:
		err = d.cl.SendText(ctx, d.id, cmd, true)
	case vGotty, vGottyTmux:
		err = conn.Write(ctx, websocket.MessageText, append([]byte{'1'}, cmd+"\r"...))
	}
	if err != nil {
		return r, err
	}
	doneCh := make(chan error, 1)
	go func() {
		var err error
		r.done, err = e.waitFIFO(n, deadline)
		doneCh <- err
	}()
	if frames != nil {
		// Read everything, find the marker (it may straddle frames).
		var carry []byte
		for r.marker.IsZero() {
			select {
			case f, ok := <-frames:
				if !ok {
					return r, errors.New("the WebSocket closed before the marker")
				}
				if f.err != nil {
					return r, f.err
				}
				r.frames++
				r.wire += int64(f.wire)
				if f.restart {
					r.redraws++
					carry = nil
					continue
				}
				r.bytes += int64(len(f.data))
				buf := append(carry, f.data...)
				if bytes.Contains(buf, marker) {
					r.marker = f.at
					break
				}
				carry = append([]byte(nil), buf[max(0, len(buf)-len(marker)+1):]...)
			case <-ctx.Done():
				return r, fmt.Errorf("no marker after %v (%d bytes received)", e.c.timeout, r.bytes)
			}
		}
	}
	if err := <-doneCh; err != nil {
		return r, err
	}
	cpu1 := [5]float64{cpuSeconds(dpid), cpuSeconds(tpid), cpuSeconds(gpid), cpuSeconds(os.Getpid()), childrenCPU(dpid)}
	r.cpuDaemon, r.cpuTmux, r.cpuGotty, r.cpuSelf = cpu1[0]-cpu0[0], cpu1[1]-cpu0[1], cpu1[2]-cpu0[2], cpu1[3]-cpu0[3]
	r.cpuAttach = cpu1[4] - cpu0[4]
	if d != nil {
		for _, m := range d.sampler.Snapshot()[mem0:] {
			r.maxRSS = max(r.maxRSS, m.RSS)
		}
	} else {
		r.maxRSS = webbench.ReadMem(e.gottyPID).RSS
	}
	if conn != nil {
		conn.Close(websocket.StatusNormalClosure, "")
	}
	return r, nil
}

// frame is one WebSocket message, decoded to terminal output.
type frame struct {
	at      time.Time
	data    []byte
	wire    int
	restart bool // a new stream (corral's hello/reset after a redraw)
	err     error
}

// readFrames reads messages as fast as it can and passes on their terminal
// output.
func readFrames(ctx context.Context, c *websocket.Conn, v string) <-chan frame {
	ch := make(chan frame, 1<<14)
	go func() {
		defer close(ch)
		hellos := 0
		for {
			_, b, err := c.Read(ctx)
			at := time.Now()
			if err != nil {
				if ctx.Err() == nil && websocket.CloseStatus(err) == -1 {
					ch <- frame{err: err}
				}
				return
			}
			f := frame{at: at, wire: len(b)}
			switch v {
			case vViewer:
				if len(b) == 0 {
					continue
				}
				switch b[0] {
				case 0x01: // output: [type][offset 8][data]
					if len(b) < 9 {
						continue
					}
					_ = binary.BigEndian.Uint64(b[1:9])
					f.data = b[9:]
				case 0x02: // hello: a stream starts
					hellos++
					if hellos == 1 {
						continue
					}
					f.restart = true
				case 0x05:
					f.err = fmt.Errorf("terminal exit: %s", b[1:])
				default:
					continue
				}
			case vGotty, vGottyTmux:
				if len(b) == 0 || b[0] != '1' {
					continue // title, buffer size, pong
				}
				d := make([]byte, base64.StdEncoding.DecodedLen(len(b)-1))
				n, err := base64.StdEncoding.Decode(d, b[1:])
				if err != nil {
					f.err = err
				}
				f.data = d[:n]
			}
			select {
			case ch <- f:
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch
}

// quiet reads frames until none came for d (at most max), counting the
// new streams (redraws) among them.
func quiet(ctx context.Context, frames <-chan frame, d, max time.Duration) (restarts int, err error) {
	end := time.After(max)
	for {
		t := time.NewTimer(d)
		select {
		case f, ok := <-frames:
			t.Stop()
			if !ok {
				return restarts, errors.New("closed")
			}
			if f.err != nil {
				return restarts, f.err
			}
			if f.restart {
				restarts++
			}
		case <-t.C:
			return restarts, nil
		case <-end:
			t.Stop()
			return restarts, fmt.Errorf("still drawing after %v", max)
		case <-ctx.Done():
			t.Stop()
			return restarts, ctx.Err()
		}
	}
}

var gottyListen = regexp.MustCompile(`HTTP server is listening at: (http://\S+)`)

// startGotty runs gotty with argv, writable, on a free loopback port, and
// returns its WebSocket URL and pid.
func (e *env) startGotty(t *benchutil.TB, root, name string, env []string, argv ...string) (string, int, error) {
	logPath := filepath.Join(root, name+".log")
	logf2, err := os.Create(logPath)
	if err != nil {
		return "", 0, err
	}
	cmd := exec.Command(e.c.gotty, append([]string{"-address", "127.0.0.1", "-port", "0", "-w"}, argv...)...)
	cmd.Env = env
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = logf2, logf2
	if err := cmd.Start(); err != nil {
		return "", 0, err
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		logf2.Close()
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(logPath)
		if m := gottyListen.FindSubmatch(b); m != nil {
			return "ws" + strings.TrimPrefix(strings.TrimSuffix(string(m[1]), "/"), "http") + "/ws", cmd.Process.Pid, nil
		}
		if time.Now().After(deadline) {
			return "", 0, fmt.Errorf("%s did not start; log:\n%s", name, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ---- report -------------------------------------------------------------

func report(c config, machine string, size int64, results []result, daemons []*daemon, samples [][]webbench.Mem, ends []webbench.Mem,
	gottyMem webbench.Mem, load0, load1, busy string) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	by := map[string][]result{}
	for _, r := range results {
		if !r.warmup {
			by[r.variant] = append(by[r.variant], r)
		}
	}
	elapsed := func(v string) []float64 {
		var xs []float64
		for _, r := range by[v] {
			xs = append(xs, ms(r.elapsed()))
		}
		return xs
	}
	done := func(v string) []float64 {
		var xs []float64
		for _, r := range by[v] {
			xs = append(xs, ms(r.done.Sub(r.start)))
		}
		return xs
	}
	p("### Terminal throughput\n\n")
	p("%s\n", machine)
	p("- load average: %s at the start of the runs, %s at the end; busiest other processes just after: %s\n", load0, load1, busy)
	p("- `cat` of a %s MiB text file (lines of 20–119 characters) in a %dx%d bash session, then `echo \"EN\"\"D-<nonce>\"` and a line written to a FIFO the benchmark holds open (the completion time for \"no viewer\"; no polling); %d measured runs of each variant after one warm-up each, interleaved (the order rotates every repetition), %v apart; every tmux client of the session is detached before each run (a viewer that left keeps its terminal for a minute)\n",
		webbench.MiB(size), c.cols, c.rows, c.reps, c.settle)
	p("- the command is typed with `POST /api/v1/sessions/{id}/input` for corral (with and without viewer) and as a gotty input message for gotty; the clock starts just before that\n")
	if c.gotty != "" {
		p("- gotty: %s\n", c.gottyNote)
		p("- gotty on the tmux session: the same gotty running `tmux attach-session` to corral's session (bash in corral's tmux), a new tmux client per connection; its client reads as fast as it can, like the others\n")
	} else {
		p("- gotty: not measured (%s)\n", c.gottyNote)
	}
	if len(daemons) > 1 {
		p("- (B): a second daemon, %s, with its own session, measured in the same interleaved rounds\n", c.noteB)
	}
	p("\n| variant | timed until | n | median ms | p10 | p90 | min | max | MiB/s (median) |\n|---|---|---|---|---|---|---|---|---|\n")
	rate := func(xs []float64) string {
		m := benchutil.Median(xs)
		if m <= 0 {
			return "?"
		}
		return strconv.FormatFloat(float64(size)/(1<<20)/(m/1000), 'f', 1, 64)
	}
	row := func(v, until string, xs []float64) {
		if len(xs) == 0 {
			return
		}
		p("| %s | %s | %s | %s |\n", v, until, webbench.Row(xs), rate(xs))
	}
	for _, d := range daemons {
		row(vNone+d.label, "the shell ran the command", done(vNone+d.label))
		row(vViewer+d.label, "the marker reached the WebSocket client", elapsed(vViewer+d.label))
		row(vViewer+d.label, "the shell ran the command", done(vViewer+d.label))
	}
	row(vGotty, "the marker reached the WebSocket client", elapsed(vGotty))
	row(vGottyTmux, "the marker reached the WebSocket client", elapsed(vGottyTmux))
	p("\n")

	fr := func(xs []float64) string {
		s := benchutil.Summarize(xs)
		return fmt.Sprintf("median %.3f (min %.3f, max %.3f)", s.Median, s.Min, s.Max)
	}
	// Per repetition ratios: each run against the other's run of the same
	// repetition.
	ratios := func(a, b string) []float64 {
		var out []float64
		for i := range by[a] {
			if i < len(by[b]) {
				out = append(out, ms(by[a][i].elapsed())/ms(by[b][i].elapsed()))
			}
		}
		return out
	}
	for _, d := range daemons {
		mNone, mViewer := benchutil.Median(done(vNone+d.label)), benchutil.Median(elapsed(vViewer+d.label))
		if mNone == 0 || mViewer == 0 {
			continue
		}
		over := (mViewer/mNone - 1) * 100
		verdict := "**met**"
		if over > 10 {
			verdict = "**missed**"
		}
		p("- corral%s with a viewer vs without: medians %s vs %s ms, **%+.1f%%** (target ≤ +10%%: %s); per repetition, viewer/no-viewer %s\n",
			d.label, benchutil.Ms(mViewer), benchutil.Ms(mNone), over, verdict, fr(ratios(vViewer+d.label, vNone+d.label)))
		if mGotty := benchutil.Median(elapsed(vGotty)); mGotty > 0 {
			verdict = "**met**"
			if mViewer > mGotty {
				verdict = "**missed**"
			}
			p("- corral%s viewer vs gotty: medians %s vs %s ms (corral %+.1f%%; target: not slower: %s); per repetition, corral/gotty %s; corral%s *without* a viewer vs gotty: %+.1f%%\n",
				d.label, benchutil.Ms(mViewer), benchutil.Ms(mGotty), (mViewer/mGotty-1)*100, verdict, fr(ratios(vViewer+d.label, vGotty)),
				d.label, (mNone/mGotty-1)*100)
		}
		if mGT := benchutil.Median(elapsed(vGottyTmux)); mGT > 0 && d.label == "" {
			p("- corral viewer vs gotty attached to the same tmux session: medians %s vs %s ms (corral %+.1f%%); per repetition, corral/gotty-on-tmux %s; gotty on the tmux session vs no viewer: %+.1f%%\n",
				benchutil.Ms(mViewer), benchutil.Ms(mGT), (mViewer/mGT-1)*100, fr(ratios(vViewer, vGottyTmux)), (mGT/mNone-1)*100)
		}
	}
	if len(daemons) > 1 {
		p("- B vs A with a viewer: per repetition B/A %s; without: %s\n", fr(ratios(vViewer+daemons[1].label, vViewer)), fr(ratios(vNone+daemons[1].label, vNone)))
	}
	p("\n| variant | output bytes to the client (median) | WebSocket messages (median) | payload bytes on the wire (median) | redraws during the run | redraws while a new terminal settled (total) | new terminals given up (total) | CPU s: daemon | tmux server | gotty | this client | daemon (or gotty) max VmRSS MiB |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	var names []string
	for _, d := range daemons {
		names = append(names, vNone+d.label, vViewer+d.label)
	}
	names = append(names, vGotty, vGottyTmux)
	for _, v := range names {
		rs := by[v]
		if len(rs) == 0 {
			continue
		}
		var bs, fs, ws, cd, ct, cg, cs []float64
		var redraws, sredraws, sretries int
		var maxRSS int64
		for _, r := range rs {
			bs = append(bs, float64(r.bytes))
			fs = append(fs, float64(r.frames))
			ws = append(ws, float64(r.wire))
			cd = append(cd, r.cpuDaemon+r.cpuAttach)
			ct = append(ct, r.cpuTmux)
			cg = append(cg, r.cpuGotty)
			cs = append(cs, r.cpuSelf)
			redraws += r.redraws
			sredraws += r.settleRedraws
			sretries += r.settleRetries
			maxRSS = max(maxRSS, r.maxRSS)
		}
		med := func(xs []float64) string { return strconv.FormatFloat(benchutil.Median(xs), 'f', 0, 64) }
		medf := func(xs []float64) string { return strconv.FormatFloat(benchutil.Median(xs), 'f', 2, 64) }
		p("| %s | %s | %s | %s | %d | %d | %d | %s | %s | %s | %s | %s |\n", v, med(bs), med(fs), med(ws), redraws, sredraws, sretries, medf(cd), medf(ct), medf(cg), medf(cs), webbench.MiB(maxRSS))
	}
	p("\n(CPU: user+system seconds during the run, from /proc; the daemon's figure includes its children, the `tmux attach` client of a viewer, which uses next to none: the tmux server writes to the client's terminal itself.)\n\n")
	for i, d := range daemons {
		var maxRSS int64
		for _, m := range samples[i] {
			maxRSS = max(maxRSS, m.RSS)
		}
		var seq []string
		for _, r := range results {
			if r.d == d {
				seq = append(seq, webbench.MiB(r.maxRSS))
			}
		}
		p("Daemon%s memory (%d samples, every %v, over all runs including warm-ups): VmRSS %s MiB idle before the runs, at most %s MiB during them, %s MiB after; VmHWM %s MiB at the end. Highest VmRSS of each run, in order: %s MiB.\n",
			d.label, len(samples[i]), c.sample, webbench.MiB(d.idle.RSS), webbench.MiB(maxRSS), webbench.MiB(ends[i].RSS), webbench.MiB(ends[i].HWM), strings.Join(seq, ", "))
	}
	if gottyMem.RSS > 0 {
		p("gotty: VmRSS %s MiB, VmHWM %s MiB at the end.\n", webbench.MiB(gottyMem.RSS), webbench.MiB(gottyMem.HWM))
	}
	p("\n")
	return b.String()
}
