package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/datadir"
	"github.com/corral-dev/corral/internal/store"
	"github.com/corral-dev/corral/internal/store/storetest"
)

// TestDoctorShowsUnsavedChanges: when the daemon cannot write its
// database, `corral doctor` says so (and exits 1) until the writes work
// again; the state that could not be saved then is.
func TestDoctorShowsUnsavedChanges(t *testing.T) {
	in := newInstall(t)
	in.startDaemon()
	id := in.shell("s")
	e := &env{getenv: in.getenv}
	dir, err := e.dir()
	if err != nil {
		t.Fatal(err)
	}
	restore := storetest.FailWrite(t, filepath.Join(dir, datadir.Database), "UPDATE", "sessions")
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

	restore()
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
	err = withStore(e, func(st *store.SQLite) error {
		list, err := st.Sessions(context.Background())
		for _, s := range list {
			if s.ID == id {
				status = s.Status
			}
		}
		return err
	})
	if err != nil || status != string(api.StatusBusy) {
		t.Errorf("saved status %q (%v), want busy", status, err)
	}
}
