package e2e

// A hub of two replicas (corral hub --db postgres://… --bus nats://…) on a
// real PostgreSQL and a real nats-server, behind a load balancer.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/client"
	"github.com/corral-dev/corral/internal/testkit/natstest"
)

// tcpLB is a load balancer: each connection goes to the first backend
// that accepts it. Its owner closes it (Close waits for the
// copies).
type tcpLB struct {
	ln       net.Listener
	mu       sync.Mutex
	backends []string // in order of preference
	wg       sync.WaitGroup
	conns    map[net.Conn]bool
}

func newTCPLB(t *testing.T, backends ...string) *tcpLB {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lb := &tcpLB{ln: ln, backends: backends, conns: map[net.Conn]bool{}}
	lb.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			lb.wg.Go(func() { lb.serve(c) })
		}
	})
	t.Cleanup(lb.Close)
	return lb
}

// setBackends changes where new connections go.
func (lb *tcpLB) setBackends(backends ...string) {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	lb.backends = backends
}

func (lb *tcpLB) url() string { return "http://" + lb.ln.Addr().String() }

func (lb *tcpLB) track(c net.Conn, on bool) bool {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	if on && lb.conns == nil {
		return false
	}
	if on {
		lb.conns[c] = true
	} else if lb.conns != nil {
		delete(lb.conns, c)
	}
	return true
}

func (lb *tcpLB) serve(c net.Conn) {
	defer c.Close()
	lb.mu.Lock()
	order := slices.Clone(lb.backends)
	lb.mu.Unlock()
	var b net.Conn
	for _, addr := range order {
		var err error
		if b, err = net.DialTimeout("tcp", addr, time.Second); err == nil {
			break
		}
	}
	if b == nil {
		return
	}
	defer b.Close()
	if !lb.track(c, true) {
		return
	}
	defer lb.track(c, false)
	done := make(chan struct{}, 2)
	go func() { io.Copy(b, c); done <- struct{}{} }()
	go func() { io.Copy(c, b); done <- struct{}{} }()
	<-done
	c.Close()
	b.Close()
	<-done
}

func (lb *tcpLB) Close() {
	lb.ln.Close()
	lb.mu.Lock()
	for c := range lb.conns {
		c.Close()
	}
	lb.conns = nil
	lb.mu.Unlock()
	lb.wg.Wait()
}

// seqWatch follows a user's events on one replica's WebSocket, and
// resumes on another with ?since= when its replica dies.
type seqWatch struct {
	mu     sync.Mutex
	events []api.Event
	err    error
	cancel context.CancelFunc
	done   chan struct{}
}

func watchSeqs(t *testing.T, hp *hubProc, token string, since uint64, w *seqWatch) *seqWatch {
	t.Helper()
	if w == nil {
		w = &seqWatch{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	path := "/api/v1/ws/events"
	if since != 0 {
		path += "?since=" + strconv.FormatUint(since, 10)
	}
	dctx, dcancel := context.WithTimeout(ctx, 10*time.Second)
	c, _, err := dialWS(dctx, hp, token, path)
	dcancel()
	if err != nil {
		cancel()
		t.Fatalf("events WebSocket on %s: %v", hp.addr, err)
	}
	w.cancel, w.done = cancel, make(chan struct{})
	go func() {
		defer close(w.done)
		defer c.CloseNow()
		for {
			_, b, err := c.Read(ctx)
			if err != nil {
				w.mu.Lock()
				w.err = err
				w.mu.Unlock()
				return
			}
			var ev api.Event
			// Other frames (pings) carry no seq.
			if json.Unmarshal(b, &ev) == nil && slices.Contains([]api.EventType{api.EventSnapshot, api.EventSession, api.EventRemoved, api.EventResync,
				api.EventDevice, api.EventDeviceRemoved, api.EventNotification}, ev.Type) {
				w.mu.Lock()
				w.events = append(w.events, ev)
				w.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-w.done })
	return w
}

func (w *seqWatch) all() []api.Event {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.events)
}

// state applies the events: the sessions they say there are.
func state(evs []api.Event) map[string]api.Session {
	m := map[string]api.Session{}
	for _, ev := range evs {
		switch ev.Type {
		case api.EventSnapshot:
			clear(m)
			for _, s := range ev.Sessions {
				m[s.ID] = s
			}
		case api.EventSession:
			m[ev.Session.ID] = *ev.Session
		case api.EventRemoved:
			delete(m, ev.ID)
		}
	}
	return m
}

// devices applies the events: the machines they say there are, by name.
func devices(evs []api.Event) map[string]api.Device {
	m := map[string]api.Device{}
	for _, ev := range evs {
		switch ev.Type {
		case api.EventSnapshot:
			clear(m)
			for _, d := range ev.Devices {
				m[d.Name] = d
			}
		case api.EventDevice:
			m[ev.Device.Name] = *ev.Device
		case api.EventDeviceRemoved:
			for n, d := range m {
				if d.ID == ev.ID {
					delete(m, n)
				}
			}
		}
	}
	return m
}

// contiguous checks that after the first snapshot every event follows the
// one before it by one: nothing lost, nothing doubled.
func contiguous(t *testing.T, who string, evs []api.Event) {
	t.Helper()
	for i := 1; i < len(evs); i++ {
		if evs[i].Type == api.EventSnapshot || evs[i].Type == api.EventResync {
			t.Errorf("%s: event %d is a %s: the stream started over", who, i, evs[i].Type)
			continue
		}
		if evs[i].Seq != evs[i-1].Seq+1 {
			t.Errorf("%s: event %d has seq %d after %d", who, i, evs[i].Seq, evs[i-1].Seq)
		}
	}
}

// TestHubReplicas: two replicas of one hub on PostgreSQL and NATS, a load
// balancer in front. One machine's agent lands on each; a browser watches
// the events and a shell's terminal on each replica (the one on B sees the
// shell of the machine on A through the bus). While the shell prints, A is
// killed with SIGKILL: the machine reconnects through the balancer to B,
// the browser on B goes on reading the same terminal stream, the browser
// that was on A resumes its events (?since=) and its terminal (stream and
// offset) on B. Every event arrives once, in one order that both browsers
// share, and every byte of the terminal arrives once, in order.
func TestHubReplicas(t *testing.T) {
	t.Parallel()
	dbURL := pg.Database(t)
	ns := natstest.Start(t)
	env := []string{"CORRAL_DB=" + dbURL, "CORRAL_BUS=" + ns.URL()}
	a := newHubProcEnv(t, "127.0.0.1:0", env)
	b := newHubProcEnv(t, "127.0.0.1:0", env)
	// A balancer in front of both, preferring A for the laptop and B for
	// the desk (two listeners, so where each lands does not depend on the
	// order of connections).
	lbA, lbB := newTCPLB(t, a.addr, b.addr), newTCPLB(t, b.addr, a.addr)
	alice := a.addUser(t, "alice")
	aliceB := &hubUser{name: "alice", token: alice.token, hp: b, c: client.HTTP(b.url, alice.token)}

	// Two machines, one on each replica.
	laptop := newAgent(t, lbA.url(), a.addDevice(t, "laptop", "alice"), agentOptions{})
	desk := newAgent(t, lbB.url(), a.addDevice(t, "desk", "alice"), agentOptions{claude: true})
	// A third that can reach only A, until the test lets it reach B.
	lbVM := newTCPLB(t, a.addr)
	newAgent(t, lbVM.url(), a.addDevice(t, "vm", "alice"), agentOptions{})
	alice.waitOnline(t, "laptop", 20*time.Second)
	aliceB.waitOnline(t, "desk", 20*time.Second)
	aliceB.waitOnline(t, "vm", 20*time.Second)
	if a.countLog(`"device connected" device=laptop`) == 0 || b.countLog(`"device connected" device=desk`) == 0 ||
		a.countLog(`"device connected" device=desk`) != 0 || b.countLog(`"device connected" device=laptop`) != 0 {
		t.Fatalf("the machines did not land one on each replica:\nA:\n%s\nB:\n%s", a.log(), b.log())
	}

	// A browser on each replica watches the events.
	evA := watchSeqs(t, a, alice.token, 0, nil)
	evB := watchSeqs(t, b, alice.token, 0, nil)
	sh := laptop.newShell("printer")
	other := desk.newShell("quiet")
	for _, u := range []*hubUser{alice, aliceB} {
		u.waitSession(t, 15*time.Second, "the laptop's shell on "+u.hp.addr, func(s api.Session) bool { return s.ID == sh && s.Device == "laptop" && !s.Offline })
		u.waitSession(t, 15*time.Second, "the desk's shell on "+u.hp.addr, func(s api.Session) bool { return s.ID == other && s.Device == "desk" && !s.Offline })
	}
	// A Claude session on the desk (on B) asks to run a tool: B's notifier
	// raises it, and A's browser gets it in its bell, as does A's log.
	asker := desk.newSession("--name", "asker")
	desk.send(asker, "RUNTOOL from the replicas test")
	desk.waitStatus(asker, api.StatusNeedsInput, 60*time.Second)
	waitFor(t, 20*time.Second, "the desk's notification on A's browser", func() bool {
		for _, ev := range evA.all() {
			if ev.Type == api.EventNotification && ev.Notification.SessionID == asker && ev.Notification.Device == "desk" {
				return true
			}
		}
		return false
	})
	if code, body := alice.request(t, "GET", "/api/v1/notifications", nil); code != 200 || !strings.Contains(string(body), asker) {
		t.Fatalf("A's notification log: %d %s", code, body)
	}

	// An op through B for the laptop, whose link is on A.
	if code, body := aliceB.request(t, "GET", "/api/v1/sessions/"+sh, nil); code != 200 {
		t.Fatalf("a session of the laptop through B: %d %s", code, body)
	}

	// The terminal of the laptop's shell, on both replicas; a counter runs.
	termA := openTerm(t, a, alice.token, sh, "", nil)
	termB := openTerm(t, b, alice.token, sh, "", nil)
	const last = 600
	termA.send(fmt.Sprintf("for i in $(seq 1 %d); do echo n-$i; sleep 0.02; done; echo DONE\r", last))
	reached := func(n int) func([]byte) bool {
		return func(out []byte) bool { got, _ := counted(out); return len(got) > 0 && got[len(got)-1] >= n }
	}
	if err := termB.read(30*time.Second, reached(40)); err != nil {
		t.Fatalf("the terminal through B before the kill: %v; %q", err, plainText(termB.out))
	}

	// Until now no link dropped.
	for name, m := range map[string]*harness{"laptop": laptop, "desk": desk} {
		if n := strings.Count(m.serveLog.String(), "hub link down"); n != 0 {
			t.Errorf("the %s's link dropped %d times before the kill", name, n)
		}
	}

	// A dies mid-output.
	a.stop(syscall.SIGKILL)
	killed := time.Now()
	// A's browser: its connections end; what arrived until then counts.
	if err := termA.read(10*time.Second, nil); err == nil {
		t.Fatal("the terminal WebSocket outlived its replica")
	}
	<-evA.done
	evsA := evA.all()
	lastSeq := evsA[len(evsA)-1].Seq
	// It comes back through the balancer: to B, with ?since= and the
	// terminal's stream and offset.
	evA2 := watchSeqs(t, b, alice.token, lastSeq, nil)
	var resumed *termReader
	waitFor(t, 60*time.Second, "the browser from A resuming its terminal on B", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c, _, err := dialWS(ctx, b, alice.token, "/api/v1/sessions/"+sh+"/terminal?cols=120&rows=40&stream="+termA.stream+"&offset="+strconv.FormatUint(termA.next, 10))
		if err != nil {
			return false
		}
		f, err := readTermFrame(ctx, c)
		if err != nil || f.typ != termHello {
			c.CloseNow()
			return false // 4503 while the laptop reconnects
		}
		if string(f.data) != termA.stream {
			t.Fatalf("resuming stream %s on B gave stream %s", termA.stream, f.data)
		}
		resumed = &termReader{t: t, c: c, stream: termA.stream, next: termA.next, out: termA.out, frames: termA.frames}
		return true
	})
	done := func(out []byte) bool { return doneLineRe.Match([]byte(plainText(out))) }
	for name, tr := range map[string]*termReader{"B's browser": termB, "A's browser, on B": resumed} {
		if err := tr.read(90*time.Second, done); err != nil {
			t.Fatalf("%s: the terminal after the kill: %v; up to %q", name, err, plainText(tr.out)[max(0, len(plainText(tr.out))-400):])
		}
		// Every number shows, printed or repainted by tmux (a viewer's
		// client may draw a line again when it attaches).
		seen := map[int]bool{}
		for _, m := range counterRe.FindAllStringSubmatch(expandREP(tr.out), -1) {
			n, _ := strconv.Atoi(m[1])
			seen[n] = true
		}
		for n := 1; n <= last; n++ {
			if !seen[n] {
				t.Errorf("%s: n-%d never showed: output was lost", name, n)
				break
			}
		}
	}
	alice2 := aliceB
	alice2.waitOnline(t, "laptop", 5*time.Second)

	// The vm's link died with A and it cannot reach B: B's browser shows
	// it offline once B reaped A's lease; let through to B, it is online
	// again.
	waitFor(t, 30*time.Second, "the vm offline on B's browser", func() bool {
		d, ok := devices(evB.all())["vm"]
		return ok && !d.Online
	})
	for _, ev := range evB.all() {
		if ev.Type == api.EventDevice && ev.Device.Name == "vm" && !ev.Device.Online {
			t.Logf("the vm shown offline on B's browser %v after A's death", ev.Time.Sub(killed).Round(100*time.Millisecond))
			break
		}
	}
	lbVM.setBackends(b.addr)
	waitFor(t, 60*time.Second, "the vm online again on B's browser", func() bool {
		d, ok := devices(evB.all())["vm"]
		return ok && d.Online
	})
	alice2.waitOnline(t, "vm", 5*time.Second)

	// Events: each browser's stream is one order with nothing lost or
	// doubled; the two agree seq by seq; A's browser's continues on B.
	waitFor(t, 20*time.Second, "the two event streams at the same seq", func() bool {
		x, y := evA2.all(), evB.all()
		return len(x) > 0 && len(y) > 0 && x[len(x)-1].Seq == y[len(y)-1].Seq
	})
	contiguous(t, "B's browser", evB.all())
	contiguous(t, "A's browser", append(evsA, evA2.all()...))
	bySeq := map[uint64]string{}
	for _, ev := range evB.all() {
		if ev.Type != api.EventSnapshot {
			j, _ := json.Marshal(ev.Session)
			bySeq[ev.Seq] = string(ev.Type) + string(j) + ev.ID
		}
	}
	for _, ev := range append(evsA, evA2.all()...) {
		if want, ok := bySeq[ev.Seq]; ok && ev.Type != api.EventSnapshot {
			j, _ := json.Marshal(ev.Session)
			if got := string(ev.Type) + string(j) + ev.ID; got != want {
				t.Errorf("seq %d is %s on A's browser and %s on B's", ev.Seq, got, want)
			}
		}
	}
	final := state(append(evsA, evA2.all()...))
	if s := final[sh]; s.Offline || s.Device != "laptop" {
		t.Errorf("A's browser ends with the laptop's shell as %+v", s)
	}
	if s := final[other]; s.Offline || s.Device != "desk" {
		t.Errorf("A's browser ends with the desk's shell as %+v", s)
	}
	// The machines as each browser's stream ends with them: all three
	// online (the laptop and the vm reconnected to B).
	for who, evs := range map[string][]api.Event{"A's browser": append(evsA, evA2.all()...), "B's browser": evB.all()} {
		devs := devices(evs)
		for _, name := range []string{"laptop", "desk", "vm"} {
			if d, ok := devs[name]; !ok || !d.Online {
				t.Errorf("%s ends with the %s as %+v (listed: %v)", who, name, d, ok)
			}
		}
	}
}
