package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/api"
)

func sess(id string, st api.Status) api.Session {
	return api.Session{ID: id, Status: st, CreatedAt: time.Unix(int64(len(id)), 0)}
}

func recv(t *testing.T, s *Sub) api.Event {
	t.Helper()
	select {
	case ev, ok := <-s.C():
		if !ok {
			t.Fatalf("subscription closed: %v", s.Err())
		}
		return *ev
	case <-time.After(5 * time.Second):
		t.Fatal("no event")
	}
	return api.Event{}
}

func TestSnapshotThenChanges(t *testing.T) {
	b := New(Options{FirstSeq: 100})
	b.Load([]api.Session{sess("a", api.StatusIdle)})
	s := b.Subscribe(0)
	defer s.Close()
	ev := recv(t, s)
	if ev.Type != api.EventSnapshot || ev.Seq != 100 || len(ev.Sessions) != 1 {
		t.Fatalf("first event %+v", ev)
	}
	b.Update(sess("a", api.StatusBusy), api.StatusIdle, false)
	b.Update(sess("bb", api.StatusIdle), "", false)
	b.Remove("a")
	for i, want := range []api.EventType{api.EventSession, api.EventSession, api.EventRemoved} {
		ev := recv(t, s)
		if ev.Type != want || ev.Seq != uint64(101+i) {
			t.Fatalf("event %d: %+v", i, ev)
		}
	}
	if got := b.Sessions(); len(got) != 1 || got[0].ID != "bb" {
		t.Fatalf("sessions %+v", got)
	}
	if _, ok := b.Remove("nope"); ok {
		t.Fatal("removed a session that does not exist")
	}
}

func TestCatchUpFromRing(t *testing.T) {
	b := New(Options{FirstSeq: 10, Ring: 4})
	for i := range 3 {
		b.Update(sess("a", api.StatusBusy), "", i == 0)
	}
	// 11, 12, 13 published; a reader that saw 11 gets 12 and 13.
	s := b.Subscribe(11)
	if ev := recv(t, s); ev.Seq != 12 || ev.Type != api.EventSession {
		t.Fatalf("replay %+v", ev)
	}
	if ev := recv(t, s); ev.Seq != 13 {
		t.Fatalf("replay %+v", ev)
	}
	s.Close()
	// Push the ring past 12: now a reader at 11 needs a snapshot.
	for range 4 {
		b.Update(sess("a", api.StatusIdle), "", false)
	}
	s = b.Subscribe(11)
	if ev := recv(t, s); ev.Type != api.EventSnapshot || ev.Seq != 17 {
		t.Fatalf("want snapshot at 17, got %+v", ev)
	}
	s.Close()
	// A reader from a later run (seq in the future) gets a snapshot too.
	s = b.Subscribe(1 << 60)
	if ev := recv(t, s); ev.Type != api.EventSnapshot {
		t.Fatalf("want snapshot, got %+v", ev)
	}
	s.Close()
	// Up to date: nothing is replayed.
	s = b.Subscribe(17)
	select {
	case ev := <-s.C():
		t.Fatalf("unexpected %+v", ev)
	default:
	}
	s.Close()
}

func TestSlowReaderIsDroppedNotWaitedFor(t *testing.T) {
	b := New(Options{Buffer: 8})
	slow := b.Subscribe(0)
	done := make(chan struct{})
	go func() {
		for i := range 100 {
			b.Update(sess(fmt.Sprint("s", i%3), api.StatusBusy), "", false)
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("publisher blocked by a slow reader")
	}
	// The slow reader's channel holds what fitted, then is closed.
	n := 0
	for range slow.C() {
		n++
	}
	if !errors.Is(slow.Err(), ErrFellBehind) {
		t.Fatalf("slow reader err %v", slow.Err())
	}
	if n == 0 || n >= 100 {
		t.Fatalf("slow reader got %d events", n)
	}
	if b.Subscribers() != 0 {
		t.Fatalf("%d subscribers", b.Subscribers())
	}
	slow.Close() // after the bus closed it: harmless
}

func TestReaderThatKeepsUpGetsEverything(t *testing.T) {
	b := New(Options{FirstSeq: 1})
	s := b.Subscribe(0)
	defer s.Close()
	var wg sync.WaitGroup
	wg.Add(1)
	var seqs []uint64
	go func() {
		defer wg.Done()
		for ev := range s.C() {
			seqs = append(seqs, ev.Seq)
			if len(seqs) == 501 {
				return
			}
		}
	}()
	for range 500 {
		b.Update(sess("a", api.StatusBusy), "", false)
	}
	wg.Wait()
	for i, q := range seqs {
		if q != uint64(1+i) {
			t.Fatalf("event %d has seq %d", i, q)
		}
	}
	if s.Err() != nil {
		t.Fatal(s.Err())
	}
}

func TestRecent(t *testing.T) {
	b := New(Options{FirstSeq: 1, Ring: 3})
	for range 5 {
		b.Update(sess("a", api.StatusBusy), "", false)
	}
	r := b.Recent(10)
	if len(r) != 3 || r[0].Seq != 4 || r[2].Seq != 6 {
		t.Fatalf("recent %+v", r)
	}
	if r := b.Recent(1); len(r) != 1 || r[0].Seq != 6 {
		t.Fatalf("recent(1) %+v", r)
	}
}

func BenchmarkUpdateWithSubscribers(b *testing.B) {
	bus := New(Options{})
	for range 10 {
		s := bus.Subscribe(0)
		go func() {
			for range s.C() {
			}
		}()
	}
	s := sess("a", api.StatusBusy)
	for b.Loop() {
		bus.Update(s, api.StatusIdle, false)
	}
}

// encodedMatches checks that the JSON the bus attached is what encoding the
// event afresh gives.
func encodedMatches(t *testing.T, ev api.Event) {
	t.Helper()
	if ev.JSON == nil {
		t.Fatalf("event %d (%s) not encoded by the bus", ev.Seq, ev.Type)
	}
	fresh := ev
	fresh.JSON = nil
	want, err := json.Marshal(fresh)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ev.JSON, want) {
		t.Fatalf("bus encoded\n%s\nfresh encoding\n%s", ev.JSON, want)
	}
}

func TestEventsEncodedOnceForAllReaders(t *testing.T) {
	b := New(Options{FirstSeq: 1})
	b.Load([]api.Session{sess("a", api.StatusIdle)})
	s1, s2 := b.Subscribe(0), b.Subscribe(0)
	defer s1.Close()
	defer s2.Close()
	snap1, snap2 := recv(t, s1), recv(t, s2)
	encodedMatches(t, snap1)
	if &snap1.JSON[0] != &snap2.JSON[0] {
		t.Error("two readers at the same seq got snapshots encoded twice")
	}
	b.Update(sess("a", api.StatusBusy), api.StatusIdle, true)
	ev1, ev2 := recv(t, s1), recv(t, s2)
	encodedMatches(t, ev1)
	if &ev1.JSON[0] != &ev2.JSON[0] {
		t.Error("one event encoded once per reader")
	}
	b.Remove("a")
	encodedMatches(t, recv(t, s1))

	// A snapshot after a change, or after Load (same seq, other sessions),
	// is made afresh: never a stale one.
	s3 := b.Subscribe(0)
	defer s3.Close()
	snap3 := recv(t, s3)
	encodedMatches(t, snap3)
	if len(snap3.Sessions) != 0 || snap3.Seq != ev1.Seq+1 {
		t.Fatalf("snapshot after the removal: %+v", snap3)
	}
	b.Load([]api.Session{sess("zz", api.StatusIdle)})
	s4 := b.Subscribe(0)
	defer s4.Close()
	snap4 := recv(t, s4)
	encodedMatches(t, snap4)
	if len(snap4.Sessions) != 1 || snap4.Sessions[0].ID != "zz" {
		t.Fatalf("snapshot after Load is stale: %+v", snap4)
	}
	// Replays from the ring carry the encoding made at publish time.
	s5 := b.Subscribe(ev1.Seq - 1)
	defer s5.Close()
	encodedMatches(t, recv(t, s5))
}

// TestStats: subscribers, the deepest unread queue, and the readers
// dropped for falling behind.
func TestStats(t *testing.T) {
	b := New(Options{Buffer: 8})
	fast, slow := b.Subscribe(0), b.Subscribe(0)
	defer fast.Close()
	<-fast.C() // the snapshot
	b.Update(sess("a", api.StatusBusy), "", false)
	if st := b.Stats(); st.Subscribers != 2 || st.MaxLag != 2 || st.FellBehind != 0 {
		t.Fatalf("stats %+v, want 2 subscribers, lag 2 (slow's snapshot and event), none dropped", st)
	}
	for i := range 20 {
		b.Update(sess("a", api.StatusBusy), "", false)
		if i%4 == 0 {
			for len(fast.C()) > 0 {
				<-fast.C()
			}
		}
	}
	for range slow.C() {
	}
	if st := b.Stats(); st.Subscribers != 1 || st.FellBehind != 1 || st.MaxLag > 8 {
		t.Fatalf("stats %+v, want the slow reader dropped and counted", st)
	}
}

// TestDevicesAndNotifications: devices are state (in the snapshot, one
// event per real change, removable); a notification is news only.
func TestDevicesAndNotifications(t *testing.T) {
	b := New(Options{FirstSeq: 1})
	d := api.Device{ID: "d1", Name: "laptop", Online: true, LastSeen: time.Unix(5, 0)}
	if _, ok := b.UpdateDevice(d); !ok {
		t.Fatal("first update not published")
	}
	if _, ok := b.UpdateDevice(d); ok {
		t.Error("an unchanged device was published again")
	}
	d.Conflict = &api.DeviceConflict{At: time.Unix(6, 0), Count: 1}
	if ev, ok := b.UpdateDevice(d); !ok || ev.Type != api.EventDevice || ev.Device.Conflict == nil {
		t.Errorf("a conflict: %+v %v", ev, ok)
	}
	b.UpdateDevice(api.Device{ID: "d0", Name: "desk"})
	b.Notify(api.Notification{SessionID: "s", Title: "laptop/s needs you"})
	s := b.Subscribe(0)
	defer s.Close()
	snap := recv(t, s)
	if len(snap.Devices) != 2 || snap.Devices[0].Name != "desk" || snap.Devices[1].Conflict == nil {
		t.Fatalf("snapshot devices %+v", snap.Devices)
	}
	b.Notify(api.Notification{SessionID: "s", Title: "t"})
	if ev := recv(t, s); ev.Type != api.EventNotification || ev.Notification.Title != "t" {
		t.Fatalf("notification %+v", ev)
	}
	if ev, ok := b.RemoveDevice("d1"); !ok || ev.Type != api.EventDeviceRemoved || ev.ID != "d1" {
		t.Fatalf("remove %+v", ev)
	}
	if _, ok := b.RemoveDevice("d1"); ok {
		t.Error("removed twice")
	}
	if l := b.Devices(); len(l) != 1 || l[0].ID != "d0" {
		t.Errorf("devices %+v", l)
	}
}

// TestApplyingAnotherFeedsNumbers: PutDevice publishes even an unchanged
// device (a replica applying the event log keeps one event per number),
// LoadDevices sets devices without a number, and OnNotify is told each
// notification with the feed's user.
func TestApplyingAnotherFeedsNumbers(t *testing.T) {
	var told []string
	b := New(Options{FirstSeq: 100, User: "alice", OnNotify: func(u string, n api.Notification) { told = append(told, u+":"+n.SessionID) }})
	b.LoadDevices([]api.Device{{ID: "d1", Name: "laptop"}})
	if b.Seq() != 100 || len(b.Devices()) != 1 {
		t.Fatalf("after LoadDevices: seq %d, %+v", b.Seq(), b.Devices())
	}
	d := api.Device{ID: "d1", Name: "laptop", Online: true}
	b.PutDevice(d)
	b.PutDevice(d)
	if b.Seq() != 102 || !b.Devices()[0].Online {
		t.Fatalf("after two PutDevice: seq %d, %+v", b.Seq(), b.Devices())
	}
	b.Notify(api.Notification{SessionID: "s1"})
	if b.Seq() != 103 || len(told) != 1 || told[0] != "alice:s1" {
		t.Fatalf("after Notify: seq %d, told %v", b.Seq(), told)
	}
}
