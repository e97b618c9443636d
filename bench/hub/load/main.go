// Command load measures what one `corral hub` holds: how many devices,
// sessions and browser subscribers, at what memory and CPU, and how fast it
// fans a device's event out to the browsers.
//
// It starts a real `corral hub` on 127.0.0.1 (its user and device tokens
// made beforehand through internal/hub.Accounts on its database), then
// connects to it, from this process:
//
//   - fake agents over the real device link (internal/link over a WebSocket
//     to /api/v1/link with a device token: hello, a sync of -sessions
//     sessions each, heartbeats, then a stream of session events);
//   - event subscribers: WebSockets to /api/v1/ws/events with the user's
//     token, as the dashboard opens them. Every device belongs to the one
//     user, so every subscriber gets every event: the worst case of fan-out.
//
// Steps: with -subs' first count of subscribers, the agents grow through
// -agents; then, with the most agents, the subscribers grow through -subs.
// At each step, after -settle: a quiet window (-quiet; only heartbeats and
// the hub's 5 s token re-check) and an event window (-window at -rate events
// per second, spread over every agent and session; each event carries its
// send time, so every subscriber measures its delivery latency). Reported:
// the hub's VmRSS/VmHWM and threads (/proc/<pid>/status), its CPU in each
// window (/proc/<pid>/stat), the deliveries and their latency, and this
// generator's own CPU (it shares the machine).
//
// Loops are bounded by the flags; every connection is to 127.0.0.1. Run it
// through bench/hub/load.sh, which builds corral.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/corral-dev/corral/bench/internal/benchutil"
	"github.com/corral-dev/corral/bench/internal/hubbench"
	"github.com/corral-dev/corral/internal/agentlink"
	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/client"
	"github.com/corral-dev/corral/internal/datadir"
	"github.com/corral-dev/corral/internal/devicekey"
	"github.com/corral-dev/corral/internal/hub"
	"github.com/corral-dev/corral/internal/link"
	"github.com/corral-dev/corral/internal/store"
)

type config struct {
	corral, out    string
	agents, subs   []int
	sessions       int
	rate           float64
	window, quiet  time.Duration
	settle, drain  time.Duration
	connectTimeout time.Duration
}

func main() {
	var c config
	var agents, subs string
	flag.StringVar(&c.corral, "corral", "", "corral binary (required)")
	flag.StringVar(&c.out, "out", "", "also write the markdown report here")
	flag.StringVar(&agents, "agents", "10,100,500", "agent counts to step through (ascending, at most 10000)")
	flag.StringVar(&subs, "subs", "10,100,1000", "subscriber counts to step through with the most agents (ascending, at most 5000)")
	flag.IntVar(&c.sessions, "sessions", 10, "sessions per agent (at most 100)")
	flag.Float64Var(&c.rate, "rate", 50, "session events per second, all agents together (at most 2000)")
	flag.DurationVar(&c.window, "window", 10*time.Second, "event window per step (at most 2m)")
	flag.DurationVar(&c.quiet, "quiet", 5*time.Second, "quiet window per step, before the events (at most 2m)")
	flag.DurationVar(&c.settle, "settle", 2*time.Second, "wait after connecting, before measuring")
	flag.DurationVar(&c.drain, "drain", time.Second, "wait after the event window for late deliveries")
	flag.DurationVar(&c.connectTimeout, "connect-timeout", 3*time.Minute, "longest a step may take to connect")
	flag.Parse()
	var err1, err2 error
	c.agents, err1 = ints(agents, 10000)
	c.subs, err2 = ints(subs, 5000)
	if c.corral == "" || err1 != nil || err2 != nil || c.sessions < 1 || c.sessions > 100 || c.rate <= 0 || c.rate > 2000 ||
		c.window <= 0 || c.window > 2*time.Minute || c.quiet < 0 || c.quiet > 2*time.Minute {
		fmt.Fprintln(os.Stderr, "load:", errors.Join(err1, err2))
		flag.Usage()
		os.Exit(2)
	}
	os.Exit(benchutil.Run(func(ctx context.Context, t *benchutil.TB) error { return run(ctx, t, c) }))
}

func ints(s string, max int) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > max || (len(out) > 0 && n < out[len(out)-1]) {
			return nil, fmt.Errorf("%q: want ascending counts from 1 to %d", s, max)
		}
		out = append(out, n)
	}
	return out, nil
}

// base is the clock every probe's send time is measured from.
var base = time.Now()

func run(ctx context.Context, t *benchutil.TB, c config) error {
	machine := benchutil.Machine()
	maxAgents := c.agents[len(c.agents)-1]
	home := t.MkdirTemp("load-home-")
	env := append(benchutil.CleanEnv(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_DATA_HOME="+filepath.Join(home, ".local", "share"))
	hubDir := t.MkdirTemp("load-hub-")
	userTok, devToks, err := accounts(ctx, hubDir, maxAgents)
	if err != nil {
		return err
	}
	// --listen's default cap (1024 connections) is below the agents and
	// subscribers of the bigger steps; the hub lowers this to its file limit.
	maxConns := maxAgents + c.subs[len(c.subs)-1] + 64
	h := hubbench.StartHub(t, c.corral, hubDir, env, filepath.Join(t.MkdirTemp("load-logs-"), "hub.log"), "--log-level", "warn",
		"--max-connections", strconv.Itoa(maxConns))
	idle, _ := hubbench.ReadMem(h.PID())
	fmt.Fprintf(os.Stderr, "load: hub pid %d at %s, %s MiB RSS idle\n", h.PID(), h.URL, hubbench.MiB(idle.RSS))

	devKeys := make([]*devicekey.Key, len(devToks))
	for i := range devKeys {
		if devKeys[i], err = devicekey.Generate(); err != nil {
			return err
		}
	}
	l := &loadgen{c: c, hub: h, userTok: userTok, devToks: devToks, devKeys: devKeys}
	defer l.close()
	var rows []row
	step := func(agents, subs int) error {
		t0 := time.Now()
		if err := l.connectAgents(ctx, agents); err != nil {
			return err
		}
		agentTime := time.Since(t0)
		if err := l.waitSessions(ctx, userTok, agents*c.sessions); err != nil {
			return err
		}
		synced := time.Since(t0)
		t1 := time.Now()
		if err := l.connectSubs(ctx, subs); err != nil {
			return err
		}
		subTime := time.Since(t1)
		fmt.Fprintf(os.Stderr, "load: %d agents (%v, synced %v), %d subscribers (%v)\n", agents, agentTime.Round(time.Millisecond),
			synced.Round(time.Millisecond), subs, subTime.Round(time.Millisecond))
		r, err := l.measure(ctx, len(rows)+1)
		if err != nil {
			return err
		}
		r.connect = fmt.Sprintf("agents %v, subscribers %v", synced.Round(10*time.Millisecond), subTime.Round(10*time.Millisecond))
		rows = append(rows, r)
		return nil
	}
	for _, n := range c.agents {
		if err := step(n, c.subs[0]); err != nil {
			return err
		}
	}
	for _, k := range c.subs[1:] {
		if err := step(maxAgents, k); err != nil {
			return err
		}
	}
	final, _ := hubbench.ReadMem(h.PID())

	var b strings.Builder
	fmt.Fprintf(&b, "### Hub capacity\n\n%s\n- load average at the end: %s\n", machine, benchutil.LoadAvg())
	fmt.Fprintf(&b, "- one `corral hub` (log level warn); fake agents over the real device link and event subscribers over /api/v1/ws/events, all in one generator process on the same machine, 127.0.0.1; every device is the one user's, so every subscriber gets every event (worst-case fan-out)\n")
	fmt.Fprintf(&b, "- %d sessions per agent (a sync each on connect); per step: %v settle, %v quiet window, %v event window at %.0f session events/s (spread over every agent and session) + %v drain\n",
		c.sessions, c.settle, c.quiet, c.window, c.rate, c.drain)
	fmt.Fprintf(&b, "- rerun: `bench/hub/load.sh -agents %s -subs %s -sessions %d -rate %.0f -window %v`\n",
		join(c.agents), join(c.subs), c.sessions, c.rate, c.window)
	fmt.Fprintf(&b, "- hub RSS idle (no device, no subscriber): %s MiB; at the end: VmRSS %s MiB, VmHWM %s MiB\n\n",
		hubbench.MiB(idle.RSS), hubbench.MiB(final.RSS), hubbench.MiB(final.HWM))
	fmt.Fprintf(&b, "| agents | sessions | subscribers | hub VmRSS MiB | VmHWM MiB | threads | hub CPU quiet | hub CPU events | events/s | deliveries/s | fan-out median ms | p99 ms | max ms | delivered | resyncs | generator CPU | connect + sync |\n")
	fmt.Fprintf(&b, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %d | %d | %d | %s | %s | %d | %.1f%% | %.1f%% | %.0f | %.0f | %s | %s | %s | %d/%d | %d | %.0f%% | %s |\n",
			r.agents, r.sessions, r.subs, hubbench.MiB(r.mem.RSS), hubbench.MiB(r.mem.HWM), r.mem.Threads,
			r.cpuQuiet, r.cpuEvents, r.eventsPerSec, r.deliveriesPerSec, benchutil.Ms(r.lat.Median), benchutil.Ms(r.p99),
			benchutil.Ms(r.lat.Max), r.delivered, r.expected, r.resyncs, r.genCPU, r.connect)
	}
	fmt.Fprintf(&b, "\nCPU is a share of one core (100%% = one core busy) over the window. Fan-out latency: from the fake agent's Send of the event to a subscriber's read of it, over every (event, subscriber) pair of the window. A snapshot of %d sessions is %s KiB of JSON per subscriber at connect.\n",
		maxAgents*c.sessions, strconv.FormatFloat(float64(l.snapshotBytes.Load())/1024, 'f', 0, 64))
	return benchutil.WriteOutput(c.out, b.String())
}

func join(xs []int) string {
	var s []string
	for _, x := range xs {
		s = append(s, strconv.Itoa(x))
	}
	return strings.Join(s, ",")
}

// accounts makes the user and the devices on the hub's database before the
// hub starts (much faster than a `corral hub device add` each).
func accounts(ctx context.Context, dir string, n int) (string, []string, error) {
	if err := datadir.Ensure(dir); err != nil {
		return "", nil, err
	}
	st, err := store.Open(filepath.Join(dir, datadir.Database))
	if err != nil {
		return "", nil, err
	}
	defer st.Close()
	acc := hub.NewAccounts(st)
	userTok, err := acc.AddUser(ctx, "load", "")
	if err != nil {
		return "", nil, err
	}
	toks := make([]string, n)
	for i := range toks {
		_, tok, err := acc.AddDevice(ctx, "load", fmt.Sprintf("m%04d", i), 0)
		if err != nil {
			return "", nil, err
		}
		toks[i] = tok
	}
	return userTok, toks, nil
}

type row struct {
	agents, sessions, subs int
	mem                    hubbench.Mem
	cpuQuiet, cpuEvents    float64
	eventsPerSec           float64
	deliveriesPerSec       float64
	lat                    benchutil.Summary
	p99                    float64
	delivered, expected    int64
	resyncs                int64
	genCPU                 float64
	connect                string
}

type loadgen struct {
	c       config
	hub     *hubbench.Hub
	userTok string
	devToks []string
	devKeys []*devicekey.Key

	agents []*fakeAgent
	subs   []*subscriber

	step          atomic.Int64 // the step whose probes count
	snapshotBytes atomic.Int64
	mu            sync.Mutex
	cancel        []context.CancelFunc
	wg            sync.WaitGroup
}

func (l *loadgen) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.cancel {
		c()
	}
	done := make(chan struct{})
	go func() { l.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
	}
}

// fakeAgent is a device that speaks the link with internal/link.
type fakeAgent struct {
	i        int
	peer     *link.Peer
	mu       sync.Mutex
	seq      uint64
	sessions []api.Session
}

func (l *loadgen) connectAgents(ctx context.Context, n int) error {
	ctx, cancel := context.WithTimeout(ctx, l.c.connectTimeout)
	defer cancel()
	got, err := dialMany(len(l.agents), n, func(i int) (*fakeAgent, error) { return l.dialAgent(ctx, i) })
	l.agents = append(l.agents, got...)
	sort.Slice(l.agents, func(i, j int) bool { return l.agents[i].i < l.agents[j].i })
	return err
}

// dialMany runs dial for from..to-1, 16 at a time, and returns what
// connected and the first error.
func dialMany[T any](from, to int, dial func(i int) (T, error)) ([]T, error) {
	sem := make(chan struct{}, 16)
	var mu sync.Mutex
	var out []T
	var firstErr error
	for i := from; i < to; i++ {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			v, err := dial(i)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				return
			}
			out = append(out, v)
		}()
	}
	for i := 0; i < cap(sem); i++ {
		sem <- struct{}{}
	}
	return out, firstErr
}

// background runs f until the load generator closes.
func (l *loadgen) background(f func(ctx context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	l.mu.Lock()
	l.cancel = append(l.cancel, cancel)
	l.mu.Unlock()
	l.wg.Add(1)
	go func() { defer l.wg.Done(); f(ctx) }()
}

func (l *loadgen) dialAgent(ctx context.Context, i int) (*fakeAgent, error) {
	// Each fake agent proves a key of its own; its first connection
	// enrols it with its one-time token (docs/protocol.md).
	c, _, err := websocket.Dial(ctx, "ws://"+l.hub.Addr+"/api/v1/link?v="+strconv.Itoa(link.Protocol), &websocket.DialOptions{
		HTTPHeader: agentlink.Header(l.devKeys[i], l.devToks[i]),
	})
	if err != nil {
		return nil, fmt.Errorf("agent %d: dial: %w", i, err)
	}
	conn := link.NewWebSocket(c, 0)
	welcome, err := link.ClientHello(ctx, conn, agentlink.Answer(l.devKeys[i], l.hub.Addr, link.Msg{Hostname: fmt.Sprintf("fake-%04d", i), OS: "linux", Arch: runtime.GOARCH,
		Version: "load"}))
	if err != nil {
		return nil, fmt.Errorf("agent %d: %w", i, err)
	}
	a := &fakeAgent{i: i}
	a.peer = link.NewPeer(conn, link.Options{OnMsg: func(m link.Msg) {
		if m.T == link.TypeReq {
			a.peer.Reply(m.ID, nil, api.Errorf(api.CodeBadRequest, "a fake agent serves no requests"))
		}
	}})
	hb := time.Duration(welcome.HeartbeatMS) * time.Millisecond
	l.background(func(ctx context.Context) {
		if hb > 0 {
			go a.peer.Heartbeat(ctx, hb)
		}
		a.peer.Run(ctx)
	})
	now := time.Now().UTC()
	for j := 0; j < l.c.sessions; j++ {
		a.sessions = append(a.sessions, api.Session{
			ID: fmt.Sprintf("s%04dx%03d", i, j), Name: fmt.Sprintf("proj-%d", j), Dir: fmt.Sprintf("/home/dev/src/project-%04d-%03d", i, j),
			Kind: api.KindClaude, Status: api.StatusIdle, ClaudeSessionID: fmt.Sprintf("9f1c2d3e-4b5a-6789-abcd-%012d", i*1000+j),
			LastMessage: "I updated the handler and added a test for the empty case; all tests pass.",
			Usage:       api.Usage{InputTokens: 12345, OutputTokens: 2345},
			ClaudePID:   10000 + j, TranscriptPath: fmt.Sprintf("/home/dev/.claude/projects/-home-dev-src-project-%04d/%d.jsonl", i, j),
			CreatedAt: now, UpdatedAt: now,
		})
	}
	a.seq = 1
	if err := a.peer.Send(link.Msg{T: link.TypeSync, Seq: a.seq, Sessions: a.sessions}); err != nil {
		return nil, fmt.Errorf("agent %d: sync: %w", i, err)
	}
	return a, nil
}

// event sends one session event whose last message is a probe: the step
// and the send time.
func (a *fakeAgent) event(j int, step int64) error {
	a.mu.Lock()
	a.seq++
	s := a.sessions[j%len(a.sessions)]
	prev := s.Status
	if s.Status == api.StatusIdle {
		s.Status = api.StatusBusy
	} else {
		s.Status = api.StatusIdle
	}
	s.UpdatedAt = time.Now().UTC()
	s.LastMessage = fmt.Sprintf("probe:%d:%d", step, time.Since(base).Nanoseconds())
	a.sessions[j%len(a.sessions)] = s
	ev := api.Event{Seq: a.seq, Type: api.EventSession, Time: s.UpdatedAt, Session: &s, Prev: prev}
	m := link.Msg{T: link.TypeEvent, Seq: a.seq, Event: &ev}
	a.mu.Unlock()
	return a.peer.Send(m)
}

func (l *loadgen) waitSessions(ctx context.Context, tok string, n int) error {
	c := client.HTTP(l.hub.URL, tok)
	deadline := time.Now().Add(l.c.connectTimeout)
	for {
		rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		list, err := c.Sessions(rctx)
		cancel()
		if err == nil && len(list) == n {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("the hub lists %d sessions, want %d (%v)", len(list), n, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// subscriber is one browser's events WebSocket.
type subscriber struct {
	mu        sync.Mutex
	latencies []float64 // ms, of this step's probes
	delivered int64
	resyncs   int64
}

var probeKey = []byte(`"last_message":"probe:`)

func (l *loadgen) connectSubs(ctx context.Context, k int) error {
	ctx, cancel := context.WithTimeout(ctx, l.c.connectTimeout)
	defer cancel()
	got, err := dialMany(len(l.subs), k, func(int) (*subscriber, error) { return l.dialSub(ctx) })
	l.subs = append(l.subs, got...)
	return err
}

// dialSub connects a subscriber and returns once its snapshot arrived.
func (l *loadgen) dialSub(ctx context.Context) (*subscriber, error) {
	c, _, err := websocket.Dial(ctx, "ws://"+l.hub.Addr+"/api/v1/ws/events", &websocket.DialOptions{
		HTTPHeader: http.Header{"Authorization": {"Bearer " + l.userTok}},
	})
	if err != nil {
		return nil, fmt.Errorf("subscriber: %w", err)
	}
	c.SetReadLimit(256 << 20)
	_, b, err := c.Read(ctx)
	if err != nil || !bytes.Contains(b, []byte(`"type":"snapshot"`)) {
		c.CloseNow()
		return nil, fmt.Errorf("subscriber: first frame %.100q: %v", b, err)
	}
	l.snapshotBytes.Store(int64(len(b)))
	s := &subscriber{}
	l.background(func(rctx context.Context) {
		defer c.CloseNow()
		for {
			_, b, err := c.Read(rctx)
			if err != nil {
				return
			}
			now := time.Since(base).Nanoseconds()
			if bytes.Contains(b, []byte(`"type":"resync"`)) {
				s.mu.Lock()
				s.resyncs++
				s.mu.Unlock()
				continue
			}
			i := bytes.Index(b, probeKey)
			if i < 0 {
				continue
			}
			rest := b[i+len(probeKey):]
			j := bytes.IndexByte(rest, '"')
			if j < 0 {
				continue
			}
			stepStr, sentStr, ok := strings.Cut(string(rest[:j]), ":")
			if !ok {
				continue
			}
			step, _ := strconv.ParseInt(stepStr, 10, 64)
			sent, _ := strconv.ParseInt(sentStr, 10, 64)
			if step != l.step.Load() {
				continue
			}
			s.mu.Lock()
			s.delivered++
			s.latencies = append(s.latencies, float64(now-sent)/1e6)
			s.mu.Unlock()
		}
	})
	return s, nil
}

func selfCPU() time.Duration {
	d, _ := hubbench.CPU(os.Getpid())
	return d
}

// measure runs the quiet and the event windows of a step.
func (l *loadgen) measure(ctx context.Context, step int) (row, error) {
	pid := l.hub.PID()
	r := row{agents: len(l.agents), sessions: len(l.agents) * l.c.sessions, subs: len(l.subs)}
	sleep := func(d time.Duration) error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d):
			return nil
		}
	}
	if err := sleep(l.c.settle); err != nil {
		return r, err
	}
	// Quiet.
	c0, _ := hubbench.CPU(pid)
	t0 := time.Now()
	if err := sleep(l.c.quiet); err != nil {
		return r, err
	}
	c1, _ := hubbench.CPU(pid)
	if l.c.quiet > 0 {
		r.cpuQuiet = 100 * float64(c1-c0) / float64(time.Since(t0))
	}
	// Events.
	for _, s := range l.subs {
		s.mu.Lock()
		s.latencies, s.delivered, s.resyncs = s.latencies[:0], 0, 0
		s.mu.Unlock()
	}
	l.step.Store(int64(step))
	g0 := selfCPU()
	c0, _ = hubbench.CPU(pid)
	t0 = time.Now()
	tick := time.NewTicker(time.Duration(float64(time.Second) / l.c.rate))
	sent := int64(0)
	end := t0.Add(l.c.window)
	for time.Now().Before(end) {
		select {
		case <-ctx.Done():
			tick.Stop()
			return r, ctx.Err()
		case <-tick.C:
		}
		a := l.agents[int(sent)%len(l.agents)]
		if err := a.event(int(sent)/len(l.agents), int64(step)); err != nil {
			tick.Stop()
			return r, fmt.Errorf("agent %d: event: %w", a.i, err)
		}
		sent++
	}
	tick.Stop()
	window := time.Since(t0)
	if err := sleep(l.c.drain); err != nil {
		return r, err
	}
	c1, _ = hubbench.CPU(pid)
	g1 := selfCPU()
	all := time.Since(t0)
	r.mem, _ = hubbench.ReadMem(pid)
	l.step.Store(0)
	r.cpuEvents = 100 * float64(c1-c0) / float64(all)
	r.genCPU = 100 * float64(g1-g0) / float64(all)
	r.eventsPerSec = float64(sent) / window.Seconds()
	var lat []float64
	for _, s := range l.subs {
		s.mu.Lock()
		lat = append(lat, s.latencies...)
		r.delivered += s.delivered
		r.resyncs += s.resyncs
		s.mu.Unlock()
	}
	r.expected = sent * int64(len(l.subs))
	r.deliveriesPerSec = float64(r.delivered) / window.Seconds()
	r.lat = benchutil.Summarize(lat)
	sort.Float64s(lat)
	r.p99 = benchutil.Quantile(lat, 0.99)
	fmt.Fprintf(os.Stderr, "load: step %d: %d agents, %d subscribers: RSS %s MiB, CPU %.1f%% quiet, %.1f%% with %.0f events/s; fan-out median %s ms p99 %s ms; %d/%d delivered\n",
		step, r.agents, r.subs, hubbench.MiB(r.mem.RSS), r.cpuQuiet, r.cpuEvents, r.eventsPerSec,
		benchutil.Ms(r.lat.Median), benchutil.Ms(r.p99), r.delivered, r.expected)
	return r, nil
}
