package cli

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/datadir"
)

// scrapeUnix GETs /metrics on the daemon's API socket, as
// `curl --unix-socket corral.sock http://x/metrics` does.
func scrapeUnix(t *testing.T, dataDir string) string {
	t.Helper()
	sock := datadir.Socket(dataDir, datadir.APISocket)
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		}}}
	resp, err := c.Get("http://x/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /metrics on the socket: %d %v\n%s", resp.StatusCode, err, b)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type %q, want Prometheus's text format", ct)
	}
	return string(b)
}

// sample is the value of one series (name and labels, as the text format
// writes them: labels sorted by name) in a scrape; ok is false when absent.
func sample(scrape, series string) (float64, bool) {
	for _, l := range strings.Split(scrape, "\n") {
		if v, ok := strings.CutPrefix(l, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return f, err == nil
		}
	}
	return 0, false
}

// TestMetricsScrape: a real daemon, a real tmux session and real hook
// deliveries; /metrics on the API socket shows the session by status and
// machine, and the hook, status change and database counters move with
// what happened. The dashboard serves the same behind its login.
func TestMetricsScrape(t *testing.T) {
	in := newInstall(t)
	in.serveArgs = []string{"--listen", "127.0.0.1:0"}
	in.startDaemon()
	id := in.shell("m")
	host, _ := os.Hostname()

	// An event stream open: the bus has a subscriber.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watching := make(chan struct{})
	go func() {
		defer close(watching)
		in.c.StreamEvents(ctx, 0, func(api.Event) error { return nil })
	}()
	defer func() { cancel(); <-watching }()

	var before string
	waitUntil(t, 10*time.Second, "the shell session and the event stream in the metrics", func() bool {
		before = scrapeUnix(t, in.dataDir)
		n, _ := sample(before, `corral_bus_subscribers{bus="hub"}`)
		return n >= 1 && sessions(before, host) == 1
	})
	for _, name := range []string{"corral_terminal_bytes_total", "corral_terminal_redraws_total", "corral_terminal_streams",
		`corral_bus_resyncs_total{bus="agent"}`, `corral_bus_max_lag_events{bus="hub"}`, "corral_link_connects_total",
		"go_goroutines", "go_memstats_heap_alloc_bytes", "process_open_fds"} {
		if _, ok := sample(before, name); !ok {
			t.Errorf("the scrape lacks %s", name)
		}
	}
	hooks0, _ := sample(before, `corral_hook_deliveries_total{kind="hook",result="ok"}`)
	busy0, _ := sample(before, `corral_status_changes_total{source="UserPromptSubmit",status="busy"}`)
	writes0, _ := sample(before, `corral_sqlite_write_seconds_count{result="ok"}`)

	var out strings.Builder
	he := &env{stdin: strings.NewReader(`{"session_id":"c","hook_event_name":"UserPromptSubmit","prompt":"p"}`), stdout: &out, stderr: &out,
		getenv: func(k string) string {
			if k == "CORRAL_SESSION" {
				return id
			}
			return in.getenv(k)
		}}
	root := newRoot(he)
	root.SetArgs([]string{"hook"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	in.waitStatus(id, api.StatusBusy)

	var after string
	waitUntil(t, 10*time.Second, "the hook delivery and the database write in the metrics", func() bool {
		after = scrapeUnix(t, in.dataDir)
		hooks, _ := sample(after, `corral_hook_deliveries_total{kind="hook",result="ok"}`)
		writes, _ := sample(after, `corral_sqlite_write_seconds_count{result="ok"}`)
		busy, _ := sample(after, `corral_sessions{machine="`+host+`",status="busy"}`)
		return hooks == hooks0+1 && writes > writes0 && busy == 1
	})
	if v, _ := sample(after, `corral_status_changes_total{source="UserPromptSubmit",status="busy"}`); v != busy0+1 {
		t.Errorf("status changes by UserPromptSubmit to busy: %v, want %v", v, busy0+1)
	}
	if v, _ := sample(after, `corral_hook_delivery_seconds_count{kind="hook"}`); v < 1 {
		t.Errorf("hook latency observations: %v", v)
	}
	if v, _ := sample(after, `corral_link_round_trip_seconds_count`); v < 1 {
		t.Errorf("link round trips (the hub's calls to its own agent): %v", v)
	}
	if strings.Contains(after, id) {
		t.Errorf("a session id is in the metrics:\n%s", after)
	}

	// The dashboard: behind its login.
	var printed string
	waitUntil(t, 10*time.Second, "the login link on stdout", func() bool {
		m := openRe.FindStringSubmatch(in.log.String())
		if m != nil {
			printed = m[1]
		}
		return m != nil
	})
	u, _ := url.Parse(printed)
	base := u.Scheme + "://" + u.Host
	if code := newWebClient(t).get(base+"/metrics", ""); code != http.StatusUnauthorized {
		t.Errorf("/metrics on the dashboard without a login: %d", code)
	}
	browser := newWebClient(t)
	if code := browser.get(printed, ""); code != http.StatusSeeOther {
		t.Fatalf("the login link: %d", code)
	}
	if code := browser.get(base+"/metrics", ""); code != 200 {
		t.Errorf("/metrics on the dashboard, logged in: %d", code)
	}
}

// sessions sums corral_sessions over the statuses of one machine.
func sessions(scrape, machine string) float64 {
	var n float64
	for _, l := range strings.Split(scrape, "\n") {
		if rest, ok := strings.CutPrefix(l, `corral_sessions{machine="`+machine+`",status="`); ok {
			if _, v, ok := strings.Cut(rest, "} "); ok {
				f, _ := strconv.ParseFloat(v, 64)
				n += f
			}
		}
	}
	return n
}
