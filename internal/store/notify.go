package store

import (
	"context"
	"database/sql"
	"time"
)

// The push subscriptions and notification log of SQLite (Push,
// NotificationLog).

// PutPushSubscription adds a subscription of p.User, or replaces that
// user's own with the same endpoint. An endpoint another user holds is
// neither taken over nor changed: ErrOtherUser.
func (s *SQLite) PutPushSubscription(ctx context.Context, p PushSubscription) error {
	res, err := s.exec(ctx, `INSERT INTO push_subscriptions (endpoint, p256dh, auth, user, created_at)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT(endpoint) DO UPDATE SET p256dh=excluded.p256dh, auth=excluded.auth
		WHERE push_subscriptions.user = excluded.user`,
		p.Endpoint, p.P256dh, p.Auth, p.User, p.CreatedAt.UnixNano())
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return ErrOtherUser
	}
	return nil
}

// DeletePushSubscription removes a subscription, whoever's it is (the push
// service said it is gone); a missing one is not an error.
func (s *SQLite) DeletePushSubscription(ctx context.Context, endpoint string) error {
	_, err := s.exec(ctx, "DELETE FROM push_subscriptions WHERE endpoint = ?", endpoint)
	return err
}

// DeleteUserPushSubscription removes one of a user's subscriptions; another
// user's, or a missing one, is left as it is and is not an error.
func (s *SQLite) DeleteUserPushSubscription(ctx context.Context, user, endpoint string) error {
	_, err := s.exec(ctx, "DELETE FROM push_subscriptions WHERE endpoint = ? AND user = ?", endpoint, user)
	return err
}

// PushSubscriptions lists a user's subscriptions.
func (s *SQLite) PushSubscriptions(ctx context.Context, user string) ([]PushSubscription, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT endpoint, p256dh, auth, user, created_at FROM push_subscriptions WHERE user = ? ORDER BY created_at", user)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []PushSubscription
	for rows.Next() {
		var p PushSubscription
		var created int64
		if err := rows.Scan(&p.Endpoint, &p.P256dh, &p.Auth, &p.User, &created); err != nil {
			return nil, err
		}
		p.CreatedAt = time.Unix(0, created)
		out = append(out, p)
	}
	return out, rows.Err()
}

// AddNotification appends to the log, dropping the oldest beyond the bound.
func (s *SQLite) AddNotification(ctx context.Context, n Notification) (int64, error) {
	var id int64
	err := s.tx(ctx, func(tx *sql.Conn) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO notifications (user, time, device, session_id, session_name, reason, message)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, n.User, n.Time.UnixNano(), n.Device, n.SessionID, n.SessionName, n.Reason, n.Message)
		if err != nil {
			return err
		}
		id, _ = res.LastInsertId()
		_, err = tx.ExecContext(ctx, "DELETE FROM notifications WHERE id <= ?", id-KeepNotifications)
		return err
	})
	return id, err
}

// UpdateNotification changes the message of one of the user's entries.
func (s *SQLite) UpdateNotification(ctx context.Context, user string, id int64, message string) error {
	_, err := s.exec(ctx, "UPDATE notifications SET message = ? WHERE id = ? AND user = ?", message, id, user)
	return err
}

// Notifications returns a user's newest entries first.
func (s *SQLite) Notifications(ctx context.Context, user string, limit int) ([]Notification, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, time, device, session_id, session_name, reason, message
		FROM notifications WHERE user = ? ORDER BY id DESC LIMIT ?`, user, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Notification{}
	for rows.Next() {
		var n Notification
		var t int64
		if err := rows.Scan(&n.ID, &t, &n.Device, &n.SessionID, &n.SessionName, &n.Reason, &n.Message); err != nil {
			return nil, err
		}
		n.Time = time.Unix(0, t)
		n.User = user
		out = append(out, n)
	}
	return out, rows.Err()
}
