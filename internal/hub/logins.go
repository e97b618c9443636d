package hub

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/identity"
	"github.com/corral-dev/corral/internal/store"
)

// loginLinkPrefix marks one-time login links (corral serve, corral
// login-link): "cl_" + 256 random bits, kept as a hash.
const loginLinkPrefix = "cl_"

// Login link lifetimes.
const (
	LoginLinkLife    = 10 * time.Minute
	MaxLoginLinkLife = time.Hour
)

// Keys of the kv table where a corral serve before stable users kept its
// secrets in plain text (LocalAccounts moves them).
const (
	oldKeyAccessToken = "web.access_token"
	oldKeyPassword    = "web.password"
)

func newUserID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// LocalAccounts are the accounts of a single-machine `corral serve`: one
// user, identity.Local, in the same users table a hub uses; the login form
// asks for no name. The first call after an upgrade moves the secrets an
// older corral kept in plain text: the password hash as it is, the access
// token hashed into the API token (scripts that sent it as a bearer token
// go on working; the login URL that carried it stops working, since login
// links are one-time now).
func LocalAccounts(ctx context.Context, st *store.Store) (*Accounts, error) {
	a := &Accounts{db: st.DB(), st: st, single: identity.Local}
	err := st.Tx(ctx, func(tx *sql.Tx) error {
		// A hub's data directory has users of its own: the single
		// machine's commands must not add one named local to them.
		var other string
		switch err := tx.QueryRowContext(ctx, `SELECT name FROM users WHERE name != ? LIMIT 1`, a.single).Scan(&other); {
		case err == nil:
			return fmt.Errorf("this data directory is a hub's (it has user %q): manage its users with `corral hub user`", other)
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO users (id, name, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING`,
			newUserID(), a.single, time.Now().UnixNano()); err != nil {
			return err
		}
		var pw []byte
		switch err := tx.QueryRowContext(ctx, `SELECT value FROM kv WHERE key = ?`, oldKeyPassword).Scan(&pw); {
		case err == nil:
			if _, err := tx.ExecContext(ctx, `UPDATE users SET password_hash = ? WHERE name = ?`, pw, a.single); err != nil {
				return err
			}
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		var tok []byte
		switch err := tx.QueryRowContext(ctx, `SELECT value FROM kv WHERE key = ?`, oldKeyAccessToken).Scan(&tok); {
		case err == nil:
			if _, err := tx.ExecContext(ctx, `UPDATE users SET token_hash = ? WHERE name = ? AND token_hash IS NULL`, hashToken(string(tok)), a.single); err != nil {
				return err
			}
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM kv WHERE key IN (?, ?)`, oldKeyPassword, oldKeyAccessToken)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("local account: %w", err)
	}
	return a, nil
}

// User is the single user of LocalAccounts ("" on a hub).
func (a *Accounts) User() string { return a.single }

type queryer interface {
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

func userID(ctx context.Context, q queryer, name string) (string, error) {
	var id string
	err := q.QueryRowContext(ctx, `SELECT id FROM users WHERE name = ?`, name).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", api.Errorf(api.CodeNotFound, "no user %q", name)
	}
	return id, err
}

// changeUser runs q (an UPDATE whose last parameter is the user's id) on
// one user and ends their browser sessions, in one transaction: a new
// password or token takes back every login made with the old one.
func (a *Accounts) changeUser(ctx context.Context, name, q string, args ...any) error {
	return a.st.Tx(ctx, func(tx *sql.Tx) error {
		id, err := userID(ctx, tx, name)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, q, append(args, id)...); err != nil {
			return err
		}
		_, err = store.EndUserLogins(ctx, tx, id)
		return err
	})
}

// Ref names a user by id and name.
func (a *Accounts) Ref(ctx context.Context, name string) (store.UserRef, error) {
	id, err := userID(ctx, a.db, name)
	return store.UserRef{ID: id, Name: name}, err
}

// NewLoginLink makes a one-time login link token for a user, valid for
// life (at most MaxLoginLinkLife), kept only as a hash.
func (a *Accounts) NewLoginLink(ctx context.Context, name string, life time.Duration) (string, error) {
	if life <= 0 || life > MaxLoginLinkLife {
		return "", api.Errorf(api.CodeBadRequest, "a login link lives from 1s to %v, not %v", MaxLoginLinkLife, life)
	}
	u, err := a.Ref(ctx, name)
	if err != nil {
		return "", err
	}
	tok := newToken(loginLinkPrefix)
	now := time.Now()
	return tok, a.st.AddLoginLink(ctx, hashToken(tok), u.ID, now, now.Add(life))
}

// ByLoginLink spends a login link (web.Accounts): it works once, before it
// expires.
func (a *Accounts) ByLoginLink(ctx context.Context, link string) (store.UserRef, bool) {
	if !strings.HasPrefix(link, loginLinkPrefix) {
		return store.UserRef{}, false
	}
	u, err := a.st.SpendLoginLink(ctx, hashToken(link), time.Now())
	return u, err == nil
}

// WebSessions lists a user's browser sessions.
func (a *Accounts) WebSessions(ctx context.Context, name string) ([]store.WebSession, error) {
	u, err := a.Ref(ctx, name)
	if err != nil {
		return nil, err
	}
	return a.st.WebSessions(ctx, u.ID)
}

// EndWebSession ends the one browser session of a user whose id starts
// with prefix.
func (a *Accounts) EndWebSession(ctx context.Context, name, prefix string) (store.WebSession, error) {
	list, err := a.WebSessions(ctx, name)
	if err != nil {
		return store.WebSession{}, err
	}
	var match []store.WebSession
	for _, ws := range list {
		if prefix != "" && strings.HasPrefix(ws.ID, prefix) {
			match = append(match, ws)
		}
	}
	switch len(match) {
	case 0:
		return store.WebSession{}, api.Errorf(api.CodeNotFound, "%s has no browser session %q", name, prefix)
	case 1:
	default:
		return store.WebSession{}, api.Errorf(api.CodeBadRequest, "%q matches %d sessions; type more of the id", prefix, len(match))
	}
	if err := a.st.EndWebSession(ctx, match[0].UserID, match[0].ID); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return store.WebSession{}, api.Errorf(api.CodeNotFound, "%s has no browser session %q", name, prefix)
		}
		return store.WebSession{}, err
	}
	return match[0], nil
}

// EndWebSessions ends every browser session of a user and returns how
// many there were.
func (a *Accounts) EndWebSessions(ctx context.Context, name string) (int64, error) {
	var n int64
	err := a.st.Tx(ctx, func(tx *sql.Tx) error {
		id, err := userID(ctx, tx, name)
		if err != nil {
			return err
		}
		n, err = store.EndUserLogins(ctx, tx, id)
		return err
	})
	return n, err
}
