package hub

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/link"
)

// When Run's context ends it closes every device's link with 1001 (the
// agent reconnects to the next hub), and returns only once the links'
// handlers have returned; a device that comes later is refused.
func TestServeEndsTheLinks(t *testing.T) {
	h := newLinkHub(t)
	ctx := context.Background()
	_, tok, _ := h.acc.AddDevice(ctx, "alice", "laptop", 0)
	c, _, _, err := (&dev{t: t, key: testKeyIn(t), token: tok}).dial(h)
	if err != nil {
		t.Fatal(err)
	}
	p := live(t, c)
	local, _ := attachLocal(t, h.h)
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- h.h.Run(sctx) }()
	start := time.Now()
	stop()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Run took %v", d)
	}
	for what, pe := range map[string]*link.Peer{"remote": p, "local": local} {
		select {
		case <-pe.Done():
		case <-time.After(5 * time.Second):
			t.Fatalf("the %s device's link is still up", what)
		}
		// Over a WebSocket, coder/websocket's answer to the close
		// sometimes reaches its reader as the connection's end instead.
		if got := link.CloseStatus(pe.Err()); got != link.StatusGoingAway && (what == "local" || !errors.Is(pe.Err(), io.EOF)) {
			t.Errorf("the %s device's link ended with %v, want 1001", what, pe.Err())
		}
	}
	// The handlers returned with Run: the hub holds no connection.
	if online, _ := h.device(t, "laptop"); online {
		t.Error("the device is still online")
	}
	if err := h.h.ServeLocal(ctx, DeviceIdentity{ID: "late", Name: "late", Owner: "alice"}, closedConn{}); !errors.Is(err, errStopped) {
		t.Errorf("a device after Run: %v", err)
	}
}

// attachLocal attaches an in-process device (as corral serve does) whose
// end runs a Peer.
func attachLocal(t *testing.T, h *Hub) (*link.Peer, <-chan error) {
	t.Helper()
	hubEnd, devEnd := link.Pipe()
	attached := make(chan error, 1)
	go func() {
		attached <- h.ServeLocal(context.Background(), DeviceIdentity{ID: "local", Name: "box", Owner: "alice", Local: true}, hubEnd)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := link.ClientHello(ctx, devEnd, func(link.Msg) (link.Msg, error) { return link.Msg{Hostname: "box"}, nil }); err != nil {
		t.Fatal(err)
	}
	p := live(t, devEnd)
	t.Cleanup(func() { <-attached })
	return p, attached
}

// closedConn is a conn that is already closed.
type closedConn struct{}

func (closedConn) Read(context.Context) (link.Kind, []byte, error) { return 0, nil, link.ErrClosed }
func (closedConn) Write(context.Context, link.Kind, []byte) error  { return link.ErrClosed }
func (closedConn) Close(int, string) error                         { return nil }

// A device revoked through the running hub (its admin socket, as `corral
// hub device revoke` asks) is cut off at once with 1008, not at the next
// look in the database (RecheckDevices, a minute); so are a removed
// user's devices. Before, the hub noticed within its 5 s poll.
func TestAdminRevokeCutsAtOnce(t *testing.T) {
	h := newLinkHub(t)
	ctx := context.Background()
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- h.h.Run(sctx) }()
	t.Cleanup(func() { stop(); <-served })
	admin := httptest.NewServer(h.h.AdminHandler())
	t.Cleanup(admin.Close)
	post := func(path string, req AdminRequest, hdr ...string) (int, api.Error) {
		b, _ := json.Marshal(req)
		r, _ := http.NewRequest(http.MethodPost, admin.URL+path, bytes.NewReader(b))
		for i := 0; i+1 < len(hdr); i += 2 {
			r.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var e api.Error
		json.NewDecoder(resp.Body).Decode(&e)
		return resp.StatusCode, e
	}
	connect := func(name string) *link.Peer {
		_, tok, err := h.acc.AddDevice(ctx, "alice", name, 0)
		if err != nil {
			t.Fatal(err)
		}
		c, _, _, err := (&dev{t: t, key: testKeyIn(t), token: tok}).dial(h)
		if err != nil {
			t.Fatal(err)
		}
		return live(t, c)
	}
	cut := func(p *link.Peer, what string) {
		t.Helper()
		select {
		case <-p.Done():
		case <-time.After(2 * time.Second):
			t.Fatalf("%s: the link is still up", what)
		}
		if got := link.CloseStatus(p.Err()); got != link.StatusPolicy {
			t.Errorf("%s: the link ended with %v, want 1008", what, p.Err())
		}
	}

	laptop := connect("laptop")
	if code, e := post(AdminRevokeDevice, AdminRequest{User: "alice", Name: "laptop"}, "Origin", "http://evil.example"); code != http.StatusForbidden {
		t.Errorf("from a browser: %d %+v", code, e)
	}
	if code, e := post(AdminRevokeDevice, AdminRequest{User: "alice", Name: "nope"}); code != http.StatusNotFound {
		t.Errorf("an unknown device: %d %+v", code, e)
	}
	if code, e := post(AdminRevokeDevice, AdminRequest{User: "alice", Name: "laptop"}); code != http.StatusOK {
		t.Fatalf("revoke: %d %+v", code, e)
	}
	cut(laptop, "revoked device")
	if list, _ := h.acc.Devices(ctx, "alice"); len(list) != 0 {
		t.Errorf("devices after the revocation: %+v", list)
	}

	desk := connect("desk")
	if code, e := post(AdminRemoveUser, AdminRequest{User: "alice"}); code != http.StatusOK {
		t.Fatalf("remove user: %d %+v", code, e)
	}
	cut(desk, "removed user's device")
}
