package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite"
)

// SQLite is a database in one file (the pure-Go modernc.org/sqlite
// driver), in WAL mode: every write is one transaction, and a kill -9 at
// any moment loses no committed write. It is a Store, and it keeps the
// agent's own sessions.
type SQLite struct {
	db   *sql.DB
	path string
	// observe is told of every write (ObserveWrites).
	observe atomic.Pointer[func(time.Duration, error)]
}

// ObserveWrites has fn told how long every write took (a statement, or a
// transaction from its BEGIN to its COMMIT), and whether it failed: for
// metrics. fn must be quick; it runs on the writer's goroutine.
func (s *SQLite) ObserveWrites(fn func(time.Duration, error)) { s.observe.Store(&fn) }

func (s *SQLite) observed(start time.Time, err error) {
	if fn := s.observe.Load(); fn != nil {
		(*fn)(time.Since(start), err)
	}
}

// exec runs one write statement outside a transaction.
func (s *SQLite) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	start := time.Now()
	res, err := s.db.ExecContext(ctx, q, args...)
	s.observed(start, err)
	return res, err
}

var _ Store = (*SQLite)(nil)

// migrations are applied in order; PRAGMA user_version records how many ran.
// Append only: a released migration never changes.
var migrations = []string{
	`CREATE TABLE sessions (
		id TEXT PRIMARY KEY,
		name TEXT NOT NULL,
		dir TEXT NOT NULL,
		kind TEXT NOT NULL,
		args TEXT NOT NULL DEFAULT '[]',
		claude_session_id TEXT NOT NULL DEFAULT '',
		status TEXT NOT NULL DEFAULT '',
		state TEXT NOT NULL DEFAULT '{}',
		created_at INTEGER NOT NULL,
		updated_at INTEGER NOT NULL
	);
	CREATE TABLE kv (
		key TEXT PRIMARY KEY,
		value BLOB NOT NULL,
		updated_at INTEGER NOT NULL
	);`,
	`CREATE TABLE push_subscriptions (
		endpoint TEXT PRIMARY KEY,
		p256dh TEXT NOT NULL,
		auth TEXT NOT NULL,
		user TEXT NOT NULL DEFAULT '',
		created_at INTEGER NOT NULL
	);
	CREATE TABLE notifications (
		id INTEGER PRIMARY KEY AUTOINCREMENT,
		time INTEGER NOT NULL,
		device TEXT NOT NULL DEFAULT '',
		session_id TEXT NOT NULL,
		session_name TEXT NOT NULL,
		reason TEXT NOT NULL,
		message TEXT NOT NULL DEFAULT ''
	);`,
	`ALTER TABLE notifications ADD COLUMN user TEXT NOT NULL DEFAULT '';
	CREATE TABLE users (
		name TEXT PRIMARY KEY,
		password_hash BLOB,
		token_hash TEXT UNIQUE,
		created_at INTEGER NOT NULL
	);
	CREATE TABLE devices (
		id TEXT PRIMARY KEY,
		name TEXT NOT NULL,
		owner TEXT NOT NULL,
		token_hash TEXT UNIQUE,
		created_at INTEGER NOT NULL,
		revoked_at INTEGER,
		hostname TEXT NOT NULL DEFAULT '',
		last_seen INTEGER,
		UNIQUE (owner, name)
	);
	CREATE TABLE device_sessions (
		device_id TEXT NOT NULL,
		session_id TEXT NOT NULL,
		session TEXT NOT NULL,
		PRIMARY KEY (device_id, session_id)
	);`,
	// Logins that can be taken back (docs/web-protocol.md): users get stable
	// ids, so a new user under an old name is someone else; browser sessions
	// and one-time login links live here, keyed by hashes of their secrets.
	// The single-machine secrets of the kv table move into the users table
	// (internal/hub.LocalAccounts); the cookie key and generation go.
	`ALTER TABLE users ADD COLUMN id TEXT;
	UPDATE users SET id = lower(hex(randomblob(16)));
	CREATE UNIQUE INDEX users_id ON users (id);
	CREATE TABLE web_sessions (
		id TEXT PRIMARY KEY,
		secret_hash TEXT NOT NULL UNIQUE,
		user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
		created_at INTEGER NOT NULL,
		last_seen INTEGER NOT NULL,
		expires_at INTEGER NOT NULL,
		user_agent TEXT NOT NULL DEFAULT '',
		address TEXT NOT NULL DEFAULT ''
	);
	CREATE INDEX web_sessions_user ON web_sessions (user_id);
	CREATE TABLE login_links (
		hash TEXT PRIMARY KEY,
		user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
		created_at INTEGER NOT NULL,
		expires_at INTEGER NOT NULL
	);
	DELETE FROM kv WHERE key IN ('web.cookie_key', 'web.generation');`,
	// Devices prove an Ed25519 key (internal/devicekey). public_key is
	// bound on first use of a one-time enrolment token (kept hashed, with
	// its expiry). A device from before keeps its row, name and cached
	// sessions, but its old token_hash no longer lets it in: it enrols
	// again (docs/hub.md, "Upgrading from device tokens").
	`ALTER TABLE devices ADD COLUMN public_key TEXT;
	ALTER TABLE devices ADD COLUMN enroll_hash TEXT;
	ALTER TABLE devices ADD COLUMN enroll_expires INTEGER;
	ALTER TABLE devices ADD COLUMN enrolled_at INTEGER;
	CREATE UNIQUE INDEX devices_public_key ON devices (public_key);
	CREATE UNIQUE INDEX devices_enroll_hash ON devices (enroll_hash);`,
	// A session id belongs to one device (DeviceSessions): the claim is
	// the primary key, so two writers racing for an id get one winner.
	// Where two devices' rows named one id (a hub kept both across a
	// restart), the first written stays. Devices revoked by a corral from
	// before revocation deleted the row go as a revocation does now.
	`DELETE FROM device_sessions WHERE device_id IN (SELECT id FROM devices WHERE revoked_at IS NOT NULL);
	DELETE FROM devices WHERE revoked_at IS NOT NULL;
	CREATE TABLE device_sessions_new (
		session_id TEXT PRIMARY KEY,
		device_id TEXT NOT NULL,
		session TEXT NOT NULL
	);
	INSERT INTO device_sessions_new (session_id, device_id, session)
		SELECT session_id, device_id, session FROM device_sessions
		WHERE rowid IN (SELECT min(rowid) FROM device_sessions GROUP BY session_id);
	DROP TABLE device_sessions;
	ALTER TABLE device_sessions_new RENAME TO device_sessions;
	CREATE INDEX device_sessions_device ON device_sessions (device_id);`,
}

// Schema is the version of the schema this build writes (PRAGMA
// user_version).
func Schema() int { return len(migrations) }

// Open opens (creating if needed) the database at path with mode 0600,
// checks it (PRAGMA quick_check: a damaged file is a *CorruptError that
// says the way out) and migrates it to the current schema.
func Open(path string) (*SQLite, error) {
	if f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600); err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	} else {
		f.Close()
	}
	dsn := "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=busy_timeout(5000)&_pragma=foreign_keys(ON)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	// One connection: SQLite serialises writers anyway, and one connection
	// keeps transactions simple and the memory small.
	db.SetMaxOpenConns(1)
	s := &SQLite{db: db, path: path}
	// A damaged file is refused before anything writes to it (safety.go).
	if err := quickCheck(context.Background(), db, path); err != nil {
		db.Close()
		return nil, err
	}
	if err := s.migrate(context.Background()); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the database.
func (s *SQLite) Close() error { return s.db.Close() }

// Path is the database's file.
func (s *SQLite) Path() string { return s.path }

// migrate applies the migrations this file lacks. Each runs in a write
// transaction taken before the version is read (BEGIN IMMEDIATE), so two
// processes opening a new file at once migrate it once.
func (s *SQLite) migrate(ctx context.Context) error {
	for {
		done, err := s.migrateOne(ctx)
		if err != nil || done {
			return err
		}
	}
}

func (s *SQLite) migrateOne(ctx context.Context) (done bool, err error) {
	var v int
	err = s.immediate(ctx, func(c *sql.Conn) error {
		if err := c.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
			return fmt.Errorf("database version: %w", err)
		}
		if v > len(migrations) {
			return fmt.Errorf("database is from a newer corral (schema %d, this build knows %d): run that corral, or restore a backup this one made (corral restore FILE)", v, len(migrations))
		}
		if v == len(migrations) {
			done = true
			return nil
		}
		if _, err := c.ExecContext(ctx, migrations[v]); err != nil {
			return fmt.Errorf("database migration %d: %w", v+1, err)
		}
		_, err := c.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v+1))
		return err
	})
	return done, err
}

// immediate runs fn in a transaction that holds the write lock from its
// start (BEGIN IMMEDIATE), committing if fn returns nil: for a read that
// decides a write, which a deferred transaction would let another process
// race between the two.
func (s *SQLite) immediate(ctx context.Context, fn func(*sql.Conn) error) (err error) {
	start := time.Now()
	defer func() { s.observed(start, err) }()
	c, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return err
	}
	if err := fn(c); err != nil {
		c.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		return err
	}
	_, err = c.ExecContext(ctx, "COMMIT")
	if err != nil {
		c.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
	}
	return err
}

// tx runs fn in a write transaction (immediate), committing if it
// returns nil. Every write transaction takes the lock at its start: one
// that read first and wrote later could find another process's write in
// between, which SQLite answers with SQLITE_BUSY at once, not after the
// busy timeout.
func (s *SQLite) tx(ctx context.Context, fn func(*sql.Conn) error) error {
	return s.immediate(ctx, fn)
}

// Session is one session's row.
type Session struct {
	ID              string
	Name            string
	Dir             string
	Kind            string
	Args            []string
	ClaudeSessionID string
	Status          string
	// State is the agent's own serialisation of everything else it wants
	// back after a restart.
	State     json.RawMessage
	CreatedAt time.Time
	UpdatedAt time.Time
}

// PutSession inserts or replaces a session.
func (s *SQLite) PutSession(ctx context.Context, r Session) error {
	return s.PutSessions(ctx, []Session{r})
}

// PutSessions writes several sessions in one transaction.
func (s *SQLite) PutSessions(ctx context.Context, rs []Session) error {
	return s.tx(ctx, func(tx *sql.Conn) error {
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO sessions
			(id, name, dir, kind, args, claude_session_id, status, state, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT(id) DO UPDATE SET name=excluded.name, dir=excluded.dir, kind=excluded.kind,
			args=excluded.args, claude_session_id=excluded.claude_session_id, status=excluded.status,
			state=excluded.state, updated_at=excluded.updated_at`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, r := range rs {
			args, err := json.Marshal(r.Args)
			if err != nil {
				return err
			}
			state := r.State
			if len(state) == 0 {
				state = json.RawMessage("{}")
			}
			if _, err := stmt.ExecContext(ctx, r.ID, r.Name, r.Dir, r.Kind, string(args), r.ClaudeSessionID,
				r.Status, string(state), r.CreatedAt.UnixNano(), r.UpdatedAt.UnixNano()); err != nil {
				return fmt.Errorf("session %s: %w", r.ID, err)
			}
		}
		return nil
	})
}

// DeleteSession removes a session; a missing one is not an error.
func (s *SQLite) DeleteSession(ctx context.Context, id string) error {
	_, err := s.exec(ctx, "DELETE FROM sessions WHERE id = ?", id)
	return err
}

// Sessions returns every session, oldest first.
func (s *SQLite) Sessions(ctx context.Context) ([]Session, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, name, dir, kind, args, claude_session_id, status, state,
		created_at, updated_at FROM sessions ORDER BY created_at, id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Session
	for rows.Next() {
		var r Session
		var args, state string
		var created, updated int64
		if err := rows.Scan(&r.ID, &r.Name, &r.Dir, &r.Kind, &args, &r.ClaudeSessionID, &r.Status, &state, &created, &updated); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(args), &r.Args); err != nil {
			return nil, fmt.Errorf("session %s args: %w", r.ID, err)
		}
		r.State = json.RawMessage(state)
		r.CreatedAt, r.UpdatedAt = time.Unix(0, created), time.Unix(0, updated)
		out = append(out, r)
	}
	return out, rows.Err()
}

// Get reads a key; ErrNotFound if it is not set.
func (s *SQLite) Get(ctx context.Context, key string) ([]byte, error) {
	var v []byte
	err := s.db.QueryRowContext(ctx, "SELECT value FROM kv WHERE key = ?", key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	return v, err
}

// Set writes a key.
func (s *SQLite) Set(ctx context.Context, key string, value []byte) error {
	if value == nil {
		value = []byte{}
	}
	_, err := s.exec(ctx, `INSERT INTO kv (key, value, updated_at) VALUES (?, ?, ?)
		ON CONFLICT(key) DO UPDATE SET value=excluded.value, updated_at=excluded.updated_at`,
		key, value, time.Now().UnixNano())
	return err
}

// SetIfAbsent writes each key of values that is not set, in one
// transaction, and returns what is stored under every key.
func (s *SQLite) SetIfAbsent(ctx context.Context, values map[string][]byte) (map[string][]byte, error) {
	out := make(map[string][]byte, len(values))
	err := s.tx(ctx, func(tx *sql.Conn) error {
		for _, k := range slices.Sorted(maps.Keys(values)) {
			v := values[k]
			if v == nil {
				v = []byte{}
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO kv (key, value, updated_at) VALUES (?, ?, ?)
			ON CONFLICT(key) DO NOTHING`, k, v, time.Now().UnixNano()); err != nil {
				return err
			}
			var got []byte
			if err := tx.QueryRowContext(ctx, "SELECT value FROM kv WHERE key = ?", k).Scan(&got); err != nil {
				return err
			}
			out[k] = got
		}
		return nil
	})
	return out, err
}

// Delete removes a key; a missing one is not an error.
func (s *SQLite) Delete(ctx context.Context, key string) error {
	_, err := s.exec(ctx, "DELETE FROM kv WHERE key = ?", key)
	return err
}
