package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/store"
)

// TestDoctorShowsUnsavedChanges: when the daemon cannot write its
// database, `corral doctor` says so (and exits 1) until the writes work
// again; the state that could not be saved then is.
func TestDoctorShowsUnsavedChanges(t *testing.T) {
	in := newInstall(t)
	in.startDaemon()
	id := in.shell("s")
	e := &env{getenv: in.getenv}
	sql := func(q string) {
		t.Helper()
		if err := withStore(e, func(st *store.Store) error { _, err := st.DB().Exec(q); return err }); err != nil {
			t.Fatal(err)
		}
	}
	sql(`CREATE TRIGGER test_fail BEFORE UPDATE ON sessions BEGIN SELECT RAISE(ABORT, 'injected write failure'); END`)
	hookRun := func(payload string) {
		t.Helper()
		var out strings.Builder
		he := &env{stdin: strings.NewReader(payload), stdout: &out, stderr: &out, getenv: func(k string) string {
			if k == "CORRAL_SESSION" {
				return id
			}
			return in.getenv(k)
		}}
		root := newRoot(he)
		root.SetArgs([]string{"hook"})
		if err := root.Execute(); err != nil {
			t.Fatal(err)
		}
	}
	hookRun(`{"session_id":"c","hook_event_name":"UserPromptSubmit","prompt":"p"}`)
	in.waitStatus(id, api.StatusBusy)
	deadline := time.Now().Add(10 * time.Second)
	var r result
	for {
		r = in.run("doctor")
		if strings.Contains(r.stdout, "not saved") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("doctor never reported the failing database:\n%s", r.stdout)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if r.code != 1 || !strings.Contains(r.stdout, "!!  daemon") || !strings.Contains(r.stdout, "injected write failure") {
		t.Errorf("doctor while the database fails: exit %d\n%s", r.code, r.stdout)
	}

	sql(`DROP TRIGGER test_fail`)
	deadline = time.Now().Add(15 * time.Second)
	for {
		r = in.run("doctor")
		if !strings.Contains(r.stdout, "not saved") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("doctor still reports the database after it recovered:\n%s", r.stdout)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var status string
	if err := withStore(e, func(st *store.Store) error {
		return st.DB().QueryRow(`SELECT status FROM sessions WHERE id = ?`, id).Scan(&status)
	}); err != nil || status != string(api.StatusBusy) {
		t.Errorf("saved status %q (%v), want busy", status, err)
	}
}
