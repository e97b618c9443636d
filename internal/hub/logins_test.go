package hub

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/identity"
	"github.com/corral-dev/corral/internal/store"
)

// addSession gives a user a browser session, as the dashboard does.
func addSession(t *testing.T, st *store.Store, u store.UserRef, id string) {
	t.Helper()
	now := time.Now()
	ws := store.WebSession{ID: id, UserID: u.ID, CreatedAt: now, LastSeen: now, ExpiresAt: now.Add(time.Hour)}
	if err := st.AddWebSession(context.Background(), ws, "hash-"+id, 50); err != nil {
		t.Fatal(err)
	}
}

func sessionIDs(t *testing.T, a *Accounts, name string) []string {
	t.Helper()
	list, err := a.WebSessions(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ws := range list {
		out = append(out, ws.ID)
	}
	return out
}

// TestAccountChangesEndLogins: a new password, a new token, or removing
// the user ends the user's browser sessions and unspent login links, and
// nobody else's. A user added again under a removed user's name is a new
// id.
func TestAccountChangesEndLogins(t *testing.T) {
	ctx := context.Background()
	a := newAccounts(t)
	for _, u := range []string{"alice", "bob", "carol"} {
		if _, err := a.AddUser(ctx, u, ""); err != nil {
			t.Fatal(err)
		}
	}
	bob, _ := a.Ref(ctx, "bob")
	addSession(t, a.st, bob, "b1")
	for _, step := range []struct {
		name   string
		user   string
		change func() error
	}{
		{"passwd", "alice", func() error { return a.SetPassword(ctx, "alice", "a new password") }},
		{"token", "alice", func() error { _, err := a.RotateToken(ctx, "alice"); return err }},
		{"password cleared", "alice", func() error { return a.SetPassword(ctx, "alice", "") }},
		{"rm", "carol", func() error { return a.RemoveUser(ctx, "carol") }},
	} {
		u, err := a.Ref(ctx, step.user)
		if err != nil {
			t.Fatal(err)
		}
		addSession(t, a.st, u, step.name)
		link, err := a.NewLoginLink(ctx, step.user, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if err := step.change(); err != nil {
			t.Fatal(err)
		}
		if _, err := a.st.WebSessionBySecret(ctx, "hash-"+step.name); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: the session is still there (%v)", step.name, err)
		}
		if _, ok := a.ByLoginLink(ctx, link); ok {
			t.Errorf("%s: an unspent login link still works", step.name)
		}
		if got := sessionIDs(t, a, "bob"); len(got) != 1 {
			t.Errorf("%s of %s touched bob's sessions: %v", step.name, step.user, got)
		}
	}
	for _, c := range []func() error{
		func() error { return a.SetPassword(ctx, "nobody", "long enough") },
		func() error { _, err := a.RotateToken(ctx, "nobody"); return err },
		func() error { return a.RemoveUser(ctx, "nobody") },
	} {
		if err := c(); !errors.Is(err, api.ErrNotFound) {
			t.Errorf("a change to an unknown user: %v", err)
		}
	}

	// carol again: a new id, and no session of the old one.
	if _, err := a.AddUser(ctx, "carol", ""); err != nil {
		t.Fatal(err)
	}
	c2, _ := a.Ref(ctx, "carol")
	if got := sessionIDs(t, a, "carol"); len(got) != 0 {
		t.Fatalf("the new carol has sessions %v", got)
	}
	var oldID string
	a.db.QueryRow(`SELECT id FROM users WHERE name = 'carol'`).Scan(&oldID)
	if c2.ID == "" || c2.ID != oldID {
		t.Fatalf("carol's ref %+v, row %q", c2, oldID)
	}
}

// TestRemovedUserLeavesNothingByName: push subscriptions and the
// notification log, kept by name, go with the user.
func TestRemovedUserLeavesNothingByName(t *testing.T) {
	ctx := context.Background()
	a := newAccounts(t)
	a.AddUser(ctx, "carol", "")
	a.st.PutPushSubscription(ctx, store.PushSubscription{Endpoint: "https://push.example/1", P256dh: "k", Auth: "a", User: "carol", CreatedAt: time.Now()})
	a.st.AddNotification(ctx, store.Notification{User: "carol", Time: time.Now(), SessionID: "s", SessionName: "n", Reason: "review"})
	if err := a.RemoveUser(ctx, "carol"); err != nil {
		t.Fatal(err)
	}
	a.AddUser(ctx, "carol", "")
	if subs, _ := a.st.PushSubscriptions(ctx, "carol"); len(subs) != 0 {
		t.Errorf("the new carol gets the old one's push subscriptions: %+v", subs)
	}
	if log, _ := a.st.Notifications(ctx, "carol", 10); len(log) != 0 {
		t.Errorf("the new carol sees the old one's notifications: %+v", log)
	}
}

// TestLoginLinks: a link works once, before it expires, and is kept only
// as a hash.
func TestLoginLinks(t *testing.T) {
	ctx := context.Background()
	a := newAccounts(t)
	a.AddUser(ctx, "alice", "")
	link, err := a.NewLoginLink(ctx, "alice", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	var stored int
	a.db.QueryRow(`SELECT count(*) FROM login_links WHERE hash = ?`, link).Scan(&stored)
	if stored != 0 {
		t.Fatal("the link is stored in plain text")
	}
	if u, ok := a.ByLoginLink(ctx, link); !ok || u.Name != "alice" {
		t.Fatalf("first use: %+v %v", u, ok)
	}
	if _, ok := a.ByLoginLink(ctx, link); ok {
		t.Fatal("a login link worked twice")
	}
	short, _ := a.NewLoginLink(ctx, "alice", time.Millisecond)
	for deadline := time.Now().Add(2 * time.Millisecond); time.Now().Before(deadline); {
		time.Sleep(time.Until(deadline))
	}
	if _, ok := a.ByLoginLink(ctx, short); ok {
		t.Fatal("an expired login link worked")
	}
	var left int
	a.db.QueryRow(`SELECT count(*) FROM login_links`).Scan(&left)
	if left != 0 {
		t.Fatalf("%d spent or expired links are still stored", left)
	}
	for _, life := range []time.Duration{0, -time.Second, MaxLoginLinkLife + time.Second} {
		if _, err := a.NewLoginLink(ctx, "alice", life); !errors.Is(err, api.ErrBadRequest) {
			t.Errorf("a link for %v: %v", life, err)
		}
	}
	if _, err := a.NewLoginLink(ctx, "nobody", time.Minute); !errors.Is(err, api.ErrNotFound) {
		t.Errorf("a link for an unknown user: %v", err)
	}
	// A link is not a token, and a token is not a link.
	tok, _ := a.RotateToken(ctx, "alice")
	l2, _ := a.NewLoginLink(ctx, "alice", time.Minute)
	if _, ok := a.ByToken(ctx, l2); ok {
		t.Error("a login link worked as an API token")
	}
	if _, ok := a.ByLoginLink(ctx, tok); ok {
		t.Error("an API token worked as a login link")
	}
}

// TestLocalAccountsMoveOldSecrets: a data directory of an older corral
// serve kept the access token and the password in plain text in kv. The
// password hash moves as it is, the token is hashed and stays the API
// token, and neither is left in kv; the old token is no login link.
func TestLocalAccountsMoveOldSecrets(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(filepath.Join(t.TempDir(), "corral.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	hash, err := hashPassword("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	const old = "Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2FycGx5" // no prefix, as before
	st.Set(ctx, "web.access_token", []byte(old))
	st.Set(ctx, "web.password", hash)

	a, err := LocalAccounts(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if a.MultiUser() || a.User() != identity.Local || !a.PasswordSet(ctx) {
		t.Fatalf("single-user flags: multi %v user %q password %v", a.MultiUser(), a.User(), a.PasswordSet(ctx))
	}
	if u, ok := a.ByToken(ctx, old); !ok || u.Name != identity.Local {
		t.Fatalf("the old token as an API token: %+v %v", u, ok)
	}
	if u, ok := a.ByPassword(ctx, "whoever", "correct horse"); !ok || u.Name != identity.Local {
		t.Fatalf("the old password: %+v %v", u, ok)
	}
	if _, ok := a.ByLoginLink(ctx, old); ok {
		t.Fatal("the old token still logs in as a link")
	}
	for _, k := range []string{"web.access_token", "web.password", "web.cookie_key", "web.generation"} {
		if _, err := st.Get(ctx, k); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("kv %s is still there (%v)", k, err)
		}
	}
	var plain int
	st.DB().QueryRow(`SELECT count(*) FROM users WHERE token_hash = ?`, old).Scan(&plain)
	if plain != 0 {
		t.Fatal("the token is stored in plain text")
	}
	// Again: nothing changes, the id stays.
	id1, _ := a.Ref(ctx, identity.Local)
	a2, err := LocalAccounts(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	id2, _ := a2.Ref(ctx, identity.Local)
	if id1 != id2 {
		t.Fatalf("the local user's id changed: %v -> %v", id1, id2)
	}
	if _, ok := a2.ByToken(ctx, old); !ok {
		t.Fatal("the token was lost by a second start")
	}
	// A rotation replaces it.
	if _, err := a2.RotateToken(ctx, identity.Local); err != nil {
		t.Fatal(err)
	}
	if _, ok := a2.ByToken(ctx, old); ok {
		t.Fatal("the old token works after a rotation")
	}
}

// TestLocalAccountsRefuseAHub: the single machine's commands on a hub's
// data directory do not add a user named local to it.
func TestLocalAccountsRefuseAHub(t *testing.T) {
	ctx := context.Background()
	a := newAccounts(t)
	a.AddUser(ctx, "alice", "")
	if _, err := LocalAccounts(ctx, a.st); err == nil {
		t.Fatal("LocalAccounts took a hub's database")
	}
	if _, err := a.Ref(ctx, identity.Local); !errors.Is(err, api.ErrNotFound) {
		t.Fatalf("a local user was added to the hub: %v", err)
	}
}
