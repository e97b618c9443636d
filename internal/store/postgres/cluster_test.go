package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/store"
	"github.com/corral-dev/corral/internal/store/postgres"
)

func eventLog(t *testing.T) (store.EventLog, store.EventLog) {
	t.Helper()
	ctx := context.Background()
	url := pg.Database(t)
	var logs [2]store.EventLog
	for i := range logs {
		st, err := postgres.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		if logs[i], err = st.EventLog(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return logs[0], logs[1]
}

func change(id, state string) store.Change {
	return store.Change{SessionID: id, Session: []byte(`"` + state + `"`), Event: []byte(`"` + id + "=" + state + `"`)}
}

// TestEventLogOrder: two replicas writing one user's changes at once get
// one order between them, contiguous; Since reads it back; a snapshot is
// the state at its number.
func TestEventLogOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := eventLog(t)
	ea, _, err := a.ClaimLink(ctx, "dev-a", "ra")
	if err != nil {
		t.Fatal(err)
	}
	eb, _, err := b.ClaimLink(ctx, "dev-b", "rb")
	if err != nil {
		t.Fatal(err)
	}
	seq0, _, _, err := a.Snapshot(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i, l := range []store.EventLog{a, b} {
		dev, epoch := []string{"dev-a", "dev-b"}[i], []int64{ea, eb}[i]
		wg.Go(func() {
			for n := range 50 {
				if _, err := l.Append(ctx, "alice", dev, epoch, []store.Change{change(dev+"-s", fmt.Sprint(n))}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	evs, ok, err := a.Since(ctx, "alice", seq0, 1000)
	if err != nil || !ok || len(evs) != 100 {
		t.Fatalf("since: %d events, %v, %v", len(evs), ok, err)
	}
	for i, ev := range evs {
		if ev.Seq != seq0+uint64(i)+1 {
			t.Fatalf("event %d has seq %d, want %d", i, ev.Seq, seq0+uint64(i)+1)
		}
	}
	seq, sessions, _, err := b.Snapshot(ctx, "alice")
	if err != nil || seq != seq0+100 || len(sessions) != 2 {
		t.Fatalf("snapshot at %d (want %d): %q %v", seq, seq0+100, sessions, err)
	}
	// A removal of what the log does not hold gets no number.
	if got, err := a.Append(ctx, "alice", "dev-a", ea, []store.Change{{SessionID: "nope", Event: []byte(`"x"`)}}); err != nil || len(got) != 0 {
		t.Fatalf("removing an unknown session: %v %v", got, err)
	}
}

// TestEventLogFencing: once another replica claims a device's link, the
// old holder's writes are refused; a replica whose lease lapsed is reaped
// (its links offline, taken with a new epoch) and can reclaim a link it
// still holds only while nobody else has.
func TestEventLogFencing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := eventLog(t)
	if err := a.Alive(ctx, "ra", time.Hour); err != nil {
		t.Fatal(err)
	}
	e1, _, err := a.ClaimLink(ctx, "dev", "ra")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Append(ctx, "alice", "dev", e1, []store.Change{change("s", "one")}); err != nil {
		t.Fatal(err)
	}
	e2, written, err := b.ClaimLink(ctx, "dev", "rb")
	if err != nil || e2 <= e1 || string(written["s"]) != `"one"` {
		t.Fatalf("second claim: epoch %d after %d, %q, %v", e2, e1, written, err)
	}
	if _, err := a.Append(ctx, "alice", "dev", e1, []store.Change{change("s", "stale")}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("the old holder's write: %v, want ErrConflict", err)
	}
	// rb never said it was alive: ra reaps its link.
	reaped, err := a.Reap(ctx, "ra")
	if err != nil || len(reaped) != 1 || reaped[0].DeviceID != "dev" || reaped[0].User != "alice" || reaped[0].Epoch <= e2 {
		t.Fatalf("reap: %+v %v", reaped, err)
	}
	if on, err := a.Online(ctx, []string{"dev"}); err != nil || on["dev"] {
		t.Fatalf("a reaped link is online: %v %v", on, err)
	}
	if _, err := b.Append(ctx, "alice", "dev", e2, []store.Change{change("s", "late")}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("the reaped holder's write: %v, want ErrConflict", err)
	}
	e3, _, ok, err := b.Reclaim(ctx, "dev", "rb")
	if err != nil || !ok || e3 <= reaped[0].Epoch {
		t.Fatalf("reclaim: %d %v %v", e3, ok, err)
	}
	if _, _, ok, err := a.Reclaim(ctx, "dev", "ra"); err != nil || ok {
		t.Fatalf("reclaiming a link another replica holds: %v %v", ok, err)
	}
	if _, err := b.Append(ctx, "alice", "dev", e3, []store.Change{change("s", "two")}); err != nil {
		t.Fatal(err)
	}
}

// TestEventLogDevices: a device's own state is logged with its holder's
// epoch like its sessions (the same state again gets no number), is in
// the snapshot, and is what a reaper gets back; notifications take the
// next numbers without a link; retiring a device logs the removal of its
// sessions and itself, and fences off its holder.
func TestEventLogDevices(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := eventLog(t)
	dev := func(state string) store.Change {
		return store.Change{Device: true, Session: []byte(`"` + state + `"`), Event: []byte(`"dev=` + state + `"`)}
	}
	e1, _, err := a.ClaimLink(ctx, "dev", "ra")
	if err != nil {
		t.Fatal(err)
	}
	got, err := a.Append(ctx, "alice", "dev", e1, []store.Change{dev("online"), change("s", "one")})
	if err != nil || len(got) != 2 {
		t.Fatalf("append: %v %v", got, err)
	}
	if again, err := a.Append(ctx, "alice", "dev", e1, []store.Change{dev("online")}); err != nil || len(again) != 0 {
		t.Fatalf("the same device state again: %v %v", again, err)
	}
	seq, sessions, devices, err := b.Snapshot(ctx, "alice")
	if err != nil || seq != got[1].Seq || len(sessions) != 1 || len(devices) != 1 || string(devices[0]) != `"online"` {
		t.Fatalf("snapshot: %d %q %q %v", seq, sessions, devices, err)
	}
	news, err := b.Publish(ctx, "alice", [][]byte{[]byte(`"bell"`)})
	if err != nil || len(news) != 1 || news[0].Seq != seq+1 {
		t.Fatalf("publish: %v %v", news, err)
	}
	if s2, _, _, _ := a.Snapshot(ctx, "alice"); s2 != seq+1 {
		t.Fatalf("snapshot after news at %d, want %d", s2, seq+1)
	}
	// ra never said it was alive: rb reaps it, with the device's state.
	reaped, err := b.Reap(ctx, "rb")
	if err != nil || len(reaped) != 1 || string(reaped[0].Device) != `"online"` || reaped[0].User != "alice" {
		t.Fatalf("reap: %+v %v", reaped, err)
	}
	if _, err := b.Append(ctx, "alice", "dev", reaped[0].Epoch, []store.Change{dev("offline")}); err != nil {
		t.Fatal(err)
	}
	e3, _, err := a.ClaimLink(ctx, "dev", "ra")
	if err != nil {
		t.Fatal(err)
	}
	gone, err := b.Retire(ctx, "alice", "dev", func(id string) []byte { return []byte(`"gone:` + id + `"`) })
	if err != nil || len(gone) != 2 || string(gone[0].Event) != `"gone:s"` || string(gone[1].Event) != `"gone:"` || gone[0].Seq != seq+3 {
		t.Fatalf("retire: %v %v", gone, err)
	}
	if _, err := a.Append(ctx, "alice", "dev", e3, []store.Change{dev("online")}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("the holder's write after retire: %v, want ErrConflict", err)
	}
	if _, _, ok, err := a.Reclaim(ctx, "dev", "ra"); err != nil || ok {
		t.Fatalf("the holder reclaiming a retired device: %v %v", ok, err)
	}
	if _, sessions, devices, err := a.Snapshot(ctx, "alice"); err != nil || len(sessions) != 0 || len(devices) != 0 {
		t.Fatalf("snapshot after retire: %q %q %v", sessions, devices, err)
	}
}
