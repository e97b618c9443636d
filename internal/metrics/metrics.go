// Package metrics is corral's Prometheus instrumentation: one registry per
// daemon, made by the daemon and handed to the parts that count (agent,
// notifier, hub, links), and an HTTP handler for GET /metrics.
//
// Counters and histograms are fields behind nil-safe methods, so a part
// built without metrics (tests, tools) just counts nothing. State (sessions
// by status, event bus subscribers, terminal streams) is not counted in
// the many places that change it: it is read from its owner at scrape time
// (Watch*), under the owner's own lock, so it cannot drift.
//
// Label values are bounded: a fixed set chosen here (Result, Kind), the
// status engine's signal and status names, or machine names (bounded by
// the hub's devices). No session id, user, path or payload text ever
// becomes a label.
package metrics

import (
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics is one daemon's registry and its collectors. A nil *Metrics is
// valid: every method does nothing.
type Metrics struct {
	reg *prometheus.Registry

	hookDeliveries *prometheus.CounterVec
	hookLatency    *prometheus.HistogramVec
	statusChanges  *prometheus.CounterVec
	linkRoundTrip  prometheus.Histogram
	linkReconnects prometheus.Counter
	linkConnects   prometheus.Counter
	storeWrite     *prometheus.HistogramVec
	notifications  *prometheus.CounterVec

	// watched guards the scrape-time sources (Watch*), which parts add as
	// they start.
	mu       sync.Mutex
	sessions []func(add func(status, machine string))
	buses    map[string]func() BusStats
	terms    []func() TermStats
}

// Hook delivery results.
const (
	ResultOK = "ok" // applied to a session
	// ResultIgnored: well formed, but from a process corral does not run.
	ResultIgnored = "ignored"
	// ResultRefused: from another user's process.
	ResultRefused = "refused"
	// ResultBad: unreadable or malformed.
	ResultBad = "bad"
	// ResultFailed: a send (notification, database write) that failed.
	ResultFailed = "failed"
)

// Hook delivery kinds (hook.Header.Kind, normalised).
const (
	KindHook       = "hook"
	KindStatusLine = "statusline"
	KindUnknown    = "unknown"
)

// Notification channels.
const (
	ChannelPush    = "push"
	ChannelWebhook = "webhook"
)

// New makes a registry with corral's collectors and Go's runtime and
// process collectors.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		hookDeliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "corral_hook_deliveries_total",
			Help: "Hook and status line deliveries on the hook socket, by kind and result.",
		}, []string{"kind", "result"}),
		hookLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "corral_hook_delivery_seconds",
			Help:    "From a hook process's start to its delivery being applied, for deliveries applied to a session.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"kind"}),
		statusChanges: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "corral_status_changes_total",
			Help: "Session status changes, by the signal that caused them and the new status.",
		}, []string{"source", "status"}),
		linkRoundTrip: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "corral_link_round_trip_seconds",
			Help:    "Requests over a device link, from sending to the answer.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}),
		linkReconnects: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "corral_link_reconnects_total",
			Help: "Times this agent's link to its hub went down and was dialled again.",
		}),
		linkConnects: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "corral_link_connects_total",
			Help: "Device links the hub took in (handshake done).",
		}),
		storeWrite: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "corral_sqlite_write_seconds",
			Help:    "SQLite write statements and transactions, by result.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 5},
		}, []string{"result"}),
		notifications: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "corral_notifications_total",
			Help: "Notifications sent, by channel and result.",
		}, []string{"channel", "result"}),
		buses: map[string]func() BusStats{},
	}
	m.reg.MustRegister(m.hookDeliveries, m.hookLatency, m.statusChanges, m.linkRoundTrip, m.linkReconnects,
		m.linkConnects, m.storeWrite, m.notifications, newStateCollector(m),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// maxScrapes bounds the scrapes served at once: each walks every session.
const maxScrapes = 4

// Handler serves the registry in Prometheus's text format (or OpenMetrics,
// when asked), at most maxScrapes at once.
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return http.NotFoundHandler()
	}
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{MaxRequestsInFlight: maxScrapes, Timeout: 10 * time.Second})
}

// Registry is the registry itself (tests gather from it).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// HookDelivered counts one delivery on the hook socket. sent is when the
// hook process started (zero: unknown); it is observed for applied ones.
func (m *Metrics) HookDelivered(kind, result string, sent time.Time) {
	if m == nil {
		return
	}
	switch kind {
	case KindHook, KindStatusLine:
	default:
		kind = KindUnknown
	}
	m.hookDeliveries.WithLabelValues(kind, result).Inc()
	if result == ResultOK && !sent.IsZero() {
		// A hook's clock is the same machine's, but the header is
		// untrusted: a time in the future counts as no time.
		m.hookLatency.WithLabelValues(kind).Observe(max(time.Since(sent), 0).Seconds())
	}
}

// StatusChanged counts a status change caused by a signal (status.Kind's
// name) to a status (api.Status).
func (m *Metrics) StatusChanged(source, status string) {
	if m == nil {
		return
	}
	m.statusChanges.WithLabelValues(source, status).Inc()
}

// LinkRoundTrip observes one request's round trip over a device link.
func (m *Metrics) LinkRoundTrip(d time.Duration) {
	if m == nil {
		return
	}
	m.linkRoundTrip.Observe(d.Seconds())
}

// LinkReconnect counts a redial of the agent's link to its hub.
func (m *Metrics) LinkReconnect() {
	if m == nil {
		return
	}
	m.linkReconnects.Inc()
}

// LinkConnected counts a device link the hub took in.
func (m *Metrics) LinkConnected() {
	if m == nil {
		return
	}
	m.linkConnects.Inc()
}

// StoreWrite observes one SQLite write (a statement or a transaction).
func (m *Metrics) StoreWrite(d time.Duration, err error) {
	if m == nil {
		return
	}
	r := ResultOK
	if err != nil {
		r = ResultFailed
	}
	m.storeWrite.WithLabelValues(r).Observe(d.Seconds())
}

// Notified counts a notification sent (err nil) or not, on a channel.
func (m *Metrics) Notified(channel string, err error) {
	if m == nil {
		return
	}
	r := ResultOK
	if err != nil {
		r = ResultFailed
	}
	m.notifications.WithLabelValues(channel, r).Inc()
}

// BusStats is an event bus's state at scrape time.
type BusStats struct {
	Subscribers int
	// MaxLag is the most events queued for one subscriber, not yet read.
	MaxLag int
	// Resyncs counts the subscribers dropped for falling behind, ever
	// (each then resyncs with a snapshot).
	Resyncs uint64
}

// TermStats is the terminal streams' state at scrape time.
type TermStats struct {
	Streams int
	// Bytes is the terminal output streams took in, ever; Redraws the
	// times a viewer that fell behind was redrawn.
	Bytes, Redraws uint64
}

// WatchSessions adds a source of sessions, read at every scrape: fn calls
// add once per session. Every source's sessions are summed.
func (m *Metrics) WatchSessions(fn func(add func(status, machine string))) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sessions = append(m.sessions, fn)
}

// WatchBus adds an event bus (or a set of them: a hub's users'), read at
// every scrape, under a name ("agent", "hub").
func (m *Metrics) WatchBus(name string, fn func() BusStats) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.buses[name] = fn
}

// WatchTerminals adds a source of terminal stream counts, read at every
// scrape; every source's are summed.
func (m *Metrics) WatchTerminals(fn func() TermStats) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.terms = append(m.terms, fn)
}

// stateCollector reads the Watch* sources at scrape time.
type stateCollector struct {
	m                                                            *Metrics
	sessions, subscribers, lag, resyncs, streams, bytes, redraws *prometheus.Desc
}

func newStateCollector(m *Metrics) *stateCollector {
	return &stateCollector{
		m:           m,
		sessions:    prometheus.NewDesc("corral_sessions", "Sessions, by status and machine.", []string{"status", "machine"}, nil),
		subscribers: prometheus.NewDesc("corral_bus_subscribers", "Live event bus subscriptions (event streams, WebSockets, links, notifiers).", []string{"bus"}, nil),
		lag:         prometheus.NewDesc("corral_bus_max_lag_events", "The most events queued for one subscriber and not yet read.", []string{"bus"}, nil),
		resyncs:     prometheus.NewDesc("corral_bus_resyncs_total", "Subscribers dropped for falling behind, each resyncing from a snapshot.", []string{"bus"}, nil),
		streams:     prometheus.NewDesc("corral_terminal_streams", "Terminal streams open (viewers attached, or in their grace period).", nil, nil),
		bytes:       prometheus.NewDesc("corral_terminal_bytes_total", "Terminal output taken in by the streams, in bytes.", nil, nil),
		redraws:     prometheus.NewDesc("corral_terminal_redraws_total", "Viewers that fell behind and were redrawn.", nil, nil),
	}
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.sessions, c.subscribers, c.lag, c.resyncs, c.streams, c.bytes, c.redraws} {
		ch <- d
	}
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	// The sources are read without m.mu: each takes its owner's lock.
	m := c.m
	m.mu.Lock()
	sessions := append([]func(func(string, string)){}, m.sessions...)
	buses := make(map[string]func() BusStats, len(m.buses))
	for k, v := range m.buses {
		buses[k] = v
	}
	terms := append([]func() TermStats{}, m.terms...)
	m.mu.Unlock()

	type key struct{ status, machine string }
	counts := map[key]int{}
	for _, fn := range sessions {
		fn(func(status, machine string) { counts[key{status, machine}]++ })
	}
	for k, n := range counts {
		ch <- prometheus.MustNewConstMetric(c.sessions, prometheus.GaugeValue, float64(n), k.status, k.machine)
	}
	for name, fn := range buses {
		s := fn()
		ch <- prometheus.MustNewConstMetric(c.subscribers, prometheus.GaugeValue, float64(s.Subscribers), name)
		ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, float64(s.MaxLag), name)
		ch <- prometheus.MustNewConstMetric(c.resyncs, prometheus.CounterValue, float64(s.Resyncs), name)
	}
	if len(terms) > 0 {
		var t TermStats
		for _, fn := range terms {
			s := fn()
			t.Streams += s.Streams
			t.Bytes += s.Bytes
			t.Redraws += s.Redraws
		}
		ch <- prometheus.MustNewConstMetric(c.streams, prometheus.GaugeValue, float64(t.Streams))
		ch <- prometheus.MustNewConstMetric(c.bytes, prometheus.CounterValue, float64(t.Bytes))
		ch <- prometheus.MustNewConstMetric(c.redraws, prometheus.CounterValue, float64(t.Redraws))
	}
}
