// Command capacity measures a hub at the scale of issue 12: thousands of
// agents with 10 sessions each and a thousand browsers, on one SQLite hub
// or on two replicas over PostgreSQL and NATS (-replicas 2), then a
// reconnect storm: one hub process killed with SIGKILL (-replicas 1: the
// hub, started again on its port; -replicas 2: replica A, whose agents
// and browsers move to B).
//
// From this process, on 127.0.0.1: fake agents over the real device link
// (a key each, enrolled at the first connection; a sync of -sessions
// sessions; heartbeats; reconnecting with the real agent's backoff, 0.5 s
// doubling to 30 s with ±20 % jitter, to the next replica when theirs is
// gone), and browsers: events WebSockets, one user's each (-users users,
// the agents and the browsers spread over them), each resuming with
// ?since= on another replica when its own dies and counting what it got
// twice or never. Reported: the hubs' memory and CPU, the event latency
// from an agent's send to a browser's read (p50/p99), and for the storm
// the time until every agent is back and every browser resumed, and the
// events lost or doubled.
//
// Loops and counts are bounded by the flags. Run it through
// bench/hub/capacity.sh, which builds corral.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/coder/websocket"

	"github.com/corral-dev/corral/bench/internal/benchutil"
	"github.com/corral-dev/corral/bench/internal/hubbench"
	"github.com/corral-dev/corral/internal/agentlink"
	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/datadir"
	"github.com/corral-dev/corral/internal/devicekey"
	"github.com/corral-dev/corral/internal/hub"
	"github.com/corral-dev/corral/internal/link"
	"github.com/corral-dev/corral/internal/store"
	"github.com/corral-dev/corral/internal/store/postgres"
	"github.com/corral-dev/corral/internal/testkit/natstest"
	"github.com/corral-dev/corral/internal/testkit/pgtest"
)

type config struct {
	corral, out, memLimit    string
	agents, sessions, users  int
	browsers, replicas       int
	rate                     float64
	window, settle, stormFor time.Duration
}

func main() {
	var c config
	flag.StringVar(&c.corral, "corral", "", "corral binary (required)")
	flag.StringVar(&c.out, "out", "", "also write the markdown report here")
	flag.IntVar(&c.agents, "agents", 10000, "agents (at most 15000)")
	flag.IntVar(&c.sessions, "sessions", 10, "sessions per agent (at most 100)")
	flag.IntVar(&c.users, "users", 1000, "users the agents and browsers belong to, round robin")
	flag.IntVar(&c.browsers, "browsers", 1000, "browsers' event streams (at most 5000)")
	flag.IntVar(&c.replicas, "replicas", 1, "1: one hub on SQLite; 2: two replicas on PostgreSQL and NATS")
	flag.Float64Var(&c.rate, "rate", 100, "session events per second, all agents together (at most 2000)")
	flag.DurationVar(&c.window, "window", 20*time.Second, "event window (at most 2m)")
	flag.DurationVar(&c.settle, "settle", 3*time.Second, "wait after connecting, before measuring")
	flag.DurationVar(&c.stormFor, "storm", 3*time.Minute, "longest the storm may take to settle")
	flag.StringVar(&c.memLimit, "hub-gomemlimit", "", "GOMEMLIMIT of the hub processes (e.g. 900MiB; default: none)")
	flag.Parse()
	if c.corral == "" || c.agents < 1 || c.agents > 15000 || c.sessions < 1 || c.sessions > 100 || c.users < 1 || c.users > c.agents ||
		c.browsers < 1 || c.browsers > 5000 || (c.replicas != 1 && c.replicas != 2) || c.rate <= 0 || c.rate > 2000 ||
		c.window <= 0 || c.window > 2*time.Minute {
		flag.Usage()
		os.Exit(2)
	}
	raiseFileLimit()
	os.Exit(benchutil.Run(func(ctx context.Context, t *benchutil.TB) error { return run(ctx, t, c) }))
}

// raiseFileLimit lifts this process's open-file limit as far as it may
// (the hubs inherit it): this process holds a file per agent and browser,
// and a hub takes at most three quarters of its limit in connections
// (internal/bound), so 10,000 agents and 1,000 browsers need about 15,000.
func raiseFileLimit() {
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl) != nil {
		return
	}
	want := syscall.Rlimit{Cur: 1 << 17, Max: max(rl.Max, 1<<17)}
	if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want) != nil {
		rl.Cur = rl.Max
		syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl)
	}
	syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl)
	fmt.Fprintf(os.Stderr, "capacity: open files up to %d\n", rl.Cur)
}

var base = time.Now()

type rig struct {
	c       config
	hubs    []*hubbench.Hub
	addrs   []string
	dirs    []string
	env     []string
	logs    string
	tokens  []string // users'
	devToks []string
	keys    []*devicekey.Key

	step      atomic.Int64
	connected atomic.Int64 // agents with a live link
	dials     atomic.Int64
	agents    []*fakeAgent
	browsers  []*browser

	mu     sync.Mutex
	cancel []context.CancelFunc
	wg     sync.WaitGroup
}

func run(ctx context.Context, t *benchutil.TB, c config) error {
	machine := benchutil.Machine()
	r := &rig{c: c, logs: t.MkdirTemp("cap-logs-")}
	home := t.MkdirTemp("cap-home-")
	r.env = append(benchutil.CleanEnv(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_DATA_HOME="+filepath.Join(home, ".local", "share"))
	if c.memLimit != "" {
		r.env = append(r.env, "GOMEMLIMIT="+c.memLimit)
	}
	var st store.Store
	what := "one `corral hub` on SQLite"
	if c.replicas == 1 {
		dir := t.MkdirTemp("cap-hub-")
		r.dirs = []string{dir}
		if err := datadir.Ensure(dir); err != nil {
			return err
		}
		s, err := store.Open(filepath.Join(dir, datadir.Database))
		if err != nil {
			return err
		}
		st = s
	} else {
		what = "two `corral hub` replicas on one PostgreSQL (throwaway cluster, unix socket) and one nats-server"
		pg, err := pgtest.Start(ctx)
		if err != nil {
			return err
		}
		t.Cleanup(func() { pg.Stop() })
		db, err := pg.NewDatabase(ctx)
		if err != nil {
			return err
		}
		bin, err := natstest.Binary()
		if err != nil {
			return err
		}
		ns, err := natstest.StartBinary(ctx, bin, t.MkdirTemp("cap-nats-"))
		if err != nil {
			return err
		}
		t.Cleanup(ns.Stop)
		r.env = append(r.env, "CORRAL_DB="+db, "CORRAL_BUS="+ns.URL())
		s, err := postgres.Open(ctx, db)
		if err != nil {
			return err
		}
		st = s
		r.dirs = []string{t.MkdirTemp("cap-hub-a-"), t.MkdirTemp("cap-hub-b-")}
	}
	t0 := time.Now()
	if err := r.accounts(ctx, st); err != nil {
		st.Close()
		return err
	}
	st.Close()
	fmt.Fprintf(os.Stderr, "capacity: %d users and %d devices made in %v\n", c.users, c.agents, time.Since(t0).Round(time.Millisecond))
	for i, dir := range r.dirs {
		port, err := freePort()
		if err != nil {
			return err
		}
		r.addrs = append(r.addrs, "127.0.0.1:"+strconv.Itoa(port))
		r.hubs = append(r.hubs, r.startHub(t, i))
		_ = dir
	}
	idle := r.mem()

	// Connect.
	t0 = time.Now()
	for i := 0; i < c.agents; i++ {
		a := &fakeAgent{r: r, i: i, up: make(chan struct{})}
		r.agents = append(r.agents, a)
	}
	sem := make(chan struct{}, 32)
	for _, a := range r.agents {
		sem <- struct{}{}
		r.background(func(ctx context.Context) { a.loop(ctx, sem) })
	}
	for range cap(sem) {
		sem <- struct{}{}
	}
	for range cap(sem) {
		<-sem
	}
	if !waitUntil(ctx, 5*time.Minute, func() bool { return r.connected.Load() == int64(c.agents) }) {
		return fmt.Errorf("%d of %d agents connected", r.connected.Load(), c.agents)
	}
	agentsUp := time.Since(t0)
	fmt.Fprintf(os.Stderr, "capacity: %d agents connected and synced in %v\n", c.agents, agentsUp.Round(time.Millisecond))
	withAgents := r.mem()
	t0 = time.Now()
	for i := 0; i < c.browsers; i++ {
		b := &browser{r: r, i: i, user: i % c.users, replica: i % c.replicas, seen: map[uint64]int{}}
		r.browsers = append(r.browsers, b)
	}
	errs := make(chan error, c.browsers)
	for _, b := range r.browsers {
		sem <- struct{}{}
		go func() { defer func() { <-sem }(); errs <- b.connect(ctx) }()
	}
	for range cap(sem) {
		sem <- struct{}{}
	}
	for range cap(sem) {
		<-sem
	}
	for range c.browsers {
		if err := <-errs; err != nil {
			return err
		}
	}
	browsersUp := time.Since(t0)
	fmt.Fprintf(os.Stderr, "capacity: %d browsers subscribed in %v\n", c.browsers, browsersUp.Round(time.Millisecond))
	// Every browser lists every session of its user (on replicas, once
	// every sync has gone through the event log).
	if !waitUntil(ctx, 5*time.Minute, r.browsersComplete) {
		return fmt.Errorf("the browsers do not list every session")
	}
	listed := time.Since(t0)
	fmt.Fprintf(os.Stderr, "capacity: every browser lists every session of its user %v after subscribing\n", listed.Round(time.Millisecond))
	benchutil.Sleep(ctx, c.settle)

	steady, err := r.window(ctx, 1)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "capacity: steady: %s\n", steady)

	// The storm.
	victim := 0
	killed := time.Now()
	r.hubs[victim].Cmd.Process.Signal(syscall.SIGKILL)
	<-r.hubs[victim].Done()
	if c.replicas == 1 {
		r.hubs[victim] = r.startHub(t, victim)
	}
	restarted := time.Since(killed)
	if !waitUntil(ctx, c.stormFor, func() bool { return r.connected.Load() == int64(c.agents) && r.browsersUp() == c.browsers }) {
		return fmt.Errorf("after the kill: %d of %d agents and %d of %d browsers back", r.connected.Load(), c.agents, r.browsersUp(), c.browsers)
	}
	back := time.Since(killed)
	fmt.Fprintf(os.Stderr, "capacity: storm: every agent and browser back %v after the kill\n", back.Round(time.Millisecond))
	stormPeak := r.mem()
	benchutil.Sleep(ctx, c.settle)
	after, err := r.window(ctx, 2)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "capacity: after the storm: %s\n", after)
	lost, doubled, snapshots := r.integrity()

	var b strings.Builder
	fmt.Fprintf(&b, "#### %d agents × %d sessions, %d browsers: %s\n\n%s\n- load average at the end: %s\n", c.agents, c.sessions, c.browsers, what, machine, benchutil.LoadAvg())
	lim := ""
	if c.memLimit != "" {
		lim = " -hub-gomemlimit " + c.memLimit
	}
	fmt.Fprintf(&b, "- rerun: `bench/hub/capacity.sh -replicas %d -agents %d -sessions %d -users %d -browsers %d -rate %.0f -window %v%s`\n",
		c.replicas, c.agents, c.sessions, c.users, c.browsers, c.rate, c.window, lim)
	fmt.Fprintf(&b, "- %d users, each with %d agents and %d browser(s); fake agents and browsers in one generator process on the same machine, 127.0.0.1\n",
		c.users, c.agents/c.users, max(1, c.browsers/c.users))
	fmt.Fprintf(&b, "- connect: %d agents (handshake, enrolment, sync) in %v; %d browsers (snapshot) in %v, listing every session of their user %v after they started\n",
		c.agents, agentsUp.Round(10*time.Millisecond), c.browsers, browsersUp.Round(10*time.Millisecond), listed.Round(10*time.Millisecond))
	fmt.Fprintf(&b, "- hub memory (VmRSS, per process): idle %s; with the agents %s; with the browsers too %s; at the storm's end %s\n\n", idle, withAgents, steady.mem, stormPeak)
	fmt.Fprintf(&b, "| window | hub VmRSS MiB | VmHWM MiB | hub CPU | events/s | delivered | p50 ms | p99 ms | max ms | generator CPU |\n|---|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, w := range []windowResult{steady, after} {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %.0f | %d/%d | %s | %s | %s | %.0f%% |\n", w.name, w.memRSS, w.memHWM, w.cpu, w.rate, w.delivered, w.expected,
			benchutil.Ms(w.p50), benchutil.Ms(w.p99), benchutil.Ms(w.max), w.genCPU)
	}
	fmt.Fprintf(&b, "\nStorm: SIGKILL of %s at t=0; %s; every agent reconnected and synced and every browser resumed %v after the kill (%d dials in all). Browsers' events across the storm: %d lost, %d doubled, %d snapshots taken on resuming.\n",
		map[bool]string{true: "the hub", false: "replica A"}[c.replicas == 1],
		map[bool]string{true: fmt.Sprintf("the hub started again on its port %v later", restarted.Round(10*time.Millisecond)), false: "its agents and browsers move to replica B"}[c.replicas == 1],
		back.Round(10*time.Millisecond), r.dials.Load(), lost, doubled, snapshots)
	return benchutil.WriteOutput(c.out, b.String())
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (r *rig) startHub(t *benchutil.TB, i int) *hubbench.Hub {
	p := hubbench.StartHubOn(t, r.c.corral, r.dirs[i], r.env, filepath.Join(r.logs, fmt.Sprintf("hub%d-%d.log", i, time.Now().UnixNano())), r.addrs[i],
		"--log-level", "warn", "--max-connections", "20000", "--max-device-sessions", "1000")
	return p
}

func (r *rig) accounts(ctx context.Context, st store.Store) error {
	acc := hub.NewAccounts(st)
	for u := 0; u < r.c.users; u++ {
		tok, err := acc.AddUser(ctx, fmt.Sprintf("u%04d", u), "")
		if err != nil {
			return err
		}
		r.tokens = append(r.tokens, tok)
	}
	r.devToks = make([]string, r.c.agents)
	r.keys = make([]*devicekey.Key, r.c.agents)
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := 0; i < r.c.agents; i++ {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			_, tok, err := acc.AddDevice(ctx, fmt.Sprintf("u%04d", i%r.c.users), fmt.Sprintf("m%05d", i), 24*time.Hour)
			k, kerr := devicekey.Generate()
			mu.Lock()
			defer mu.Unlock()
			if err = errors.Join(err, kerr); err != nil && first == nil {
				first = err
			}
			r.devToks[i], r.keys[i] = tok, k
		})
	}
	wg.Wait()
	return first
}

func (r *rig) background(f func(ctx context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	r.mu.Lock()
	r.cancel = append(r.cancel, cancel)
	r.mu.Unlock()
	r.wg.Add(1)
	go func() { defer r.wg.Done(); f(ctx) }()
}

func (r *rig) mem() string {
	var parts []string
	for _, h := range r.hubs {
		m, _ := hubbench.ReadMem(h.PID())
		parts = append(parts, hubbench.MiB(m.RSS)+" MiB")
	}
	return strings.Join(parts, " + ")
}

func waitUntil(ctx context.Context, d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) || !benchutil.Sleep(ctx, 50*time.Millisecond) {
			return false
		}
	}
	return true
}

// fakeAgent is a device speaking the link, reconnecting as the real agent.
type fakeAgent struct {
	r        *rig
	i        int
	up       chan struct{}
	mu       sync.Mutex
	peer     *link.Peer
	seq      uint64
	sessions []api.Session
}

func (a *fakeAgent) loop(ctx context.Context, sem chan struct{}) {
	first := true
	backoff := 500 * time.Millisecond
	// A user's agents alternate between the replicas.
	pref := (a.i / a.r.c.users) % len(a.r.addrs)
	for ctx.Err() == nil {
		var err error
		for k := range a.r.addrs {
			addr := a.r.addrs[(pref+k)%len(a.r.addrs)]
			a.r.dials.Add(1)
			if err = a.connect(ctx, addr); err == nil {
				break
			}
		}
		if first {
			<-sem
			first = false
		}
		if err == nil {
			backoff = 500 * time.Millisecond
			a.r.connected.Add(1)
			a.peer.Run(ctx)
			a.r.connected.Add(-1)
		}
		j := 0.8 + 0.4*rand.Float64()
		if !benchutil.Sleep(ctx, time.Duration(float64(backoff)*j)) {
			return
		}
		backoff = min(2*backoff, 30*time.Second)
	}
}

func (a *fakeAgent) connect(ctx context.Context, addr string) error {
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(dctx, "ws://"+addr+"/api/v1/link?v="+strconv.Itoa(link.Protocol), &websocket.DialOptions{
		HTTPHeader: agentlink.Header(a.r.keys[a.i], a.r.devToks[a.i]),
	})
	if err != nil {
		return err
	}
	conn := link.NewWebSocket(c, 0)
	welcome, err := link.ClientHello(dctx, conn, agentlink.Answer(a.r.keys[a.i], addr, link.Msg{Hostname: fmt.Sprintf("fake-%05d", a.i), OS: "linux", Arch: runtime.GOARCH, Version: "capacity"}))
	if err != nil {
		c.CloseNow()
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.sessions == nil {
		now := time.Now().UTC()
		for j := 0; j < a.r.c.sessions; j++ {
			a.sessions = append(a.sessions, api.Session{
				ID: fmt.Sprintf("s%05dx%03d", a.i, j), Name: fmt.Sprintf("proj-%d", j), Dir: fmt.Sprintf("/home/dev/src/project-%05d-%03d", a.i, j),
				Kind: api.KindClaude, Status: api.StatusIdle, ClaudeSessionID: fmt.Sprintf("9f1c2d3e-4b5a-6789-abcd-%012d", a.i*1000+j),
				LastMessage: "I updated the handler and added a test for the empty case; all tests pass.",
				Usage:       api.Usage{InputTokens: 12345, OutputTokens: 2345}, CreatedAt: now, UpdatedAt: now,
			})
		}
	}
	var p *link.Peer
	p = link.NewPeer(conn, link.Options{Heartbeat: time.Duration(welcome.HeartbeatMS) * time.Millisecond, OnMsg: func(m link.Msg) {
		if m.T == link.TypeReq {
			p.Reply(m.ID, nil, api.Errorf(api.CodeBadRequest, "a fake agent serves no requests"))
		}
	}})
	a.peer = p
	a.seq++
	return p.Send(link.Msg{T: link.TypeSync, Seq: a.seq, Sessions: a.sessions})
}

// event sends one session change whose last message is a probe.
func (a *fakeAgent) event(j int, step int64) {
	a.mu.Lock()
	p := a.peer
	if p == nil {
		a.mu.Unlock()
		return
	}
	a.seq++
	s := a.sessions[j%len(a.sessions)]
	prev := s.Status
	s.Status = map[bool]api.Status{true: api.StatusBusy, false: api.StatusIdle}[s.Status == api.StatusIdle]
	s.UpdatedAt = time.Now().UTC()
	s.LastMessage = fmt.Sprintf("probe:%d:%d", step, time.Since(base).Nanoseconds())
	a.sessions[j%len(a.sessions)] = s
	ev := api.Event{Seq: a.seq, Type: api.EventSession, Time: s.UpdatedAt, Session: &s, Prev: prev}
	m := link.Msg{T: link.TypeEvent, Seq: a.seq, Event: &ev}
	a.mu.Unlock()
	p.Send(m)
}

// browser is one dashboard's events WebSocket, resuming on another
// replica with ?since= when its own dies.
type browser struct {
	r       *rig
	i, user int
	replica int

	mu        sync.Mutex
	up        bool
	last      uint64
	seen      map[uint64]int  // seq -> times, after the first snapshot
	known     map[string]bool // the sessions it lists
	snapshots int
	lat       []float64
}

var probeKey = []byte(`"last_message":"probe:`)

func (b *browser) connect(ctx context.Context) error {
	c, err := b.dial(ctx, 0)
	if err != nil {
		return err
	}
	b.r.background(func(ctx context.Context) { b.loop(ctx, c) })
	return nil
}

func (b *browser) dial(ctx context.Context, since uint64) (*websocket.Conn, error) {
	dctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	q := ""
	if since != 0 {
		q = "?since=" + strconv.FormatUint(since, 10)
	}
	c, _, err := websocket.Dial(dctx, "ws://"+b.r.addrs[b.replica]+"/api/v1/ws/events"+q, &websocket.DialOptions{
		HTTPHeader: http.Header{"Authorization": {"Bearer " + b.r.tokens[b.user]}},
	})
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(256 << 20)
	b.mu.Lock()
	b.up = true
	b.mu.Unlock()
	return c, nil
}

func (b *browser) loop(ctx context.Context, c *websocket.Conn) {
	for {
		b.read(ctx, c)
		c.CloseNow()
		b.mu.Lock()
		b.up = false
		since := b.last
		b.mu.Unlock()
		// Its replica is gone: the next one, from the last event seen.
		for ctx.Err() == nil {
			b.replica = (b.replica + 1) % len(b.r.addrs)
			var err error
			if c, err = b.dial(ctx, since); err == nil {
				break
			}
			if !benchutil.Sleep(ctx, 250*time.Millisecond) {
				return
			}
		}
		if ctx.Err() != nil {
			return
		}
	}
}

func (b *browser) read(ctx context.Context, c *websocket.Conn) {
	for {
		_, msg, err := c.Read(ctx)
		if err != nil {
			return
		}
		now := time.Since(base).Nanoseconds()
		var head struct {
			Seq  uint64        `json:"seq"`
			Type api.EventType `json:"type"`
		}
		if json.Unmarshal(msg, &head) != nil {
			continue
		}
		b.mu.Lock()
		switch head.Type {
		case api.EventSnapshot:
			if b.last != 0 {
				b.snapshots++
			}
			b.last = head.Seq
			var ev api.Event
			if json.Unmarshal(msg, &ev) == nil {
				b.known = map[string]bool{}
				for _, s := range ev.Sessions {
					b.known[s.ID] = true
				}
			}
		case api.EventSession, api.EventRemoved:
			b.seen[head.Seq]++
			b.last = head.Seq
			if head.Type == api.EventSession {
				var ev api.Event
				if json.Unmarshal(msg, &ev) == nil && ev.Session != nil {
					if b.known == nil {
						b.known = map[string]bool{}
					}
					b.known[ev.Session.ID] = true
				}
			}
		}
		if i := bytes.Index(msg, probeKey); i >= 0 {
			rest := msg[i+len(probeKey):]
			if j := bytes.IndexByte(rest, '"'); j >= 0 {
				stepStr, sentStr, _ := strings.Cut(string(rest[:j]), ":")
				step, _ := strconv.ParseInt(stepStr, 10, 64)
				sent, _ := strconv.ParseInt(sentStr, 10, 64)
				if step == b.r.step.Load() {
					b.lat = append(b.lat, float64(now-sent)/1e6)
				}
			}
		}
		b.mu.Unlock()
	}
}

func (r *rig) browsersComplete() bool {
	perUser := make([]int, r.c.users)
	for i := 0; i < r.c.agents; i++ {
		perUser[i%r.c.users] += r.c.sessions
	}
	for _, b := range r.browsers {
		b.mu.Lock()
		n := len(b.known)
		b.mu.Unlock()
		if n != perUser[b.user] {
			return false
		}
	}
	return true
}

func (r *rig) browsersUp() int {
	n := 0
	for _, b := range r.browsers {
		b.mu.Lock()
		if b.up {
			n++
		}
		b.mu.Unlock()
	}
	return n
}

// integrity counts, over every browser, the numbers between its first
// and its last event it never got, and those it got twice.
func (r *rig) integrity() (lost, doubled, snapshots int) {
	for _, b := range r.browsers {
		b.mu.Lock()
		var lo, hi uint64
		for s, n := range b.seen {
			if lo == 0 || s < lo {
				lo = s
			}
			hi = max(hi, s)
			if n > 1 {
				doubled += n - 1
			}
		}
		if b.snapshots == 0 && lo != 0 {
			lost += int(hi-lo+1) - len(b.seen)
		}
		snapshots += b.snapshots
		b.mu.Unlock()
	}
	return lost, doubled, snapshots
}

type windowResult struct {
	name          string
	mem, memRSS   string
	memHWM, cpu   string
	rate          float64
	delivered     int
	expected      int
	p50, p99, max float64
	genCPU        float64
}

func (w windowResult) String() string {
	return fmt.Sprintf("RSS %s, CPU %s, %.0f events/s, %d/%d delivered, p50 %s ms, p99 %s ms", w.memRSS, w.cpu, w.rate, w.delivered, w.expected,
		benchutil.Ms(w.p50), benchutil.Ms(w.p99))
}

// window sends -rate events a second for -window, from agents picked in
// turn, and measures their delivery to the browsers of their users.
func (r *rig) window(ctx context.Context, step int64) (windowResult, error) {
	w := windowResult{name: map[int64]string{1: "steady", 2: "after the storm"}[step]}
	for _, b := range r.browsers {
		b.mu.Lock()
		b.lat = b.lat[:0]
		b.mu.Unlock()
	}
	perUser := make([]int, r.c.users)
	for _, b := range r.browsers {
		perUser[b.user]++
	}
	r.step.Store(step)
	cpu0 := r.cpu()
	g0, _ := hubbench.CPU(os.Getpid())
	t0 := time.Now()
	tick := time.NewTicker(time.Duration(float64(time.Second) / r.c.rate))
	sent := 0
	for time.Since(t0) < r.c.window {
		select {
		case <-ctx.Done():
			tick.Stop()
			return w, ctx.Err()
		case <-tick.C:
		}
		a := r.agents[(sent*7919)%len(r.agents)]
		a.event(sent/len(r.agents), step)
		w.expected += perUser[a.i%r.c.users]
		sent++
	}
	tick.Stop()
	elapsed := time.Since(t0)
	benchutil.Sleep(ctx, 2*time.Second) // late deliveries
	all := time.Since(t0)
	cpu1 := r.cpu()
	g1, _ := hubbench.CPU(os.Getpid())
	r.step.Store(0)
	var parts, hwm, rss []string
	for i, h := range r.hubs {
		parts = append(parts, fmt.Sprintf("%.1f%%", 100*float64(cpu1[i]-cpu0[i])/float64(all)))
		m, _ := hubbench.ReadMem(h.PID())
		rss = append(rss, hubbench.MiB(m.RSS))
		hwm = append(hwm, hubbench.MiB(m.HWM))
	}
	w.cpu, w.memRSS, w.memHWM = strings.Join(parts, " + "), strings.Join(rss, " + "), strings.Join(hwm, " + ")
	w.mem = w.memRSS
	w.genCPU = 100 * float64(g1-g0) / float64(all)
	w.rate = float64(sent) / elapsed.Seconds()
	var lat []float64
	for _, b := range r.browsers {
		b.mu.Lock()
		lat = append(lat, b.lat...)
		b.mu.Unlock()
	}
	w.delivered = len(lat)
	sort.Float64s(lat)
	if len(lat) > 0 {
		w.p50, w.p99, w.max = benchutil.Quantile(lat, 0.5), benchutil.Quantile(lat, 0.99), lat[len(lat)-1]
	}
	return w, nil
}

func (r *rig) cpu() []time.Duration {
	out := make([]time.Duration, len(r.hubs))
	for i, h := range r.hubs {
		out[i], _ = hubbench.CPU(h.PID())
	}
	return out
}
