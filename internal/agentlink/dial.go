package agentlink

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/coder/websocket"

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
			return "", fmt.Errorf("hub URL %q: refusing to send the device token in clear text over %s:// to %s; use https://%s (plain http only to a hub on this machine: 127.0.0.1, ::1, localhost)",
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

// ErrRefused says the hub did not accept the device token.
var ErrRefused = errors.New("the hub refused this device's token")

// Run keeps a link to the hub up until ctx ends, reconnecting with backoff.
// The agent runs on regardless; a refused token is retried too (slowly),
// since it may be a hub restored from a backup.
func Run(ctx context.Context, hub, token string, o Options) error {
	u, err := LinkURL(hub)
	if err != nil {
		return err
	}
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
			log.Warn("hub link down; retrying", "err", err, "in", wait.Round(time.Millisecond))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		backoff = min(backoff*2, maxBackoff)
	}
}

func jitter(d time.Duration) time.Duration {
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}

func dialAndServe(ctx context.Context, u, token string, o Options) error {
	dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	c, resp, err := websocket.Dial(dctx, u, &websocket.DialOptions{
		HTTPHeader: http.Header{"Authorization": {"Bearer " + token}},
	})
	cancel()
	if err != nil {
		if resp != nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
			return fmt.Errorf("%w (%s)", ErrRefused, resp.Status)
		}
		return err
	}
	if o.Logger != nil {
		o.Logger.Info("connected to the hub", "url", u)
	}
	return Serve(ctx, link.NewWebSocket(c, 0), o)
}
