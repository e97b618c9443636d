package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/corral-dev/corral/internal/store"
	"github.com/corral-dev/corral/internal/store/storetest"
)

// TestConformance holds SQLite to the behaviour every store has
// (internal/store/storetest); internal/store/postgres runs the same.
func TestConformance(t *testing.T) {
	storetest.Run(t, sqliteDB)
}

// BenchmarkStore measures SQLite on the hub's hottest paths
// (internal/store/postgres has the same for PostgreSQL).
func BenchmarkStore(b *testing.B) { storetest.Bench(b, sqliteDB) }

// sqliteDB makes an empty SQLite database in a file of its own.
func sqliteDB(tb testing.TB) storetest.DB {
	path := filepath.Join(tb.TempDir(), "corral.db")
	return storetest.DB{
		Open: func(context.Context) (store.Store, error) { return store.Open(path) },
		SetSchema: func(ctx context.Context, v int) error {
			db, err := sql.Open("sqlite", path)
			if err != nil {
				return err
			}
			defer db.Close()
			_, err = db.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v))
			return err
		},
		Schema: store.Schema(),
	}
}
