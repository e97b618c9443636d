package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/corral-dev/corral/internal/store"
)

// Users, devices and device sessions (store.Users, store.Devices,
// store.DeviceSessions).

const userCols = `id, name, password_hash, token_hash, created_at`

func scanUser(row pgx.Row) (store.User, error) {
	var u store.User
	var tok *string
	if err := row.Scan(&u.ID, &u.Name, &u.PasswordHash, &tok, &u.CreatedAt); err != nil {
		return store.User{}, err
	}
	if tok != nil {
		u.TokenHash = *tok
	}
	if len(u.PasswordHash) == 0 {
		u.PasswordHash = nil
	}
	return u, nil
}

type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func userByName(ctx context.Context, q querier, name string, lock string) (store.User, error) {
	u, err := scanUser(q.QueryRow(ctx, `SELECT `+userCols+` FROM users WHERE name = $1 `+lock, name))
	return u, notFound(err, fmt.Sprintf("user %q", name))
}

func nullBytes(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// AddUser stores a new user.
func (s *Store) AddUser(ctx context.Context, u store.User) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO users (`+userCols+`) VALUES ($1, $2, $3, $4, $5)`,
		u.ID, u.Name, nullBytes(u.PasswordHash), nullText(u.TokenHash), u.CreatedAt)
	if isUnique(err) {
		return fmt.Errorf("user %q: %w", u.Name, store.ErrConflict)
	}
	return err
}

// SoleUser makes sure u.Name is the database's one user. The table is
// locked against writers for the check, so two callers with different
// names cannot both pass it.
func (s *Store) SoleUser(ctx context.Context, u store.User) (store.User, error) {
	var out store.User
	err := s.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `LOCK TABLE users IN SHARE ROW EXCLUSIVE MODE`); err != nil {
			return err
		}
		var other string
		switch err := tx.QueryRow(ctx, `SELECT name FROM users WHERE name <> $1 LIMIT 1`, u.Name).Scan(&other); {
		case err == nil:
			return fmt.Errorf("it has user %q: %w", other, store.ErrConflict)
		case !errors.Is(err, pgx.ErrNoRows):
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO users (`+userCols+`) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (name) DO NOTHING`,
			u.ID, u.Name, nullBytes(u.PasswordHash), nullText(u.TokenHash), u.CreatedAt); err != nil {
			return err
		}
		var err error
		out, err = userByName(ctx, tx, u.Name, "")
		return err
	})
	return out, err
}

// UserByName finds a user.
func (s *Store) UserByName(ctx context.Context, name string) (store.User, error) {
	return userByName(ctx, s.pool, name, "")
}

// UserByTokenHash finds the user of a token's hash.
func (s *Store) UserByTokenHash(ctx context.Context, hash string) (store.UserRef, error) {
	var u store.UserRef
	if hash == "" {
		return u, store.ErrNotFound
	}
	err := s.pool.QueryRow(ctx, `SELECT id, name FROM users WHERE token_hash = $1`, hash).Scan(&u.ID, &u.Name)
	return u, notFound(err, "token")
}

// ListUsers lists the users by name.
func (s *Store) ListUsers(ctx context.Context) ([]store.User, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+userCols+` FROM users ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []store.User{}
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// HasPassword tells whether a user ("" any) has a password.
func (s *Store) HasPassword(ctx context.Context, name string) (bool, error) {
	var ok bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM users WHERE length(password_hash) > 0 AND ($1 = '' OR name = $1))`, name).Scan(&ok)
	return ok, err
}

// changeUser runs q (an UPDATE whose $1 is the user's id) on one user,
// its row locked, and ends their logins, in one transaction.
func (s *Store) changeUser(ctx context.Context, name, q string, arg any) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		u, err := userByName(ctx, tx, name, "FOR UPDATE")
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, q, u.ID, arg); err != nil {
			if isUnique(err) {
				return fmt.Errorf("user %q: %w", name, store.ErrConflict)
			}
			return err
		}
		_, err = endUserLogins(ctx, tx, u.ID)
		return err
	})
}

// SetPasswordHash replaces a user's password hash and ends their logins.
func (s *Store) SetPasswordHash(ctx context.Context, name string, hash []byte) error {
	return s.changeUser(ctx, name, `UPDATE users SET password_hash = $2 WHERE id = $1`, nullBytes(hash))
}

// SetTokenHash replaces a user's API token hash and ends their logins.
func (s *Store) SetTokenHash(ctx context.Context, name, hash string) error {
	return s.changeUser(ctx, name, `UPDATE users SET token_hash = $2 WHERE id = $1`, nullText(hash))
}

// RemoveUser deletes a user and everything kept for them. The user's row
// is locked first: a device being added for them meanwhile waits, and then
// finds no owner (the foreign key), so nothing of theirs outlives them.
func (s *Store) RemoveUser(ctx context.Context, name string, keys ...string) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		if _, err := userByName(ctx, tx, name, "FOR UPDATE"); err != nil {
			return err
		}
		for _, q := range []string{
			`DELETE FROM device_sessions WHERE device_id IN (SELECT id FROM devices WHERE owner = $1)`,
			// Devices, browser sessions and login links go by cascade.
			`DELETE FROM users WHERE name = $1`,
			// What is kept by name would reach a new user of that name.
			`DELETE FROM push_subscriptions WHERE user_name = $1`,
			`DELETE FROM notifications WHERE user_name = $1`,
		} {
			if _, err := tx.Exec(ctx, q, name); err != nil {
				return err
			}
		}
		if len(keys) > 0 {
			if _, err := tx.Exec(ctx, `DELETE FROM kv WHERE key = ANY($1)`, keys); err != nil {
				return err
			}
		}
		return nil
	})
}

const deviceCols = `id, name, owner, created_at, hostname, last_seen, public_key, enrolled_at, enroll_expires`

func scanDevice(row pgx.Row) (store.DeviceRecord, error) {
	var d store.DeviceRecord
	var seen, enrolled, expires *time.Time
	var pub *string
	if err := row.Scan(&d.ID, &d.Name, &d.Owner, &d.CreatedAt, &d.Hostname, &seen, &pub, &enrolled, &expires); err != nil {
		return store.DeviceRecord{}, err
	}
	d.LastSeen, d.EnrolledAt, d.EnrollExpires = fromNull(seen), fromNull(enrolled), fromNull(expires)
	if pub != nil {
		d.PublicKey = *pub
	}
	return d, nil
}

func (s *Store) device(ctx context.Context, where string, args ...any) (store.DeviceRecord, error) {
	d, err := scanDevice(s.pool.QueryRow(ctx, `SELECT `+deviceCols+` FROM devices WHERE `+where, args...))
	return d, notFound(err, "device")
}

// AddDevice stores a new device with an enrolment token's hash.
func (s *Store) AddDevice(ctx context.Context, d store.DeviceRecord, enrollHash string) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO devices (id, name, owner, created_at, enroll_hash, enroll_expires) VALUES ($1, $2, $3, $4, $5, $6)`,
		d.ID, d.Name, d.Owner, d.CreatedAt, nullText(enrollHash), nullTime(d.EnrollExpires))
	switch {
	case isForeignKey(err):
		return fmt.Errorf("user %q: %w", d.Owner, store.ErrNotFound)
	case isUnique(err):
		return fmt.Errorf("device %s/%s: %w", d.Owner, d.Name, store.ErrConflict)
	}
	return err
}

// Device finds a device by id.
func (s *Store) Device(ctx context.Context, id string) (store.DeviceRecord, error) {
	return s.device(ctx, `id = $1`, id)
}

// DeviceByName finds a user's device by name.
func (s *Store) DeviceByName(ctx context.Context, owner, name string) (store.DeviceRecord, error) {
	return s.device(ctx, `owner = $1 AND name = $2`, owner, name)
}

// DeviceByKey finds the device of a key.
func (s *Store) DeviceByKey(ctx context.Context, pub string) (store.DeviceRecord, error) {
	if pub == "" {
		return store.DeviceRecord{}, store.ErrNotFound
	}
	return s.device(ctx, `public_key = $1`, pub)
}

// DeviceByEnrollHash finds the device of an unspent, unexpired enrolment
// token.
func (s *Store) DeviceByEnrollHash(ctx context.Context, hash string, now time.Time) (store.DeviceRecord, error) {
	if hash == "" {
		return store.DeviceRecord{}, store.ErrNotFound
	}
	return s.device(ctx, `enroll_hash = $1 AND enroll_expires > $2`, hash, now)
}

// DeviceByLegacyHash: a hub on PostgreSQL never had devices of link
// protocol 1 (their tokens were SQLite's), so there is none to find.
func (s *Store) DeviceByLegacyHash(ctx context.Context, hash string) (store.DeviceRecord, error) {
	return store.DeviceRecord{}, fmt.Errorf("device: %w", store.ErrNotFound)
}

// ListDevices lists a user's devices ("" for everyone's).
func (s *Store) ListDevices(ctx context.Context, owner string) ([]store.DeviceRecord, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+deviceCols+` FROM devices WHERE $1 = '' OR owner = $1 ORDER BY owner, name, created_at`, owner)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []store.DeviceRecord{}
	for rows.Next() {
		d, err := scanDevice(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// SetEnrollment gives a device a new enrolment token's hash.
func (s *Store) SetEnrollment(ctx context.Context, id, hash string, expires time.Time) error {
	err := s.exec1(ctx, "device", `UPDATE devices SET enroll_hash = $1, enroll_expires = $2 WHERE id = $3`, nullText(hash), nullTime(expires), id)
	if isUnique(err) {
		return fmt.Errorf("enrolment token: %w", store.ErrConflict)
	}
	return err
}

// BindKey spends an enrolment token, binding the device's key: one
// UPDATE whose WHERE holds for the first of two racing connections only
// (the second waits for the first's row lock, then sees the token spent).
func (s *Store) BindKey(ctx context.Context, id, enrollHash, pub string, now time.Time) error {
	if enrollHash == "" || pub == "" {
		return store.ErrNotFound
	}
	err := s.exec1(ctx, "enrolment token", `UPDATE devices SET public_key = $1, enroll_hash = NULL, enroll_expires = NULL, enrolled_at = $2
		WHERE id = $3 AND enroll_hash = $4 AND enroll_expires > $2`, pub, now, id, enrollHash)
	if isUnique(err) {
		return fmt.Errorf("device key: %w", store.ErrConflict)
	}
	return err
}

// RemoveDevice deletes a device and its cached sessions.
func (s *Store) RemoveDevice(ctx context.Context, id string) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM devices WHERE id = $1`, id)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("device: %w", store.ErrNotFound)
		}
		_, err = tx.Exec(ctx, `DELETE FROM device_sessions WHERE device_id = $1`, id)
		return err
	})
}

// DeviceSeen records that a device connected.
func (s *Store) DeviceSeen(ctx context.Context, id, hostname string, at time.Time) error {
	_, err := s.pool.Exec(ctx, `UPDATE devices SET last_seen = $1, hostname = $2 WHERE id = $3`, at, hostname, id)
	return err
}

// claimSQL writes a device's session unless another live device holds its
// id. Two writers of one id: the second waits for the first's row, then
// its conflict clause sees the first's device and writes nothing.
const claimSQL = `INSERT INTO device_sessions AS ds (session_id, device_id, session) VALUES ($1, $2, $3)
	ON CONFLICT (session_id) DO UPDATE SET device_id = excluded.device_id, session = excluded.session
	WHERE ds.device_id = excluded.device_id
		OR NOT EXISTS (SELECT 1 FROM devices d WHERE d.id = ds.device_id)`

// SaveDeviceSessions applies changes in one transaction. Rows are written
// in session id order, so two hubs' batches lock them in one order and do
// not deadlock each other.
func (s *Store) SaveDeviceSessions(ctx context.Context, changes []store.DeviceSessionChange) ([]store.DeviceSession, error) {
	var puts []store.DeviceSession
	for _, c := range changes {
		for _, p := range c.Put {
			p.DeviceID = c.DeviceID
			puts = append(puts, p)
		}
	}
	slices.SortFunc(puts, func(a, b store.DeviceSession) int { return strings.Compare(a.SessionID, b.SessionID) })
	var refused []store.DeviceSession
	err := s.tx(ctx, func(tx pgx.Tx) error {
		refused = nil
		// One round trip for the whole batch (pgx pipelines a Batch):
		// the deletions first, then the claims, in order.
		var b pgx.Batch
		for _, c := range changes {
			if c.Replace {
				b.Queue(`DELETE FROM device_sessions WHERE device_id = $1`, c.DeviceID)
			}
			if len(c.Delete) > 0 {
				b.Queue(`DELETE FROM device_sessions WHERE device_id = $1 AND session_id = ANY($2)`, c.DeviceID, c.Delete)
			}
		}
		deletes := b.Len()
		for _, p := range puts {
			// jsonb takes the text; the hub's own encoding is JSON.
			b.Queue(claimSQL, p.SessionID, p.DeviceID, string(p.Data))
		}
		res := tx.SendBatch(ctx, &b)
		for i := range b.Len() {
			tag, err := res.Exec()
			if err != nil {
				res.Close()
				if i >= deletes {
					return fmt.Errorf("session %s: %w", puts[i-deletes].SessionID, err)
				}
				return err
			}
			if i >= deletes && tag.RowsAffected() == 0 {
				refused = append(refused, puts[i-deletes])
			}
		}
		return res.Close()
	})
	if err != nil {
		return nil, err
	}
	return refused, nil
}

// LoadDeviceSessions returns every device's sessions.
func (s *Store) LoadDeviceSessions(ctx context.Context) ([]store.DeviceSession, error) {
	rows, err := s.pool.Query(ctx, `SELECT device_id, session_id, session::text FROM device_sessions ORDER BY device_id, session_id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []store.DeviceSession{}
	for rows.Next() {
		var d store.DeviceSession
		var data string
		if err := rows.Scan(&d.DeviceID, &d.SessionID, &data); err != nil {
			return nil, err
		}
		d.Data = []byte(data)
		out = append(out, d)
	}
	return out, rows.Err()
}
