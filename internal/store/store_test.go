package store

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestSessionsRoundTrip(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("database mode %v", fi.Mode())
	}
	now := time.Unix(1700000000, 123)
	r := Session{ID: "a1", Name: "proj", Dir: "/tmp/p q", Kind: "claude", Args: []string{"--model", "x"},
		ClaudeSessionID: "c-1", Status: "busy", State: json.RawMessage(`{"x":1}`), CreatedAt: now, UpdatedAt: now}
	if err := s.PutSession(ctx, r); err != nil {
		t.Fatal(err)
	}
	r.Status = "idle"
	r.Name = "renamed"
	if err := s.PutSession(ctx, r); err != nil {
		t.Fatal(err)
	}
	if err := s.PutSession(ctx, Session{ID: "b2", Name: "b", Dir: "/", Kind: "shell", CreatedAt: now.Add(time.Second), UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	// Reopen: everything is there.
	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "a1" || got[0].Status != "idle" || got[0].Name != "renamed" ||
		got[0].Args[1] != "x" || string(got[0].State) != `{"x":1}` || !got[0].CreatedAt.Equal(now) {
		t.Fatalf("got %+v", got)
	}
	if string(got[1].State) != "{}" || len(got[1].Args) != 0 {
		t.Fatalf("defaults %+v", got[1])
	}
	if err := s.DeleteSession(ctx, "a1"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Sessions(ctx); len(got) != 1 {
		t.Fatalf("after delete %+v", got)
	}
}

func TestKV(t *testing.T) {
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Get(ctx, "k"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("err %v", err)
	}
	v, err := s.SetIfAbsent(ctx, "token", []byte("first"))
	if err != nil || string(v) != "first" {
		t.Fatal(v, err)
	}
	v, err = s.SetIfAbsent(ctx, "token", []byte("second"))
	if err != nil || string(v) != "first" {
		t.Fatalf("SetIfAbsent overwrote: %q %v", v, err)
	}
	if err := s.Set(ctx, "token", []byte("third")); err != nil {
		t.Fatal(err)
	}
	if v, _ := s.Get(ctx, "token"); string(v) != "third" {
		t.Fatalf("got %q", v)
	}
	if err := s.Delete(ctx, "token"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "token"); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := Open(path); err == nil {
		t.Fatal("opened a database from the future")
	}
}

func TestGarbageFileIsAClearError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	os.WriteFile(path, []byte("this is not a database, just some text that is long enough to matter......"), 0o600)
	if _, err := Open(path); err == nil {
		t.Fatal("opened garbage")
	}
}

func TestPushAndNotifications(t *testing.T) {
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p := PushSubscription{Endpoint: "https://push.example/1", P256dh: "k", Auth: "a", CreatedAt: time.Unix(5, 0)}
	if err := s.PutPushSubscription(ctx, p); err != nil {
		t.Fatal(err)
	}
	p.Auth = "b"
	if err := s.PutPushSubscription(ctx, p); err != nil {
		t.Fatal(err)
	}
	subs, err := s.PushSubscriptions(ctx, "")
	if err != nil || len(subs) != 1 || subs[0].Auth != "b" {
		t.Fatalf("subs %+v %v", subs, err)
	}
	if err := s.DeletePushSubscription(ctx, p.Endpoint); err != nil {
		t.Fatal(err)
	}
	if subs, _ := s.PushSubscriptions(ctx, ""); len(subs) != 0 {
		t.Fatalf("after delete %+v", subs)
	}
	for i := range keepNotifications + 5 {
		if _, err := s.AddNotification(ctx, Notification{Time: time.Unix(int64(i), 0), SessionID: "s", SessionName: "n", Reason: "review"}); err != nil {
			t.Fatal(err)
		}
	}
	ns, err := s.Notifications(ctx, "", 2000)
	if err != nil {
		t.Fatal(err)
	}
	if len(ns) != keepNotifications || ns[0].Time.Unix() != keepNotifications+4 {
		t.Fatalf("%d notifications, newest %v", len(ns), ns[0].Time)
	}
}
