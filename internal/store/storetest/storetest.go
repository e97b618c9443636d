// Package storetest is the conformance suite of store.Store: one set of
// tests that every implementation (SQLite, PostgreSQL) passes, so a hub
// behaves the same on either. It covers every method, its error cases,
// the races of several processes on one database (two hubs enrolling with
// one token, claiming one session id, spending one login link, making one
// secret), and the migrations.
package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/store"
)

// DB is one empty database of the implementation under test.
type DB struct {
	// Open opens a handle on the database, migrating it if need be. Every
	// call is a new handle with connections of its own, as another
	// process would hold.
	Open func(ctx context.Context) (store.Store, error)
	// SetSchema marks the database (no handle open) as written by a corral
	// whose schema is v.
	SetSchema func(ctx context.Context, v int) error
	// Schema is the schema version this build writes.
	Schema int
}

// Run runs the suite; newDB makes a new empty database for each test.
func Run(t *testing.T, newDB func(testing.TB) DB) {
	tests := []struct {
		name string
		fn   func(*testing.T, DB)
	}{
		{"Users", testUsers},
		{"SoleUser", testSoleUser},
		{"UserSecretsEndLogins", testUserSecretsEndLogins},
		{"RemoveUser", testRemoveUser},
		{"Devices", testDevices},
		{"BindKey", testBindKey},
		{"DeviceSessions", testDeviceSessions},
		{"DeviceSessionClaims", testDeviceSessionClaims},
		{"WebSessions", testWebSessions},
		{"LoginLinks", testLoginLinks},
		{"Push", testPush},
		{"Notifications", testNotifications},
		{"KV", testKV},
		{"RaceEnrol", testRaceEnrol},
		{"RaceClaim", testRaceClaim},
		{"RaceLoginLink", testRaceLoginLink},
		{"RaceSecrets", testRaceSecrets},
		{"RaceAddUser", testRaceAddUser},
		{"RaceWrites", testRaceWrites},
		{"Migrations", testMigrations},
		{"MigrationsAtOnce", testMigrationsAtOnce},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, newDB(t))
		})
	}
}

var ctx = context.Background()

// t0 is a time that every implementation keeps exactly (whole
// microseconds).
var t0 = time.Unix(1700000000, 0)

func open(t *testing.T, db DB) store.Store {
	t.Helper()
	s, err := db.Open(ctx)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: %v, want %v", what, err, want)
	}
}

func addUser(t *testing.T, s store.Store, name string) store.User {
	t.Helper()
	u := store.User{ID: "id-" + name, Name: name, TokenHash: "tok-" + name, CreatedAt: t0}
	must(t, s.AddUser(ctx, u))
	return u
}

func addDevice(t *testing.T, s store.Store, owner, name string) store.DeviceRecord {
	t.Helper()
	d := store.DeviceRecord{ID: "dev-" + owner + "-" + name, Name: name, Owner: owner, CreatedAt: t0, EnrollExpires: t0.Add(time.Hour)}
	must(t, s.AddDevice(ctx, d, "enroll-"+d.ID))
	return d
}

func addWebSession(t *testing.T, s store.Store, u store.User, id string) {
	t.Helper()
	must(t, s.AddWebSession(ctx, store.WebSession{ID: id, UserID: u.ID, CreatedAt: t0, LastSeen: t0, ExpiresAt: t0.Add(time.Hour)}, "secret-"+id, 50))
}

func testUsers(t *testing.T, db DB) {
	s := open(t, db)
	bob := store.User{ID: "id-bob", Name: "bob", PasswordHash: []byte("bcrypt-of-bob"), TokenHash: "tok-bob", CreatedAt: t0}
	must(t, s.AddUser(ctx, bob))
	alice := addUser(t, s, "alice")
	must(t, s.AddUser(ctx, store.User{ID: "id-carol", Name: "carol", CreatedAt: t0})) // no token, no password
	must(t, s.AddUser(ctx, store.User{ID: "id-dave", Name: "dave", CreatedAt: t0}))   // and another without a token

	wantErr(t, "a second bob", s.AddUser(ctx, store.User{ID: "id-bob2", Name: "bob", CreatedAt: t0}), store.ErrConflict)
	wantErr(t, "a taken token hash", s.AddUser(ctx, store.User{ID: "id-eve", Name: "eve", TokenHash: "tok-bob", CreatedAt: t0}), store.ErrConflict)
	wantErr(t, "a taken id", s.AddUser(ctx, store.User{ID: "id-bob", Name: "eve", CreatedAt: t0}), store.ErrConflict)

	got, err := s.UserByName(ctx, "bob")
	if err != nil || got.ID != bob.ID || got.Name != "bob" || string(got.PasswordHash) != "bcrypt-of-bob" || got.TokenHash != "tok-bob" || !got.CreatedAt.Equal(t0) {
		t.Errorf("UserByName(bob) = %+v, %v", got, err)
	}
	if got, err := s.UserByName(ctx, "carol"); err != nil || got.PasswordHash != nil || got.TokenHash != "" {
		t.Errorf("UserByName(carol) = %+v, %v", got, err)
	}
	_, err = s.UserByName(ctx, "nobody")
	wantErr(t, "UserByName(nobody)", err, store.ErrNotFound)

	if ref, err := s.UserByTokenHash(ctx, "tok-alice"); err != nil || ref != (store.UserRef{ID: alice.ID, Name: "alice"}) {
		t.Errorf("UserByTokenHash = %+v, %v", ref, err)
	}
	for _, h := range []string{"tok-nobody", ""} {
		_, err := s.UserByTokenHash(ctx, h)
		wantErr(t, fmt.Sprintf("UserByTokenHash(%q)", h), err, store.ErrNotFound)
	}

	list, err := s.ListUsers(ctx)
	must(t, err)
	var names []string
	for _, u := range list {
		names = append(names, u.Name)
	}
	if fmt.Sprint(names) != "[alice bob carol dave]" {
		t.Errorf("ListUsers = %v", names)
	}

	for name, want := range map[string]bool{"": true, "bob": true, "alice": false, "nobody": false} {
		if got, err := s.HasPassword(ctx, name); err != nil || got != want {
			t.Errorf("HasPassword(%q) = %v, %v, want %v", name, got, err, want)
		}
	}
	must(t, s.SetPasswordHash(ctx, "bob", nil))
	if got, _ := s.HasPassword(ctx, ""); got {
		t.Error("HasPassword after the only password was removed")
	}
	must(t, s.SetPasswordHash(ctx, "alice", []byte("bcrypt-of-alice")))
	if got, _ := s.UserByName(ctx, "alice"); string(got.PasswordHash) != "bcrypt-of-alice" {
		t.Errorf("alice's password hash: %q", got.PasswordHash)
	}
	wantErr(t, "SetPasswordHash(nobody)", s.SetPasswordHash(ctx, "nobody", []byte("x")), store.ErrNotFound)

	must(t, s.SetTokenHash(ctx, "alice", "tok-alice-2"))
	if _, err := s.UserByTokenHash(ctx, "tok-alice"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the old token after SetTokenHash: %v", err)
	}
	if ref, err := s.UserByTokenHash(ctx, "tok-alice-2"); err != nil || ref.Name != "alice" {
		t.Errorf("the new token: %+v, %v", ref, err)
	}
	wantErr(t, "SetTokenHash to bob's", s.SetTokenHash(ctx, "alice", "tok-bob"), store.ErrConflict)
	wantErr(t, "SetTokenHash(nobody)", s.SetTokenHash(ctx, "nobody", "x"), store.ErrNotFound)
	must(t, s.SetTokenHash(ctx, "alice", ""))
	must(t, s.SetTokenHash(ctx, "bob", "")) // two users without a token
}

func testSoleUser(t *testing.T, db DB) {
	s := open(t, db)
	u, err := s.SoleUser(ctx, store.User{ID: "id-local", Name: "local", CreatedAt: t0})
	if err != nil || u.ID != "id-local" || u.Name != "local" {
		t.Fatalf("SoleUser = %+v, %v", u, err)
	}
	// Again, with another id: the user that exists is kept.
	u, err = s.SoleUser(ctx, store.User{ID: "id-local-2", Name: "local", CreatedAt: t0})
	if err != nil || u.ID != "id-local" {
		t.Fatalf("SoleUser again = %+v, %v", u, err)
	}
	_, err = s.SoleUser(ctx, store.User{ID: "id-other", Name: "other", CreatedAt: t0})
	wantErr(t, "SoleUser of another name", err, store.ErrConflict)
	if _, err := s.UserByName(ctx, "other"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a refused SoleUser added its user: %v", err)
	}

	// A hub's database: someone else is there.
	addUser(t, s, "alice")
	_, err = s.SoleUser(ctx, store.User{ID: "id-local", Name: "local", CreatedAt: t0})
	wantErr(t, "SoleUser on a hub's database", err, store.ErrConflict)
}

func testUserSecretsEndLogins(t *testing.T, db DB) {
	s := open(t, db)
	alice, bob := addUser(t, s, "alice"), addUser(t, s, "bob")
	check := func(what string, wantAlice int) {
		t.Helper()
		l, err := s.WebSessions(ctx, alice.ID)
		must(t, err)
		if len(l) != wantAlice {
			t.Errorf("%s: alice has %d browser sessions, want %d", what, len(l), wantAlice)
		}
		if l, _ := s.WebSessions(ctx, bob.ID); len(l) != 1 {
			t.Errorf("%s: bob has %d browser sessions, want 1", what, len(l))
		}
	}
	addWebSession(t, s, bob, "b1")
	for i, change := range []func() error{
		func() error { return s.SetPasswordHash(ctx, "alice", []byte("new")) },
		func() error { return s.SetTokenHash(ctx, "alice", "tok-new") },
	} {
		addWebSession(t, s, alice, fmt.Sprint("a", i, "x"))
		addWebSession(t, s, alice, fmt.Sprint("a", i, "y"))
		must(t, s.AddLoginLink(ctx, fmt.Sprint("link", i), alice.ID, t0, t0.Add(time.Minute)))
		check("before", 2)
		must(t, change())
		check("after a new secret", 0)
		if _, err := s.SpendLoginLink(ctx, fmt.Sprint("link", i), t0); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a login link made before a new secret: %v", err)
		}
	}
	addWebSession(t, s, alice, "a-last")
	must(t, s.AddLoginLink(ctx, "link-last", alice.ID, t0, t0.Add(time.Minute)))
	if n, err := s.EndUserLogins(ctx, alice.ID); err != nil || n != 1 {
		t.Errorf("EndUserLogins = %d, %v", n, err)
	}
	check("after EndUserLogins", 0)
	if _, err := s.SpendLoginLink(ctx, "link-last", t0); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a login link after EndUserLogins: %v", err)
	}
}

func testRemoveUser(t *testing.T, db DB) {
	s := open(t, db)
	alice, bob := addUser(t, s, "alice"), addUser(t, s, "bob")
	for _, u := range []store.User{alice, bob} {
		addWebSession(t, s, u, "ws-"+u.Name)
		must(t, s.AddLoginLink(ctx, "link-"+u.Name, u.ID, t0, t0.Add(time.Minute)))
		d := addDevice(t, s, u.Name, "laptop")
		_, err := s.SaveDeviceSessions(ctx, []store.DeviceSessionChange{{DeviceID: d.ID, Put: []store.DeviceSession{{SessionID: "s-" + u.Name, Data: []byte(`{}`)}}}})
		must(t, err)
		must(t, s.PutPushSubscription(ctx, store.PushSubscription{Endpoint: "https://push/" + u.Name, P256dh: "k", Auth: "a", User: u.Name, CreatedAt: t0}))
		_, err = s.AddNotification(ctx, store.Notification{User: u.Name, Time: t0, SessionID: "s", SessionName: "n", Reason: "review"})
		must(t, err)
		must(t, s.Set(ctx, "webhook."+u.Name, []byte("https://hook")))
	}
	must(t, s.RemoveUser(ctx, "alice", "webhook.alice"))
	wantErr(t, "RemoveUser twice", s.RemoveUser(ctx, "alice"), store.ErrNotFound)

	_, err := s.UserByName(ctx, "alice")
	wantErr(t, "the removed user", err, store.ErrNotFound)
	_, err = s.WebSessionBySecret(ctx, "secret-ws-alice")
	wantErr(t, "the removed user's browser session", err, store.ErrNotFound)
	_, err = s.SpendLoginLink(ctx, "link-alice", t0)
	wantErr(t, "the removed user's login link", err, store.ErrNotFound)
	_, err = s.DeviceByName(ctx, "alice", "laptop")
	wantErr(t, "the removed user's device", err, store.ErrNotFound)
	if l, _ := s.ListDevices(ctx, ""); len(l) != 1 || l[0].Owner != "bob" {
		t.Errorf("devices left: %+v", l)
	}
	if l, _ := s.LoadDeviceSessions(ctx); len(l) != 1 || l[0].SessionID != "s-bob" {
		t.Errorf("device sessions left: %+v", l)
	}
	if l, _ := s.PushSubscriptions(ctx, "alice"); len(l) != 0 {
		t.Errorf("the removed user's push subscriptions: %+v", l)
	}
	if l, _ := s.Notifications(ctx, "alice", 10); len(l) != 0 {
		t.Errorf("the removed user's notifications: %+v", l)
	}
	_, err = s.Get(ctx, "webhook.alice")
	wantErr(t, "the removed user's webhook", err, store.ErrNotFound)

	// bob keeps everything.
	if _, err := s.WebSessionBySecret(ctx, "secret-ws-bob"); err != nil {
		t.Errorf("bob's browser session: %v", err)
	}
	if l, _ := s.PushSubscriptions(ctx, "bob"); len(l) != 1 {
		t.Errorf("bob's push subscriptions: %+v", l)
	}
	if l, _ := s.Notifications(ctx, "bob", 10); len(l) != 1 {
		t.Errorf("bob's notifications: %+v", l)
	}
	if _, err := s.Get(ctx, "webhook.bob"); err != nil {
		t.Errorf("bob's webhook: %v", err)
	}

	// A new alice inherits nothing, and may use the old names.
	addUser(t, s, "alice")
	if l, _ := s.ListDevices(ctx, "alice"); len(l) != 0 {
		t.Errorf("the new alice's devices: %+v", l)
	}
	addDevice(t, s, "alice", "laptop")
}

func testDevices(t *testing.T, db DB) {
	s := open(t, db)
	addUser(t, s, "alice")
	addUser(t, s, "bob")
	d := addDevice(t, s, "alice", "laptop")
	addDevice(t, s, "bob", "laptop") // names are per owner
	addDevice(t, s, "alice", "desk")

	wantErr(t, "a device of no user", s.AddDevice(ctx, store.DeviceRecord{ID: "dx", Name: "x", Owner: "nobody", CreatedAt: t0}, "h-x"), store.ErrNotFound)
	wantErr(t, "a second alice/laptop", s.AddDevice(ctx, store.DeviceRecord{ID: "dy", Name: "laptop", Owner: "alice", CreatedAt: t0}, "h-y"), store.ErrConflict)
	wantErr(t, "a taken enrolment hash", s.AddDevice(ctx, store.DeviceRecord{ID: "dz", Name: "z", Owner: "alice", CreatedAt: t0}, "enroll-"+d.ID), store.ErrConflict)

	got, err := s.Device(ctx, d.ID)
	if err != nil || got.Name != "laptop" || got.Owner != "alice" || !got.CreatedAt.Equal(t0) || !got.EnrollExpires.Equal(t0.Add(time.Hour)) ||
		got.PublicKey != "" || !got.LastSeen.IsZero() || !got.EnrolledAt.IsZero() || got.Hostname != "" {
		t.Errorf("Device = %+v, %v", got, err)
	}
	if got, err := s.DeviceByName(ctx, "alice", "laptop"); err != nil || got.ID != d.ID {
		t.Errorf("DeviceByName = %+v, %v", got, err)
	}
	for what, err := range map[string]error{
		"Device(missing)":               second(s.Device(ctx, "missing")),
		"DeviceByName(carol)":           second(s.DeviceByName(ctx, "carol", "laptop")),
		"DeviceByKey(none)":             second(s.DeviceByKey(ctx, "no such key")),
		"DeviceByKey(empty)":            second(s.DeviceByKey(ctx, "")),
		"DeviceByLegacyHash":            second(s.DeviceByLegacyHash(ctx, "cd-hash")),
		"DeviceByEnrollHash(no)":        second(s.DeviceByEnrollHash(ctx, "no such hash", t0)),
		"DeviceByEnrollHash(at expiry)": second(s.DeviceByEnrollHash(ctx, "enroll-"+d.ID, t0.Add(time.Hour))),
	} {
		wantErr(t, what, err, store.ErrNotFound)
	}
	if got, err := s.DeviceByEnrollHash(ctx, "enroll-"+d.ID, t0.Add(time.Hour-time.Second)); err != nil || got.ID != d.ID {
		t.Errorf("DeviceByEnrollHash before expiry = %+v, %v", got, err)
	}

	all, err := s.ListDevices(ctx, "")
	must(t, err)
	var names []string
	for _, d := range all {
		names = append(names, d.Owner+"/"+d.Name)
	}
	if fmt.Sprint(names) != "[alice/desk alice/laptop bob/laptop]" {
		t.Errorf("ListDevices = %v", names)
	}
	if l, _ := s.ListDevices(ctx, "bob"); len(l) != 1 || l[0].Owner != "bob" {
		t.Errorf("ListDevices(bob) = %+v", l)
	}
	if l, err := s.ListDevices(ctx, "carol"); err != nil || l == nil || len(l) != 0 {
		t.Errorf("ListDevices(carol) = %#v, %v (want an empty list)", l, err)
	}

	must(t, s.DeviceSeen(ctx, d.ID, "laptop.example", t0.Add(time.Minute)))
	if got, _ := s.Device(ctx, d.ID); got.Hostname != "laptop.example" || !got.LastSeen.Equal(t0.Add(time.Minute)) {
		t.Errorf("after DeviceSeen: %+v", got)
	}

	// A new enrolment token replaces the unspent one.
	must(t, s.SetEnrollment(ctx, d.ID, "enroll-2", t0.Add(2*time.Hour)))
	if _, err := s.DeviceByEnrollHash(ctx, "enroll-"+d.ID, t0); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the replaced enrolment token: %v", err)
	}
	if got, err := s.DeviceByEnrollHash(ctx, "enroll-2", t0.Add(time.Hour)); err != nil || got.ID != d.ID || !got.EnrollExpires.Equal(t0.Add(2*time.Hour)) {
		t.Errorf("the new enrolment token: %+v, %v", got, err)
	}
	wantErr(t, "SetEnrollment(missing)", s.SetEnrollment(ctx, "missing", "enroll-3", t0), store.ErrNotFound)

	// Removing it takes its sessions and frees its name.
	_, err = s.SaveDeviceSessions(ctx, []store.DeviceSessionChange{{DeviceID: d.ID, Put: []store.DeviceSession{{SessionID: "s1", Data: []byte(`{"a":1}`)}}}})
	must(t, err)
	must(t, s.RemoveDevice(ctx, d.ID))
	wantErr(t, "RemoveDevice twice", s.RemoveDevice(ctx, d.ID), store.ErrNotFound)
	if l, _ := s.LoadDeviceSessions(ctx); len(l) != 0 {
		t.Errorf("a removed device's sessions: %+v", l)
	}
	addDevice(t, s, "alice", "laptop")
}

func second[T any](_ T, err error) error { return err }

func testBindKey(t *testing.T, db DB) {
	s := open(t, db)
	addUser(t, s, "alice")
	d := addDevice(t, s, "alice", "laptop")
	other := addDevice(t, s, "alice", "desk")
	hash := "enroll-" + d.ID

	wantErr(t, "an expired token", s.BindKey(ctx, d.ID, hash, "key-1", t0.Add(time.Hour)), store.ErrNotFound)
	wantErr(t, "another device's token", s.BindKey(ctx, other.ID, hash, "key-1", t0), store.ErrNotFound)
	wantErr(t, "a wrong token", s.BindKey(ctx, d.ID, "wrong", "key-1", t0), store.ErrNotFound)
	must(t, s.BindKey(ctx, d.ID, hash, "key-1", t0.Add(time.Minute)))
	got, err := s.DeviceByKey(ctx, "key-1")
	if err != nil || got.ID != d.ID || got.PublicKey != "key-1" || !got.EnrolledAt.Equal(t0.Add(time.Minute)) || !got.EnrollExpires.IsZero() {
		t.Errorf("DeviceByKey after BindKey = %+v, %v", got, err)
	}
	wantErr(t, "the spent token", s.BindKey(ctx, d.ID, hash, "key-2", t0), store.ErrNotFound)
	_, err = s.DeviceByEnrollHash(ctx, hash, t0)
	wantErr(t, "DeviceByEnrollHash of the spent token", err, store.ErrNotFound)

	// The key is the device's alone.
	wantErr(t, "another device binding the key", s.BindKey(ctx, other.ID, "enroll-"+other.ID, "key-1", t0), store.ErrConflict)
	if got, _ := s.Device(ctx, other.ID); got.PublicKey != "" || got.EnrollExpires.IsZero() {
		t.Errorf("a refused BindKey changed the device: %+v", got)
	}
	must(t, s.BindKey(ctx, other.ID, "enroll-"+other.ID, "key-other", t0))

	// Enrolled again: the old key works until the new token is spent.
	must(t, s.SetEnrollment(ctx, d.ID, "enroll-again", t0.Add(time.Hour)))
	if got, err := s.DeviceByKey(ctx, "key-1"); err != nil || got.ID != d.ID {
		t.Errorf("the old key with a new token open: %+v, %v", got, err)
	}
	must(t, s.BindKey(ctx, d.ID, "enroll-again", "key-3", t0))
	if _, err := s.DeviceByKey(ctx, "key-1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the replaced key: %v", err)
	}
}

func put(device string, ids ...string) store.DeviceSessionChange {
	c := store.DeviceSessionChange{DeviceID: device}
	for _, id := range ids {
		c.Put = append(c.Put, store.DeviceSession{SessionID: id, Data: []byte(fmt.Sprintf(`{"id":%q,"device":%q}`, id, device))})
	}
	return c
}

// loaded is LoadDeviceSessions as "device:session" strings, sorted.
func loaded(t *testing.T, s store.Store) []string {
	t.Helper()
	l, err := s.LoadDeviceSessions(ctx)
	must(t, err)
	var out []string
	for _, d := range l {
		out = append(out, d.DeviceID+":"+d.SessionID)
	}
	slices.Sort(out)
	return out
}

func testDeviceSessions(t *testing.T, db DB) {
	s := open(t, db)
	addUser(t, s, "alice")
	a, b := addDevice(t, s, "alice", "a"), addDevice(t, s, "alice", "b")
	refused, err := s.SaveDeviceSessions(ctx, []store.DeviceSessionChange{put(a.ID, "s1", "s2", "s3"), put(b.ID, "s4")})
	if err != nil || len(refused) != 0 {
		t.Fatalf("save = %v, %v", refused, err)
	}
	l, err := s.LoadDeviceSessions(ctx)
	must(t, err)
	if len(l) != 4 {
		t.Fatalf("loaded %+v", l)
	}
	for _, d := range l {
		want := fmt.Sprintf(`{"id":%q,"device":%q}`, d.SessionID, d.DeviceID)
		if !jsonEqual(d.Data, want) {
			t.Errorf("session %s: %s, want %s", d.SessionID, d.Data, want)
		}
	}
	// A change of one, a removal, and nothing else moves.
	c := put(a.ID, "s1")
	c.Put[0].Data = []byte(`{"id":"s1","status":"busy"}`)
	c.Delete = []string{"s2", "s4"} // s4 is b's: a cannot delete it
	_, err = s.SaveDeviceSessions(ctx, []store.DeviceSessionChange{c})
	must(t, err)
	if got := loaded(t, s); fmt.Sprint(got) != fmt.Sprint([]string{a.ID + ":s1", a.ID + ":s3", b.ID + ":s4"}) {
		t.Errorf("after a change: %v", got)
	}
	for _, d := range must1[[]store.DeviceSession](t)(s.LoadDeviceSessions(ctx)) {
		if d.SessionID == "s1" && !jsonEqual(d.Data, `{"id":"s1","status":"busy"}`) {
			t.Errorf("s1 = %s", d.Data)
		}
	}
	// A full sync replaces everything of a.
	r := put(a.ID, "s5")
	r.Replace = true
	_, err = s.SaveDeviceSessions(ctx, []store.DeviceSessionChange{r})
	must(t, err)
	if got := loaded(t, s); fmt.Sprint(got) != fmt.Sprint([]string{a.ID + ":s5", b.ID + ":s4"}) {
		t.Errorf("after a full sync: %v", got)
	}
	// An empty full sync empties it.
	_, err = s.SaveDeviceSessions(ctx, []store.DeviceSessionChange{{DeviceID: a.ID, Replace: true}})
	must(t, err)
	if got := loaded(t, s); fmt.Sprint(got) != fmt.Sprint([]string{b.ID + ":s4"}) {
		t.Errorf("after an empty full sync: %v", got)
	}
	if refused, err := s.SaveDeviceSessions(ctx, nil); err != nil || len(refused) != 0 {
		t.Errorf("an empty save: %v, %v", refused, err)
	}
}

func must1[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		must(t, err)
		return v
	}
}

// jsonEqual compares JSON by value: PostgreSQL's jsonb keeps neither
// spacing nor key order.
func jsonEqual(got []byte, want string) bool {
	var g, w any
	if json.Unmarshal(got, &g) != nil || json.Unmarshal([]byte(want), &w) != nil {
		return false
	}
	return reflect.DeepEqual(g, w)
}

func testDeviceSessionClaims(t *testing.T, db DB) {
	s := open(t, db)
	addUser(t, s, "alice")
	addUser(t, s, "mallory")
	a, m := addDevice(t, s, "alice", "a"), addDevice(t, s, "mallory", "m")
	_, err := s.SaveDeviceSessions(ctx, []store.DeviceSessionChange{put(a.ID, "s1", "s2")})
	must(t, err)

	// Another device naming a's session neither takes it nor changes it.
	refused, err := s.SaveDeviceSessions(ctx, []store.DeviceSessionChange{put(m.ID, "s1", "m1")})
	must(t, err)
	if len(refused) != 1 || refused[0].SessionID != "s1" || refused[0].DeviceID != m.ID {
		t.Errorf("refused %+v, want m's s1", refused)
	}
	if got := loaded(t, s); fmt.Sprint(got) != fmt.Sprint(sorted(a.ID+":s1", a.ID+":s2", m.ID+":m1")) {
		t.Errorf("after another device's claim: %v", got)
	}
	for _, d := range must1[[]store.DeviceSession](t)(s.LoadDeviceSessions(ctx)) {
		if d.SessionID == "s1" && !jsonEqual(d.Data, fmt.Sprintf(`{"id":"s1","device":%q}`, a.ID)) {
			t.Errorf("s1 was changed by another device: %s", d.Data)
		}
	}
	// Nor deletes it, or drops it by a full sync.
	r := put(m.ID, "m1")
	r.Replace, r.Delete = true, []string{"s2"}
	_, err = s.SaveDeviceSessions(ctx, []store.DeviceSessionChange{r})
	must(t, err)
	if got := loaded(t, s); fmt.Sprint(got) != fmt.Sprint(sorted(a.ID+":s1", a.ID+":s2", m.ID+":m1")) {
		t.Errorf("after another device's removals: %v", got)
	}

	// An id given up is free, even to a device later in the same batch's
	// list or earlier in it.
	for _, order := range [][]int{{0, 1}, {1, 0}} {
		id := fmt.Sprint("moved", order[0])
		_, err := s.SaveDeviceSessions(ctx, []store.DeviceSessionChange{put(a.ID, id)})
		must(t, err)
		cs := []store.DeviceSessionChange{{DeviceID: a.ID, Delete: []string{id}}, put(m.ID, id)}
		refused, err := s.SaveDeviceSessions(ctx, []store.DeviceSessionChange{cs[order[0]], cs[order[1]]})
		if err != nil || len(refused) != 0 {
			t.Errorf("order %v: a freed id refused: %+v, %v", order, refused, err)
		}
		if !slices.Contains(loaded(t, s), m.ID+":"+id) {
			t.Errorf("order %v: the freed id did not move: %v", order, loaded(t, s))
		}
	}

	// The ids of a device that is gone are free.
	must(t, s.RemoveDevice(ctx, a.ID))
	refused, err = s.SaveDeviceSessions(ctx, []store.DeviceSessionChange{put(m.ID, "s1")})
	if err != nil || len(refused) != 0 {
		t.Errorf("an id of a removed device: refused %+v, %v", refused, err)
	}
	// Also one written for a device removed meanwhile (a hub's late
	// write): it blocks no one.
	_, err = s.SaveDeviceSessions(ctx, []store.DeviceSessionChange{put("gone-device", "late")})
	must(t, err)
	refused, err = s.SaveDeviceSessions(ctx, []store.DeviceSessionChange{put(m.ID, "late")})
	if err != nil || len(refused) != 0 {
		t.Errorf("an id of a device that does not exist: refused %+v, %v", refused, err)
	}
}

func sorted(s ...string) []string {
	slices.Sort(s)
	return s
}

func testWebSessions(t *testing.T, db DB) {
	s := open(t, db)
	alice, bob := addUser(t, s, "alice"), addUser(t, s, "bob")
	ws := store.WebSession{ID: "expired", UserID: alice.ID, CreatedAt: t0.Add(-2 * time.Hour), LastSeen: t0.Add(-2 * time.Hour), ExpiresAt: t0.Add(-time.Hour)}
	must(t, s.AddWebSession(ctx, ws, "h-expired", 3))
	for i := range 5 {
		at := t0.Add(time.Duration(i) * time.Second)
		must(t, s.AddWebSession(ctx, store.WebSession{ID: fmt.Sprint("s", i), UserID: alice.ID, CreatedAt: at, LastSeen: at,
			ExpiresAt: at.Add(time.Hour), UserAgent: "Firefox", Address: "192.0.2.1"}, fmt.Sprint("h", i), 3))
	}
	addWebSession(t, s, bob, "b1")
	ids := func(u store.User) string {
		l, err := s.WebSessions(ctx, u.ID)
		must(t, err)
		var out []string
		for _, w := range l {
			out = append(out, w.ID)
		}
		return fmt.Sprint(out)
	}
	if got := ids(alice); got != "[s4 s3 s2]" {
		t.Errorf("alice keeps %v, want the newest 3", got)
	}
	if got := ids(bob); got != "[b1]" {
		t.Errorf("bob has %v", got)
	}
	got, err := s.WebSessionBySecret(ctx, "h3")
	if err != nil || got.ID != "s3" || got.UserID != alice.ID || got.User != "alice" || got.UserAgent != "Firefox" || got.Address != "192.0.2.1" ||
		!got.CreatedAt.Equal(t0.Add(3*time.Second)) || !got.ExpiresAt.Equal(t0.Add(time.Hour+3*time.Second)) {
		t.Errorf("WebSessionBySecret = %+v, %v", got, err)
	}
	for _, h := range []string{"h0", "h-expired", "nothing"} {
		_, err := s.WebSessionBySecret(ctx, h)
		wantErr(t, "WebSessionBySecret("+h+")", err, store.ErrNotFound)
	}
	// Touched, s2 is the most recently used.
	must(t, s.TouchWebSession(ctx, "s2", t0.Add(time.Minute)))
	if got := ids(alice); got != "[s2 s4 s3]" {
		t.Errorf("after touching s2: %v", got)
	}
	if got, _ := s.WebSessionBySecret(ctx, "h2"); !got.LastSeen.Equal(t0.Add(time.Minute)) {
		t.Errorf("last seen %v", got.LastSeen)
	}
	wantErr(t, "EndWebSession of another user's", s.EndWebSession(ctx, bob.ID, "s3"), store.ErrNotFound)
	must(t, s.EndWebSession(ctx, alice.ID, "s3"))
	wantErr(t, "EndWebSession twice", s.EndWebSession(ctx, alice.ID, "s3"), store.ErrNotFound)
	if got := ids(alice); got != "[s2 s4]" {
		t.Errorf("after ending s3: %v", got)
	}
	if err := s.AddWebSession(ctx, store.WebSession{ID: "x", UserID: "no such user", CreatedAt: t0, LastSeen: t0, ExpiresAt: t0.Add(time.Hour)}, "hx", 3); err == nil {
		t.Error("a browser session of no user was stored")
	}
	if l, err := s.WebSessions(ctx, "no such user"); err != nil || l == nil || len(l) != 0 {
		t.Errorf("WebSessions of no user = %#v, %v (want an empty list)", l, err)
	}
}

func testLoginLinks(t *testing.T, db DB) {
	s := open(t, db)
	alice := addUser(t, s, "alice")
	must(t, s.AddLoginLink(ctx, "l1", alice.ID, t0, t0.Add(time.Minute)))
	must(t, s.AddLoginLink(ctx, "l2", alice.ID, t0, t0.Add(time.Minute)))
	must(t, s.AddLoginLink(ctx, "l3", alice.ID, t0, t0.Add(time.Minute)))
	if err := s.AddLoginLink(ctx, "l4", "no such user", t0, t0.Add(time.Minute)); err == nil {
		t.Error("a login link of no user was stored")
	}

	u, err := s.SpendLoginLink(ctx, "l1", t0.Add(time.Second))
	if err != nil || u != (store.UserRef{ID: alice.ID, Name: "alice"}) {
		t.Fatalf("SpendLoginLink = %+v, %v", u, err)
	}
	_, err = s.SpendLoginLink(ctx, "l1", t0.Add(time.Second))
	wantErr(t, "a link used twice", err, store.ErrNotFound)
	_, err = s.SpendLoginLink(ctx, "l2", t0.Add(time.Minute))
	wantErr(t, "a link at its expiry", err, store.ErrNotFound)
	_, err = s.SpendLoginLink(ctx, "l2", t0)
	wantErr(t, "an expired link, gone once tried", err, store.ErrNotFound)
	_, err = s.SpendLoginLink(ctx, "nothing", t0)
	wantErr(t, "no such link", err, store.ErrNotFound)

	// Adding one drops the expired ones.
	must(t, s.AddLoginLink(ctx, "l5", alice.ID, t0.Add(2*time.Minute), t0.Add(3*time.Minute)))
	_, err = s.SpendLoginLink(ctx, "l3", t0)
	wantErr(t, "an expired link after another was added", err, store.ErrNotFound)
	if _, err := s.SpendLoginLink(ctx, "l5", t0.Add(2*time.Minute)); err != nil {
		t.Errorf("l5: %v", err)
	}
}

func testPush(t *testing.T, db DB) {
	s := open(t, db)
	p := store.PushSubscription{Endpoint: "https://push.example/1", P256dh: "k", Auth: "a", User: "alice", CreatedAt: t0}
	must(t, s.PutPushSubscription(ctx, p))
	p.Auth = "b"
	must(t, s.PutPushSubscription(ctx, p))
	must(t, s.PutPushSubscription(ctx, store.PushSubscription{Endpoint: "https://push.example/0", P256dh: "k0", Auth: "a0", User: "alice", CreatedAt: t0.Add(time.Second)}))
	// bob cannot take alice's endpoint over, nor change it.
	err := s.PutPushSubscription(ctx, store.PushSubscription{Endpoint: p.Endpoint, P256dh: "evil", Auth: "evil", User: "bob", CreatedAt: t0})
	wantErr(t, "another user's endpoint", err, store.ErrOtherUser)
	subs, err := s.PushSubscriptions(ctx, "alice")
	must(t, err)
	if len(subs) != 2 || subs[0].Endpoint != p.Endpoint || subs[0].Auth != "b" || subs[0].P256dh != "k" || subs[0].User != "alice" ||
		!subs[0].CreatedAt.Equal(t0) || subs[1].Endpoint != "https://push.example/0" {
		t.Errorf("alice's subscriptions: %+v", subs)
	}
	if subs, _ := s.PushSubscriptions(ctx, "bob"); len(subs) != 0 {
		t.Errorf("bob's subscriptions: %+v", subs)
	}
	must(t, s.DeleteUserPushSubscription(ctx, "bob", p.Endpoint)) // not bob's: kept
	if subs, _ := s.PushSubscriptions(ctx, "alice"); len(subs) != 2 {
		t.Errorf("bob deleted alice's subscription: %+v", subs)
	}
	must(t, s.DeleteUserPushSubscription(ctx, "alice", p.Endpoint))
	must(t, s.DeletePushSubscription(ctx, "https://push.example/0"))
	must(t, s.DeletePushSubscription(ctx, "https://push.example/missing"))
	if subs, _ := s.PushSubscriptions(ctx, "alice"); len(subs) != 0 {
		t.Errorf("after deleting: %+v", subs)
	}
}

func testNotifications(t *testing.T, db DB) {
	s := open(t, db)
	var last int64
	for i := range store.KeepNotifications + 5 {
		user := "alice"
		if i%100 == 0 {
			user = "bob"
		}
		id, err := s.AddNotification(ctx, store.Notification{User: user, Time: t0.Add(time.Duration(i) * time.Second), Device: "laptop",
			SessionID: "s", SessionName: "n", Reason: "review", Message: fmt.Sprint("m", i)})
		must(t, err)
		if id <= last {
			t.Fatalf("id %d after %d", id, last)
		}
		last = id
	}
	all := append(must1[[]store.Notification](t)(s.Notifications(ctx, "alice", 2000)), must1[[]store.Notification](t)(s.Notifications(ctx, "bob", 2000))...)
	if len(all) != store.KeepNotifications {
		t.Errorf("%d kept, want %d", len(all), store.KeepNotifications)
	}
	ns, err := s.Notifications(ctx, "alice", 2)
	must(t, err)
	if len(ns) != 2 || ns[0].Message != fmt.Sprint("m", store.KeepNotifications+4) || ns[0].User != "alice" || ns[0].Device != "laptop" ||
		!ns[0].Time.Equal(t0.Add(time.Duration(store.KeepNotifications+4)*time.Second)) || ns[1].ID >= ns[0].ID {
		t.Errorf("alice's newest: %+v", ns)
	}
	if ns, _ := s.Notifications(ctx, "bob", 100); len(ns) != 10 || ns[0].Message != "m1000" {
		t.Errorf("bob's: %d, newest %+v", len(ns), ns[0])
	}
	if ns, err := s.Notifications(ctx, "carol", 10); err != nil || ns == nil || len(ns) != 0 {
		t.Errorf("carol's = %#v, %v (want an empty list)", ns, err)
	}
	// An entry says more later: only its user's, only its message.
	newest := ns[0]
	must(t, s.UpdateNotification(ctx, "bob", newest.ID, "not bob's"))
	must(t, s.UpdateNotification(ctx, "alice", newest.ID, "Allow Bash: make?"))
	must(t, s.UpdateNotification(ctx, "alice", 1<<40, "missing"))
	if ns, _ := s.Notifications(ctx, "alice", 1); len(ns) != 1 || ns[0].Message != "Allow Bash: make?" || ns[0].ID != newest.ID ||
		!ns[0].Time.Equal(newest.Time) || ns[0].Reason != newest.Reason {
		t.Errorf("alice's newest after an update: %+v", ns)
	}
}

func testKV(t *testing.T, db DB) {
	s := open(t, db)
	_, err := s.Get(ctx, "k")
	wantErr(t, "Get of a missing key", err, store.ErrNotFound)
	v, err := s.SetIfAbsent(ctx, map[string][]byte{"token": []byte("first")})
	if err != nil || string(v["token"]) != "first" {
		t.Fatal(v, err)
	}
	v, err = s.SetIfAbsent(ctx, map[string][]byte{"token": []byte("second"), "other": []byte("o")})
	if err != nil || string(v["token"]) != "first" || string(v["other"]) != "o" || len(v) != 2 {
		t.Fatalf("SetIfAbsent overwrote or missed: %q %v", v, err)
	}
	must(t, s.Set(ctx, "token", []byte("third")))
	if v, _ := s.Get(ctx, "token"); string(v) != "third" {
		t.Errorf("got %q", v)
	}
	must(t, s.Set(ctx, "empty", nil))
	if v, err := s.Get(ctx, "empty"); err != nil || len(v) != 0 {
		t.Errorf("an empty value: %q, %v", v, err)
	}
	bin := []byte{0, 1, 2, 0xff}
	must(t, s.Set(ctx, "bin", bin))
	if v, _ := s.Get(ctx, "bin"); !bytes.Equal(v, bin) {
		t.Errorf("binary value: %x", v)
	}
	must(t, s.Delete(ctx, "token"))
	must(t, s.Delete(ctx, "token"))
	_, err = s.Get(ctx, "token")
	wantErr(t, "Get after Delete", err, store.ErrNotFound)
}

// race runs fn(i, handle) n times at once, the calls spread over two
// handles of db (two hub processes), and returns their errors.
func race(t *testing.T, db DB, n int, fn func(i int, s store.Store) error) []error {
	t.Helper()
	handles := []store.Store{open(t, db), open(t, db)}
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = fn(i, handles[i%2])
		})
	}
	close(start)
	wg.Wait()
	return errs
}

// winners counts the nil errors and fails on any other than want.
func winners(t *testing.T, errs []error, want error) int {
	t.Helper()
	n := 0
	for _, err := range errs {
		switch {
		case err == nil:
			n++
		case !errors.Is(err, want):
			t.Errorf("a loser's error: %v, want %v", err, want)
		}
	}
	return n
}

func testRaceEnrol(t *testing.T, db DB) {
	s := open(t, db)
	addUser(t, s, "alice")
	d := addDevice(t, s, "alice", "laptop")
	errs := race(t, db, 8, func(i int, s store.Store) error {
		return s.BindKey(ctx, d.ID, "enroll-"+d.ID, fmt.Sprint("key-", i), t0)
	})
	if n := winners(t, errs, store.ErrNotFound); n != 1 {
		t.Fatalf("%d of 8 connections enrolled with one token, want 1", n)
	}
	winner := slices.IndexFunc(errs, func(err error) bool { return err == nil })
	if got, _ := s.Device(ctx, d.ID); got.PublicKey != fmt.Sprint("key-", winner) {
		t.Errorf("the device's key is %q, the winner's key-%d", got.PublicKey, winner)
	}
}

func testRaceClaim(t *testing.T, db DB) {
	s := open(t, db)
	var devs []store.DeviceRecord
	for i := range 6 {
		u := fmt.Sprint("user", i)
		addUser(t, s, u)
		devs = append(devs, addDevice(t, s, u, "m"))
	}
	for round := range 5 {
		id := fmt.Sprint("contested-", round)
		var mu sync.Mutex
		var refusedBy []string
		errs := race(t, db, len(devs), func(i int, s store.Store) error {
			refused, err := s.SaveDeviceSessions(ctx, []store.DeviceSessionChange{put(devs[i].ID, id, fmt.Sprint("own-", round, "-", i))})
			mu.Lock()
			defer mu.Unlock()
			for _, r := range refused {
				refusedBy = append(refusedBy, r.DeviceID)
				if r.SessionID != id {
					t.Errorf("refused an uncontested id: %+v", r)
				}
			}
			return err
		})
		for _, err := range errs {
			must(t, err)
		}
		var holders []string
		for _, d := range must1[[]store.DeviceSession](t)(s.LoadDeviceSessions(ctx)) {
			if d.SessionID == id {
				holders = append(holders, d.DeviceID)
			}
		}
		if len(holders) != 1 || len(refusedBy) != len(devs)-1 || slices.Contains(refusedBy, holders[0]) {
			t.Fatalf("round %d: %v hold the id, %v were refused", round, holders, refusedBy)
		}
	}
	if n := len(loaded(t, s)); n != 5+5*len(devs) {
		t.Errorf("%d rows, want every uncontested one and one per contested id", n)
	}
}

func testRaceLoginLink(t *testing.T, db DB) {
	s := open(t, db)
	alice := addUser(t, s, "alice")
	must(t, s.AddLoginLink(ctx, "link", alice.ID, t0, t0.Add(time.Minute)))
	errs := race(t, db, 8, func(_ int, s store.Store) error {
		_, err := s.SpendLoginLink(ctx, "link", t0)
		return err
	})
	if n := winners(t, errs, store.ErrNotFound); n != 1 {
		t.Errorf("one login link logged in %d browsers, want 1", n)
	}
}

func testRaceSecrets(t *testing.T, db DB) {
	got := make([]map[string][]byte, 8)
	errs := race(t, db, 8, func(i int, s store.Store) error {
		var err error
		got[i], err = s.SetIfAbsent(ctx, map[string][]byte{"vapid.public": []byte(fmt.Sprint("pub-", i)), "vapid.private": []byte(fmt.Sprint("priv-", i))})
		return err
	})
	for _, err := range errs {
		must(t, err)
	}
	pub, priv := string(got[0]["vapid.public"]), string(got[0]["vapid.private"])
	if pub[len("pub-"):] != priv[len("priv-"):] {
		t.Errorf("a key pair made by two processes at once is mixed: %s with %s", pub, priv)
	}
	for i, g := range got {
		if string(g["vapid.public"]) != pub || string(g["vapid.private"]) != priv {
			t.Errorf("process %d got %s/%s, the others %s/%s", i, g["vapid.public"], g["vapid.private"], pub, priv)
		}
	}
}

func testRaceAddUser(t *testing.T, db DB) {
	errs := race(t, db, 8, func(i int, s store.Store) error {
		return s.AddUser(ctx, store.User{ID: fmt.Sprint("id-", i), Name: "alice", CreatedAt: t0})
	})
	if n := winners(t, errs, store.ErrConflict); n != 1 {
		t.Errorf("%d of 8 added alice, want 1", n)
	}
}

// testRaceWrites: two processes changing different rows at once all
// succeed (a database that makes one wait must not fail it).
func testRaceWrites(t *testing.T, db DB) {
	s := open(t, db)
	for i := range 8 {
		addUser(t, s, fmt.Sprint("user", i))
	}
	errs := race(t, db, 8, func(i int, s store.Store) error {
		name := fmt.Sprint("user", i)
		for k := range 10 {
			if err := s.SetPasswordHash(ctx, name, []byte(fmt.Sprint("hash", k))); err != nil {
				return err
			}
			d := store.DeviceRecord{ID: fmt.Sprint("dev-", i, "-", k), Name: fmt.Sprint("m", k), Owner: name, CreatedAt: t0}
			if err := s.AddDevice(ctx, d, ""); err != nil {
				return err
			}
			if _, err := s.SaveDeviceSessions(ctx, []store.DeviceSessionChange{put(d.ID, fmt.Sprint("s-", i, "-", k))}); err != nil {
				return err
			}
			if k%2 == 0 {
				if err := s.RemoveDevice(ctx, d.ID); err != nil {
					return err
				}
			}
		}
		return s.RemoveUser(ctx, name)
	})
	for i, err := range errs {
		if err != nil {
			t.Errorf("process %d: %v", i, err)
		}
	}
	if l := must1[[]store.User](t)(s.ListUsers(ctx)); len(l) != 0 {
		t.Errorf("users left: %+v", l)
	}
}

func testMigrations(t *testing.T, db DB) {
	s, err := db.Open(ctx)
	must(t, err)
	addUser(t, s, "alice")
	must(t, s.Close())
	// Opened again: migrated already, and the data is there.
	s, err = db.Open(ctx)
	must(t, err)
	if _, err := s.UserByName(ctx, "alice"); err != nil {
		t.Errorf("after reopening: %v", err)
	}
	must(t, s.Close())
	// A newer corral's schema is refused, and left alone.
	must(t, db.SetSchema(ctx, db.Schema+1))
	if s, err := db.Open(ctx); err == nil {
		s.Close()
		t.Fatal("opened a database of a newer schema")
	}
	must(t, db.SetSchema(ctx, db.Schema))
	s = open(t, db)
	if _, err := s.UserByName(ctx, "alice"); err != nil {
		t.Errorf("after a refused open: %v", err)
	}
}

func testMigrationsAtOnce(t *testing.T, db DB) {
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			s, err := db.Open(ctx)
			if err == nil {
				err = s.AddUser(ctx, store.User{ID: fmt.Sprint("id-", i), Name: fmt.Sprint("user", i), CreatedAt: t0})
				s.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("process %d opening a new database with the others: %v", i, err)
		}
	}
	if l := must1[[]store.User](t)(open(t, db).ListUsers(ctx)); len(l) != len(errs) {
		t.Errorf("%d users, want %d", len(l), len(errs))
	}
}
