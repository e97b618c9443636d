package hub

import (
	"github.com/corral-dev/corral/internal/events"
	"github.com/corral-dev/corral/internal/metrics"
)

// WatchMetrics has m read the hub's state at every scrape: every device's
// sessions by status and machine (the device's name), and the users' event
// buses, summed as one ("hub").
func (h *Hub) WatchMetrics(m *metrics.Metrics) {
	m.WatchSessions(func(add func(status, machine string)) {
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, d := range h.devices {
			for _, s := range d.sessions {
				add(string(s.Status), d.info.Name)
			}
		}
	})
	m.WatchBus("hub", func() metrics.BusStats {
		h.mu.Lock()
		buses := make([]*events.Bus, 0, len(h.users))
		for _, b := range h.users {
			buses = append(buses, b)
		}
		h.mu.Unlock()
		var st metrics.BusStats
		for _, b := range buses {
			s := b.Stats()
			st.Subscribers += s.Subscribers
			st.MaxLag = max(st.MaxLag, s.MaxLag)
			st.Resyncs += s.FellBehind
		}
		return st
	})
}
