package hub

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/store"
)

// TestPersistConcurrentDevices: many devices report changes at once, each
// from its own goroutine as their link readers do. Whatever the batching,
// a hub started afterwards on the same database shows exactly each
// device's last state: the newest copy of every session, none of the
// removed ones, and only what followed a full sync.
func TestPersistConcurrentDevices(t *testing.T) {
	ctx := context.Background()
	const devices, rounds = 8, 200
	h, ids, st, acc := newDevicesHub(t, devices)
	sess := func(dev, n, round int) api.Session {
		return api.Session{ID: fmt.Sprintf("d%d-s%d", dev, n), Name: fmt.Sprintf("r%d", round), Status: api.StatusBusy}
	}
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() {
			// Sessions 0-2 and 9 before a full sync that keeps only 1 and
			// 3; 9 never comes back.
			h.persist(id, []api.Session{sess(i, 0, 0), sess(i, 1, 0), sess(i, 2, 0), sess(i, 9, 0)}, nil, false)
			h.persist(id, []api.Session{sess(i, 1, 1), sess(i, 3, 1)}, nil, true)
			for r := 2; r < rounds; r++ {
				h.persist(id, []api.Session{sess(i, r%4, r)}, nil, false) // 0 and 2 come back
				if r%10 == 0 {
					h.persist(id, nil, []string{sess(i, 2, 0).ID}, false)
				}
			}
			h.persist(id, nil, []string{sess(i, 0, 0).ID}, false)
		})
	}
	wg.Wait()
	h.Flush()
	t.Logf("%d changes written in %d transactions", devices*(rounds+rounds/10+1), h.saves.txs)

	h2, err := New(ctx, Options{Store: st, Accounts: acc})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range h2.Bus("alice").Sessions() {
		if !s.Offline {
			t.Errorf("%s loaded as online", s.ID)
		}
		got[s.ID] = s.Name
	}
	want := map[string]string{}
	for i := range ids {
		// The last rounds that wrote sessions 1, 2 and 3; 0 was removed
		// last, 2 was last removed at round 190 and written at 194 and 198.
		last := func(n int) int {
			r := rounds - 1
			for r%4 != n {
				r--
			}
			return r
		}
		for _, n := range []int{1, 2, 3} {
			want[sess(i, n, 0).ID] = fmt.Sprintf("r%d", last(n))
		}
	}
	if len(got) != len(want) {
		keys := slices.Sorted(maps.Keys(got))
		t.Fatalf("loaded %d sessions, want %d: %v", len(got), len(want), keys)
	}
	for id, name := range want {
		if got[id] != name {
			t.Errorf("%s = %q, want %q", id, got[id], name)
		}
	}
}

// BenchmarkPersistParallel is the hub's intake of device changes into
// SQLite when many devices report at once, each from its own goroutine:
// status churn on 10 sessions per device (changes to one session merge
// while they wait), and a new session every time (nothing merges; only
// the sharing of transactions helps). The time includes writing it all.
func BenchmarkPersistParallel(b *testing.B) {
	for _, c := range []struct {
		name     string
		sessions int // per device; 0: a new one every time
	}{{"10-sessions-per-device", 10}, {"new-session-each-change", 0}} {
		b.Run(c.name, func(b *testing.B) {
			h, ids, _, _ := newDevicesHub(b, 16)
			var next atomic.Int64
			b.SetParallelism(8) // many link readers per CPU, as with many devices
			b.RunParallel(func(pb *testing.PB) {
				i := int(next.Add(1) - 1)
				id := ids[i%len(ids)]
				n := 0
				for pb.Next() {
					k := n
					if c.sessions > 0 {
						k = n % c.sessions
					}
					s := api.Session{ID: fmt.Sprintf("d%d-s%d", i, k), Name: strconv.Itoa(n), Status: api.StatusBusy}
					h.persist(id, []api.Session{s}, nil, false)
					n++
				}
			})
			h.Flush()
			b.ReportMetric(float64(h.saves.txs)/float64(b.N), "tx/op")
		})
	}
}

// newDevicesHub is a hub on a fresh database with n devices of one user.
func newDevicesHub(tb testing.TB, n int) (*Hub, []string, *store.Store, *Accounts) {
	tb.Helper()
	ctx := context.Background()
	st, err := store.Open(filepath.Join(tb.TempDir(), "hub.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	acc := NewAccounts(st)
	if _, err := acc.AddUser(ctx, "alice", ""); err != nil {
		tb.Fatal(err)
	}
	var ids []string
	for i := range n {
		d, _, err := acc.AddDevice(ctx, "alice", fmt.Sprintf("box%d", i), 0)
		if err != nil {
			tb.Fatal(err)
		}
		ids = append(ids, d.ID)
	}
	h, err := New(ctx, Options{Store: st, Accounts: acc})
	if err != nil {
		tb.Fatal(err)
	}
	return h, ids, st, acc
}

// failWrites makes every write to table fail until the returned function
// is called, as a full disk or a broken database would.
func failWrites(tb testing.TB, st *store.Store, table string) (restore func()) {
	tb.Helper()
	var names []string
	for _, op := range []string{"INSERT", "UPDATE", "DELETE"} {
		name := "test_fail_" + strings.ToLower(op) + "_" + table
		q := fmt.Sprintf(`CREATE TRIGGER %s BEFORE %s ON %s BEGIN SELECT RAISE(ABORT, 'injected write failure'); END`, name, op, table)
		if _, err := st.DB().Exec(q); err != nil {
			tb.Fatal(err)
		}
		names = append(names, name)
	}
	return func() {
		for _, n := range names {
			if _, err := st.DB().Exec("DROP TRIGGER " + n); err != nil {
				tb.Fatal(err)
			}
		}
	}
}

// TestPersistFailureKeepsChanges: while the database refuses writes, the
// hub keeps every change pending, says so in its version info, and writes
// the newest state of each session once the database works again.
func TestPersistFailureKeepsChanges(t *testing.T) {
	ctx := context.Background()
	h, ids, st, acc := newDevicesHub(t, 2)
	restore := failWrites(t, st, "device_sessions")
	s := func(id, name string) api.Session { return api.Session{ID: id, Name: name, Status: api.StatusIdle} }
	h.persist(ids[0], []api.Session{s("a", "old"), s("gone", "x")}, nil, false)
	deadline := time.Now().Add(10 * time.Second)
	for len(h.Version(ctx).Problems) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no problem reported while the database fails")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if p := h.Version(ctx).Problems[0]; !strings.Contains(p, "injected write failure") || !strings.Contains(p, "not saved") {
		t.Errorf("problem %q", p)
	}
	// More changes while it fails: newer states, a removal, another device.
	h.persist(ids[0], []api.Session{s("a", "new")}, []string{"gone"}, false)
	h.persist(ids[1], []api.Session{s("b", "other")}, nil, false)

	restore()
	if err := h.Flush(); err != nil {
		t.Fatalf("Flush after the database recovered: %v", err)
	}
	if p := h.Version(ctx).Problems; len(p) != 0 {
		t.Errorf("problems after recovery: %q", p)
	}
	h2, err := New(ctx, Options{Store: st, Accounts: acc})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range h2.Bus("alice").Sessions() {
		got[s.ID] = s.Name
	}
	if want := map[string]string{"a": "new", "b": "other"}; !maps.Equal(got, want) {
		t.Errorf("after recovery the database holds %v, want %v", got, want)
	}
}

// TestFlushBoundedWhileFailing: at shutdown with a database that keeps
// failing, Flush returns within its bound and says what is not saved.
func TestFlushBoundedWhileFailing(t *testing.T) {
	h, ids, st, _ := newDevicesHub(t, 1)
	failWrites(t, st, "device_sessions")
	h.saves.mu.Lock()
	h.saves.flushWait = 300 * time.Millisecond
	h.saves.mu.Unlock()
	h.persist(ids[0], []api.Session{{ID: "a", Name: "x"}}, nil, false)
	start := time.Now()
	err := h.Flush()
	if err == nil || !strings.Contains(err.Error(), "1 device session changes not saved") {
		t.Errorf("Flush = %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Flush took %v", took)
	}
}
