package httpapi_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/events"
	"github.com/corral-dev/corral/internal/httpapi"
)

func TestEventsSnapshotThenChanges(t *testing.T) {
	t.Parallel()
	s := newServer(t, serverOptions{})
	pre := s.shell("pre")
	st := s.stream("/api/v1/events")
	if ct := st.resp.Header.Get("Content-Type"); ct != "application/x-ndjson" {
		t.Errorf("Content-Type %q", ct)
	}
	if cc := st.resp.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control %q", cc)
	}
	snap := st.event(5 * time.Second)
	if snap.Type != api.EventSnapshot || len(snap.Sessions) != 1 || snap.Sessions[0].ID != pre.ID {
		t.Fatalf("first event = %+v, want a snapshot with %s", snap, pre.ID)
	}
	if snap.Seq != s.bus.Seq() {
		t.Errorf("snapshot seq %d, bus seq %d", snap.Seq, s.bus.Seq())
	}

	created := s.shell("new")
	var renamed api.Session
	s.ok("PATCH", "/api/v1/sessions/"+created.ID, `{"name":"newer"}`, 200, &renamed)
	s.ok("DELETE", "/api/v1/sessions/"+pre.ID, "", 204, nil)

	want := []struct {
		typ  api.EventType
		id   string
		name string
	}{
		{api.EventSession, created.ID, "new"},
		{api.EventSession, created.ID, "newer"},
		{api.EventRemoved, pre.ID, ""},
	}
	seq := snap.Seq
	for i, w := range want {
		ev := st.event(5 * time.Second)
		if ev.Seq != seq+1 {
			t.Errorf("event %d: seq %d after %d", i, ev.Seq, seq)
		}
		seq = ev.Seq
		if ev.Type != w.typ {
			t.Fatalf("event %d: %s, want %s: %+v", i, ev.Type, w.typ, ev)
		}
		switch ev.Type {
		case api.EventSession:
			if ev.Session == nil || ev.Session.ID != w.id || ev.Session.Name != w.name {
				t.Errorf("event %d: %+v, want %s named %s", i, ev.Session, w.id, w.name)
			}
		case api.EventRemoved:
			if ev.ID != w.id {
				t.Errorf("event %d removed %q, want %s", i, ev.ID, w.id)
			}
		}
		if ev.Time.IsZero() {
			t.Errorf("event %d has no time", i)
		}
	}
}

func TestEventsSinceReplays(t *testing.T) {
	t.Parallel()
	s := newServer(t, serverOptions{})
	start := s.bus.Seq()
	a := s.shell("a")
	s.ok("PATCH", "/api/v1/sessions/"+a.ID, `{"name":"b"}`, 200, &api.Session{})
	s.ok("PATCH", "/api/v1/sessions/"+a.ID, `{"name":"c"}`, 200, &api.Session{})

	// From the first change on: the two renames, no snapshot.
	st := s.stream("/api/v1/events?since=" + strconv.FormatUint(start+1, 10))
	for i, name := range []string{"b", "c"} {
		ev := st.event(5 * time.Second)
		if ev.Type != api.EventSession || ev.Seq != start+2+uint64(i) || ev.Session.Name != name {
			t.Fatalf("replayed event %d = %+v (seq %d), want %s at seq %d", i, ev.Session, ev.Seq, name, start+2+uint64(i))
		}
	}
	// Then live changes.
	s.ok("PATCH", "/api/v1/sessions/"+a.ID, `{"name":"d"}`, 200, &api.Session{})
	if ev := st.event(5 * time.Second); ev.Seq != start+4 || ev.Session == nil || ev.Session.Name != "d" {
		t.Errorf("live event after replay = %+v", ev)
	}

	// Up to date: nothing to replay, no snapshot; the next change comes.
	now := s.bus.Seq()
	st2 := s.stream("/api/v1/events?since=" + strconv.FormatUint(now, 10))
	s.ok("PATCH", "/api/v1/sessions/"+a.ID, `{"name":"e"}`, 200, &api.Session{})
	if ev := st2.event(5 * time.Second); ev.Type != api.EventSession || ev.Seq != now+1 {
		t.Errorf("first event when up to date = %+v, want the next change", ev)
	}

	// A sequence number from another run of the daemon: a snapshot.
	st3 := s.stream("/api/v1/events?since=" + strconv.FormatUint(s.bus.Seq()+1000, 10))
	if ev := st3.event(5 * time.Second); ev.Type != api.EventSnapshot || len(ev.Sessions) != 1 || ev.Sessions[0].Name != "e" {
		t.Errorf("since from the future: %+v, want a snapshot", ev)
	}
}

func TestEventsSinceBeforeRing(t *testing.T) {
	t.Parallel()
	s := newServer(t, serverOptions{bus: events.Options{Ring: 4}})
	start := s.bus.Seq()
	a := s.shell("a")
	for i := range 10 {
		s.ok("PATCH", "/api/v1/sessions/"+a.ID, fmt.Sprintf(`{"name":"n%d"}`, i), 200, &api.Session{})
	}
	st := s.stream("/api/v1/events?since=" + strconv.FormatUint(start+1, 10))
	ev := st.event(5 * time.Second)
	if ev.Type != api.EventSnapshot || ev.Seq != s.bus.Seq() || len(ev.Sessions) != 1 || ev.Sessions[0].Name != "n9" {
		t.Errorf("since older than the ring: %+v, want a snapshot at the current seq", ev)
	}
}

func TestEventsSSE(t *testing.T) {
	t.Parallel()
	s := newServer(t, serverOptions{api: httpapi.Options{Heartbeat: 5 * time.Millisecond}})
	st := s.stream("/api/v1/events", "Accept", "text/event-stream")
	if ct := st.resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	// Frames: "id: N", "data: {...}", blank line; keepalives are comments.
	type frame struct {
		id   string
		data string
	}
	next := func() (frame, int) {
		var f frame
		keepalives := 0
		for {
			l := st.line(5 * time.Second)
			switch {
			case l == ": keepalive":
				keepalives++
				if blank := st.line(time.Second); blank != "" {
					t.Fatalf("keepalive not followed by a blank line: %q", blank)
				}
			case strings.HasPrefix(l, "id: "):
				f.id = strings.TrimPrefix(l, "id: ")
			case strings.HasPrefix(l, "data: "):
				f.data = strings.TrimPrefix(l, "data: ")
			case l == "":
				if f.data == "" {
					t.Fatalf("empty SSE frame (id %q)", f.id)
				}
				return f, keepalives
			default:
				t.Fatalf("unexpected SSE line %q", l)
			}
		}
	}
	f, _ := next()
	var ev api.Event
	if err := json.Unmarshal([]byte(f.data), &ev); err != nil || ev.Type != api.EventSnapshot {
		t.Fatalf("first frame %+v: %v", f, err)
	}
	if f.id != strconv.FormatUint(ev.Seq, 10) {
		t.Errorf("frame id %q, event seq %d", f.id, ev.Seq)
	}
	// Let a few keepalives pass, then a change.
	var kept int
	for kept < 3 {
		l := st.line(5 * time.Second)
		if l != ": keepalive" {
			t.Fatalf("idle SSE stream sent %q, want keepalive comments", l)
		}
		if blank := st.line(time.Second); blank != "" {
			t.Fatalf("keepalive not followed by a blank line: %q", blank)
		}
		kept++
	}
	a := s.shell("sse")
	f, _ = next()
	if err := json.Unmarshal([]byte(f.data), &ev); err != nil || ev.Type != api.EventSession || ev.Session.ID != a.ID {
		t.Fatalf("change frame %+v: %v", f, err)
	}
	if f.id != strconv.FormatUint(ev.Seq, 10) {
		t.Errorf("frame id %q, event seq %d", f.id, ev.Seq)
	}
}

func TestEventsNDJSONKeepalive(t *testing.T) {
	t.Parallel()
	s := newServer(t, serverOptions{api: httpapi.Options{Heartbeat: 5 * time.Millisecond}})
	st := s.stream("/api/v1/events")
	if ev := st.event(5 * time.Second); ev.Type != api.EventSnapshot {
		t.Fatalf("first event %+v", ev)
	}
	for i := range 3 {
		if l := st.line(5 * time.Second); l != "" {
			t.Fatalf("line %d while idle = %q, want an empty keepalive line", i, l)
		}
	}
	a := s.shell("k")
	if ev := st.event(5 * time.Second); ev.Type != api.EventSession || ev.Session.ID != a.ID {
		t.Errorf("event after keepalives = %+v", ev)
	}
}

func TestEventsClientGoneEndsSubscription(t *testing.T) {
	t.Parallel()
	s := newServer(t, serverOptions{})
	st := s.stream("/api/v1/events")
	st.event(5 * time.Second)
	if n := s.bus.Subscribers(); n != 1 {
		t.Fatalf("subscribers while streaming: %d", n)
	}
	st.close()
	waitUntil(t, 5*time.Second, "the subscription to end with its client", func() bool { return s.bus.Subscribers() == 0 })
}

// fallBehind opens a stream, reads its snapshot, then reads nothing while
// it renames a session until the bus drops the stream's subscription for
// being slow. It returns the stream, the snapshot's seq and the session.
func fallBehind(t *testing.T, s *server) (*stream, uint64, api.Session) {
	t.Helper()
	a := s.shell("slow")
	st := s.stream("/api/v1/events")
	snap := st.event(5 * time.Second)
	if snap.Type != api.EventSnapshot {
		t.Fatalf("first event %+v", snap)
	}
	// Long names make big events: the socket's buffers fill sooner.
	pad := strings.Repeat("x", 90)
	n := 0
	deadline := time.Now().Add(20 * time.Second)
	for s.bus.Subscribers() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the stalled stream was never dropped after %d renames", n)
		}
		n++
		s.ok("PATCH", "/api/v1/sessions/"+a.ID, fmt.Sprintf(`{"name":"%s%06d"}`, pad, n), 200, &api.Session{})
	}
	t.Logf("the stream fell behind after %d renames", n)
	return st, snap.Seq, a
}

// readUntilName reads the stream until the session is named name (in a
// change or a snapshot), checking that seqs never go back and that before
// any resync they grow by one. It returns the events read.
func readUntilName(t *testing.T, st *stream, seq uint64, name string) []api.Event {
	t.Helper()
	var evs []api.Event
	resynced := false
	for {
		ev := st.event(10 * time.Second)
		evs = append(evs, ev)
		switch ev.Type {
		case api.EventResync:
			if ev.Seq != seq {
				t.Errorf("resync seq %d, want the last seq sent (%d)", ev.Seq, seq)
			}
			resynced = true
			continue
		case api.EventSnapshot:
			if ev.Seq < seq {
				t.Errorf("snapshot seq %d went back from %d", ev.Seq, seq)
			}
			seq = ev.Seq
			for _, s := range ev.Sessions {
				if s.Name == name {
					return evs
				}
			}
			continue
		}
		if !resynced && ev.Seq != seq+1 {
			t.Errorf("seq %d after %d: a gap without a resync", ev.Seq, seq)
		}
		if ev.Seq <= seq {
			t.Errorf("seq %d after %d went back", ev.Seq, seq)
		}
		seq = ev.Seq
		if ev.Session != nil && ev.Session.Name == name {
			return evs
		}
	}
}

func TestEventsSlowReaderResyncs(t *testing.T) {
	t.Parallel()
	s := newServer(t, serverOptions{bus: events.Options{Buffer: 4}})
	st, seq, a := fallBehind(t, s)
	s.ok("PATCH", "/api/v1/sessions/"+a.ID, `{"name":"final"}`, 200, &api.Session{})
	evs := readUntilName(t, st, seq, "final")
	resyncs := 0
	for _, ev := range evs {
		if ev.Type == api.EventResync {
			resyncs++
		}
	}
	if resyncs == 0 {
		t.Errorf("a stream that fell behind got no resync (%d events)", len(evs))
	}
	// The stream lives on.
	s.ok("PATCH", "/api/v1/sessions/"+a.ID, `{"name":"after"}`, 200, &api.Session{})
	for {
		ev := st.event(5 * time.Second)
		if ev.Session != nil && ev.Session.Name == "after" {
			break
		}
	}
}

func TestEventsResyncFollowedBySnapshot(t *testing.T) {
	t.Parallel()
	s := newServer(t, serverOptions{bus: events.Options{Buffer: 4}})
	st, seq, a := fallBehind(t, s)
	s.ok("PATCH", "/api/v1/sessions/"+a.ID, `{"name":"final"}`, 200, &api.Session{})
	evs := readUntilName(t, st, seq, "final")
	for i, ev := range evs {
		if ev.Type == api.EventResync {
			if i+1 >= len(evs) || evs[i+1].Type != api.EventSnapshot {
				t.Fatalf("event after resync: %+v, want a snapshot", evs[min(i+1, len(evs)-1)])
			}
		}
	}
}

func TestEventsResyncSnapshotWhenRingLost(t *testing.T) {
	t.Parallel()
	// A ring smaller than what the reader missed: the catch-up must be a
	// snapshot of the current state.
	s := newServer(t, serverOptions{bus: events.Options{Buffer: 4, Ring: 8}})
	st, seq, a := fallBehind(t, s)
	for i := range 20 {
		s.ok("PATCH", "/api/v1/sessions/"+a.ID, fmt.Sprintf(`{"name":"more%d"}`, i), 200, &api.Session{})
	}
	s.ok("PATCH", "/api/v1/sessions/"+a.ID, `{"name":"final"}`, 200, &api.Session{})
	evs := readUntilName(t, st, seq, "final")
	sawResync := false
	for i, ev := range evs {
		if ev.Type == api.EventResync {
			sawResync = true
			if i+1 < len(evs) && evs[i+1].Type != api.EventSnapshot {
				t.Errorf("after resync with a lost ring: %+v, want a snapshot", evs[i+1])
			}
		}
	}
	if !sawResync {
		t.Error("no resync")
	}
}
