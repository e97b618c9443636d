package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/corral-dev/corral/internal/store"
)

// The event log of a hub of several replicas (store.EventLog): one counter
// row per user, taken with a row lock in the transaction that writes the
// change, so a user's changes are numbered in one order whichever replica
// writes them, and a number is visible only with its change.

// keepEvents is how many of a user's latest events the log keeps for
// replicas that missed some (and readers that resume from a number).
const keepEvents = 8192

// clusterSchema is created at the first EventLog call, under the migration
// lock (separate from the numbered migrations: only a hub of several
// replicas needs it).
const clusterSchema = `CREATE TABLE IF NOT EXISTS corral_links (
		device_id text PRIMARY KEY,
		replica text NOT NULL,
		epoch bigint NOT NULL,
		online boolean NOT NULL
	);
	CREATE TABLE IF NOT EXISTS corral_user_seq (
		user_name text PRIMARY KEY,
		seq bigint NOT NULL
	);
	CREATE TABLE IF NOT EXISTS corral_user_events (
		user_name text NOT NULL,
		seq bigint NOT NULL,
		event bytea NOT NULL,
		PRIMARY KEY (user_name, seq)
	);
	CREATE TABLE IF NOT EXISTS corral_cluster_sessions (
		session_id text PRIMARY KEY,
		user_name text NOT NULL,
		device_id text NOT NULL,
		session bytea NOT NULL
	);
	CREATE INDEX IF NOT EXISTS corral_cluster_sessions_user ON corral_cluster_sessions (user_name);
	CREATE INDEX IF NOT EXISTS corral_cluster_sessions_device ON corral_cluster_sessions (device_id);
	CREATE TABLE IF NOT EXISTS corral_cluster_devices (
		device_id text PRIMARY KEY,
		user_name text NOT NULL,
		device bytea NOT NULL
	);
	CREATE INDEX IF NOT EXISTS corral_cluster_devices_user ON corral_cluster_devices (user_name);
	CREATE TABLE IF NOT EXISTS corral_replicas (
		replica text PRIMARY KEY,
		expires timestamptz NOT NULL
	);`

// EventLog is the store's event log for a hub of several replicas, its
// tables made if missing.
func (s *Store) EventLog(ctx context.Context) (store.EventLog, error) {
	err := s.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrateLock)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, clusterSchema)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("event log: %w", err)
	}
	return eventLog{s}, nil
}

type eventLog struct{ s *Store }

func (l eventLog) ClaimLink(ctx context.Context, deviceID, replica string) (int64, map[string][]byte, error) {
	var epoch int64
	out := map[string][]byte{}
	err := l.s.tx(ctx, func(tx pgx.Tx) error {
		clear(out)
		if err := tx.QueryRow(ctx, `INSERT INTO corral_links (device_id, replica, epoch, online) VALUES ($1, $2, 1, true)
			ON CONFLICT (device_id) DO UPDATE SET replica = $2, epoch = corral_links.epoch + 1, online = true
			RETURNING epoch`, deviceID, replica).Scan(&epoch); err != nil {
			return err
		}
		return deviceSessions(ctx, tx, deviceID, out)
	})
	return epoch, out, err
}

func (l eventLog) ReleaseLink(ctx context.Context, deviceID string, epoch int64) error {
	_, err := l.s.pool.Exec(ctx, `UPDATE corral_links SET online = false WHERE device_id = $1 AND epoch = $2`, deviceID, epoch)
	return err
}

func (l eventLog) Append(ctx context.Context, user, deviceID string, epoch int64, changes []store.Change) ([]store.LoggedEvent, error) {
	var out []store.LoggedEvent
	err := l.s.tx(ctx, func(tx pgx.Tx) error {
		out = out[:0]
		var cur int64
		err := tx.QueryRow(ctx, `SELECT epoch FROM corral_links WHERE device_id = $1 FOR SHARE`, deviceID).Scan(&cur)
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && cur != epoch) {
			return fmt.Errorf("device %s is held by another replica: %w", deviceID, store.ErrConflict)
		}
		if err != nil {
			return err
		}
		for _, c := range changes {
			var tag pgconn.CommandTag
			var err error
			switch {
			case c.Device && c.Session == nil:
				tag, err = tx.Exec(ctx, `DELETE FROM corral_cluster_devices WHERE device_id = $1`, deviceID)
			case c.Device:
				// The same state again is no change (the holder writes
				// its device after every claim, not knowing what the log
				// had): a replica's bus publishes one event per number.
				tag, err = tx.Exec(ctx, `INSERT INTO corral_cluster_devices (device_id, user_name, device) VALUES ($1, $2, $3)
					ON CONFLICT (device_id) DO UPDATE SET device = $3, user_name = $2 WHERE corral_cluster_devices.device IS DISTINCT FROM $3`, deviceID, user, c.Session)
			case c.Session == nil:
				tag, err = tx.Exec(ctx, `DELETE FROM corral_cluster_sessions WHERE session_id = $1 AND device_id = $2`, c.SessionID, deviceID)
			default:
				// A session id belongs to one device (the store's claim);
				// one named by another is not this device's to change.
				tag, err = tx.Exec(ctx, `INSERT INTO corral_cluster_sessions (session_id, user_name, device_id, session) VALUES ($1, $2, $3, $4)
					ON CONFLICT (session_id) DO UPDATE SET session = $4 WHERE corral_cluster_sessions.device_id = $3`, c.SessionID, user, deviceID, c.Session)
			}
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 0 {
				continue
			}
			le, err := logEvent(ctx, tx, user, c.Event)
			if err != nil {
				return err
			}
			out = append(out, le)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// logEvent gives an event its user's next number and keeps it, in the
// transaction of the change it tells.
func logEvent(ctx context.Context, tx pgx.Tx, user string, event []byte) (store.LoggedEvent, error) {
	var seq int64
	// The first number of a user comes from the clock, as a single hub's
	// bus does: numbers from a database made again fall apart from the old
	// ones.
	if err := tx.QueryRow(ctx, `INSERT INTO corral_user_seq (user_name, seq) VALUES ($1, $2)
		ON CONFLICT (user_name) DO UPDATE SET seq = corral_user_seq.seq + 1 RETURNING seq`, user, time.Now().UnixMicro()).Scan(&seq); err != nil {
		return store.LoggedEvent{}, err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO corral_user_events (user_name, seq, event) VALUES ($1, $2, $3)`, user, seq, event); err != nil {
		return store.LoggedEvent{}, err
	}
	if seq%1024 == 0 {
		if _, err := tx.Exec(ctx, `DELETE FROM corral_user_events WHERE user_name = $1 AND seq <= $2`, user, seq-keepEvents); err != nil {
			return store.LoggedEvent{}, err
		}
	}
	return store.LoggedEvent{Seq: uint64(seq), Event: event}, nil
}

func (l eventLog) Publish(ctx context.Context, user string, events [][]byte) ([]store.LoggedEvent, error) {
	var out []store.LoggedEvent
	err := l.s.tx(ctx, func(tx pgx.Tx) error {
		out = out[:0]
		for _, ev := range events {
			le, err := logEvent(ctx, tx, user, ev)
			if err != nil {
				return err
			}
			out = append(out, le)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (l eventLog) Retire(ctx context.Context, user, deviceID string, removed func(string) []byte) ([]store.LoggedEvent, error) {
	var out []store.LoggedEvent
	err := l.s.tx(ctx, func(tx pgx.Tx) error {
		out = out[:0]
		// The row lock orders this after any Append of the holder (FOR
		// SHARE there); with the row gone the holder can neither write
		// (Append) nor claim it back (Reclaim). A device's id is never
		// used again.
		if _, err := tx.Exec(ctx, `DELETE FROM corral_links WHERE device_id = $1`, deviceID); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `DELETE FROM corral_cluster_sessions WHERE device_id = $1 RETURNING session_id`, deviceID)
		if err != nil {
			return err
		}
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `DELETE FROM corral_cluster_devices WHERE device_id = $1`, deviceID)
		if err != nil {
			return err
		}
		if tag.RowsAffected() > 0 {
			ids = append(ids, "")
		}
		for _, id := range ids {
			le, err := logEvent(ctx, tx, user, removed(id))
			if err != nil {
				return err
			}
			out = append(out, le)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (l eventLog) Since(ctx context.Context, user string, seq uint64, max int) ([]store.LoggedEvent, bool, error) {
	rows, err := l.s.pool.Query(ctx, `SELECT seq, event FROM corral_user_events WHERE user_name = $1 AND seq > $2 ORDER BY seq LIMIT $3`, user, int64(seq), max)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	var out []store.LoggedEvent
	for rows.Next() {
		var n int64
		var b []byte
		if err := rows.Scan(&n, &b); err != nil {
			return nil, false, err
		}
		out = append(out, store.LoggedEvent{Seq: uint64(n), Event: b})
	}
	if err := rows.Err(); err != nil {
		return nil, false, err
	}
	if len(out) > 0 {
		return out, out[0].Seq == seq+1, nil
	}
	var cur int64
	err = l.s.pool.QueryRow(ctx, `SELECT seq FROM corral_user_seq WHERE user_name = $1`, user).Scan(&cur)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	return nil, err == nil && uint64(cur) == seq, err
}

func (l eventLog) Snapshot(ctx context.Context, user string) (uint64, [][]byte, [][]byte, error) {
	if _, err := l.s.pool.Exec(ctx, `INSERT INTO corral_user_seq (user_name, seq) VALUES ($1, $2) ON CONFLICT DO NOTHING`, user, time.Now().UnixMicro()); err != nil {
		return 0, nil, nil, err
	}
	var seq int64
	var out, devs [][]byte
	// One snapshot of the database: the number and the sessions are
	// written in one transaction, so they are read as of one.
	err := pgx.BeginTxFunc(ctx, l.s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		out, devs = out[:0], devs[:0]
		if err := tx.QueryRow(ctx, `SELECT seq FROM corral_user_seq WHERE user_name = $1`, user).Scan(&seq); err != nil {
			return err
		}
		var err error
		if out, err = column(ctx, tx, out, `SELECT session FROM corral_cluster_sessions WHERE user_name = $1`, user); err != nil {
			return err
		}
		devs, err = column(ctx, tx, devs, `SELECT device FROM corral_cluster_devices WHERE user_name = $1`, user)
		return err
	})
	return uint64(seq), out, devs, err
}

// column appends to out the one column of a query's rows.
func column(ctx context.Context, tx pgx.Tx, out [][]byte, query string, args ...any) ([][]byte, error) {
	rows, err := tx.Query(ctx, query, args...)
	if err != nil {
		return out, err
	}
	defer rows.Close()
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return out, err
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

func (l eventLog) Online(ctx context.Context, ids []string) (map[string]bool, error) {
	rows, err := l.s.pool.Query(ctx, `SELECT device_id FROM corral_links WHERE online AND device_id = ANY($1)`, ids)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out[id] = true
	}
	return out, rows.Err()
}

func (l eventLog) Alive(ctx context.Context, replica string, ttl time.Duration) error {
	_, err := l.s.pool.Exec(ctx, `INSERT INTO corral_replicas (replica, expires) VALUES ($1, now() + $2::interval)
		ON CONFLICT (replica) DO UPDATE SET expires = now() + $2::interval`, replica, fmt.Sprintf("%d milliseconds", ttl.Milliseconds()))
	return err
}

func (l eventLog) Reap(ctx context.Context, replica string) ([]store.Reaped, error) {
	var out []store.Reaped
	err := l.s.tx(ctx, func(tx pgx.Tx) error {
		out = out[:0]
		// A link whose holder has no live lease (none at all: the holder
		// died before its first, or its row was reaped already).
		rows, err := tx.Query(ctx, `UPDATE corral_links SET replica = $1, epoch = epoch + 1, online = false
			WHERE online AND replica <> $1 AND NOT EXISTS (
				SELECT 1 FROM corral_replicas r WHERE r.replica = corral_links.replica AND r.expires > now())
			RETURNING device_id, epoch`, replica)
		if err != nil {
			return err
		}
		for rows.Next() {
			var r store.Reaped
			if err := rows.Scan(&r.DeviceID, &r.Epoch); err != nil {
				rows.Close()
				return err
			}
			out = append(out, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for i := range out {
			out[i].Sessions = map[string][]byte{}
			rows, err := tx.Query(ctx, `SELECT session_id, user_name, session FROM corral_cluster_sessions WHERE device_id = $1`, out[i].DeviceID)
			if err != nil {
				return err
			}
			for rows.Next() {
				var id, user string
				var b []byte
				if err := rows.Scan(&id, &user, &b); err != nil {
					rows.Close()
					return err
				}
				out[i].User, out[i].Sessions[id] = user, b
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			var user string
			err = tx.QueryRow(ctx, `SELECT user_name, device FROM corral_cluster_devices WHERE device_id = $1`, out[i].DeviceID).Scan(&user, &out[i].Device)
			switch {
			case err == nil:
				out[i].User = user
			case !errors.Is(err, pgx.ErrNoRows):
				return err
			}
		}
		_, err = tx.Exec(ctx, `DELETE FROM corral_replicas WHERE expires < now() - interval '1 hour'`)
		return err
	})
	return out, err
}

func (l eventLog) Reclaim(ctx context.Context, deviceID, replica string) (int64, map[string][]byte, bool, error) {
	var epoch int64
	out := map[string][]byte{}
	ok := false
	err := l.s.tx(ctx, func(tx pgx.Tx) error {
		clear(out)
		err := tx.QueryRow(ctx, `UPDATE corral_links SET replica = $2, epoch = epoch + 1, online = true
			WHERE device_id = $1 AND NOT online RETURNING epoch`, deviceID, replica).Scan(&epoch)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		ok = true
		return deviceSessions(ctx, tx, deviceID, out)
	})
	return epoch, out, ok, err
}

// deviceSessions reads the log's copy of a device's sessions into out.
func deviceSessions(ctx context.Context, tx pgx.Tx, deviceID string, out map[string][]byte) error {
	rows, err := tx.Query(ctx, `SELECT session_id, session FROM corral_cluster_sessions WHERE device_id = $1`, deviceID)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var b []byte
		if err := rows.Scan(&id, &b); err != nil {
			return err
		}
		out[id] = b
	}
	return rows.Err()
}
