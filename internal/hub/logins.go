package hub

import (
	"context"
	"crypto/rand"
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
func LocalAccounts(ctx context.Context, st store.Store) (*Accounts, error) {
	a := &Accounts{st: st, single: identity.Local}
	// A hub's data directory has users of its own: the single machine's
	// commands must not add one named local to them.
	u, err := st.SoleUser(ctx, store.User{ID: newUserID(), Name: a.single, CreatedAt: time.Now()})
	if errors.Is(err, store.ErrConflict) {
		other := "another"
		if users, lerr := st.ListUsers(ctx); lerr == nil {
			for _, u := range users {
				if u.Name != a.single {
					other = fmt.Sprintf("%q", u.Name)
					break
				}
			}
		}
		return nil, fmt.Errorf("local account: this data directory is a hub's (it has user %s): manage its users with `corral hub user`", other)
	}
	if err != nil {
		return nil, fmt.Errorf("local account: %w", err)
	}
	// Each step is done again, the same, if a crash stops the move
	// before the old key goes.
	if pw, err := st.Get(ctx, oldKeyPassword); err == nil {
		if err := st.SetPasswordHash(ctx, a.single, pw); err != nil {
			return nil, fmt.Errorf("local account: %w", err)
		}
		if err := st.Delete(ctx, oldKeyPassword); err != nil {
			return nil, fmt.Errorf("local account: %w", err)
		}
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("local account: %w", err)
	}
	if tok, err := st.Get(ctx, oldKeyAccessToken); err == nil {
		if u.TokenHash == "" {
			if err := st.SetTokenHash(ctx, a.single, hashToken(string(tok))); err != nil {
				return nil, fmt.Errorf("local account: %w", err)
			}
		}
		if err := st.Delete(ctx, oldKeyAccessToken); err != nil {
			return nil, fmt.Errorf("local account: %w", err)
		}
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("local account: %w", err)
	}
	return a, nil
}

// User is the single user of LocalAccounts ("" on a hub).
func (a *Accounts) User() string { return a.single }

// Ref names a user by id and name.
func (a *Accounts) Ref(ctx context.Context, name string) (store.UserRef, error) {
	u, err := a.st.UserByName(ctx, name)
	if err != nil {
		return store.UserRef{}, userErr(name, err)
	}
	return store.UserRef{ID: u.ID, Name: u.Name}, nil
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
	u, err := a.Ref(ctx, name)
	if err != nil {
		return 0, err
	}
	return a.st.EndUserLogins(ctx, u.ID)
}
