package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	_ "modernc.org/sqlite"
)

// TestUsersGetIDs: the users of a hub made before stable ids get one each
// when the database is opened by this version.
func TestUsersGetIDs(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range migrations[:3] {
		if _, err := db.Exec(m); err != nil {
			t.Fatal(err)
		}
		db.Exec(fmt.Sprintf("PRAGMA user_version = %d", i+1))
	}
	for _, u := range []string{"alice", "bob"} {
		if _, err := db.Exec(`INSERT INTO users (name, token_hash, created_at) VALUES (?, ?, 1)`, u, "t-"+u); err != nil {
			t.Fatal(err)
		}
	}
	db.Exec(`INSERT INTO kv (key, value, updated_at) VALUES ('web.generation', '1', 1), ('web.cookie_key', 'k', 1)`)
	db.Close()

	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ids := map[string]string{}
	rows, err := s.db.QueryContext(ctx, `SELECT name, id FROM users`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		var id sql.NullString
		rows.Scan(&name, &id)
		if !id.Valid || len(id.String) != 32 {
			t.Errorf("%s got id %v", name, id)
		}
		ids[name] = id.String
	}
	rows.Close()
	if len(ids) != 2 || ids["alice"] == ids["bob"] {
		t.Fatalf("ids %v", ids)
	}
	for _, k := range []string{"web.generation", "web.cookie_key"} {
		if _, err := s.Get(ctx, k); !errors.Is(err, ErrNotFound) {
			t.Errorf("kv %s left: %v", k, err)
		}
	}

	// A session of alice's: found by its secret's hash, with her name;
	// gone with her.
	now := time.Now()
	ws := WebSession{ID: "s1", UserID: ids["alice"], CreatedAt: now, LastSeen: now, ExpiresAt: now.Add(time.Hour)}
	if err := s.AddWebSession(ctx, ws, "h1", 50); err != nil {
		t.Fatal(err)
	}
	got, err := s.WebSessionBySecret(ctx, "h1")
	if err != nil || got.User != "alice" || got.ID != "s1" {
		t.Fatalf("by secret: %+v %v", got, err)
	}
	if err := s.AddWebSession(ctx, WebSession{ID: "s2", UserID: "no such id", CreatedAt: now, LastSeen: now, ExpiresAt: now.Add(time.Hour)}, "h2", 50); err == nil {
		t.Error("a session of no user was stored")
	}
	if _, err := s.db.ExecContext(ctx, `DELETE FROM users WHERE name = 'alice'`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WebSessionBySecret(ctx, "h1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a removed user's session: %v", err)
	}
}

// TestWebSessionsBounded: a user keeps at most keep sessions, the most
// recently used; expired ones are dropped.
func TestWebSessionsBounded(t *testing.T) {
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.db.ExecContext(ctx, `INSERT INTO users (id, name, created_at) VALUES ('u1', 'alice', 1)`)
	t0 := time.Now()
	s.AddWebSession(ctx, WebSession{ID: "expired", UserID: "u1", CreatedAt: t0.Add(-2 * time.Hour), LastSeen: t0.Add(-2 * time.Hour), ExpiresAt: t0.Add(-time.Hour)}, "hx", 3)
	for i := range 5 {
		at := t0.Add(time.Duration(i) * time.Second)
		if err := s.AddWebSession(ctx, WebSession{ID: fmt.Sprint("s", i), UserID: "u1", CreatedAt: at, LastSeen: at, ExpiresAt: at.Add(time.Hour)}, fmt.Sprint("h", i), 3); err != nil {
			t.Fatal(err)
		}
	}
	list, err := s.WebSessions(ctx, "u1")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, ws := range list {
		ids = append(ids, ws.ID)
	}
	if fmt.Sprint(ids) != "[s4 s3 s2]" {
		t.Fatalf("kept %v", ids)
	}
	if err := s.EndWebSession(ctx, "u1", "s3"); err != nil {
		t.Fatal(err)
	}
	if err := s.EndWebSession(ctx, "u1", "s3"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("ending twice: %v", err)
	}
	if err := s.EndWebSession(ctx, "someone else", "s4"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("ending another user's session: %v", err)
	}
}
