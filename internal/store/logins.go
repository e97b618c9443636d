package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// The browser sessions and login links of SQLite (Logins).

// AddWebSession stores a new browser session.
func (s *SQLite) AddWebSession(ctx context.Context, ws WebSession, secretHash string, keep int) error {
	return s.tx(ctx, func(tx *sql.Conn) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM web_sessions WHERE expires_at <= ?`, ws.CreatedAt.UnixNano()); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO web_sessions (id, secret_hash, user_id, created_at, last_seen, expires_at, user_agent, address)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, ws.ID, secretHash, ws.UserID, ws.CreatedAt.UnixNano(), ws.LastSeen.UnixNano(),
			ws.ExpiresAt.UnixNano(), ws.UserAgent, ws.Address); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM web_sessions WHERE user_id = ? AND id NOT IN
			(SELECT id FROM web_sessions WHERE user_id = ? ORDER BY last_seen DESC, created_at DESC LIMIT ?)`, ws.UserID, ws.UserID, keep)
		return err
	})
}

const webSessionCols = `w.id, w.user_id, u.name, w.created_at, w.last_seen, w.expires_at, w.user_agent, w.address`

func scanWebSession(sc interface{ Scan(...any) error }) (WebSession, error) {
	var ws WebSession
	var created, seen, expires int64
	if err := sc.Scan(&ws.ID, &ws.UserID, &ws.User, &created, &seen, &expires, &ws.UserAgent, &ws.Address); err != nil {
		return WebSession{}, err
	}
	ws.CreatedAt, ws.LastSeen, ws.ExpiresAt = time.Unix(0, created), time.Unix(0, seen), time.Unix(0, expires)
	return ws, nil
}

// WebSessionBySecret finds the session of a cookie's secret hash, with its
// user's current name; ErrNotFound when there is none (ended, or its user
// removed).
func (s *SQLite) WebSessionBySecret(ctx context.Context, secretHash string) (WebSession, error) {
	ws, err := scanWebSession(s.db.QueryRowContext(ctx, `SELECT `+webSessionCols+`
		FROM web_sessions w JOIN users u ON u.id = w.user_id WHERE w.secret_hash = ?`, secretHash))
	if errors.Is(err, sql.ErrNoRows) {
		return WebSession{}, ErrNotFound
	}
	return ws, err
}

// TouchWebSession records that a session was used at at.
func (s *SQLite) TouchWebSession(ctx context.Context, id string, at time.Time) error {
	_, err := s.exec(ctx, `UPDATE web_sessions SET last_seen = ? WHERE id = ?`, at.UnixNano(), id)
	return err
}

// WebSessions lists a user's browser sessions, most recently used first.
func (s *SQLite) WebSessions(ctx context.Context, userID string) ([]WebSession, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+webSessionCols+`
		FROM web_sessions w JOIN users u ON u.id = w.user_id WHERE w.user_id = ? ORDER BY w.last_seen DESC, w.created_at DESC`, userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []WebSession{}
	for rows.Next() {
		ws, err := scanWebSession(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, ws)
	}
	return out, rows.Err()
}

// EndWebSession ends one of a user's sessions; ErrNotFound if the user has
// no session with that id.
func (s *SQLite) EndWebSession(ctx context.Context, userID, id string) error {
	res, err := s.exec(ctx, `DELETE FROM web_sessions WHERE user_id = ? AND id = ?`, userID, id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// EndUserLogins ends every browser session and unspent login link of a
// user.
func (s *SQLite) EndUserLogins(ctx context.Context, userID string) (int64, error) {
	var n int64
	err := s.tx(ctx, func(tx *sql.Conn) error {
		var err error
		n, err = endUserLogins(ctx, tx, userID)
		return err
	})
	return n, err
}

// endUserLogins is EndUserLogins inside tx, for an account change that
// logs the user out in its own transaction.
func endUserLogins(ctx context.Context, tx *sql.Conn, userID string) (int64, error) {
	res, err := tx.ExecContext(ctx, `DELETE FROM web_sessions WHERE user_id = ?`, userID)
	if err != nil {
		return 0, err
	}
	n, _ := res.RowsAffected()
	_, err = tx.ExecContext(ctx, `DELETE FROM login_links WHERE user_id = ?`, userID)
	return n, err
}

// AddLoginLink stores a one-time login link (by the hash of its secret)
// for a user until expires, and drops the expired ones.
func (s *SQLite) AddLoginLink(ctx context.Context, hash, userID string, created, expires time.Time) error {
	return s.tx(ctx, func(tx *sql.Conn) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM login_links WHERE expires_at <= ?`, created.UnixNano()); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO login_links (hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)`,
			hash, userID, created.UnixNano(), expires.UnixNano())
		return err
	})
}

// SpendLoginLink uses up a login link: valid or not, it is gone afterwards,
// so a link works once at most. ErrNotFound when it does not exist, was
// spent, has expired at now, or its user is gone.
func (s *SQLite) SpendLoginLink(ctx context.Context, hash string, now time.Time) (UserRef, error) {
	var u UserRef
	valid := false
	err := s.tx(ctx, func(tx *sql.Conn) error {
		var expires int64
		err := tx.QueryRowContext(ctx, `DELETE FROM login_links WHERE hash = ? RETURNING user_id, expires_at`, hash).Scan(&u.ID, &expires)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		if expires <= now.UnixNano() {
			return nil // commit: the expired link goes too
		}
		err = tx.QueryRowContext(ctx, `SELECT name FROM users WHERE id = ?`, u.ID).Scan(&u.Name)
		if err == nil {
			valid = true
		} else if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		return nil
	})
	if err != nil {
		return UserRef{}, err
	}
	if !valid {
		return UserRef{}, ErrNotFound
	}
	return u, nil
}
