package cli

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
)

func testDaemon() *daemon {
	g, failed := errgroup.WithContext(context.Background())
	return &daemon{log: slog.New(slog.DiscardHandler), g: g, failed: failed}
}

// The parts stop in reverse order of dependency, one stage at a time: a
// stage is stopped only once every part above it has returned, and the
// parts of one stage stop together.
func TestDaemonStopsInReverseOrder(t *testing.T) {
	d := testDaemon()
	var mu sync.Mutex
	var got []string
	note := func(s string) {
		mu.Lock()
		got = append(got, s)
		mu.Unlock()
	}
	part := func(name string) func(context.Context) error {
		return func(ctx context.Context) error {
			<-ctx.Done()
			note("stop " + name)
			time.Sleep(10 * time.Millisecond) // winding down
			note("done " + name)
			return nil
		}
	}
	d.run("agent", stageAgent, part("agent"))
	d.run("notifier", stageNotify, part("notifier"))
	d.run("hub", stageHub, part("hub"))
	d.run("link", stageLink, part("link"))
	d.run("api", stageHTTP, part("api"))
	d.run("web", stageHTTP, part("web"))
	if err := d.stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	// api and web stop together, in either order.
	http := got[:4]
	slices.Sort(http)
	if want := []string{"done api", "done web", "stop api", "stop web"}; !slices.Equal(http, want) {
		t.Errorf("first the HTTP servers, together: %q", got)
	}
	want := []string{"stop link", "done link", "stop hub", "done hub", "stop notifier", "done notifier", "stop agent", "done agent"}
	if !slices.Equal(got[4:], want) {
		t.Errorf("then %q, got %q", want, got[4:])
	}
}

// A part that fails ends the daemon: wait returns, and stop, having
// stopped the others, returns its error. One that returns before it is
// stopped has failed too.
func TestDaemonPartFails(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"an error", errors.New("listener broke"), "web: listener broke"},
		{"returned by itself", nil, "web: stopped by itself"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := testDaemon()
			stopped := make(chan struct{})
			d.run("agent", stageAgent, func(ctx context.Context) error { <-ctx.Done(); close(stopped); return nil })
			d.run("web", stageHTTP, func(ctx context.Context) error { return c.err })
			waited := make(chan struct{})
			go func() { d.wait(context.Background()); close(waited) }()
			select {
			case <-waited:
			case <-time.After(5 * time.Second):
				t.Fatal("wait did not return when a part failed")
			}
			err := d.stop()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("stop: %v, want %q", err, c.want)
			}
			select {
			case <-stopped:
			default:
				t.Error("the agent was not stopped")
			}
		})
	}
}

// A signal while the daemon starts is a stop, not an error.
func TestDaemonSignalWhileStarting(t *testing.T) {
	d := testDaemon()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := d.await(ctx, make(chan struct{}), "the agent", time.Minute)
	if !errors.Is(err, errStopped) {
		t.Fatalf("await: %v", err)
	}
}

// With no daemon on the data directory, `hub device revoke` changes the
// database itself; with a daemon that is no hub (corral serve), it says
// so and changes nothing. (With a hub running it asks the hub: e2e
// TestHubDeviceTokens.)
func TestHubDeviceRevokeWithoutHub(t *testing.T) {
	in := newInstall(t)
	in.must("hub", "user", "add", "alice")
	in.must("hub", "device", "add", "laptop", "--user", "alice")
	in.must("hub", "device", "add", "desk", "--user", "alice")
	in.must("hub", "device", "revoke", "laptop", "--user", "alice")
	if out := in.must("hub", "device", "ls"); strings.Contains(out, "laptop") || !strings.Contains(out, "desk") {
		t.Fatalf("after the revoke:\n%s", out)
	}
	in.startDaemon()
	r := in.run("hub", "device", "revoke", "desk", "--user", "alice")
	if r.code == 0 || !strings.Contains(r.stderr, "not a hub") {
		t.Errorf("revoke with corral serve running: exit %d, %q", r.code, r.stderr)
	}
	if out := in.must("hub", "device", "ls"); !strings.Contains(out, "desk") {
		t.Errorf("the refused revoke changed the database:\n%s", out)
	}
}
