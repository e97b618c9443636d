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
	storetest.Run(t, func(t *testing.T) storetest.DB {
		path := filepath.Join(t.TempDir(), "corral.db")
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
	})
}
