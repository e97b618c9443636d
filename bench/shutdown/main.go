// Command shutdown measures how long corral's daemons take to exit after
// SIGTERM while they are busy: Claude sessions with a turn in progress (the
// fake model holds its answer mid-stream), a terminal viewer and the event
// stream of the dashboard attached, and `corral watch` on the unix socket.
// After each exit it checks that the sessions survived: their tmux sessions
// and their claude processes. Then it starts the daemon again, waits until
// the sessions are busy again, attaches the viewers again and repeats.
//
// Three cases, each -runs times:
//
//   - serve: `corral serve`, viewers on its dashboard;
//   - hub: a `corral hub` with a `corral agent` joined over the device
//     link, viewers on the hub's dashboard; the hub is stopped (the agent
//     keeps its sessions and reconnects when the hub is back);
//   - agent: the same, the agent is stopped.
//
// Run it through bench/shutdown.sh, which builds corral and corral-hook.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/coder/websocket"

	"github.com/corral-dev/corral/bench/internal/benchutil"
	"github.com/corral-dev/corral/bench/internal/hubbench"
	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/datadir"
	"github.com/corral-dev/corral/internal/testkit/fakeapi"
)

type config struct {
	corral, out string
	runs        int
	sessions    int
	cases       string
	timeout     time.Duration
}

func main() {
	var c config
	flag.StringVar(&c.corral, "corral", "", "corral binary, with corral-hook next to it (required)")
	flag.StringVar(&c.out, "out", "", "also write the markdown report here")
	flag.IntVar(&c.runs, "runs", 5, "SIGTERMs per case")
	flag.IntVar(&c.sessions, "sessions", 2, "busy Claude sessions, each with a terminal viewer")
	flag.StringVar(&c.cases, "cases", "serve,hub,agent", "which daemons to stop, comma-separated")
	flag.DurationVar(&c.timeout, "timeout", 30*time.Second, "SIGKILL a daemon that has not exited after this long (and report it)")
	flag.Parse()
	if c.corral == "" {
		fmt.Fprintln(os.Stderr, "shutdown: -corral is required (use bench/shutdown.sh)")
		os.Exit(2)
	}
	os.Exit(benchutil.Run(func(ctx context.Context, t *benchutil.TB) error { return run(ctx, t, c) }))
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "shutdown: "+format+"\n", args...)
}

// sample is one SIGTERM.
type sample struct {
	exit     time.Duration
	killed   bool // still running at -timeout
	lost     int  // sessions whose tmux session or claude process did not survive
	notBusy  int  // sessions that were not busy when the signal went
	viewers  int  // terminal viewers attached when the signal went
	watchers int  // `corral watch` and event streams attached
}

func run(ctx context.Context, t *benchutil.TB, c config) error {
	bin, err := filepath.Abs(c.corral)
	if err != nil {
		return err
	}
	c.corral = bin
	machine := benchutil.Machine()
	results := map[string][]sample{}
	var order []string
	for _, name := range strings.Split(c.cases, ",") {
		name = strings.TrimSpace(name)
		var got []sample
		switch name {
		case "serve":
			got, err = serveCase(ctx, t, c)
		case "hub", "agent":
			got, err = hubCase(ctx, t, c, name)
		default:
			return fmt.Errorf("unknown case %q (serve, hub, agent)", name)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		results[name] = got
		order = append(order, name)
	}
	return benchutil.WriteOutput(c.out, report(c, machine, order, results))
}

// rig is a fake model that holds every HOLD prompt's answer mid-stream,
// and an isolated Claude home.
func newRig(t *benchutil.TB) (*benchutil.ClaudeRig, error) {
	r, err := benchutil.NewClaudeRig(t, "csd-")
	if err != nil {
		return nil, err
	}
	// Never released: the sessions stay busy until the fake closes.
	r.Fake.PrependRule(fakeapi.Rule{Contains: "HOLD", Reply: fakeapi.Stalled(fakeapi.NewGate(), fakeapi.Text("released"))})
	return r, nil
}

// cli runs the corral CLI on a data directory.
func cli(ctx context.Context, corral, dataDir string, env []string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, corral, args...)
	cmd.Env = append(append([]string(nil), env...), "CORRAL_HOME="+dataDir)
	out, err := cmd.Output()
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		return "", fmt.Errorf("corral %s: %w: %s", strings.Join(args, " "), err, ee.Stderr)
	}
	return strings.TrimSpace(string(out)), err
}

func list(ctx context.Context, corral, dataDir string, env []string) ([]api.Session, error) {
	out, err := cli(ctx, corral, dataDir, env, "ls", "--json")
	if err != nil {
		return nil, err
	}
	var l []api.Session
	return l, json.Unmarshal([]byte(out), &l)
}

// waitStatus waits until every session of ids is in one of want, and
// returns how many are not when it gives up.
func waitStatus(ctx context.Context, corral, dataDir string, env []string, ids []string, d time.Duration, want ...api.Status) (int, error) {
	deadline := time.Now().Add(d)
	for {
		l, err := list(ctx, corral, dataDir, env)
		if err != nil {
			return len(ids), err
		}
		bad := 0
		for _, id := range ids {
			ok := false
			for _, s := range l {
				for _, w := range want {
					ok = ok || s.ID == id && s.Status == w
				}
			}
			if !ok {
				bad++
			}
		}
		if bad == 0 || time.Now().After(deadline) {
			return bad, nil
		}
		if !benchutil.Sleep(ctx, 200*time.Millisecond) {
			return bad, ctx.Err()
		}
	}
}

// startSessions starts n Claude sessions on a daemon's data directory and
// gives each a prompt whose answer never comes.
func startSessions(ctx context.Context, c config, dataDir, proj string, env []string) ([]string, error) {
	var ids []string
	for i := range c.sessions {
		id, err := cli(ctx, c.corral, dataDir, env, "new", "--dir", proj, "--name", fmt.Sprintf("busy%d", i))
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	if bad, err := waitStatus(ctx, c.corral, dataDir, env, ids, 90*time.Second, api.StatusIdle); err != nil || bad > 0 {
		return nil, fmt.Errorf("%d sessions not idle after 90 s (%v)", bad, err)
	}
	for _, id := range ids {
		if _, err := cli(ctx, c.corral, dataDir, env, "send", id, "HOLD this turn"); err != nil {
			return nil, err
		}
	}
	if bad, err := waitStatus(ctx, c.corral, dataDir, env, ids, 60*time.Second, api.StatusBusy); err != nil || bad > 0 {
		return nil, fmt.Errorf("%d sessions not busy after 60 s (%v)", bad, err)
	}
	return ids, nil
}

// survivors counts the sessions whose tmux session and claude process are
// gone.
func lost(dataDir string, ids []string, pids map[string]int) int {
	n := 0
	for _, id := range ids {
		err := exec.Command("tmux", "-S", datadir.Socket(dataDir, datadir.TmuxSocket), "has-session", "-t", "="+id).Run()
		alive := err == nil
		if pid := pids[id]; pid > 0 && syscall.Kill(pid, 0) != nil {
			alive = false
		}
		if !alive {
			n++
		}
	}
	return n
}

func claudePIDs(ctx context.Context, corral, dataDir string, env []string) map[string]int {
	out := map[string]int{}
	l, _ := list(ctx, corral, dataDir, env)
	for _, s := range l {
		out[s.ID] = s.ClaudePID
	}
	return out
}

// viewers are a dashboard's terminal WebSockets (one per session) and its
// event stream, read until they end.
type viewers struct {
	conns []*websocket.Conn
	wg    sync.WaitGroup
	term  int
}

func attach(ctx context.Context, base, token string, ids []string) (*viewers, error) {
	v := &viewers{}
	hdr := http.Header{"Authorization": {"Bearer " + token}}
	ws := "ws" + strings.TrimPrefix(base, "http")
	urls := []string{ws + "/api/v1/ws/events"}
	for _, id := range ids {
		urls = append(urls, ws+"/api/v1/sessions/"+id+"/terminal?cols=100&rows=30")
	}
	for i, u := range urls {
		dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		c, _, err := websocket.Dial(dctx, u, &websocket.DialOptions{HTTPHeader: hdr})
		cancel()
		if err != nil {
			v.close()
			return nil, fmt.Errorf("viewer %s: %w", u, err)
		}
		c.SetReadLimit(16 << 20)
		if i > 0 {
			// A terminal is attached once its first output arrives.
			rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			_, _, err := c.Read(rctx)
			cancel()
			if err != nil {
				c.CloseNow()
				v.close()
				return nil, fmt.Errorf("viewer %s: no output: %w", u, err)
			}
			v.term++
		}
		v.conns = append(v.conns, c)
		v.wg.Add(1)
		go func() {
			defer v.wg.Done()
			for {
				if _, _, err := c.Read(context.Background()); err != nil {
					return
				}
			}
		}()
	}
	return v, nil
}

func (v *viewers) close() {
	for _, c := range v.conns {
		c.CloseNow()
	}
	v.wg.Wait()
}

// watch starts `corral watch` on a data directory's socket.
func watch(corral, dataDir string, env []string) (*exec.Cmd, error) {
	cmd := exec.Command(corral, "watch", "--json")
	cmd.Env = append(append([]string(nil), env...), "CORRAL_HOME="+dataDir)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return cmd, nil
}

func stopWatch(cmd *exec.Cmd) {
	if cmd != nil {
		cmd.Process.Kill()
		cmd.Wait()
	}
}

// term sends SIGTERM and returns how long the process took to exit.
func term(p *hubbench.Proc, timeout time.Duration) (time.Duration, bool) {
	start := time.Now()
	p.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.Done():
		return time.Since(start), false
	case <-time.After(timeout):
		p.Cmd.Process.Kill()
		<-p.Done()
		return time.Since(start), true
	}
}

func serveCase(ctx context.Context, t *benchutil.TB, c config) ([]sample, error) {
	r, err := newRig(t)
	if err != nil {
		return nil, err
	}
	env := append(r.Claude.Environ(), "GORACE=atexit_sleep_ms=0")
	var out []sample
	var ids []string
	for i := range c.runs {
		logPath := filepath.Join(r.Root, fmt.Sprintf("serve-%d.log", i))
		s := hubbench.StartServe(t, c.corral, r.DataDir, env, logPath)
		if ids == nil {
			if ids, err = startSessions(ctx, c, r.DataDir, r.Proj, env); err != nil {
				return nil, err
			}
		}
		var smp sample
		smp.notBusy, _ = waitStatus(ctx, c.corral, r.DataDir, env, ids, 30*time.Second, api.StatusBusy)
		pids := claudePIDs(ctx, c.corral, r.DataDir, env)
		v, err := attach(ctx, s.URL, s.Token, ids)
		if err != nil {
			return nil, err
		}
		w, err := watch(c.corral, r.DataDir, env)
		if err != nil {
			return nil, err
		}
		smp.viewers, smp.watchers = v.term, 2
		smp.exit, smp.killed = term(s.Proc, c.timeout)
		v.close()
		stopWatch(w)
		smp.lost = lost(r.DataDir, ids, pids)
		logf("serve run %d: exit %v (killed %v, lost %d, not busy %d)", i+1, smp.exit.Round(time.Millisecond), smp.killed, smp.lost, smp.notBusy)
		out = append(out, smp)
	}
	return out, nil
}

// freePort is a port of 127.0.0.1 free now, for a hub that restarts on it.
func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func hubCase(ctx context.Context, t *benchutil.TB, c config, stop string) ([]sample, error) {
	r, err := newRig(t)
	if err != nil {
		return nil, err
	}
	env := append(r.Claude.Environ(), "GORACE=atexit_sleep_ms=0")
	hubDir := filepath.Join(r.Root, "hub")
	if err := os.MkdirAll(hubDir, 0o700); err != nil {
		return nil, err
	}
	addr, err := freePort()
	if err != nil {
		return nil, err
	}
	startHub := func(i int) *hubbench.Hub {
		return hubbench.StartHub(t, c.corral, hubDir, env, filepath.Join(r.Root, fmt.Sprintf("hub-%d.log", i)), "--listen", addr, "--log-level", "warn")
	}
	hub := startHub(0)
	userTok := hubbench.Admin(t, c.corral, hubDir, env, "user", "add", "alice")
	devTok := hubbench.Admin(t, c.corral, hubDir, env, "device", "add", "m1", "--user", "alice")
	startAgent := func(i int) *hubbench.Local {
		return hubbench.StartAgent(t, c.corral, r.DataDir, hub.URL, devTok, env, filepath.Join(r.Root, fmt.Sprintf("agent-%d.log", i)))
	}
	ag := startAgent(0)
	ids, err := startSessions(ctx, c, r.DataDir, r.Proj, env)
	if err != nil {
		return nil, err
	}
	var out []sample
	for i := range c.runs {
		var smp sample
		smp.notBusy, _ = waitStatus(ctx, c.corral, r.DataDir, env, ids, 30*time.Second, api.StatusBusy)
		// The hub lists them once the agent has joined it.
		if err := waitHubSessions(ctx, hub.URL, userTok, ids, 30*time.Second); err != nil {
			return nil, err
		}
		pids := claudePIDs(ctx, c.corral, r.DataDir, env)
		v, err := attach(ctx, hub.URL, userTok, ids)
		if err != nil {
			return nil, err
		}
		w, err := watch(c.corral, r.DataDir, env)
		if err != nil {
			return nil, err
		}
		smp.viewers, smp.watchers = v.term, 2
		if stop == "hub" {
			smp.exit, smp.killed = term(hub.Proc, c.timeout)
		} else {
			smp.exit, smp.killed = term(ag.Proc, c.timeout)
		}
		v.close()
		stopWatch(w)
		smp.lost = lost(r.DataDir, ids, pids)
		logf("%s run %d: exit %v (killed %v, lost %d, not busy %d)", stop, i+1, smp.exit.Round(time.Millisecond), smp.killed, smp.lost, smp.notBusy)
		out = append(out, smp)
		if stop == "hub" {
			hub = startHub(i + 1)
		} else {
			ag = startAgent(i + 1)
		}
	}
	return out, nil
}

// waitHubSessions waits until the hub lists every session of ids as online.
func waitHubSessions(ctx context.Context, base, token string, ids []string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/sessions", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		var l []api.Session
		if resp, err := http.DefaultClient.Do(req); err == nil {
			json.NewDecoder(resp.Body).Decode(&l)
			resp.Body.Close()
		}
		n := 0
		for _, id := range ids {
			for _, s := range l {
				if s.ID == id && !s.Offline {
					n++
				}
			}
		}
		if n == len(ids) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the hub lists %d of %d sessions online after %v", n, len(ids), d)
		}
		if !benchutil.Sleep(ctx, 100*time.Millisecond) {
			return ctx.Err()
		}
	}
}

func report(c config, machine string, order []string, results map[string][]sample) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Exit after SIGTERM, busy\n\n%s\n\n", machine)
	fmt.Fprintf(&b, "%d busy Claude session(s) (a turn held mid-stream by the fake model), each with a terminal viewer "+
		"on the dashboard, plus the dashboard's event stream and `corral watch` on the unix socket; %d SIGTERMs per case. "+
		"Time from the signal to the process's exit (reaped).\n\n", c.sessions, c.runs)
	b.WriteString("| daemon stopped | runs | min ms | median ms | max ms | killed at timeout | sessions lost | not busy at the signal |\n|---|---|---|---|---|---|---|---|\n")
	for _, name := range order {
		var xs []float64
		killed, lostN, notBusy := 0, 0, 0
		for _, s := range results[name] {
			xs = append(xs, float64(s.exit)/float64(time.Millisecond))
			if s.killed {
				killed++
			}
			lostN += s.lost
			notBusy += s.notBusy
		}
		sum := benchutil.Summarize(xs)
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %d | %d | %d |\n", name, sum.N, benchutil.Ms(sum.Min), benchutil.Ms(sum.Median), benchutil.Ms(sum.Max), killed, lostN, notBusy)
	}
	b.WriteString("\nEach run: ")
	for _, name := range order {
		var parts []string
		for _, s := range results[name] {
			parts = append(parts, benchutil.Ms(float64(s.exit)/float64(time.Millisecond)))
		}
		fmt.Fprintf(&b, "%s %s ms; ", name, strings.Join(parts, ", "))
	}
	b.WriteString("\n")
	return b.String()
}
