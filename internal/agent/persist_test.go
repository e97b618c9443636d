package agent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/store"
)

// failWrites makes every write to the sessions table fail until the
// returned function is called, as a full disk or a broken database would.
func failWrites(t *testing.T, st *store.Store) (restore func()) {
	t.Helper()
	var names []string
	for _, op := range []string{"INSERT", "UPDATE", "DELETE"} {
		name := "test_fail_" + strings.ToLower(op)
		q := fmt.Sprintf(`CREATE TRIGGER %s BEFORE %s ON sessions BEGIN SELECT RAISE(ABORT, 'injected write failure'); END`, name, op)
		if _, err := st.DB().Exec(q); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	return func() {
		for _, n := range names {
			if _, err := st.DB().Exec("DROP TRIGGER " + n); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestPersistFailureKeepsChanges: while the database refuses writes, the
// agent keeps every change pending (the newest state of each session, and
// the removal of a killed one), reports it in its version info and log,
// and writes it all once the database works again.
func TestPersistFailureKeepsChanges(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	a := r.shell("kept")
	b := r.shell("killed")
	w := r.watch()
	restore := failWrites(t, r.st)

	r.sendHook(header(a.ID), payload{"session_id": "c1", "hook_event_name": "UserPromptSubmit", "prompt": "first"})
	w.status(a.ID, api.StatusBusy)
	waitUntil(t, 10*time.Second, "the failure to be reported", func() bool {
		return len(r.a.Version(ctxT(t)).Problems) > 0
	})
	if p := r.a.Version(ctxT(t)).Problems[0]; !strings.Contains(p, "injected write failure") || !strings.Contains(p, "not saved") {
		t.Errorf("problem %q", p)
	}
	if !strings.Contains(r.log.String(), "saving sessions failed") {
		t.Error("the failure is not in the log")
	}
	// Newer states while it fails, and a kill.
	r.sendHook(header(a.ID), payload{"session_id": "c1", "hook_event_name": "Stop", "last_assistant_message": "the newest"})
	w.status(a.ID, api.StatusReview)
	if err := r.a.Kill(ctxT(t), api.SessionRef{ID: b.ID}); err != nil {
		t.Fatal(err)
	}

	restore()
	rows := func() map[string]store.Session {
		recs, _ := r.st.Sessions(context.Background())
		m := map[string]store.Session{}
		for _, rec := range recs {
			m[rec.ID] = rec
		}
		return m
	}
	waitUntil(t, 15*time.Second, "the pending changes to be saved", func() bool {
		m := rows()
		_, killed := m[b.ID]
		return m[a.ID].Status == string(api.StatusReview) && !killed && len(r.a.Version(ctxT(t)).Problems) == 0
	})
	if st := string(rows()[a.ID].State); !strings.Contains(st, "the newest") {
		t.Errorf("saved state %s, want the newest", st)
	}

	r.restart()
	list, _ := r.a.Sessions(ctxT(t))
	if len(list) != 1 || list[0].ID != a.ID || list[0].Status != api.StatusReview || list[0].LastMessage != "the newest" {
		t.Errorf("after a restart: %+v", list)
	}
}
