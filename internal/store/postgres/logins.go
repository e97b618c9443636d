package postgres

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/corral-dev/corral/internal/store"
)

// Browser sessions and login links (store.Logins), push subscriptions
// (store.Push), the notification log (store.NotificationLog) and settings
// (store.KV).

// AddWebSession stores a new browser session.
func (s *Store) AddWebSession(ctx context.Context, ws store.WebSession, secretHash string, keep int) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM web_sessions WHERE expires_at <= $1`, ws.CreatedAt); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO web_sessions (id, secret_hash, user_id, created_at, last_seen, expires_at, user_agent, address)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, ws.ID, secretHash, ws.UserID, ws.CreatedAt, ws.LastSeen,
			ws.ExpiresAt, ws.UserAgent, ws.Address); err != nil {
			if isForeignKey(err) {
				return fmt.Errorf("user id %q: %w", ws.UserID, store.ErrNotFound)
			}
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM web_sessions WHERE user_id = $1 AND id NOT IN
			(SELECT id FROM web_sessions WHERE user_id = $1 ORDER BY last_seen DESC, created_at DESC LIMIT $2)`, ws.UserID, keep)
		return err
	})
}

const webSessionCols = `w.id, w.user_id, u.name, w.created_at, w.last_seen, w.expires_at, w.user_agent, w.address`

func scanWebSession(row pgx.Row) (store.WebSession, error) {
	var ws store.WebSession
	err := row.Scan(&ws.ID, &ws.UserID, &ws.User, &ws.CreatedAt, &ws.LastSeen, &ws.ExpiresAt, &ws.UserAgent, &ws.Address)
	return ws, err
}

// WebSessionBySecret finds the session of a cookie's secret hash.
func (s *Store) WebSessionBySecret(ctx context.Context, secretHash string) (store.WebSession, error) {
	ws, err := scanWebSession(s.pool.QueryRow(ctx, `SELECT `+webSessionCols+`
		FROM web_sessions w JOIN users u ON u.id = w.user_id WHERE w.secret_hash = $1`, secretHash))
	return ws, notFound(err, "browser session")
}

// TouchWebSession records that a session was used at at.
func (s *Store) TouchWebSession(ctx context.Context, id string, at time.Time) error {
	_, err := s.pool.Exec(ctx, `UPDATE web_sessions SET last_seen = $1 WHERE id = $2`, at, id)
	return err
}

// WebSessions lists a user's browser sessions, most recently used first.
func (s *Store) WebSessions(ctx context.Context, userID string) ([]store.WebSession, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+webSessionCols+`
		FROM web_sessions w JOIN users u ON u.id = w.user_id WHERE w.user_id = $1 ORDER BY w.last_seen DESC, w.created_at DESC`, userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []store.WebSession{}
	for rows.Next() {
		ws, err := scanWebSession(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, ws)
	}
	return out, rows.Err()
}

// EndWebSession ends one of a user's sessions.
func (s *Store) EndWebSession(ctx context.Context, userID, id string) error {
	return s.exec1(ctx, "browser session", `DELETE FROM web_sessions WHERE user_id = $1 AND id = $2`, userID, id)
}

// EndUserLogins ends every browser session and login link of a user.
func (s *Store) EndUserLogins(ctx context.Context, userID string) (int64, error) {
	var n int64
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var err error
		n, err = endUserLogins(ctx, tx, userID)
		return err
	})
	return n, err
}

func endUserLogins(ctx context.Context, tx pgx.Tx, userID string) (int64, error) {
	tag, err := tx.Exec(ctx, `DELETE FROM web_sessions WHERE user_id = $1`, userID)
	if err != nil {
		return 0, err
	}
	_, err = tx.Exec(ctx, `DELETE FROM login_links WHERE user_id = $1`, userID)
	return tag.RowsAffected(), err
}

// AddLoginLink stores a one-time login link and drops the expired ones.
func (s *Store) AddLoginLink(ctx context.Context, hash, userID string, created, expires time.Time) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM login_links WHERE expires_at <= $1`, created); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO login_links (hash, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4)`,
			hash, userID, created, expires)
		switch {
		case isForeignKey(err):
			return fmt.Errorf("user id %q: %w", userID, store.ErrNotFound)
		case isUnique(err):
			return fmt.Errorf("login link: %w", store.ErrConflict)
		}
		return err
	})
}

// SpendLoginLink uses up a login link in one DELETE: of two hubs it is
// brought to at once, the second finds it gone.
func (s *Store) SpendLoginLink(ctx context.Context, hash string, now time.Time) (store.UserRef, error) {
	var u store.UserRef
	var expires time.Time
	err := s.pool.QueryRow(ctx, `WITH spent AS (DELETE FROM login_links WHERE hash = $1 RETURNING user_id, expires_at)
		SELECT spent.user_id, u.name, spent.expires_at FROM spent JOIN users u ON u.id = spent.user_id`, hash).Scan(&u.ID, &u.Name, &expires)
	if err != nil {
		return store.UserRef{}, notFound(err, "login link")
	}
	if !expires.After(now) {
		return store.UserRef{}, fmt.Errorf("login link: expired: %w", store.ErrNotFound)
	}
	return u, nil
}

// PutPushSubscription adds or replaces a user's subscription.
func (s *Store) PutPushSubscription(ctx context.Context, p store.PushSubscription) error {
	tag, err := s.pool.Exec(ctx, `INSERT INTO push_subscriptions AS ps (endpoint, p256dh, auth, user_name, created_at)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (endpoint) DO UPDATE SET p256dh = excluded.p256dh, auth = excluded.auth
		WHERE ps.user_name = excluded.user_name`, p.Endpoint, p.P256dh, p.Auth, p.User, p.CreatedAt)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return store.ErrOtherUser
	}
	return nil
}

// DeletePushSubscription removes a subscription, whoever's it is.
func (s *Store) DeletePushSubscription(ctx context.Context, endpoint string) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM push_subscriptions WHERE endpoint = $1`, endpoint)
	return err
}

// DeleteUserPushSubscription removes one of a user's subscriptions.
func (s *Store) DeleteUserPushSubscription(ctx context.Context, user, endpoint string) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM push_subscriptions WHERE endpoint = $1 AND user_name = $2`, endpoint, user)
	return err
}

// PushSubscriptions lists a user's subscriptions, oldest first.
func (s *Store) PushSubscriptions(ctx context.Context, user string) ([]store.PushSubscription, error) {
	rows, err := s.pool.Query(ctx, `SELECT endpoint, p256dh, auth, user_name, created_at FROM push_subscriptions
		WHERE user_name = $1 ORDER BY created_at, endpoint`, user)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.PushSubscription
	for rows.Next() {
		var p store.PushSubscription
		if err := rows.Scan(&p.Endpoint, &p.P256dh, &p.Auth, &p.User, &p.CreatedAt); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// AddNotification appends to the log, dropping the oldest beyond the
// bound.
func (s *Store) AddNotification(ctx context.Context, n store.Notification) (int64, error) {
	var id int64
	err := s.tx(ctx, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `INSERT INTO notifications (user_name, time, device, session_id, session_name, reason, message)
			VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`, n.User, n.Time, n.Device, n.SessionID, n.SessionName, n.Reason, n.Message).Scan(&id); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM notifications WHERE id <= $1`, id-store.KeepNotifications)
		return err
	})
	return id, err
}

// UpdateNotification changes the message of one of the user's entries.
func (s *Store) UpdateNotification(ctx context.Context, user string, id int64, message string) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE notifications SET message = $1 WHERE id = $2 AND user_name = $3`, message, id, user)
		return err
	})
}

// Notifications returns a user's newest entries first.
func (s *Store) Notifications(ctx context.Context, user string, limit int) ([]store.Notification, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, time, device, session_id, session_name, reason, message
		FROM notifications WHERE user_name = $1 ORDER BY id DESC LIMIT $2`, user, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []store.Notification{}
	for rows.Next() {
		n := store.Notification{User: user}
		if err := rows.Scan(&n.ID, &n.Time, &n.Device, &n.SessionID, &n.SessionName, &n.Reason, &n.Message); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// Get reads a key.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	var v []byte
	err := s.pool.QueryRow(ctx, `SELECT value FROM kv WHERE key = $1`, key).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	return v, err
}

// Set writes a key.
func (s *Store) Set(ctx context.Context, key string, value []byte) error {
	if value == nil {
		value = []byte{}
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO kv (key, value, updated_at) VALUES ($1, $2, now())
		ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`, key, value)
	return err
}

// SetIfAbsent writes each absent key, in key order (two processes making
// the same keys at once lock them in one order: the first writes them
// all, the second waits and reads them), and returns what is stored.
func (s *Store) SetIfAbsent(ctx context.Context, values map[string][]byte) (map[string][]byte, error) {
	out := make(map[string][]byte, len(values))
	err := s.tx(ctx, func(tx pgx.Tx) error {
		for _, k := range slices.Sorted(maps.Keys(values)) {
			v := values[k]
			if v == nil {
				v = []byte{}
			}
			if _, err := tx.Exec(ctx, `INSERT INTO kv (key, value, updated_at) VALUES ($1, $2, now()) ON CONFLICT (key) DO NOTHING`, k, v); err != nil {
				return err
			}
			var got []byte
			if err := tx.QueryRow(ctx, `SELECT value FROM kv WHERE key = $1`, k).Scan(&got); err != nil {
				return err
			}
			out[k] = got
		}
		return nil
	})
	return out, err
}

// Delete removes a key.
func (s *Store) Delete(ctx context.Context, key string) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM kv WHERE key = $1`, key)
	return err
}
