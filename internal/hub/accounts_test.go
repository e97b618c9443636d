package hub

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/devicekey"
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
	d, tok, err := a.AddDevice(ctx, "alice", "laptop", 0)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tok, "ce_") || d.EnrollExpires.Before(time.Now().Add(59*time.Minute)) {
		t.Fatalf("enrolment token %q expires %v", tok, d.EnrollExpires)
	}
	if _, _, err := a.AddDevice(ctx, "alice", "laptop", 0); !errors.Is(err, api.ErrConflict) {
		t.Fatalf("duplicate device: %v", err)
	}
	if _, _, err := a.AddDevice(ctx, "carol", "x", 0); !errors.Is(err, api.ErrNotFound) {
		t.Fatalf("device of an unknown user: %v", err)
	}
	if _, _, err := a.AddDevice(ctx, "bob", "laptop", 0); err != nil {
		t.Fatalf("bob's laptop: %v", err)
	}
	for _, ttl := range []time.Duration{time.Second, 8 * 24 * time.Hour, -time.Hour} {
		if _, _, err := a.AddDevice(ctx, "bob", "x", ttl); !errors.Is(err, api.ErrBadRequest) {
			t.Errorf("ttl %v: %v", ttl, err)
		}
	}
	got, ok := a.DeviceByEnrollToken(ctx, tok)
	if !ok || got.ID != d.ID || got.Owner != "alice" {
		t.Fatalf("DeviceByEnrollToken %+v %v", got, ok)
	}
	// A user token is not an enrolment token.
	utok, _ := a.RotateToken(ctx, "alice")
	if _, ok := a.DeviceByEnrollToken(ctx, utok); ok {
		t.Fatal("a user token enrols a device")
	}
	if _, err := a.RevokeDevice(ctx, "alice", "laptop"); err != nil {
		t.Fatal(err)
	}
	if _, ok := a.DeviceByEnrollToken(ctx, tok); ok {
		t.Fatal("a revoked device's token still works")
	}
	if list, _ := a.Devices(ctx, "alice"); len(list) != 0 {
		t.Fatalf("alice's devices after revoking %+v", list)
	}
	if _, err := a.RevokeDevice(ctx, "alice", "laptop"); !errors.Is(err, api.ErrNotFound) {
		t.Fatalf("revoking twice: %v", err)
	}
	// The name is free again; the new device has a new token.
	d2, tok2, err := a.AddDevice(ctx, "alice", "laptop", 0)
	if err != nil || d2.ID == d.ID || tok2 == tok {
		t.Fatalf("re-adding: %+v %v", d2, err)
	}
	// Removing a user revokes their devices.
	_, btok, _ := a.AddDevice(ctx, "bob", "box", 0)
	if err := a.RemoveUser(ctx, "bob"); err != nil {
		t.Fatal(err)
	}
	if _, ok := a.DeviceByEnrollToken(ctx, btok); ok {
		t.Fatal("a removed user's device still enrols")
	}
}

func testKey(t *testing.T) *devicekey.Key {
	t.Helper()
	k, _, err := devicekey.LoadOrCreate(filepath.Join(t.TempDir(), "device.key"))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// An enrolment token binds one key, once; then the device is known by its
// key, and the token is spent. A key is one device's only.
func TestEnrolment(t *testing.T) {
	ctx := context.Background()
	a := newAccounts(t)
	a.AddUser(ctx, "alice", "")
	d, tok, _ := a.AddDevice(ctx, "alice", "laptop", 0)
	k, k2 := testKey(t), testKey(t)
	if _, ok := a.DeviceByKey(ctx, k.PublicString()); ok {
		t.Fatal("an unknown key found a device")
	}
	if err := a.BindKey(ctx, d.ID, "ce_wrong", k.PublicString()); !errors.Is(err, api.ErrUnauthorized) {
		t.Fatalf("a wrong token: %v", err)
	}
	if err := a.BindKey(ctx, d.ID, tok, "not a key"); !errors.Is(err, api.ErrBadRequest) {
		t.Fatalf("a bad key: %v", err)
	}
	if err := a.BindKey(ctx, d.ID, tok, k.PublicString()); err != nil {
		t.Fatal(err)
	}
	got, ok := a.DeviceByKey(ctx, k.PublicString())
	if !ok || got.ID != d.ID || got.Key != k.Fingerprint() || !got.EnrollExpires.IsZero() {
		t.Fatalf("DeviceByKey %+v %v", got, ok)
	}
	// Spent: it binds nothing more, and finds nothing.
	if err := a.BindKey(ctx, d.ID, tok, k2.PublicString()); !errors.Is(err, api.ErrUnauthorized) {
		t.Fatalf("a spent token: %v", err)
	}
	if _, ok := a.DeviceByEnrollToken(ctx, tok); ok {
		t.Fatal("a spent token finds its device")
	}
	// Another device cannot take the key.
	d2, tok2, _ := a.AddDevice(ctx, "alice", "box", 0)
	if err := a.BindKey(ctx, d2.ID, tok2, k.PublicString()); !errors.Is(err, api.ErrConflict) || !strings.Contains(err.Error(), "alice/laptop") {
		t.Fatalf("a key of another device: %v", err)
	}
	// Enrolling again: the old key works until the new token is used.
	_, tok3, err := a.Enroll(ctx, "alice", "laptop", 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := a.DeviceByKey(ctx, k.PublicString()); !ok {
		t.Fatal("enrolling again cut the old key off before the token was used")
	}
	if err := a.BindKey(ctx, d.ID, tok3, k2.PublicString()); err != nil {
		t.Fatal(err)
	}
	if _, ok := a.DeviceByKey(ctx, k.PublicString()); ok {
		t.Fatal("the old key still works")
	}
	if got, ok := a.DeviceByKey(ctx, k2.PublicString()); !ok || got.ID != d.ID {
		t.Fatalf("the new key: %+v %v", got, ok)
	}
	if _, _, err := a.Enroll(ctx, "alice", "nosuch", 0); !errors.Is(err, api.ErrNotFound) {
		t.Fatalf("enrolling a device that does not exist: %v", err)
	}
	// Revoked: the key finds nothing.
	a.RevokeDevice(ctx, "alice", "laptop")
	if _, ok := a.DeviceByKey(ctx, k2.PublicString()); ok {
		t.Fatal("a revoked device's key still works")
	}
}

// An enrolment token expires.
func TestEnrolmentExpires(t *testing.T) {
	ctx := context.Background()
	a := newAccounts(t)
	a.AddUser(ctx, "alice", "")
	d, tok, _ := a.AddDevice(ctx, "alice", "laptop", time.Minute)
	if _, err := a.db.ExecContext(ctx, `UPDATE devices SET enroll_expires = ? WHERE id = ?`, time.Now().Add(-time.Second).UnixNano(), d.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok := a.DeviceByEnrollToken(ctx, tok); ok {
		t.Fatal("an expired token finds its device")
	}
	if err := a.BindKey(ctx, d.ID, tok, testKey(t).PublicString()); !errors.Is(err, api.ErrUnauthorized) {
		t.Fatalf("an expired token binds: %v", err)
	}
}

// Two connections racing with one token: one key is bound.
func TestEnrolmentRace(t *testing.T) {
	ctx := context.Background()
	a := newAccounts(t)
	a.AddUser(ctx, "alice", "")
	d, tok, _ := a.AddDevice(ctx, "alice", "laptop", 0)
	keys := []*devicekey.Key{testKey(t), testKey(t), testKey(t), testKey(t)}
	errs := make(chan error, len(keys))
	for _, k := range keys {
		go func() { errs <- a.BindKey(ctx, d.ID, tok, k.PublicString()) }()
	}
	won := 0
	for range keys {
		if err := <-errs; err == nil {
			won++
		} else if !errors.Is(err, api.ErrUnauthorized) {
			t.Errorf("a loser: %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d keys bound with one token", won)
	}
}

// A device of link protocol 1 (a cd_ token hash, no key) is found for its
// message, and never let in.
func TestLegacyDevice(t *testing.T) {
	ctx := context.Background()
	a := newAccounts(t)
	a.AddUser(ctx, "alice", "")
	old := "cd_" + strings.Repeat("x", 43)
	if _, err := a.db.ExecContext(ctx, `INSERT INTO devices (id, name, owner, token_hash, created_at) VALUES ('dold', 'laptop', 'alice', ?, 1)`, hashToken(old)); err != nil {
		t.Fatal(err)
	}
	d, ok := a.LegacyDevice(ctx, old)
	if !ok || d.Name != "laptop" || d.Key != "" {
		t.Fatalf("LegacyDevice %+v %v", d, ok)
	}
	if _, ok := a.DeviceByEnrollToken(ctx, old); ok {
		t.Fatal("an old device token enrols")
	}
	// It enrols like any other, and the old token is forgotten.
	_, tok, err := a.Enroll(ctx, "alice", "laptop", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.BindKey(ctx, "dold", tok, testKey(t).PublicString()); err != nil {
		t.Fatal(err)
	}
	if _, ok := a.LegacyDevice(ctx, old); ok {
		t.Fatal("the old token is still on record after enrolling")
	}
}
