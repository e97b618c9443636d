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
		// A session's one copy is on its owner's bus (foldLocked); the
		// owner index names the device it belongs to.
		h.mu.Lock()
		type owned struct {
			bus  *events.Feed
			ids  []string
			name string
		}
		var all []owned
		for _, d := range h.devices {
			bus := h.users[d.info.Owner]
			if bus == nil || len(d.ids) == 0 {
				continue
			}
			o := owned{bus: bus, name: d.info.Name}
			for id := range d.ids {
				o.ids = append(o.ids, id)
			}
			all = append(all, o)
		}
		h.mu.Unlock()
		for _, o := range all {
			for _, id := range o.ids {
				if s, ok := o.bus.Session(id); ok {
					add(string(s.Status), o.name)
				}
			}
		}
	})
	m.WatchBus("hub", func() metrics.BusStats {
		h.mu.Lock()
		buses := make([]*events.Feed, 0, len(h.users))
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
