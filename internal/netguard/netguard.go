// Package netguard keeps the requests corral makes on a person's behalf
// to URLs a user typed (webhooks, Web Push endpoints) off the machine itself
// and its private networks: no loopback, private, link-local (cloud
// metadata at 169.254.169.254 included), shared (CGNAT), unique-local
// (fd00:ec2::254, the metadata service over IPv6, included) or otherwise
// special address. The check runs when a connection is made, on the
// address actually dialed, so a name that resolves to a public address when
// it is saved and to 127.0.0.1 when it is used (DNS rebinding) fails too,
// and so does every redirect.
package netguard

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// ErrBlocked is wrapped by every refusal.
var ErrBlocked = errors.New("not a public address")

// BlockedError says which address was refused, and why.
type BlockedError struct {
	Addr netip.Addr
	Kind string // "loopback", "private", ...
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("refusing to connect to %s, a %s address: webhooks and Web Push reach only public addresses unless corral runs with --allow-private-webhooks", e.Addr, e.Kind)
}

func (e *BlockedError) Unwrap() error { return ErrBlocked }

// specialKind names the range of ip when it is one of those that are not
// public unicast beyond what netip's predicates tell ("" otherwise). (A
// table made at each call: no package state; it runs once per dial.)
func specialKind(ip netip.Addr) string {
	for _, s := range []struct{ prefix, kind string }{
		{"0.0.0.0/8", "this-network"},
		{"100.64.0.0/10", "shared (CGNAT)"},
		{"192.0.0.0/24", "IETF protocol"},
		{"192.0.2.0/24", "documentation"},
		{"198.18.0.0/15", "benchmarking"},
		{"198.51.100.0/24", "documentation"},
		{"203.0.113.0/24", "documentation"},
		{"240.0.0.0/4", "reserved"},
		{"255.255.255.255/32", "broadcast"},
		{"64:ff9b:1::/48", "local NAT64"},
		{"100::/64", "discard"},
		{"2001::/32", "Teredo"},
		{"2001:db8::/32", "documentation"},
		{"fec0::/10", "site-local"},
	} {
		if netip.MustParsePrefix(s.prefix).Contains(ip) {
			return s.kind
		}
	}
	return ""
}

// Check returns a *BlockedError unless ip is a public unicast address. An
// IPv6 address that embeds an IPv4 one (mapped, NAT64, 6to4) is judged by
// the IPv4 address.
func Check(ip netip.Addr) error {
	ip = ip.WithZone("")
	if ip.Is4In6() {
		ip = ip.Unmap()
	}
	nat64, sixToFour := netip.MustParsePrefix("64:ff9b::/96"), netip.MustParsePrefix("2002::/16")
	if ip.Is6() && (nat64.Contains(ip) || sixToFour.Contains(ip)) {
		b := ip.As16()
		var v4 [4]byte
		if nat64.Contains(ip) {
			copy(v4[:], b[12:16])
		} else {
			copy(v4[:], b[2:6])
		}
		if err := Check(netip.AddrFrom4(v4)); err != nil {
			return &BlockedError{Addr: ip, Kind: err.(*BlockedError).Kind + " (embedded)"}
		}
		return nil
	}
	kind := ""
	switch {
	case !ip.IsValid():
		kind = "invalid"
	case ip == netip.AddrFrom4([4]byte{169, 254, 169, 254}) || ip == netip.MustParseAddr("fd00:ec2::254"):
		kind = "cloud metadata"
	case ip.IsUnspecified():
		kind = "unspecified"
	case ip.IsLoopback():
		kind = "loopback"
	case ip.Is6() && ip.IsPrivate():
		kind = "unique-local"
	case ip.IsPrivate():
		kind = "private"
	case ip.IsLinkLocalUnicast():
		kind = "link-local"
	case ip.IsMulticast(), ip.IsLinkLocalMulticast(), ip.IsInterfaceLocalMulticast():
		kind = "multicast"
	default:
		kind = specialKind(ip)
	}
	if kind != "" {
		return &BlockedError{Addr: ip, Kind: kind}
	}
	return nil
}

// CheckHost refuses a host that is an IP address or a name that needs no
// lookup to be local (localhost, *.localhost); other names are judged when
// dialed. It lets a setting be refused when it is made, with a clear error.
func CheckHost(host string) error {
	if ip, err := netip.ParseAddr(host); err == nil {
		return Check(ip)
	}
	if host == "localhost" || len(host) > len(".localhost") && host[len(host)-len(".localhost"):] == ".localhost" {
		return &BlockedError{Addr: netip.MustParseAddr("127.0.0.1"), Kind: "loopback (" + host + ")"}
	}
	return nil
}

// control is a net.Dialer.Control: it runs for every address dialed, after
// the name was resolved, before the connection is made.
func control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("netguard: %s: %w", address, err)
	}
	return Check(ap.Addr())
}

// Client is an http.Client for requests to the internet, each bounded by
// timeout. Unless allowPrivate, every connection it makes, redirects
// included, is checked with Check; it then also ignores HTTP(S)_PROXY,
// since a proxy would resolve the name itself and the check could not hold.
// With allowPrivate it behaves like http.DefaultClient with a timeout.
func Client(timeout time.Duration, allowPrivate bool) *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	if !allowPrivate {
		d.Control = control
		tr.Proxy = nil
	}
	return &http.Client{Timeout: timeout, Transport: tr}
}
