package hub

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/store"
)

func newAccounts(t *testing.T) *Accounts {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "hub.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return NewAccounts(st)
}

func TestUsersAndTokens(t *testing.T) {
	ctx := context.Background()
	a := newAccounts(t)
	tok, err := a.AddUser(ctx, "alice", "correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tok, "cu_") {
		t.Fatalf("token %q", tok)
	}
	if _, err := a.AddUser(ctx, "alice", ""); !errors.Is(err, api.ErrConflict) {
		t.Fatalf("duplicate user: %v", err)
	}
	for _, bad := range []string{"", "a b", "x/y", strings.Repeat("a", 65)} {
		if _, err := a.AddUser(ctx, bad, ""); !errors.Is(err, api.ErrBadRequest) {
			t.Errorf("user name %q: %v", bad, err)
		}
	}
	if _, err := a.AddUser(ctx, "bob", "short"); !errors.Is(err, api.ErrBadRequest) {
		t.Errorf("short password: %v", err)
	}
	if u, ok := a.ByToken(ctx, tok); !ok || u.Name != "alice" {
		t.Fatalf("ByToken %q %v", u, ok)
	}
	if _, ok := a.ByToken(ctx, tok+"x"); ok {
		t.Fatal("a wrong token matched")
	}
	if u, ok := a.ByPassword(ctx, "alice", "correct horse"); !ok || u.Name != "alice" {
		t.Fatal("password login failed")
	}
	for _, c := range [][2]string{{"alice", "wrong"}, {"nobody", "correct horse"}, {"alice", ""}} {
		if _, ok := a.ByPassword(ctx, c[0], c[1]); ok {
			t.Errorf("login %v accepted", c)
		}
	}
	tok2, err := a.RotateToken(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := a.ByToken(ctx, tok); ok {
		t.Fatal("the rotated-out token still works")
	}
	if u, ok := a.ByToken(ctx, tok2); !ok || u.Name != "alice" {
		t.Fatal("the new token does not work")
	}
	if !a.PasswordSet(ctx) || !a.MultiUser() {
		t.Fatal("login form flags")
	}
}

func TestDevices(t *testing.T) {
	ctx := context.Background()
	a := newAccounts(t)
	a.AddUser(ctx, "alice", "")
	a.AddUser(ctx, "bob", "")
	d, tok, err := a.AddDevice(ctx, "alice", "laptop")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.AddDevice(ctx, "alice", "laptop"); !errors.Is(err, api.ErrConflict) {
		t.Fatalf("duplicate device: %v", err)
	}
	if _, _, err := a.AddDevice(ctx, "carol", "x"); !errors.Is(err, api.ErrNotFound) {
		t.Fatalf("device of an unknown user: %v", err)
	}
	if _, _, err := a.AddDevice(ctx, "bob", "laptop"); err != nil {
		t.Fatalf("bob's laptop: %v", err)
	}
	got, ok := a.DeviceByToken(ctx, tok)
	if !ok || got.ID != d.ID || got.Owner != "alice" {
		t.Fatalf("DeviceByToken %+v %v", got, ok)
	}
	// A user token is not a device token.
	utok, _ := a.RotateToken(ctx, "alice")
	if _, ok := a.DeviceByToken(ctx, utok); ok {
		t.Fatal("a user token opened a device link")
	}
	if _, err := a.RevokeDevice(ctx, "alice", "laptop"); err != nil {
		t.Fatal(err)
	}
	if _, ok := a.DeviceByToken(ctx, tok); ok {
		t.Fatal("a revoked token still works")
	}
	if list, _ := a.Devices(ctx, "alice"); len(list) != 0 {
		t.Fatalf("alice's devices after revoking %+v", list)
	}
	if _, err := a.RevokeDevice(ctx, "alice", "laptop"); !errors.Is(err, api.ErrNotFound) {
		t.Fatalf("revoking twice: %v", err)
	}
	// The name is free again; the new device has a new token.
	d2, tok2, err := a.AddDevice(ctx, "alice", "laptop")
	if err != nil || d2.ID == d.ID || tok2 == tok {
		t.Fatalf("re-adding: %+v %v", d2, err)
	}
	// Removing a user revokes their devices.
	_, btok, _ := a.AddDevice(ctx, "bob", "box")
	if err := a.RemoveUser(ctx, "bob"); err != nil {
		t.Fatal(err)
	}
	if _, ok := a.DeviceByToken(ctx, btok); ok {
		t.Fatal("a removed user's device still connects")
	}
}
