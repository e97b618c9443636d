package netguard

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func TestCheck(t *testing.T) {
	blocked := []string{
		"127.0.0.1", "127.1.2.3", "::1", "0.0.0.0", "::", "10.0.0.1", "172.16.5.4", "192.168.1.1",
		"169.254.169.254", "169.254.1.1", "fe80::1", "100.64.0.1", "100.127.255.254", "fc00::1", "fd00:ec2::254",
		"::ffff:127.0.0.1", "::ffff:169.254.169.254", "64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe", "2002:7f00:1::1",
		"224.0.0.1", "ff02::1", "255.255.255.255", "240.0.0.1", "192.0.2.1", "198.18.0.1", "2001:db8::1", "fec0::1",
		"0.1.2.3", "2001::1",
	}
	for _, s := range blocked {
		err := Check(netip.MustParseAddr(s))
		var be *BlockedError
		if !errors.As(err, &be) || !errors.Is(err, ErrBlocked) {
			t.Errorf("%s: %v, want blocked", s, err)
		}
	}
	for _, s := range []string{"1.1.1.1", "8.8.8.8", "142.250.1.1", "2606:4700::1111", "64:ff9b::808:808", "2002:808:808::1"} {
		if err := Check(netip.MustParseAddr(s)); err != nil {
			t.Errorf("%s: %v, want allowed", s, err)
		}
	}
	if err := Check(netip.MustParseAddr("169.254.169.254")); !strings.Contains(err.Error(), "metadata") || !strings.Contains(err.Error(), "--allow-private-webhooks") {
		t.Errorf("the refusal says too little: %v", err)
	}
	for _, h := range []string{"localhost", "x.localhost", "127.0.0.1", "::1"} {
		if CheckHost(h) == nil {
			t.Errorf("host %s allowed", h)
		}
	}
	if CheckHost("ntfy.sh") != nil {
		t.Error("a name was refused before it was looked up")
	}
}

// TestClientRefusesLoopback: the guarded client reaches no local server,
// neither by address nor by a name that resolves to it, nor through a
// redirect from an allowed server; with allowPrivate it does.
func TestClientRefusesLoopback(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	guarded := Client(5*time.Second, false)
	for _, u := range []string{srv.URL, "http://localhost:" + port + "/", "http://[::ffff:127.0.0.1]:" + port + "/"} {
		resp, err := guarded.Get(u)
		if err == nil {
			resp.Body.Close()
			t.Errorf("%s: reached", u)
			continue
		}
		if !errors.Is(err, ErrBlocked) {
			t.Errorf("%s: %v, want a refusal", u, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("%d requests arrived", n)
	}
	// A redirect is dialed, and so checked, like the first request: a
	// guarded client that was let reach a server (here, by a dialer that
	// allows it) is still refused the redirect's target.
	redirector := httptest.NewServer(http.RedirectHandler(srv.URL+"/", http.StatusFound))
	defer redirector.Close()
	tr := guarded.Transport.(*http.Transport).Clone()
	first := redirector.Listener.Addr().String()
	d := &net.Dialer{Control: func(network, address string, c syscall.RawConn) error {
		if address == first {
			return nil
		}
		return control(network, address, c)
	}}
	tr.DialContext = d.DialContext
	c := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	resp, err := c.Get(redirector.URL)
	if err == nil {
		resp.Body.Close()
		t.Fatal("the redirect to loopback was followed")
	}
	if !errors.Is(err, ErrBlocked) || hits.Load() != 0 {
		t.Fatalf("redirect: %v, %d hits", err, hits.Load())
	}
	resp, err = Client(5*time.Second, true).Get(srv.URL)
	if err != nil {
		t.Fatalf("allowed: %v", err)
	}
	resp.Body.Close()
	if hits.Load() != 1 {
		t.Fatal("the allowed request did not arrive")
	}
}
