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
