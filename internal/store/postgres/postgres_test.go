package postgres_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/corral-dev/corral/internal/store"
	"github.com/corral-dev/corral/internal/store/postgres"
	"github.com/corral-dev/corral/internal/store/storetest"
	"github.com/corral-dev/corral/internal/testkit/pgtest"
)

// pg is the package's PostgreSQL, started by the first test that needs it.
var pg pgtest.Shared

func TestMain(m *testing.M) {
	code := m.Run()
	pg.Stop()
	os.Exit(code)
}

// TestConformance holds PostgreSQL to the behaviour every store has
// (internal/store/storetest), on a real server.
func TestConformance(t *testing.T) {
	pg.Server(t) // skip before the subtests when there is none
	storetest.Run(t, pgDB)
}

// BenchmarkStore measures PostgreSQL (over the unix socket) on the hub's
// hottest paths, as internal/store's does SQLite.
func BenchmarkStore(b *testing.B) { storetest.Bench(b, pgDB) }

// pgDB makes an empty database on the package's server.
func pgDB(tb testing.TB) storetest.DB {
	url := pg.Database(tb)
	return storetest.DB{
		Open: func(ctx context.Context) (store.Store, error) { return postgres.Open(ctx, url) },
		SetSchema: func(ctx context.Context, v int) error {
			c, err := pgx.Connect(ctx, url)
			if err != nil {
				return err
			}
			defer c.Close(ctx)
			_, err = c.Exec(ctx, `UPDATE corral_schema SET version = $1`, v)
			return err
		},
		Schema: postgres.Schema(),
	}
}

// TestOpenErrors: a bad URL and a database that is not there are clear
// errors, and neither repeats the URL's password.
func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	for _, url := range []string{
		"postgres://corral:s3cret@localhost:notaport/corral",
		"postgres://corral:s3cret@/corral?host=/nonexistent-corral-dir&connect_timeout=2",
	} {
		s, err := postgres.Open(ctx, url)
		if err == nil {
			s.Close()
			t.Fatalf("Open(%q) worked", url)
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("the error repeats the password: %v", err)
		}
		t.Logf("%v", err)
	}
}
