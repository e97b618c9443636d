package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// The users, devices and device sessions of SQLite (Users, Devices,
// DeviceSessions). Times are Unix nanoseconds.

// isConstraint tells whether err is SQLite refusing a row that a UNIQUE or
// PRIMARY KEY constraint forbids.
func isConstraint(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() {
	case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		return true
	}
	return false
}

// nullString is s, or NULL for "" (a UNIQUE column holds many NULLs).
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nanos(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixNano()
}

func fromNanos(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return time.Unix(0, n.Int64)
}

const userCols = `id, name, password_hash, token_hash, created_at`

func scanUser(sc interface{ Scan(...any) error }) (User, error) {
	var u User
	var tok sql.NullString
	var created int64
	if err := sc.Scan(&u.ID, &u.Name, &u.PasswordHash, &tok, &created); err != nil {
		return User{}, err
	}
	u.TokenHash = tok.String
	u.CreatedAt = time.Unix(0, created)
	if len(u.PasswordHash) == 0 {
		u.PasswordHash = nil
	}
	return u, nil
}

func userByName(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, name string) (User, error) {
	u, err := scanUser(q.QueryRowContext(ctx, `SELECT `+userCols+` FROM users WHERE name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return User{}, fmt.Errorf("user %q: %w", name, ErrNotFound)
	}
	return u, err
}

// AddUser stores a new user.
func (s *SQLite) AddUser(ctx context.Context, u User) error {
	_, err := s.exec(ctx, `INSERT INTO users (`+userCols+`) VALUES (?, ?, ?, ?, ?)`,
		u.ID, u.Name, u.PasswordHash, nullString(u.TokenHash), u.CreatedAt.UnixNano())
	if isConstraint(err) {
		return fmt.Errorf("user %q: %w", u.Name, ErrConflict)
	}
	return err
}

// SoleUser makes sure u.Name is the database's one user.
func (s *SQLite) SoleUser(ctx context.Context, u User) (User, error) {
	var out User
	err := s.immediate(ctx, func(c *sql.Conn) error {
		var other string
		switch err := c.QueryRowContext(ctx, `SELECT name FROM users WHERE name != ? LIMIT 1`, u.Name).Scan(&other); {
		case err == nil:
			return fmt.Errorf("it has user %q: %w", other, ErrConflict)
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		if _, err := c.ExecContext(ctx, `INSERT INTO users (`+userCols+`) VALUES (?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING`,
			u.ID, u.Name, u.PasswordHash, nullString(u.TokenHash), u.CreatedAt.UnixNano()); err != nil {
			return err
		}
		var err error
		out, err = userByName(ctx, c, u.Name)
		return err
	})
	return out, err
}

// UserByName finds a user.
func (s *SQLite) UserByName(ctx context.Context, name string) (User, error) {
	return userByName(ctx, s.db, name)
}

// UserByTokenHash finds the user of a token's hash.
func (s *SQLite) UserByTokenHash(ctx context.Context, hash string) (UserRef, error) {
	var u UserRef
	if hash == "" {
		return u, ErrNotFound
	}
	err := s.db.QueryRowContext(ctx, `SELECT id, name FROM users WHERE token_hash = ?`, hash).Scan(&u.ID, &u.Name)
	if errors.Is(err, sql.ErrNoRows) {
		return UserRef{}, ErrNotFound
	}
	return u, err
}

// ListUsers lists the users by name.
func (s *SQLite) ListUsers(ctx context.Context) ([]User, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+userCols+` FROM users ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []User{}
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
func (s *SQLite) HasPassword(ctx context.Context, name string) (bool, error) {
	q, args := `SELECT count(*) FROM users WHERE length(password_hash) > 0`, []any{}
	if name != "" {
		q, args = q+` AND name = ?`, append(args, name)
	}
	var n int
	err := s.db.QueryRowContext(ctx, q, args...).Scan(&n)
	return n > 0, err
}

// changeUser runs q (an UPDATE whose last parameter is the user's id) on
// one user and ends their logins, in one transaction.
func (s *SQLite) changeUser(ctx context.Context, name, q string, args ...any) error {
	return s.tx(ctx, func(tx *sql.Conn) error {
		u, err := userByName(ctx, tx, name)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, q, append(args, u.ID)...); err != nil {
			if isConstraint(err) {
				return fmt.Errorf("user %q: %w", name, ErrConflict)
			}
			return err
		}
		_, err = endUserLogins(ctx, tx, u.ID)
		return err
	})
}

// SetPasswordHash replaces a user's password hash and ends their logins.
func (s *SQLite) SetPasswordHash(ctx context.Context, name string, hash []byte) error {
	if len(hash) == 0 {
		hash = nil
	}
	return s.changeUser(ctx, name, `UPDATE users SET password_hash = ? WHERE id = ?`, hash)
}

// SetTokenHash replaces a user's API token hash and ends their logins.
func (s *SQLite) SetTokenHash(ctx context.Context, name, hash string) error {
	return s.changeUser(ctx, name, `UPDATE users SET token_hash = ? WHERE id = ?`, nullString(hash))
}

// RemoveUser deletes a user and everything kept for them.
func (s *SQLite) RemoveUser(ctx context.Context, name string, keys ...string) error {
	return s.tx(ctx, func(tx *sql.Conn) error {
		u, err := userByName(ctx, tx, name)
		if err != nil {
			return err
		}
		if _, err := endUserLogins(ctx, tx, u.ID); err != nil {
			return err
		}
		for _, st := range []struct {
			q   string
			arg string
		}{
			{`DELETE FROM users WHERE id = ?`, u.ID},
			// What is kept by name would reach a new user of that name.
			{`DELETE FROM push_subscriptions WHERE user = ?`, name},
			{`DELETE FROM notifications WHERE user = ?`, name},
			{`DELETE FROM device_sessions WHERE device_id IN (SELECT id FROM devices WHERE owner = ?)`, name},
			{`DELETE FROM devices WHERE owner = ?`, name},
		} {
			if _, err := tx.ExecContext(ctx, st.q, st.arg); err != nil {
				return err
			}
		}
		for _, k := range keys {
			if _, err := tx.ExecContext(ctx, `DELETE FROM kv WHERE key = ?`, k); err != nil {
				return err
			}
		}
		return nil
	})
}

const deviceCols = `id, name, owner, created_at, hostname, last_seen, public_key, enrolled_at, enroll_expires`

func scanDevice(sc interface{ Scan(...any) error }) (DeviceRecord, error) {
	var d DeviceRecord
	var created int64
	var seen, enrolled, expires sql.NullInt64
	var pub sql.NullString
	if err := sc.Scan(&d.ID, &d.Name, &d.Owner, &created, &d.Hostname, &seen, &pub, &enrolled, &expires); err != nil {
		return DeviceRecord{}, err
	}
	d.CreatedAt = time.Unix(0, created)
	d.LastSeen, d.EnrolledAt, d.EnrollExpires = fromNanos(seen), fromNanos(enrolled), fromNanos(expires)
	d.PublicKey = pub.String
	return d, nil
}

func (s *SQLite) device(ctx context.Context, where string, args ...any) (DeviceRecord, error) {
	d, err := scanDevice(s.db.QueryRowContext(ctx, `SELECT `+deviceCols+` FROM devices WHERE `+where, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return DeviceRecord{}, fmt.Errorf("device: %w", ErrNotFound)
	}
	return d, err
}

// AddDevice stores a new device with an enrolment token's hash.
func (s *SQLite) AddDevice(ctx context.Context, d DeviceRecord, enrollHash string) error {
	return s.tx(ctx, func(tx *sql.Conn) error {
		if _, err := userByName(ctx, tx, d.Owner); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO devices (id, name, owner, created_at, enroll_hash, enroll_expires) VALUES (?, ?, ?, ?, ?, ?)`,
			d.ID, d.Name, d.Owner, d.CreatedAt.UnixNano(), nullString(enrollHash), nanos(d.EnrollExpires))
		if isConstraint(err) {
			return fmt.Errorf("device %s/%s: %w", d.Owner, d.Name, ErrConflict)
		}
		return err
	})
}

// Device finds a device by id.
func (s *SQLite) Device(ctx context.Context, id string) (DeviceRecord, error) {
	return s.device(ctx, `id = ?`, id)
}

// DeviceByName finds a user's device by name.
func (s *SQLite) DeviceByName(ctx context.Context, owner, name string) (DeviceRecord, error) {
	return s.device(ctx, `owner = ? AND name = ?`, owner, name)
}

// DeviceByKey finds the device of a key.
func (s *SQLite) DeviceByKey(ctx context.Context, pub string) (DeviceRecord, error) {
	if pub == "" {
		return DeviceRecord{}, ErrNotFound
	}
	return s.device(ctx, `public_key = ?`, pub)
}

// DeviceByEnrollHash finds the device of an unspent, unexpired enrolment
// token.
func (s *SQLite) DeviceByEnrollHash(ctx context.Context, hash string, now time.Time) (DeviceRecord, error) {
	if hash == "" {
		return DeviceRecord{}, ErrNotFound
	}
	return s.device(ctx, `enroll_hash = ? AND enroll_expires > ?`, hash, now.UnixNano())
}

// DeviceByLegacyHash finds the device of a protocol 1 device token.
func (s *SQLite) DeviceByLegacyHash(ctx context.Context, hash string) (DeviceRecord, error) {
	if hash == "" {
		return DeviceRecord{}, ErrNotFound
	}
	return s.device(ctx, `token_hash = ?`, hash)
}

// ListDevices lists a user's devices ("" for everyone's).
func (s *SQLite) ListDevices(ctx context.Context, owner string) ([]DeviceRecord, error) {
	q, args := `SELECT `+deviceCols+` FROM devices`, []any{}
	if owner != "" {
		q, args = q+` WHERE owner = ?`, append(args, owner)
	}
	rows, err := s.db.QueryContext(ctx, q+` ORDER BY owner, name, created_at`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []DeviceRecord{}
	for rows.Next() {
		d, err := scanDevice(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// exec1 runs a statement that must change one row.
func (s *SQLite) exec1(ctx context.Context, q string, args ...any) error {
	res, err := s.exec(ctx, q, args...)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// SetEnrollment gives a device a new enrolment token's hash.
func (s *SQLite) SetEnrollment(ctx context.Context, id, hash string, expires time.Time) error {
	err := s.exec1(ctx, `UPDATE devices SET enroll_hash = ?, enroll_expires = ? WHERE id = ?`, nullString(hash), nanos(expires), id)
	if isConstraint(err) {
		return fmt.Errorf("enrolment token: %w", ErrConflict)
	}
	return err
}

// BindKey spends an enrolment token, binding the device's key.
func (s *SQLite) BindKey(ctx context.Context, id, enrollHash, pub string, now time.Time) error {
	if enrollHash == "" || pub == "" {
		return ErrNotFound
	}
	n := now.UnixNano()
	err := s.exec1(ctx, `UPDATE devices SET public_key = ?, enroll_hash = NULL, enroll_expires = NULL, enrolled_at = ?, token_hash = NULL
		WHERE id = ? AND enroll_hash = ? AND enroll_expires > ?`, pub, n, id, enrollHash, n)
	if isConstraint(err) {
		return fmt.Errorf("device key: %w", ErrConflict)
	}
	return err
}

// RemoveDevice deletes a device and its cached sessions.
func (s *SQLite) RemoveDevice(ctx context.Context, id string) error {
	return s.tx(ctx, func(tx *sql.Conn) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM devices WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("device: %w", ErrNotFound)
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM device_sessions WHERE device_id = ?`, id)
		return err
	})
}

// DeviceSeen records that a device connected.
func (s *SQLite) DeviceSeen(ctx context.Context, id, hostname string, at time.Time) error {
	_, err := s.exec(ctx, `UPDATE devices SET last_seen = ?, hostname = ? WHERE id = ?`, at.UnixNano(), hostname, id)
	return err
}

// claimSQL writes a device's session unless another live device holds its
// id (postgres/accounts.go has the same statement in its dialect).
const claimSQL = `INSERT INTO device_sessions (session_id, device_id, session) VALUES (?, ?, ?)
	ON CONFLICT (session_id) DO UPDATE SET device_id = excluded.device_id, session = excluded.session
	WHERE device_sessions.device_id = excluded.device_id
		OR NOT EXISTS (SELECT 1 FROM devices WHERE devices.id = device_sessions.device_id)`

// SaveDeviceSessions applies changes in one transaction.
func (s *SQLite) SaveDeviceSessions(ctx context.Context, changes []DeviceSessionChange) ([]DeviceSession, error) {
	var refused []DeviceSession
	err := s.tx(ctx, func(tx *sql.Conn) error {
		refused = nil
		for _, c := range changes {
			if c.Replace {
				if _, err := tx.ExecContext(ctx, `DELETE FROM device_sessions WHERE device_id = ?`, c.DeviceID); err != nil {
					return err
				}
			}
			for _, id := range c.Delete {
				if _, err := tx.ExecContext(ctx, `DELETE FROM device_sessions WHERE device_id = ? AND session_id = ?`, c.DeviceID, id); err != nil {
					return err
				}
			}
		}
		claim, err := tx.PrepareContext(ctx, claimSQL)
		if err != nil {
			return err
		}
		defer claim.Close()
		for _, c := range changes {
			for _, p := range c.Put {
				res, err := claim.ExecContext(ctx, p.SessionID, c.DeviceID, string(p.Data))
				if err != nil {
					return fmt.Errorf("session %s: %w", p.SessionID, err)
				}
				if n, _ := res.RowsAffected(); n == 0 {
					refused = append(refused, DeviceSession{DeviceID: c.DeviceID, SessionID: p.SessionID, Data: p.Data})
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return refused, nil
}

// LoadDeviceSessions returns every device's sessions.
func (s *SQLite) LoadDeviceSessions(ctx context.Context) ([]DeviceSession, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT device_id, session_id, session FROM device_sessions ORDER BY device_id, session_id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []DeviceSession{}
	for rows.Next() {
		var d DeviceSession
		var data string
		if err := rows.Scan(&d.DeviceID, &d.SessionID, &data); err != nil {
			return nil, err
		}
		d.Data = []byte(data)
		out = append(out, d)
	}
	return out, rows.Err()
}
