package hub

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/devicekey"
	"github.com/corral-dev/corral/internal/link"
	"github.com/corral-dev/corral/internal/store"
	"github.com/corral-dev/corral/internal/testkit/testio"
)

// linkHub is a hub serving the device link on 127.0.0.1, with a log the
// test reads.
type linkHub struct {
	h   *Hub
	acc *Accounts
	srv *httptest.Server
	log *testio.SyncBuffer
	url string // ws://127.0.0.1:port/api/v1/link?v=2
}

func newLinkHub(t testing.TB) *linkHub {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(filepath.Join(t.TempDir(), "hub.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := NewAccounts(st).AddUser(ctx, "alice", ""); err != nil {
		t.Fatal(err)
	}
	return newLinkHubOn(t, st)
}

// newLinkHubOn is newLinkHub on a store of the test's.
func newLinkHubOn(t testing.TB, st store.Store) *linkHub {
	t.Helper()
	ctx := context.Background()
	acc := NewAccounts(st)
	lb := &testio.SyncBuffer{}
	h, err := New(ctx, Options{Store: st, Accounts: acc, Logger: slog.New(slog.NewTextHandler(lb, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return newLinkHubFor(t, h, acc, lb)
}

// newLinkHubFor serves a hub's link handler for a test.
func newLinkHubFor(t testing.TB, h *Hub, acc *Accounts, lb *testio.SyncBuffer) *linkHub {
	t.Helper()
	srv := httptest.NewServer(h.LinkHandler())
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		h.Flush()
		if t.Failed() {
			t.Logf("hub log:\n%s", lb.String())
		}
	})
	return &linkHub{h: h, acc: acc, srv: srv, log: lb, url: "ws" + strings.TrimPrefix(srv.URL, "http") + "/api/v1/link?v=2"}
}

// dev is a device's side of one connection, written by hand: the test's
// own agent, which may lie.
type dev struct {
	t     testing.TB
	key   *devicekey.Key
	token string
	// sign, when set, replaces the honest answer to the challenge.
	sign func(ch link.Msg) link.Msg
}

// dial connects and does the handshake; it returns the conn and the
// welcome, or the error (a *CloseError for a refusal after the upgrade, the
// status for one before).
func (d *dev) dial(h *linkHub) (link.Conn, link.Msg, int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	hdr := http.Header{}
	if d.key != nil {
		hdr.Set(link.HeaderDeviceKey, d.key.PublicString())
	}
	if d.token != "" {
		hdr.Set("Authorization", "Bearer "+d.token)
	}
	c, resp, err := websocket.Dial(ctx, h.url, &websocket.DialOptions{HTTPHeader: hdr})
	if err != nil {
		code := 0
		if resp != nil {
			code = resp.StatusCode
		}
		return nil, link.Msg{}, code, err
	}
	lc := link.NewWebSocket(c, 5*time.Second)
	d.t.Cleanup(func() { c.CloseNow() })
	u, _ := url.Parse(h.url)
	w, err := link.ClientHello(ctx, lc, func(ch link.Msg) (link.Msg, error) {
		if d.sign != nil {
			return d.sign(ch), nil
		}
		return signed(d.key, u.Host, ch, "box"), nil
	})
	return lc, w, 101, err
}

func signed(k *devicekey.Key, host string, ch link.Msg, hostname string) link.Msg {
	nonce, _ := base64.RawURLEncoding.DecodeString(ch.Nonce)
	sig, err := k.Sign(devicekey.Challenge{Host: host, Hub: ch.HubID, Nonce: nonce})
	if err != nil {
		panic(err)
	}
	return link.Msg{Hostname: hostname, Host: host, Sig: base64.RawURLEncoding.EncodeToString(sig)}
}

// live runs a Peer on an accepted connection: it answers the hub's pings,
// as a healthy agent does.
func live(t *testing.T, c link.Conn) *link.Peer {
	p := link.NewPeer(c, link.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return p
}

func (h *linkHub) device(t testing.TB, name string) (online bool, conflict int) {
	t.Helper()
	for _, d := range h.h.DevicesOf("alice") {
		if d.Name == name {
			if d.Conflict != nil {
				conflict = d.Conflict.Count
			}
			return d.Online, conflict
		}
	}
	t.Fatalf("no device %s: %+v", name, h.h.DevicesOf("alice"))
	return false, 0
}

func waitUntil(t *testing.T, d time.Duration, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func testKeyIn(t *testing.T) *devicekey.Key {
	k, _, err := devicekey.LoadOrCreate(filepath.Join(t.TempDir(), "device.key"))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// Enrolment: the token lets a key in once and binds it; from then on the
// key alone does, and the spent token lets no other key in. Everything
// refused before the upgrade is 401 and logged with the address.
func TestLinkEnrolment(t *testing.T) {
	t.Parallel()
	h := newLinkHub(t)
	ctx := context.Background()
	_, tok, err := h.acc.AddDevice(ctx, "alice", "laptop", 0)
	if err != nil {
		t.Fatal(err)
	}
	k := testKeyIn(t)
	// Not yet enrolled, no token: refused.
	if _, _, code, _ := (&dev{t: t, key: k}).dial(h); code != http.StatusUnauthorized {
		t.Fatalf("an unknown key without a token: %d, want 401", code)
	}
	c, w, _, err := (&dev{t: t, key: k, token: tok}).dial(h)
	if err != nil {
		t.Fatal(err)
	}
	if !w.Enrolled || w.DeviceName != "laptop" {
		t.Errorf("welcome %+v, want enrolled laptop", w)
	}
	if d, _ := h.acc.DeviceByKey(ctx, k.PublicString()); d.Key != k.Fingerprint() {
		t.Errorf("the key is not bound: %+v", d)
	}
	c.Close(link.StatusNormal, "")
	waitUntil(t, 5*time.Second, "laptop offline", func() bool { on, _ := h.device(t, "laptop"); return !on })

	// The key alone, and with the spent token still sent: let in, not
	// enrolled again.
	for _, d := range []*dev{{t: t, key: k}, {t: t, key: k, token: tok}} {
		c, w, _, err := d.dial(h)
		if err != nil || w.Enrolled {
			t.Fatalf("reconnecting (token %v): %+v %v", d.token != "", w, err)
		}
		c.Close(link.StatusNormal, "")
		waitUntil(t, 5*time.Second, "laptop offline", func() bool { on, _ := h.device(t, "laptop"); return !on })
	}
	// Another key with the spent token: refused before the upgrade.
	if _, _, code, _ := (&dev{t: t, key: testKeyIn(t), token: tok}).dial(h); code != http.StatusUnauthorized {
		t.Errorf("a spent token: %d, want 401", code)
	}
	for _, c := range []struct {
		name string
		hdr  http.Header
	}{
		{"nothing", http.Header{}},
		{"a token and no key", http.Header{"Authorization": {"Bearer " + tok}}},
		{"a malformed key", http.Header{link.HeaderDeviceKey: {"AAAA"}}},
		{"a wrong token", http.Header{link.HeaderDeviceKey: {testKeyIn(t).PublicString()}, "Authorization": {"Bearer ce_" + strings.Repeat("x", 43)}}},
		{"a user token", http.Header{link.HeaderDeviceKey: {testKeyIn(t).PublicString()}, "Authorization": {"Bearer cu_x"}}},
	} {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		conn, resp, err := websocket.Dial(cctx, h.url, &websocket.DialOptions{HTTPHeader: c.hdr})
		cancel()
		if err == nil {
			conn.CloseNow()
			t.Errorf("%s: upgraded", c.name)
		} else if resp == nil || resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: %v, want 401", c.name, err)
		}
	}
	for _, line := range strings.Split(h.log.String(), "\n") {
		if strings.Contains(line, "refused") && !strings.Contains(line, "from=127.0.0.1:") {
			t.Errorf("a refusal logged without the address: %s", line)
		}
	}
	// Link protocol 1 (a corral from before keys): 401, with why.
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, resp, err := websocket.Dial(cctx, strings.Replace(h.url, "v=2", "v=1", 1), &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer cd_x"}}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("protocol 1: %v %+v", err, resp)
	}
	if b, _ := io.ReadAll(resp.Body); !bytes.Contains(b, []byte("upgrade corral")) {
		t.Errorf("protocol 1 is told %q", b)
	}
}

// A signature proves the key for this hub and this connection only: a
// signature for another host, of another nonce (a replay), by another key
// or of nothing is refused with 1008 and changes nothing.
func TestLinkProof(t *testing.T) {
	t.Parallel()
	h := newLinkHub(t)
	ctx := context.Background()
	_, tok, _ := h.acc.AddDevice(ctx, "alice", "laptop", 0)
	k := testKeyIn(t)
	// A wrong proof at enrolment spends nothing.
	evil := testKeyIn(t)
	_, _, _, err := (&dev{t: t, key: k, token: tok, sign: func(ch link.Msg) link.Msg {
		return signed(evil, "127.0.0.1", ch, "box")
	}}).dial(h)
	if link.CloseStatus(err) != link.StatusPolicy {
		t.Fatalf("enrolling with another key's signature: %v, want 1008", err)
	}
	if _, ok := h.acc.DeviceByEnrollToken(ctx, tok); !ok {
		t.Fatal("a failed proof spent the token")
	}
	c, _, _, err := (&dev{t: t, key: k, token: tok}).dial(h)
	if err != nil {
		t.Fatal(err)
	}
	c.Close(link.StatusNormal, "")
	waitUntil(t, 5*time.Second, "laptop offline", func() bool { on, _ := h.device(t, "laptop"); return !on })

	// An eavesdropper (or a hub the agent also talks to) keeps a good
	// hello and replays it.
	var kept link.Msg
	if _, _, _, err := (&dev{t: t, key: k, sign: func(ch link.Msg) link.Msg {
		kept = signed(k, "127.0.0.1", ch, "box")
		return kept
	}}).dial(h); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 5*time.Second, "laptop online", func() bool { on, _ := h.device(t, "laptop"); return on })
	h.h.cut(h.mustDevice(t, "laptop"), k.PublicString())
	waitUntil(t, 5*time.Second, "laptop offline", func() bool { on, _ := h.device(t, "laptop"); return !on })
	for _, c := range []struct {
		name string
		sign func(ch link.Msg) link.Msg
		log  string
	}{
		{"a replayed hello", func(link.Msg) link.Msg { return kept }, "bad signature"},
		{"a signature for another hub's host", func(ch link.Msg) link.Msg { return signed(k, "hub.example.com", ch, "box") }, "signed for another host"},
		{"a signature for another hub's id", func(ch link.Msg) link.Msg {
			ch.HubID = "hother"
			return signed(k, "127.0.0.1", ch, "box")
		}, "bad signature"},
		{"no signature", func(link.Msg) link.Msg { return link.Msg{Hostname: "box"} }, "without a valid signature"},
		{"garbage", func(link.Msg) link.Msg { return link.Msg{Hostname: "box", Sig: "!!!"} }, "without a valid signature"},
	} {
		_, _, _, err := (&dev{t: t, key: k, sign: c.sign}).dial(h)
		if link.CloseStatus(err) != link.StatusPolicy {
			t.Errorf("%s: %v, want 1008", c.name, err)
		}
		if !strings.Contains(h.log.String(), c.log) {
			t.Errorf("%s: the log does not say %q", c.name, c.log)
		}
		if on, _ := h.device(t, "laptop"); on {
			t.Fatalf("%s: the device is online", c.name)
		}
	}
}

func (h *linkHub) mustDevice(t *testing.T, name string) string {
	t.Helper()
	list, err := h.acc.Devices(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range list {
		if d.Name == name {
			return d.ID
		}
	}
	t.Fatalf("no device %q", name)
	return ""
}

// The impostor: a second machine with the device's key, while the device
// is connected and answers. It is refused with 4003, logged and shown to
// the owner; the device keeps its connection, and what the hub sends goes
// to it, never to the impostor.
func TestLinkImpostorRefused(t *testing.T) {
	t.Parallel()
	h := newLinkHub(t)
	ctx := context.Background()
	_, tok, _ := h.acc.AddDevice(ctx, "alice", "laptop", 0)
	k := testKeyIn(t)
	c, _, _, err := (&dev{t: t, key: k, token: tok}).dial(h)
	if err != nil {
		t.Fatal(err)
	}
	var gotReq sync.Map
	var real *link.Peer
	real = link.NewPeer(c, link.Options{OnMsg: func(m link.Msg) {
		if m.T == link.TypeReq {
			gotReq.Store(m.Op, true)
			real.Reply(m.ID, nil, nil)
		}
	}})
	rctx, rcancel := context.WithCancel(ctx)
	defer rcancel()
	go real.Run(rctx)
	waitUntil(t, 5*time.Second, "laptop online", func() bool { on, _ := h.device(t, "laptop"); return on })

	for i := range 2 {
		_, _, _, err := (&dev{t: t, key: k, sign: func(ch link.Msg) link.Msg {
			return signed(k, "127.0.0.1", ch, "impostor")
		}}).dial(h)
		if link.CloseStatus(err) != link.StatusConflict {
			t.Fatalf("impostor #%d: %v, want 4003", i+1, err)
		}
	}
	on, conflicts := h.device(t, "laptop")
	if !on || conflicts != 2 {
		t.Errorf("laptop online %v with %d conflicts, want online with 2", on, conflicts)
	}
	if real.Err() != nil {
		t.Fatalf("the real device's link ended: %v", real.Err())
	}
	if !strings.Contains(h.log.String(), "another machine is using a device's identity") {
		t.Errorf("the hub's log does not say so")
	}
	var cf *api.DeviceConflict
	for _, d := range h.h.DevicesOf("alice") {
		cf = d.Conflict
	}
	if cf == nil || cf.Hostname != "impostor" || !strings.HasPrefix(cf.Address, "127.0.0.1:") {
		t.Errorf("conflict %+v", cf)
	}
	// The hub's requests still reach the real device.
	h.h.mu.Lock()
	p := h.h.devices[h.mustDevice(t, "laptop")].peer
	h.h.mu.Unlock()
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := p.Call(cctx, api.OpInput.Name, api.InputRequest{SessionRef: api.SessionRef{ID: "s1"}, Text: "secret"}, nil); err != nil {
		t.Fatalf("input: %v", err)
	}
	if _, ok := gotReq.Load(api.OpInput.Name); !ok {
		t.Error("the input did not reach the real device")
	}
}

// A connection that does not answer is dead: the device's next connection
// takes over once the probe finds that out, and the dead one is closed.
func TestLinkDeadConnectionReplaced(t *testing.T) {
	t.Parallel()
	h := newLinkHub(t)
	ctx := context.Background()
	_, tok, _ := h.acc.AddDevice(ctx, "alice", "laptop", 0)
	k := testKeyIn(t)
	dead, _, _, err := (&dev{t: t, key: k, token: tok}).dial(h)
	if err != nil {
		t.Fatal(err)
	}
	// Nobody reads dead: it answers no ping, like a machine whose network
	// went away before the hub noticed.
	waitUntil(t, 5*time.Second, "laptop online", func() bool { on, _ := h.device(t, "laptop"); return on })
	start := time.Now()
	c, _, _, err := (&dev{t: t, key: k}).dial(h)
	if err != nil {
		t.Fatalf("the device's new connection: %v", err)
	}
	took := time.Since(start)
	if took < probeTimeout/2 || took > probeTimeout+5*time.Second {
		t.Errorf("the takeover took %v, want about the probe's %v", took, probeTimeout)
	}
	live(t, c)
	if on, conflicts := h.device(t, "laptop"); !on || conflicts != 0 {
		t.Errorf("online %v, %d conflicts", on, conflicts)
	}
	if err := readUntilClosed(dead); link.CloseStatus(err) != link.StatusReplaced {
		t.Errorf("the dead connection: %v, want 4001", err)
	}
}

func readUntilClosed(c link.Conn) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		if _, _, err := c.Read(ctx); err != nil {
			return err
		}
	}
}

// Enrolling again with a new key (the machine lost its key) replaces the
// connection with the old key at once: that key is no longer the device's.
func TestLinkReEnrolment(t *testing.T) {
	t.Parallel()
	h := newLinkHub(t)
	ctx := context.Background()
	_, tok, _ := h.acc.AddDevice(ctx, "alice", "laptop", 0)
	old := testKeyIn(t)
	c, _, _, err := (&dev{t: t, key: old, token: tok}).dial(h)
	if err != nil {
		t.Fatal(err)
	}
	oldPeer := live(t, c)
	_, tok2, err := h.acc.Enroll(ctx, "alice", "laptop", 0)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	nc, w, _, err := (&dev{t: t, key: testKeyIn(t), token: tok2}).dial(h)
	if err != nil || !w.Enrolled {
		t.Fatalf("the new key: %+v %v", w, err)
	}
	if d := time.Since(start); d > probeTimeout {
		t.Errorf("took %v: the old key's connection was probed", d)
	}
	live(t, nc)
	select {
	case <-oldPeer.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the old key's connection stays")
	}
	if !errors.Is(oldPeer.Err(), link.ErrClosed) || link.CloseStatus(oldPeer.Err()) != link.StatusReplaced {
		t.Errorf("the old connection ended with %v", oldPeer.Err())
	}
	if _, _, code, _ := (&dev{t: t, key: old}).dial(h); code != http.StatusUnauthorized {
		t.Errorf("the old key: %d, want 401", code)
	}
}

// BenchmarkLinkHandshake: one enrolled device connecting over a loopback
// WebSocket: the upgrade with its key looked up, the challenge, the
// signed hello verified, the welcome; then it closes.
func BenchmarkLinkHandshake(b *testing.B) {
	h := newLinkHub(b)
	ctx := context.Background()
	_, tok, _ := h.acc.AddDevice(ctx, "alice", "laptop", 0)
	k, _ := devicekey.Generate()
	d := &dev{t: b, key: k, token: tok}
	c, _, _, err := d.dial(h)
	if err != nil {
		b.Fatal(err)
	}
	c.Close(link.StatusNormal, "")
	d.token = ""
	b.ResetTimer()
	for range b.N {
		waitUntilB(b, func() bool { on, _ := h.device(b, "laptop"); return !on })
		c, _, _, err := d.dial(h)
		if err != nil {
			b.Fatal(err)
		}
		c.Close(link.StatusNormal, "")
	}
}

func waitUntilB(b *testing.B, f func() bool) {
	deadline := time.Now().Add(10 * time.Second)
	for !f() {
		if time.Now().After(deadline) {
			b.Fatal("timed out")
		}
		time.Sleep(time.Millisecond)
	}
}
