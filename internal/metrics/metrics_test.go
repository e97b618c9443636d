package metrics

import (
	"errors"
	"io"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("GET /metrics: %d", rec.Code)
	}
	b, _ := io.ReadAll(rec.Body)
	return string(b)
}

func TestScrape(t *testing.T) {
	m := New()
	m.HookDelivered(KindHook, ResultOK, time.Now().Add(-time.Millisecond))
	m.HookDelivered("anything a hook says", ResultBad, time.Time{})
	m.StatusChanged("Stop", "idle")
	m.StoreWrite(time.Millisecond, nil)
	m.Notified(ChannelWebhook, errors.New("refused"))
	m.LinkRoundTrip(time.Millisecond)
	m.LinkReconnect()
	m.WatchSessions(func(add func(string, string)) {
		add("idle", "box")
		add("idle", "box")
		add("working", "box")
	})
	m.WatchBus("agent", func() BusStats { return BusStats{Subscribers: 2, MaxLag: 3, Resyncs: 1} })
	m.WatchTerminals(func() TermStats { return TermStats{Streams: 1, Bytes: 100, Redraws: 2} })
	out := scrape(t, m)
	for _, want := range []string{
		`corral_hook_deliveries_total{kind="hook",result="ok"} 1`,
		`corral_hook_deliveries_total{kind="unknown",result="bad"} 1`,
		`corral_hook_delivery_seconds_count{kind="hook"} 1`,
		`corral_status_changes_total{source="Stop",status="idle"} 1`,
		`corral_sqlite_write_seconds_count{result="ok"} 1`,
		`corral_notifications_total{channel="webhook",result="failed"} 1`,
		`corral_link_round_trip_seconds_count 1`,
		`corral_link_reconnects_total 1`,
		`corral_sessions{machine="box",status="idle"} 2`,
		`corral_sessions{machine="box",status="working"} 1`,
		`corral_bus_subscribers{bus="agent"} 2`,
		`corral_bus_max_lag_events{bus="agent"} 3`,
		`corral_bus_resyncs_total{bus="agent"} 1`,
		`corral_terminal_streams 1`,
		`corral_terminal_bytes_total 100`,
		`corral_terminal_redraws_total 2`,
		`go_goroutines `,
		`process_resident_memory_bytes `,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %q", want)
		}
	}
}

// A part built without metrics counts nothing and does not fail.
func TestNil(t *testing.T) {
	var m *Metrics
	m.HookDelivered(KindHook, ResultOK, time.Now())
	m.StatusChanged("Stop", "idle")
	m.StoreWrite(0, nil)
	m.Notified(ChannelPush, nil)
	m.LinkRoundTrip(0)
	m.LinkReconnect()
	m.LinkConnected()
	m.WatchSessions(nil)
	m.WatchBus("x", nil)
	m.WatchTerminals(nil)
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 404 {
		t.Fatalf("nil metrics' handler: %d, want 404", rec.Code)
	}
}

// BenchmarkScrape: one scrape of a hub with 10,000 sessions on 100
// machines, with every counter in use (docs/benchmarks.md, "Metrics").
func BenchmarkScrape(b *testing.B) {
	m := New()
	statuses := []string{"starting", "idle", "busy", "needs_input", "review", "exited"}
	m.WatchSessions(func(add func(string, string)) {
		for i := range 10000 {
			add(statuses[i%len(statuses)], "machine-"+strconv.Itoa(i%100))
		}
	})
	m.WatchBus("hub", func() BusStats { return BusStats{Subscribers: 50} })
	m.HookDelivered(KindHook, ResultOK, time.Now())
	m.StatusChanged("Stop", "review")
	m.StoreWrite(time.Millisecond, nil)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		if rec.Code != 200 {
			b.Fatal(rec.Code)
		}
	}
}

// BenchmarkHookDelivered: what counting costs a hook delivery.
func BenchmarkHookDelivered(b *testing.B) {
	m := New()
	sent := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		m.HookDelivered(KindHook, ResultOK, sent)
	}
}
