// Command rtt measures what the hub–agent device link adds to a request:
// the same small requests, from a client in this process over HTTP or the
// unix socket, to
//
//   - a `corral hub` on 127.0.0.1, which relays to a `corral agent` (a
//     separate process with its own data directory) over the WebSocket
//     device link;
//   - `corral serve` over HTTP: a hub and an agent in one process, joined by
//     the in-memory link;
//   - `corral serve` over its unix socket (in-memory link, no TCP);
//   - the agent's own unix socket (no link at all).
//
// Requests, on a shell session of the machine (no Claude needed):
//
//   - screen: GET /api/v1/sessions/{id}/screen (the agent runs tmux
//     capture-pane);
//   - viewed: POST /api/v1/sessions/{id}/viewed (in memory on the agent);
//   - get: GET /api/v1/sessions/{id} (the hub answers from its own state; no
//     link round trip): the HTTP floor.
//
// Every round runs each (target, request) pair once, in a new random order,
// so the targets share the machine's noise. Connections are kept alive.
// With -linkbench it also runs internal/link's Call benchmark (the link
// alone, no HTTP, no agent).
//
// Run it through bench/hub/rtt.sh, which builds corral.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/corral-dev/corral/bench/internal/benchutil"
	"github.com/corral-dev/corral/bench/internal/hubbench"
	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/client"
)

type config struct {
	corral, out string
	n, warmup   int
	linkBench   bool
}

func main() {
	var c config
	flag.StringVar(&c.corral, "corral", "", "corral binary (required)")
	flag.StringVar(&c.out, "out", "", "also write the markdown report here")
	flag.IntVar(&c.n, "n", 1000, "measured rounds (each sends every request to every target once); at most 100000")
	flag.IntVar(&c.warmup, "warmup", 50, "rounds before the measured ones")
	flag.BoolVar(&c.linkBench, "linkbench", true, "also run go test -bench Call ./internal/link (from the repository root)")
	flag.Parse()
	if c.corral == "" || c.n < 1 || c.n > 100000 || c.warmup < 0 || c.warmup > 10000 {
		flag.Usage()
		os.Exit(2)
	}
	os.Exit(benchutil.Run(func(ctx context.Context, t *benchutil.TB) error { return run(ctx, t, c) }))
}

type target struct {
	name string
	c    *client.Client
	id   string
}

type op struct {
	name string
	do   func(ctx context.Context, c *client.Client, id string) error
}

var ops = []op{
	{"get", func(ctx context.Context, c *client.Client, id string) error { _, err := c.Session(ctx, id); return err }},
	{"viewed", func(ctx context.Context, c *client.Client, id string) error { return c.Viewed(ctx, id) }},
	{"screen", func(ctx context.Context, c *client.Client, id string) error {
		_, err := c.Capture(ctx, id, 0)
		return err
	}},
}

func run(ctx context.Context, t *benchutil.TB, c config) error {
	machine := benchutil.Machine()
	home := t.MkdirTemp("rtt-home-")
	env := append(benchutil.CleanEnv(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_DATA_HOME="+filepath.Join(home, ".local", "share"))
	logs := t.MkdirTemp("rtt-logs-")
	work := t.MkdirTemp("rtt-work-")

	// The hub and its agent.
	hubDir := t.MkdirTemp("rtt-hub-")
	userTok := hubbench.Admin(t, c.corral, hubDir, env, "user", "add", "bench")
	devTok := hubbench.Admin(t, c.corral, hubDir, env, "device", "add", "m1", "--user", "bench")
	hub := hubbench.StartHub(t, c.corral, hubDir, env, filepath.Join(logs, "hub.log"), "--log-level", "warn")
	agent := hubbench.StartAgent(t, c.corral, t.MkdirTemp("rtt-ag-"), hub.URL, devTok, env, filepath.Join(logs, "agent.log"))
	viaHub := client.HTTP(hub.URL, userTok)
	agentSess, err := agent.Client.Create(ctx, api.CreateRequest{Dir: work, Shell: true, Name: "rtt"})
	if err != nil {
		return fmt.Errorf("a shell on the agent: %w", err)
	}
	// Wait until the hub routes to it.
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := viaHub.Capture(ctx, agentSess.ID, 0); err == nil {
			break
		} else if time.Now().After(deadline) {
			return fmt.Errorf("the hub does not reach the agent's session: %w", err)
		}
		time.Sleep(20 * time.Millisecond)
	}

	// corral serve.
	serve := hubbench.StartServe(t, c.corral, t.MkdirTemp("rtt-sv-"), env, filepath.Join(logs, "serve.log"))
	serveSess, err := serve.Client.Create(ctx, api.CreateRequest{Dir: work, Shell: true, Name: "rtt"})
	if err != nil {
		return fmt.Errorf("a shell on corral serve: %w", err)
	}

	targets := []target{
		{"hub → agent (HTTP, WebSocket link)", viaHub, agentSess.ID},
		{"serve (HTTP, in-memory link)", client.HTTP(serve.URL, serve.Token), serveSess.ID},
		{"serve (unix socket, in-memory link)", serve.Client, serveSess.ID},
		{"agent's own unix socket (no link)", agent.Client, agentSess.ID},
	}
	type pair struct{ ti, oi int }
	var pairs []pair
	for ti := range targets {
		for oi := range ops {
			pairs = append(pairs, pair{ti, oi})
		}
	}
	samples := make([][][]float64, len(targets))
	for i := range samples {
		samples[i] = make([][]float64, len(ops))
	}
	fmt.Fprintf(os.Stderr, "rtt: %d warm-up and %d measured rounds of %d requests\n", c.warmup, c.n, len(pairs))
	start := time.Now()
	for round := 0; round < c.warmup+c.n; round++ {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		rand.Shuffle(len(pairs), func(i, j int) { pairs[i], pairs[j] = pairs[j], pairs[i] })
		for _, p := range pairs {
			tg, o := targets[p.ti], ops[p.oi]
			rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			t0 := time.Now()
			err := o.do(rctx, tg.c, tg.id)
			d := time.Since(t0)
			cancel()
			if err != nil {
				return fmt.Errorf("%s %s: %w", tg.name, o.name, err)
			}
			if round >= c.warmup {
				samples[p.ti][p.oi] = append(samples[p.ti][p.oi], float64(d)/float64(time.Millisecond))
			}
		}
	}
	elapsed := time.Since(start)

	var b strings.Builder
	fmt.Fprintf(&b, "### Hub–agent round trip\n\n%s\n", machine)
	fmt.Fprintf(&b, "- load average at the end: %s\n", benchutil.LoadAvg())
	fmt.Fprintf(&b, "- %d rounds (after %d warm-up rounds), each sending every request below to every target once, in random order; %v in all\n",
		c.n, c.warmup, elapsed.Round(time.Second))
	fmt.Fprintf(&b, "- rerun: `bench/hub/rtt.sh -n %d`\n\n", c.n)
	fmt.Fprintf(&b, "Milliseconds from sending the request to reading the whole answer (the client is Go's net/http with keep-alive, in the benchmark's process).\n\n")
	fmt.Fprintf(&b, "| target | request | median | p90 | p99 | mean | min | max |\n|---|---|---:|---:|---:|---:|---:|---:|\n")
	for oi := len(ops) - 1; oi >= 0; oi-- {
		for ti, tg := range targets {
			xs := samples[ti][oi]
			s := benchutil.Summarize(xs)
			sorted := append([]float64(nil), xs...)
			sort.Float64s(sorted)
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", tg.name, ops[oi].name,
				benchutil.Ms(s.Median), benchutil.Ms(s.P90), benchutil.Ms(benchutil.Quantile(sorted, 0.99)),
				benchutil.Ms(s.Mean), benchutil.Ms(s.Min), benchutil.Ms(s.Max))
		}
	}
	// What the link adds: medians of viewed minus get, per target.
	fmt.Fprintf(&b, "\nThe link's share, estimated per target as median(viewed) − median(get) (get never leaves the process that answers it; viewed goes to the agent and back):\n\n")
	for ti, tg := range targets {
		v := benchutil.Median(samples[ti][1])
		g := benchutil.Median(samples[ti][0])
		fmt.Fprintf(&b, "- %s: %s ms\n", tg.name, benchutil.Ms(v-g))
	}
	if c.linkBench {
		out, err := exec.CommandContext(ctx, "go", "test", "./internal/link", "-run", "^$", "-bench", "Call", "-benchmem", "-count", "5").CombinedOutput()
		fmt.Fprintf(&b, "\nThe link alone (internal/link's BenchmarkCall: a Peer's Call answered by the other Peer's handler, in one process; `go test ./internal/link -run '^$' -bench Call -benchmem -count 5`):\n\n```\n%s```\n", out)
		if err != nil {
			fmt.Fprintf(&b, "\n(go test failed: %v)\n", err)
		}
	}
	return benchutil.WriteOutput(c.out, b.String())
}
