// Package postgres is the store.Store of a hub on PostgreSQL (pgx): the
// same behaviour as the SQLite store (internal/store/storetest holds both
// to it), for a hub that runs as several processes on one database.
//
// Every race between two hub processes is decided by the database: claims
// and one-time secrets are single conditional statements (an UPDATE or
// DELETE whose WHERE holds only for the first, an upsert whose conflict
// clause refuses another owner), and the schema is migrated under an
// advisory lock, so replicas that start at once migrate it once. A
// transaction that PostgreSQL aborts for a deadlock or a serialization
// failure is run again.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/corral-dev/corral/internal/store"
)

// Store is a hub's database on PostgreSQL.
type Store struct {
	pool *pgxpool.Pool
}

var _ store.Store = (*Store)(nil)

// migrations are applied in order, in one transaction; the corral_schema
// table records how many ran. Append only: a released migration never
// changes. Times are timestamptz; the session cache is jsonb.
var migrations = []string{
	`CREATE TABLE users (
		id text PRIMARY KEY,
		name text NOT NULL UNIQUE,
		password_hash bytea,
		token_hash text UNIQUE,
		created_at timestamptz NOT NULL
	);
	CREATE TABLE devices (
		id text PRIMARY KEY,
		name text NOT NULL,
		owner text NOT NULL REFERENCES users (name) ON DELETE CASCADE ON UPDATE CASCADE,
		created_at timestamptz NOT NULL,
		hostname text NOT NULL DEFAULT '',
		last_seen timestamptz,
		public_key text UNIQUE,
		enroll_hash text UNIQUE,
		enroll_expires timestamptz,
		enrolled_at timestamptz,
		UNIQUE (owner, name)
	);
	CREATE TABLE device_sessions (
		session_id text PRIMARY KEY,
		device_id text NOT NULL,
		session jsonb NOT NULL
	);
	CREATE INDEX device_sessions_device ON device_sessions (device_id);
	CREATE TABLE web_sessions (
		id text PRIMARY KEY,
		secret_hash text NOT NULL UNIQUE,
		user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
		created_at timestamptz NOT NULL,
		last_seen timestamptz NOT NULL,
		expires_at timestamptz NOT NULL,
		user_agent text NOT NULL DEFAULT '',
		address text NOT NULL DEFAULT ''
	);
	CREATE INDEX web_sessions_user ON web_sessions (user_id);
	CREATE INDEX web_sessions_expires ON web_sessions (expires_at);
	CREATE TABLE login_links (
		hash text PRIMARY KEY,
		user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
		created_at timestamptz NOT NULL,
		expires_at timestamptz NOT NULL
	);
	CREATE TABLE push_subscriptions (
		endpoint text PRIMARY KEY,
		p256dh text NOT NULL,
		auth text NOT NULL,
		user_name text NOT NULL DEFAULT '',
		created_at timestamptz NOT NULL
	);
	CREATE INDEX push_subscriptions_user ON push_subscriptions (user_name);
	CREATE TABLE notifications (
		id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		user_name text NOT NULL DEFAULT '',
		time timestamptz NOT NULL,
		device text NOT NULL DEFAULT '',
		session_id text NOT NULL,
		session_name text NOT NULL,
		reason text NOT NULL,
		message text NOT NULL DEFAULT ''
	);
	CREATE INDEX notifications_user ON notifications (user_name, id);
	CREATE TABLE kv (
		key text PRIMARY KEY,
		value bytea NOT NULL,
		updated_at timestamptz NOT NULL
	);`,
}

// Schema is the version of the schema this build writes.
func Schema() int { return len(migrations) }

// migrateLock is the advisory lock taken while migrating ("corral" in
// ASCII): one replica migrates, the others wait and find it done.
const migrateLock = 0x636f7272616c

// Open connects to the database at url (postgres://user@host/db?...; the
// PG* environment variables and ~/.pgpass fill in what it leaves out),
// checks that it answers and migrates it to the current schema. A schema
// newer than this build is refused.
func Open(ctx context.Context, url string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx's own message quotes the URL, its password hidden at best
		// effort: say only what was wrong.
		msg := "database URL: not a PostgreSQL connection string (postgres://user@host:port/db)"
		// "cannot parse `URL`: reason"
		if _, reason, ok := strings.Cut(err.Error(), "`: "); ok {
			msg += ": " + reason
		}
		return nil, errors.New(msg)
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 10 * time.Second
	}
	// pgx's default is 4 connections on a small machine; a hub replica's
	// event log writes devices' changes 8 at once (internal/hub). The
	// URL's pool_max_conns still wins.
	if !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = 16
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("database: %w", err)
	}
	s := &Store{pool: pool}
	pctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := pool.Ping(pctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("database %s: %w", where(cfg), err)
	}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("database %s: %w", where(cfg), err)
	}
	return s, nil
}

// where names a database for messages, without its password.
func where(cfg *pgxpool.Config) string {
	c := cfg.ConnConfig
	return fmt.Sprintf("%s@%s:%d/%s", c.User, c.Host, c.Port, c.Database)
}

// Close closes the pool.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

func (s *Store) migrate(ctx context.Context) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrateLock)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS corral_schema (version integer NOT NULL)`); err != nil {
			return err
		}
		v := 0
		err := tx.QueryRow(ctx, `SELECT version FROM corral_schema`).Scan(&v)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			if _, err := tx.Exec(ctx, `INSERT INTO corral_schema (version) VALUES (0)`); err != nil {
				return err
			}
		case err != nil:
			return err
		}
		if v > len(migrations) {
			return fmt.Errorf("the schema is from a newer corral (schema %d, this build knows %d): run that corral", v, len(migrations))
		}
		for i := v; i < len(migrations); i++ {
			if _, err := tx.Exec(ctx, migrations[i]); err != nil {
				return fmt.Errorf("migration %d: %w", i+1, err)
			}
		}
		_, err = tx.Exec(ctx, `UPDATE corral_schema SET version = $1`, len(migrations))
		return err
	})
}

// tx runs fn in a transaction, committing if it returns nil; one that
// PostgreSQL aborted for a deadlock or a serialization failure runs again,
// a few times.
func (s *Store) tx(ctx context.Context, fn func(pgx.Tx) error) error {
	var err error
	for range 5 {
		err = pgx.BeginFunc(ctx, s.pool, fn)
		if !retryable(err) {
			return err
		}
	}
	return err
}

// retryable: PostgreSQL aborted the transaction for running at the same
// time as another (deadlock_detected, serialization_failure).
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001")
}

// isUnique: a UNIQUE or PRIMARY KEY constraint refused the row.
func isUnique(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

// isForeignKey: the row names a parent that does not exist.
func isForeignKey(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23503"
}

// notFound turns pgx's no rows into store.ErrNotFound.
func notFound(err error, what string) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%s: %w", what, store.ErrNotFound)
	}
	return err
}

// exec1 runs a statement that must change one row.
func (s *Store) exec1(ctx context.Context, what, q string, args ...any) error {
	tag, err := s.pool.Exec(ctx, q, args...)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%s: %w", what, store.ErrNotFound)
	}
	return nil
}

// nullText is s, or NULL for "".
func nullText(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// nullTime is t, or NULL for the zero time.
func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func fromNull(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}
