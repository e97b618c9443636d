package pgtest

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestStartStop: a cluster starts, gives out empty databases of their
// own, and is gone (process and directory) after Stop.
func TestStartStop(t *testing.T) {
	ctx := context.Background()
	s, err := Start(ctx)
	if errors.Is(err, ErrMissing) && os.Getenv(RequireEnv) == "" {
		t.Skipf("skipping: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.NewDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.NewDatabase(ctx)
	if err != nil || a == b {
		t.Fatalf("a second database: %q %v (the first %q)", b, err, a)
	}
	c, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, `CREATE TABLE t (x int)`); err != nil {
		t.Fatal(err)
	}
	c.Close(ctx)
	c, err = pgx.Connect(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := c.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE tablename = 't'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("the second database sees the first's table: %d %v", n, err)
	}
	c.Close(ctx)

	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.done:
	case <-time.After(time.Second):
		t.Fatal("the server still runs after Stop")
	}
	if _, err := os.Stat(s.Dir()); !os.IsNotExist(err) {
		t.Errorf("the cluster's directory is still there: %v", err)
	}
}
