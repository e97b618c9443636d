package cli

import (
	"log/slog"
	"net"
	"net/netip"

	"github.com/corral-dev/corral/internal/metrics"
	"github.com/corral-dev/corral/internal/notify"
)

// notifyFlags are the notifications' flags of serve and hub.
type notifyFlags struct {
	allowPrivate bool
	pushSubject  string
}

func addNotifyFlags(fl interface {
	StringVar(*string, string, string, string)
	BoolVar(*bool, string, bool, string)
}, f *notifyFlags) {
	fl.BoolVar(&f.allowPrivate, "allow-private-webhooks", false, "let webhooks and Web Push reach loopback, private and link-local addresses (a webhook receiver on this machine or the LAN)")
	fl.StringVar(&f.pushSubject, "push-subject", "", "the contact Web Push services see (VAPID subject): https://your-host or mailto:you@your-domain (default: https://<the first --allow-host>, else the project's page)")
}

// options are the notifier's options for a dashboard served with w.
func (f notifyFlags) options(log *slog.Logger, w webFlags, m *metrics.Metrics) notify.Options {
	return notify.Options{Logger: log, AllowPrivate: f.allowPrivate, Subject: f.subject(w), Metrics: m}
}

// subject is --push-subject, else the dashboard's public name: the first
// --allow-host (the name of the TLS proxy in front), or the name it serves
// HTTPS on; else "" (notify.DefaultSubject). A name the push services would
// refuse (localhost, .local) is skipped.
func (f notifyFlags) subject(w webFlags) string {
	if f.pushSubject != "" {
		return f.pushSubject
	}
	names := append([]string(nil), w.allowHosts...)
	if w.tlsCert != "" {
		if host, _, err := net.SplitHostPort(w.listen); err == nil {
			names = append(names, host)
		}
	}
	for _, h := range names {
		if host, _, err := net.SplitHostPort(h); err == nil {
			h = host
		}
		if _, err := netip.ParseAddr(h); err == nil || h == "" {
			continue
		}
		if s := "https://" + h; notify.CheckSubject(s) == nil {
			return s
		}
	}
	return ""
}
