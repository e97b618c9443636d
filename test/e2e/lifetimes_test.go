package e2e

// Lifetimes: every daemon (corral serve, corral hub, corral agent) exits
// within 2 s of SIGTERM while it is busy, with a Claude turn in progress, a
// terminal viewer and the event streams attached, and the sessions survive
// it in tmux. (Before, corral serve and corral agent took 3 s or more: the
// servers' shutdown waited for the streams, and nobody stopped the rest.)

import (
	"context"
	"errors"
	"net/url"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/datadir"
	"github.com/corral-dev/corral/internal/testkit/fakeapi"
)

// exitBound is the promise: a daemon is gone this long after SIGTERM.
const exitBound = 2 * time.Second

// holdRule holds every prompt with HOLD in it mid-answer until gate opens.
func holdRule(gate *fakeapi.Gate) fakeapi.Rule {
	return fakeapi.Rule{Name: "hold", Contains: "HOLD", Reply: fakeapi.Stalled(gate, fakeapi.Text("Held turn done."))}
}

// sigterm sends SIGTERM to a daemon that cmd runs (its Wait already
// running, done closed when it returns) and returns how long it took to
// exit; it fails the test after exitBound, and kills it after 10 s.
func sigterm(t *testing.T, who string, cmd *exec.Cmd, done <-chan struct{}, log func() string) time.Duration {
	t.Helper()
	start := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%s still running 10 s after SIGTERM; log:\n%s", who, log())
	}
	took := time.Since(start)
	t.Logf("%s exited %v after SIGTERM", who, took.Round(time.Millisecond))
	if took > exitBound {
		t.Errorf("%s took %v to exit after SIGTERM, want at most %v; log:\n%s", who, took.Round(time.Millisecond), exitBound, log())
	}
	if l := log(); strings.Contains(l, "slow to stop") || strings.Contains(l, "did not stop") {
		t.Errorf("%s's log names a part slow to stop:\n%s", who, l)
	}
	return took
}

// survives checks that a session's tmux session and claude are alive.
func survives(t *testing.T, dataDir, id string, claudePID int) {
	t.Helper()
	if err := exec.Command("tmux", "-S", datadir.Socket(dataDir, datadir.TmuxSocket), "has-session", "-t", "="+id).Run(); err != nil {
		t.Errorf("session %s's tmux session is gone: %v", id, err)
	}
	if claudePID <= 0 {
		t.Errorf("session %s has no claude pid", id)
	} else if err := syscall.Kill(claudePID, 0); err != nil {
		t.Errorf("session %s's claude (pid %d) is gone: %v", id, claudePID, err)
	}
}

// sigtermDaemon stops h's daemon with SIGTERM, measured, with h.rec (a
// `corral watch` of its socket) attached until it is gone.
func (h *harness) sigtermDaemon(who string) {
	h.t.Helper()
	cmd := h.serve
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	sigterm(h.t, who, cmd, done, h.serveLog.String)
	h.serve = nil
	if h.rec != nil {
		h.rec.stop()
		h.rec = nil
	}
}

// ended says whether a viewer's connection ended (rather than timed out).
func ended(t *testing.T, who string, term *termReader, within time.Duration) {
	t.Helper()
	if err := term.read(within, nil); errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the terminal WebSocket outlived %s by %v", who, within)
	}
}

func TestServeExitsPromptlyWhenBusy(t *testing.T) {
	t.Parallel()
	gate := fakeapi.NewGate()
	defer gate.Release()
	h := newHarness(t, harnessOptions{fake: fakeapi.Options{Rules: []fakeapi.Rule{holdRule(gate)}}})
	id := h.newSession()
	h.send(id, "HOLD this turn")
	h.waitStatus(id, api.StatusBusy, 30*time.Second)
	h.api.AwaitPrompt(t, "HOLD this turn", 15*time.Second)
	pid := h.lsOne(id).ClaudePID

	// A browser: the terminal and the event stream of the dashboard. And
	// `corral watch` on the unix socket (h.rec).
	u, err := url.Parse(h.webURL())
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(h.corral("token", "rotate"))
	dash := &hubProc{addr: u.Host}
	term := openTerm(t, dash, token, id, "", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	events, _, err := dialWS(ctx, dash, token, "/api/v1/ws/events")
	if err != nil {
		t.Fatalf("events WebSocket: %v", err)
	}
	defer events.CloseNow()
	if _, _, err := events.Read(ctx); err != nil {
		t.Fatalf("events WebSocket: %v", err)
	}

	h.sigtermDaemon("corral serve")
	// The viewers were told, and the session lives on in tmux.
	ended(t, "corral serve", term, 5*time.Second)
	survives(t, h.dataDir, id, pid)
	// The next daemon finds the turn still going.
	h.startServe()
	h.waitStatus(id, api.StatusBusy, 30*time.Second)
}

func TestHubAndAgentExitPromptlyWhenBusy(t *testing.T) {
	t.Parallel()
	hp := newHubProc(t, restartablePort(t))
	alice := hp.addUser(t, "alice")
	gate := fakeapi.NewGate()
	defer gate.Release()
	m1 := newAgent(t, hp.url, hp.addDevice(t, "m1", "alice"), agentOptions{claude: true, fake: fakeapi.Options{Rules: []fakeapi.Rule{holdRule(gate)}}})
	alice.waitOnline(t, "m1", 15*time.Second)
	id := m1.newSession()
	m1.send(id, "HOLD this turn")
	m1.waitStatus(id, api.StatusBusy, 30*time.Second)
	m1.api.AwaitPrompt(t, "HOLD this turn", 15*time.Second)
	pid := m1.lsOne(id).ClaudePID
	alice.waitSession(t, 15*time.Second, "the busy session through the hub", func(s api.Session) bool {
		return s.ID == id && s.Status == api.StatusBusy && !s.Offline
	})

	// The hub goes, with a browser's terminal attached through it.
	term := openTerm(t, hp, alice.token, id, "", nil)
	sigterm(t, "corral hub", hp.cmd, hp.done, hp.log)
	hp.cmd = nil
	ended(t, "corral hub", term, 5*time.Second)
	survives(t, m1.dataDir, id, pid)
	if got := m1.lsOne(id); got.Status != api.StatusBusy {
		t.Errorf("on the agent, with the hub away: %s, want busy", got.Status)
	}

	// Back again; then the agent goes, with a viewer attached through the
	// hub and `corral watch` on its socket.
	hp.start()
	alice.waitSession(t, 30*time.Second, "the busy session back through the hub", func(s api.Session) bool {
		return s.ID == id && s.Status == api.StatusBusy && !s.Offline
	})
	term = openTerm(t, hp, alice.token, id, "", nil)
	m1.sigtermDaemon("corral agent")
	survives(t, m1.dataDir, id, pid)
	// The hub says the machine is gone, and ends the viewer's stream.
	ended(t, "the agent's link", term, 10*time.Second)
	alice.waitSession(t, 15*time.Second, "the session offline", func(s api.Session) bool {
		return s.ID == id && s.Offline
	})
}
