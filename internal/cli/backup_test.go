package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/datadir"
	"github.com/corral-dev/corral/internal/store"
)

// TestBackupRestoreWithALiveDaemon backs up while the daemon runs, is
// refused a restore while it runs, restores once it stopped, and the
// daemon then serves what the backup held.
func TestBackupRestoreWithALiveDaemon(t *testing.T) {
	in := newInstall(t)
	in.startDaemon()
	id := in.shell("before")

	file := filepath.Join(t.TempDir(), "corral-backup.db")
	out := in.must("backup", file)
	if !strings.Contains(out, "to "+file) || !strings.Contains(out, "1 sessions") {
		t.Errorf("backup said %q", out)
	}
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("backup file %v, %v", fi, err)
	}
	if info, err := store.Inspect(context.Background(), file); err != nil || info.Sessions != 1 {
		t.Fatalf("the backup: %+v, %v", info, err)
	}
	// A directory gets a dated file in it.
	var res backupResult
	if err := json.Unmarshal([]byte(in.must("backup", "--json", filepath.Dir(file))), &res); err != nil ||
		filepath.Dir(res.File) != filepath.Dir(file) || !strings.HasPrefix(filepath.Base(res.File), "corral-") || res.Sessions != 1 {
		t.Errorf("backup into a directory: %+v, %v", res, err)
	}

	in.must("rename", id, "after")
	r := in.run("restore", file)
	if r.code != 1 || !strings.Contains(r.stderr, "already serving") || !strings.Contains(r.stderr, fmt.Sprint(in.serve.Process.Pid)) ||
		!strings.Contains(r.stderr, "stop it first") {
		t.Fatalf("restore with a live daemon: %+v", r)
	}
	if s := in.session(id); s.Name != "after" {
		t.Fatalf("the refused restore changed the daemon's state: %+v", s)
	}

	in.stopDaemon()
	out = in.must("restore", file)
	if !strings.Contains(out, "restored "+file) || !strings.Contains(out, "before-restore-") {
		t.Errorf("restore said %q", out)
	}
	entries, _ := os.ReadDir(in.dataDir)
	aside := false
	for _, e := range entries {
		aside = aside || strings.HasPrefix(e.Name(), datadir.Database+".before-restore-")
	}
	if !aside {
		t.Errorf("the old database was not kept aside: %v", entries)
	}
	in.startDaemon()
	if s := in.session(id); s.Name != "before" {
		t.Errorf("after the restore the session is %+v, want the name the backup had", s)
	}
}

// session returns one session as the daemon lists it.
func (in *install) session(id string) api.Session {
	in.t.Helper()
	var list []api.Session
	if err := json.Unmarshal([]byte(in.must("ls", "--json")), &list); err != nil {
		in.t.Fatal(err)
	}
	for _, s := range list {
		if s.ID == id {
			return s
		}
	}
	in.t.Fatalf("no session %s in %+v", id, list)
	return api.Session{}
}
