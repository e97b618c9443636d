package sessionfile

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// eventLog collects watcher events for a test to await.
type eventLog struct {
	mu     sync.Mutex
	events []Event
	signal chan struct{}
}

func newEventLog() *eventLog { return &eventLog{signal: make(chan struct{}, 1)} }

func (l *eventLog) add(ev Event) {
	l.mu.Lock()
	l.events = append(l.events, ev)
	l.mu.Unlock()
	select {
	case l.signal <- struct{}{}:
	default:
	}
}

func (l *eventLog) snapshot() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Event(nil), l.events...)
}

// await waits until cond holds for the events so far, or fails after a
// deadline.
func (l *eventLog) await(t *testing.T, what string, cond func([]Event) bool) []Event {
	t.Helper()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	for {
		evs := l.snapshot()
		if cond(evs) {
			return evs
		}
		select {
		case <-l.signal:
		case <-deadline.C:
			t.Fatalf("timed out waiting for %s; events: %+v", what, evs)
		}
	}
}

// startWatcher runs the watcher until the test ends and waits until it is
// ready.
func startWatcher(t *testing.T, dir string) *eventLog {
	t.Helper()
	log := newEventLog()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- watch(ctx, dir, log.add, func() { close(ready) }) }()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("watcher ended early: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("watcher not ready")
	}
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("watcher returned %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("watcher did not stop")
		}
	})
	return log
}

func sessionJSON(pid int, status string) string {
	return fmt.Sprintf(`{"pid":%d,"sessionId":"s-%d","cwd":"/w","startedAt":1,"procStart":"5","status":%q,"updatedAt":%d}`,
		pid, pid, status, time.Now().UnixNano())
}

func lastFor(evs []Event, pid int) (Event, bool) {
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].PID == pid {
			return evs[i], true
		}
	}
	return Event{}, false
}

func TestWatchInitialAndChanges(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "100.json"), sessionJSON(100, "idle"))
	writeFile(t, filepath.Join(dir, "101.json"), `{"pid":101,`) // half-written: not reported yet
	writeFile(t, filepath.Join(dir, "notes.json"), `{"pid":5}`)
	log := startWatcher(t, dir)

	evs := log.snapshot()
	if len(evs) != 1 || evs[0].PID != 100 || !evs[0].Initial || evs[0].File.Status != "idle" {
		t.Fatalf("initial events = %+v", evs)
	}

	// Claude rewrites in place: truncate, then write (possibly in pieces).
	full := sessionJSON(101, "busy")
	f, err := os.OpenFile(filepath.Join(dir, "101.json"), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(full[:10]); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(full[10:]); err != nil {
		t.Fatal(err)
	}
	f.Close()
	evs = log.await(t, "101 busy", func(evs []Event) bool {
		e, ok := lastFor(evs, 101)
		return ok && e.File.Status == "busy"
	})
	for _, e := range evs {
		if e.PID == 101 && (e.Removed || e.File.PID != 101 || e.Initial) {
			t.Fatalf("bad event for a partial write: %+v", e)
		}
	}

	// Atomic replace: write a temp file, rename it into place.
	tmp := filepath.Join(dir, ".100.json.tmp")
	writeFile(t, tmp, sessionJSON(100, "waiting"))
	if err := os.Rename(tmp, filepath.Join(dir, "100.json")); err != nil {
		t.Fatal(err)
	}
	log.await(t, "100 waiting", func(evs []Event) bool {
		e, ok := lastFor(evs, 100)
		return ok && e.File.Status == "waiting"
	})

	if err := os.Remove(filepath.Join(dir, "100.json")); err != nil {
		t.Fatal(err)
	}
	evs = log.await(t, "100 removed", func(evs []Event) bool {
		e, ok := lastFor(evs, 100)
		return ok && e.Removed
	})
	for _, e := range evs {
		if e.PID == 5 || e.PID == 0 {
			t.Fatalf("non-session file reported: %+v", e)
		}
	}
}

func TestWatchSameContentOnce(t *testing.T) {
	dir := t.TempDir()
	log := startWatcher(t, dir)
	body := sessionJSON(7, "idle")
	writeFile(t, filepath.Join(dir, "7.json"), body)
	log.await(t, "7", func(evs []Event) bool { return len(evs) >= 1 })
	// The same bytes again (a touch, a rewrite) are not a change; a
	// different pid afterwards proves the first write was processed.
	writeFile(t, filepath.Join(dir, "7.json"), body)
	writeFile(t, filepath.Join(dir, "8.json"), sessionJSON(8, "idle"))
	evs := log.await(t, "8", func(evs []Event) bool { _, ok := lastFor(evs, 8); return ok })
	n := 0
	for _, e := range evs {
		if e.PID == 7 {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("pid 7 reported %d times: %+v", n, evs)
	}
}

func TestWatchMissingDirectory(t *testing.T) {
	home := t.TempDir()
	dir := Dir(filepath.Join(home, ".claude"))
	log := startWatcher(t, dir)
	if _, err := os.Stat(filepath.Join(home, ".claude")); !os.IsNotExist(err) {
		t.Fatalf("watcher created a directory: %v", err)
	}
	// Unrelated churn in the watched parent reports nothing.
	writeFile(t, filepath.Join(home, "other", "1.json"), sessionJSON(1, "idle"))

	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "42.json"), sessionJSON(42, "idle"))
	evs := log.await(t, "42", func(evs []Event) bool { _, ok := lastFor(evs, 42); return ok })
	if e, _ := lastFor(evs, 42); e.Initial || e.Removed {
		t.Fatalf("event = %+v", e)
	}

	// The directory goes away: its files are reported removed. It comes
	// back: new files are seen again.
	if err := os.RemoveAll(filepath.Join(home, ".claude")); err != nil {
		t.Fatal(err)
	}
	log.await(t, "42 removed", func(evs []Event) bool { e, ok := lastFor(evs, 42); return ok && e.Removed })
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "43.json"), sessionJSON(43, "busy"))
	log.await(t, "43", func(evs []Event) bool { e, ok := lastFor(evs, 43); return ok && e.File.Status == "busy" })
	for _, e := range log.snapshot() {
		if e.PID == 1 {
			t.Fatalf("file outside the sessions dir reported: %+v", e)
		}
	}
}

func TestWatchLatency(t *testing.T) {
	// An event must not wait for a debounce: measure a few round trips and
	// require the median to be well under the human scale (generous, for
	// loaded CI machines).
	dir := t.TempDir()
	log := startWatcher(t, dir)
	var lat []time.Duration
	for i := range 5 {
		pid := 200 + i
		start := time.Now()
		writeFile(t, filepath.Join(dir, fmt.Sprintf("%d.json", pid)), sessionJSON(pid, "idle"))
		log.await(t, "event", func(evs []Event) bool { _, ok := lastFor(evs, pid); return ok })
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	if lat[2] > 250*time.Millisecond {
		t.Fatalf("median latency %v (all %v)", lat[2], lat)
	}
}

func TestWatchStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Watch(ctx, t.TempDir(), func(Event) {}) }()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("returned %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("did not stop")
	}
}

func TestWatchDirectoryRecreatedRepeatedly(t *testing.T) {
	// Removing and recreating the directory at once races the watcher's
	// own handling of the removal; every new file must still be seen.
	home := t.TempDir()
	dir := Dir(filepath.Join(home, ".claude"))
	log := startWatcher(t, dir)
	for i := range 30 {
		pid := 1000 + i
		if err := os.RemoveAll(filepath.Join(home, ".claude")); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, fmt.Sprintf("%d.json", pid)), sessionJSON(pid, "idle"))
		log.await(t, fmt.Sprint(pid), func(evs []Event) bool {
			e, ok := lastFor(evs, pid)
			return ok && !e.Removed
		})
	}
	// Every earlier file was reported removed when its directory went.
	evs := log.snapshot()
	for i := range 29 {
		if e, ok := lastFor(evs, 1000+i); !ok || !e.Removed {
			t.Errorf("pid %d: last event %+v", 1000+i, e)
		}
	}
}
