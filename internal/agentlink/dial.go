package agentlink

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/corral-dev/corral/internal/devicekey"
	"github.com/corral-dev/corral/internal/link"
)

// Backoff between reconnects: from minBackoff doubling to maxBackoff, with
// ±20 % jitter so a hub that comes back is not hit by every agent at once.
// A connection that lasted stableAfter starts the backoff over.
const (
	minBackoff  = 500 * time.Millisecond
	maxBackoff  = 30 * time.Second
	stableAfter = time.Minute
)

// LinkURL turns a hub's URL into its link endpoint. Plain ws:// is refused
// unless the hub is on loopback: the device token would travel in clear.
func LinkURL(hub string) (string, error) {
	u, err := url.Parse(strings.TrimRight(hub, "/"))
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("hub URL %q: want https://host[:port]", hub)
	}
	switch u.Scheme {
	case "https", "wss":
		u.Scheme = "wss"
	case "http", "ws":
		if !loopback(u.Hostname()) {
			return "", fmt.Errorf("hub URL %q: refusing to link in clear text over %s:// to %s (the link carries the enrolment token and every keystroke); use https://%s (plain http only to a hub on this machine: 127.0.0.1, ::1, localhost)",
				hub, u.Scheme, u.Hostname(), u.Host)
		}
		u.Scheme = "ws"
	default:
		return "", fmt.Errorf("hub URL %q: want https://", hub)
	}
	u.Path += "/api/v1/link"
	u.RawQuery = fmt.Sprintf("v=%d", link.Protocol)
	return u.String(), nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ErrRefused says the hub did not let this machine in: its key is not
// enrolled, or the enrolment token is wrong, spent or expired.
var ErrRefused = errors.New("the hub refused this device")

// ErrConflict says the hub refused this connection because another one
// with this machine's key is connected and healthy.
var ErrConflict = errors.New("another machine is connected with this machine's identity")

// Header is the upgrade request's header for a device with key, and an
// enrolment token when it has one. The token goes only until the key is
// enrolled, but sending a spent one is harmless: a known key is let in by
// its proof alone.
func Header(key *devicekey.Key, token string) http.Header {
	h := http.Header{link.HeaderDeviceKey: {key.PublicString()}}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	return h
}

// Run keeps a link to the hub up until ctx ends, reconnecting with backoff.
// o.Key proves the machine's identity; token, while the key is not yet
// enrolled, is the one-time enrolment token. The agent runs on
// regardless; a refusal is retried too (slowly), since it may be a hub
// restored from a backup, or the other connection of a conflict may be a
// dead one the hub has not noticed yet.
func Run(ctx context.Context, hub, token string, o Options) error {
	u, err := LinkURL(hub)
	if err != nil {
		return err
	}
	if o.Key == nil {
		return errors.New("agentlink: no device key")
	}
	pu, _ := url.Parse(u)
	o.Host = pu.Host
	log := o.Logger
	backoff := minBackoff
	for {
		start := time.Now()
		err := dialAndServe(ctx, u, token, o)
		if ctx.Err() != nil {
			return nil
		}
		if time.Since(start) > stableAfter {
			backoff = minBackoff
		}
		wait := jitter(backoff)
		if log != nil {
			switch {
			case errors.Is(err, ErrConflict):
				log.Error("the hub refused this connection: another machine is connected with this machine's identity (the key in the data directory). "+
					"If this data directory was copied to another machine, give one of them a new identity: stop it, delete its device.key, and enrol it again (corral hub device enroll)",
					"err", err, "retry_in", wait.Round(time.Millisecond))
			case errors.Is(err, ErrRefused):
				log.Error("the hub refused this device", "err", err, "key", o.Key.Fingerprint(), "retry_in", wait.Round(time.Millisecond))
			default:
				log.Warn("hub link down; retrying", "err", err, "in", wait.Round(time.Millisecond))
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		o.Metrics.LinkReconnect()
		backoff = min(backoff*2, maxBackoff)
	}
}

func jitter(d time.Duration) time.Duration {
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}

func dialAndServe(ctx context.Context, u, token string, o Options) error {
	dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	c, resp, err := websocket.Dial(dctx, u, &websocket.DialOptions{HTTPHeader: Header(o.Key, token)})
	cancel()
	if err != nil {
		if resp != nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
			return fmt.Errorf("%w (%s): %s", ErrRefused, resp.Status, hubSays(resp))
		}
		if resp != nil {
			return fmt.Errorf("%w: %s", err, hubSays(resp))
		}
		return err
	}
	if o.Logger != nil {
		o.Logger.Info("connected to the hub", "url", u)
	}
	err = Serve(ctx, link.NewWebSocket(c, 0), o)
	switch link.CloseStatus(err) {
	case link.StatusConflict:
		return fmt.Errorf("%w: %w", ErrConflict, err)
	case link.StatusPolicy:
		return fmt.Errorf("%w: %w", ErrRefused, err)
	}
	return err
}

// hubSays is the start of a refusal's body (the hub explains itself
// there), fit for a log line.
func hubSays(resp *http.Response) string {
	if resp.Body == nil {
		return ""
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, strings.TrimSpace(strings.ToValidUTF8(string(b), "?")))
}
