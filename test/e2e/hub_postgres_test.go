package e2e

// A hub on PostgreSQL (internal/store/postgres): the real corral binary
// with --db's environment variable, on a real throwaway PostgreSQL
// (internal/testkit/pgtest).

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/datadir"
	"github.com/corral-dev/corral/internal/testkit/pgtest"
)

// pg is the tests' PostgreSQL, started by the first test that needs it and
// stopped by TestMain.
var pg pgtest.Shared

// TestHubOnPostgres: a hub whose users, devices, sessions and logins are
// in PostgreSQL. A user and a device are added with the management
// commands (on the same database), the machine enrols, a browser logs in
// with a password and lists the machine's shell. Then the machine goes
// offline and the hub is killed (SIGKILL) and started again: the browser's
// cookie still works, the shell is still listed (offline, from the
// database), the machine comes back with the key it enrolled (no new
// token), and the user's API token works. The hub writes no SQLite file,
// and its log names the database without its password.
func TestHubOnPostgres(t *testing.T) {
	t.Parallel()
	dbURL := pg.Database(t)
	hp := newHubProcEnv(t, restartablePort(t), []string{"CORRAL_DB=" + dbURL + "&password=not-logged"})
	alice := hp.addUser(t, "alice")
	hp.adminIn(t, "password of alice\n", "user", "passwd", "alice", "--stdin")
	agent := newAgent(t, hp.url, hp.addDevice(t, "laptop", "alice"), agentOptions{})
	alice.waitOnline(t, "laptop", 15*time.Second)
	shell := agent.newShell("kept")

	b := newWebBrowser(t, hp).mustLogin("alice", "password of alice")
	waitFor(t, 15*time.Second, "the shell through the browser's cookie", func() bool {
		code, l := b.list()
		return code == 200 && len(l) == 1 && l[0].ID == shell && l[0].Device == "laptop" && !l[0].Offline
	})

	// The machine goes away, then the hub dies.
	agent.stopServe(syscall.SIGTERM)
	waitFor(t, 15*time.Second, "the shell offline", func() bool {
		code, l := b.list()
		return code == 200 && len(l) == 1 && l[0].Offline
	})
	hp.stop(syscall.SIGKILL)
	hp.start()

	// Everything is still there: the login, the last known shell.
	code, l := b.list()
	if code != 200 || len(l) != 1 || l[0].ID != shell || l[0].Name != "kept" || !l[0].Offline {
		t.Fatalf("after the hub's restart the browser lists %d %+v", code, l)
	}
	if got := alice.devices(t); len(got) != 1 || got[0].Name != "laptop" || got[0].Online {
		t.Errorf("devices after the restart: %+v", got)
	}
	// The machine comes back by its key: its token was spent at enrolment.
	agent.startAgent()
	alice.waitOnline(t, "laptop", 20*time.Second)
	waitFor(t, 15*time.Second, "the shell online again", func() bool {
		code, l := b.list()
		return code == 200 && len(l) == 1 && l[0].ID == shell && !l[0].Offline
	})
	if n := hp.countLog(logRefusedKey) + hp.countLog(logRefusedToken); n != 0 {
		t.Errorf("the hub refused the machine %d times after its restart", n)
	}
	// A second user added while it runs can log in at once.
	hp.adminIn(t, "password of bob\n", "user", "add", "bob", "--password-stdin")
	newWebBrowser(t, hp).mustLogin("bob", "password of bob")
	if out := hp.admin(t, "user", "ls"); !strings.Contains(out, "alice") || !strings.Contains(out, "bob") {
		t.Errorf("hub user ls on PostgreSQL:\n%s", out)
	}

	if _, err := os.Stat(filepath.Join(hp.dataDir, datadir.Database)); !os.IsNotExist(err) {
		t.Errorf("a hub on PostgreSQL made %s (%v)", datadir.Database, err)
	}
	if strings.Contains(hp.log(), "not-logged") {
		t.Error("the hub's log holds the database password")
	}
	if !strings.Contains(hp.log(), "database=postgres://") {
		t.Errorf("the hub's log does not say which database it uses:\n%s", hp.log())
	}
}
