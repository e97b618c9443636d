package hub

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode"

	"golang.org/x/crypto/bcrypt"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/notify"
	"github.com/corral-dev/corral/internal/store"
)

// Accounts are a hub's users and devices, in its database. Tokens are shown
// once and kept only as SHA-256 hashes (they are 256-bit random, so a plain
// hash is enough); passwords as bcrypt hashes. Each user has a stable id:
// browser sessions and login links belong to the id, so a new user under
// an old name never inherits them (logins.go).
type Accounts struct {
	db *sql.DB
	st *store.Store
	// single is the one user of a single-machine `corral serve`
	// (LocalAccounts); "" on a hub.
	single string
}

// NewAccounts uses the store's database.
func NewAccounts(st *store.Store) *Accounts { return &Accounts{db: st.DB(), st: st} }

// Token prefixes tell people which kind of token they hold. cd_ was the
// device token of link protocol 1, before devices proved keys.
const (
	userTokenPrefix   = "cu_"
	deviceTokenPrefix = "cd_"
	enrollTokenPrefix = "ce_"
)

func newToken(prefix string) string {
	b := make([]byte, 32)
	rand.Read(b)
	return prefix + base64.RawURLEncoding.EncodeToString(b)
}

func hashToken(t string) string {
	sum := sha256.Sum256([]byte(t))
	return hex.EncodeToString(sum[:])
}

// checkName allows names people can type: letters, digits, '.', '-', '_'.
func checkName(what, name string) error {
	if name == "" || len(name) > 64 {
		return api.Errorf(api.CodeBadRequest, "%s name must be 1 to 64 characters", what)
	}
	for _, r := range name {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' || r == '-' || r == '_') {
			return api.Errorf(api.CodeBadRequest, "%s name %q: use letters, digits, '.', '-' and '_'", what, name)
		}
	}
	return nil
}

// User is a hub user.
type User struct {
	Name        string    `json:"name"`
	HasPassword bool      `json:"has_password"`
	CreatedAt   time.Time `json:"created_at"`
}

// AddUser creates a user and returns their API token (shown once). An
// empty password means token login only.
func (a *Accounts) AddUser(ctx context.Context, name, password string) (string, error) {
	if err := checkName("user", name); err != nil {
		return "", err
	}
	var hash []byte
	if password != "" {
		var err error
		if hash, err = hashPassword(password); err != nil {
			return "", err
		}
	}
	tok := newToken(userTokenPrefix)
	_, err := a.db.ExecContext(ctx, `INSERT INTO users (id, name, password_hash, token_hash, created_at) VALUES (?, ?, ?, ?, ?)`,
		newUserID(), name, hash, hashToken(tok), time.Now().UnixNano())
	if err != nil {
		if strings.Contains(err.Error(), "UNIQUE") {
			return "", api.Errorf(api.CodeConflict, "user %q exists", name)
		}
		return "", err
	}
	return tok, nil
}

func hashPassword(pw string) ([]byte, error) {
	if len(pw) < 8 {
		return nil, api.Errorf(api.CodeBadRequest, "password: use at least 8 characters")
	}
	if len(pw) > 72 {
		return nil, api.Errorf(api.CodeBadRequest, "password: at most 72 bytes")
	}
	return bcrypt.GenerateFromPassword([]byte(pw), bcrypt.DefaultCost)
}

// SetPassword changes a user's password ("" removes it) and ends their
// browser sessions.
func (a *Accounts) SetPassword(ctx context.Context, name, password string) error {
	var hash []byte
	if password != "" {
		var err error
		if hash, err = hashPassword(password); err != nil {
			return err
		}
	}
	return a.changeUser(ctx, name, `UPDATE users SET password_hash = ? WHERE id = ?`, hash)
}

// RotateToken gives a user a new API token; the old one stops working, and
// the user's browser sessions end.
func (a *Accounts) RotateToken(ctx context.Context, name string) (string, error) {
	tok := newToken(userTokenPrefix)
	return tok, a.changeUser(ctx, name, `UPDATE users SET token_hash = ? WHERE id = ?`, hashToken(tok))
}

// RemoveUser deletes a user, their devices, browser sessions, push
// subscriptions and notification log.
func (a *Accounts) RemoveUser(ctx context.Context, name string) error {
	tx, err := a.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	id, err := userID(ctx, tx, name)
	if err != nil {
		return err
	}
	if _, err := store.EndUserLogins(ctx, tx, id); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM users WHERE id = ?`, id); err != nil {
		return err
	}
	// What is kept by name would reach a new user of that name.
	if err := store.ForgetUser(ctx, tx, name); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM device_sessions WHERE device_id IN (SELECT id FROM devices WHERE owner = ?)`, name); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM devices WHERE owner = ?`, name); err != nil {
		return err
	}
	// The webhook too, kept by name like the push subscriptions.
	if _, err := tx.ExecContext(ctx, `DELETE FROM kv WHERE key = ?`, notify.WebhookKey(name)); err != nil {
		return err
	}
	return tx.Commit()
}

// Users lists the users.
func (a *Accounts) Users(ctx context.Context) ([]User, error) {
	rows, err := a.db.QueryContext(ctx, `SELECT name, password_hash IS NOT NULL AND length(password_hash) > 0, created_at FROM users ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []User
	for rows.Next() {
		var u User
		var created int64
		if err := rows.Scan(&u.Name, &u.HasPassword, &created); err != nil {
			return nil, err
		}
		u.CreatedAt = time.Unix(0, created)
		out = append(out, u)
	}
	return out, rows.Err()
}

// ByToken finds the user of an API token (web.Accounts). A token of an
// older corral serve has no prefix (LocalAccounts), so any string is
// looked up: by its hash, one indexed row.
func (a *Accounts) ByToken(ctx context.Context, token string) (store.UserRef, bool) {
	if token == "" || strings.HasPrefix(token, deviceTokenPrefix) || strings.HasPrefix(token, loginLinkPrefix) {
		return store.UserRef{}, false
	}
	var u store.UserRef
	err := a.db.QueryRowContext(ctx, `SELECT id, name FROM users WHERE token_hash = ?`, hashToken(token)).Scan(&u.ID, &u.Name)
	return u, err == nil
}

// ByPassword checks a user's password (web.Accounts). On one machine the
// name is ignored: there is one user.
func (a *Accounts) ByPassword(ctx context.Context, user, password string) (store.UserRef, bool) {
	if a.single != "" {
		user = a.single
	}
	var hash []byte
	var u store.UserRef
	err := a.db.QueryRowContext(ctx, `SELECT id, name, password_hash FROM users WHERE name = ?`, user).Scan(&u.ID, &u.Name, &hash)
	if err != nil || len(hash) == 0 {
		// Spend the same time as a real check, so a wrong name and a wrong
		// password look alike.
		bcrypt.CompareHashAndPassword(dummyHash(), []byte(password))
		return store.UserRef{}, false
	}
	if bcrypt.CompareHashAndPassword(hash, []byte(password)) != nil {
		return store.UserRef{}, false
	}
	return u, true
}

// dummyHash is made on first use: bcrypt takes ~50 ms, which every corral
// command would pay at start if it were made at package init.
var dummyHash = sync.OnceValue(func() []byte {
	h, _ := bcrypt.GenerateFromPassword([]byte("corral-dummy-password"), bcrypt.DefaultCost)
	return h
})

// PasswordSet: the login form offers passwords (web.Accounts).
func (a *Accounts) PasswordSet(ctx context.Context) bool {
	var n int
	if a.single != "" {
		a.db.QueryRowContext(ctx, `SELECT count(*) FROM users WHERE name = ? AND length(password_hash) > 0`, a.single).Scan(&n)
	} else {
		a.db.QueryRowContext(ctx, `SELECT count(*) FROM users WHERE length(password_hash) > 0`).Scan(&n)
	}
	return n > 0
}

// MultiUser: the login form asks for a user name (web.Accounts).
func (a *Accounts) MultiUser() bool { return a.single == "" }

// Device is a machine allowed to connect.
type Device struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Owner     string    `json:"owner"`
	CreatedAt time.Time `json:"created_at"`
	Revoked   bool      `json:"revoked"`
	Hostname  string    `json:"hostname,omitempty"`
	LastSeen  time.Time `json:"last_seen,omitzero"`
	// Key is the fingerprint of the device's key (devicekey.Fingerprint),
	// empty until it enrols; EnrollExpires is when its unspent enrolment
	// token stops working (zero: it has none).
	Key           string    `json:"key,omitempty"`
	EnrollExpires time.Time `json:"enroll_expires,omitzero"`
	// PublicKey is the key itself, as the link carries it.
	PublicKey string `json:"-"`
}

// AddDevice registers a device of owner and returns a one-time enrolment
// token for it (shown once), good for ttl (see Enroll).
func (a *Accounts) AddDevice(ctx context.Context, owner, name string, ttl time.Duration) (Device, string, error) {
	if err := checkName("device", name); err != nil {
		return Device{}, "", err
	}
	var exists int
	if err := a.db.QueryRowContext(ctx, `SELECT count(*) FROM users WHERE name = ?`, owner).Scan(&exists); err != nil {
		return Device{}, "", err
	}
	if exists == 0 {
		return Device{}, "", api.Errorf(api.CodeNotFound, "no user %q (add one with `corral hub user add`)", owner)
	}
	ttl, err := enrollTTL(ttl)
	if err != nil {
		return Device{}, "", err
	}
	tok := newToken(enrollTokenPrefix)
	d := Device{ID: newDeviceID(), Name: name, Owner: owner, CreatedAt: time.Now(), EnrollExpires: time.Now().Add(ttl)}
	_, err = a.db.ExecContext(ctx, `INSERT INTO devices (id, name, owner, created_at, enroll_hash, enroll_expires) VALUES (?, ?, ?, ?, ?, ?)`,
		d.ID, d.Name, d.Owner, d.CreatedAt.UnixNano(), hashToken(tok), d.EnrollExpires.UnixNano())
	if err != nil {
		if strings.Contains(err.Error(), "UNIQUE") {
			return Device{}, "", api.Errorf(api.CodeConflict, "%s already has a device %q (enrol it again with `corral hub device enroll`, or revoke it first)", owner, name)
		}
		return Device{}, "", err
	}
	return d, tok, nil
}

// RevokeDevice forgets a device: its token stops working at once (a
// connected device is cut off by the hub), its cached sessions go, and the
// name is free for a new device.
func (a *Accounts) RevokeDevice(ctx context.Context, owner, name string) (Device, error) {
	d, err := a.device(ctx, `owner = ? AND name = ?`, owner, name)
	if err != nil {
		return Device{}, api.Errorf(api.CodeNotFound, "%s has no device %q", owner, name)
	}
	tx, err := a.db.BeginTx(ctx, nil)
	if err != nil {
		return Device{}, err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM devices WHERE id = ?`, d.ID); err != nil {
		return Device{}, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM device_sessions WHERE device_id = ?`, d.ID); err != nil {
		return Device{}, err
	}
	d.Revoked = true
	return d, tx.Commit()
}

// DeviceByID finds a device, revoked or not.
func (a *Accounts) DeviceByID(ctx context.Context, id string) (Device, error) {
	return a.device(ctx, `id = ?`, id)
}

func (a *Accounts) device(ctx context.Context, where string, args ...any) (Device, error) {
	var d Device
	var created int64
	var revoked, seen, expires sql.NullInt64
	var pub sql.NullString
	err := a.db.QueryRowContext(ctx, `SELECT id, name, owner, created_at, revoked_at, hostname, last_seen, public_key, enroll_expires FROM devices WHERE `+where, args...).
		Scan(&d.ID, &d.Name, &d.Owner, &created, &revoked, &d.Hostname, &seen, &pub, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return Device{}, api.Errorf(api.CodeNotFound, "no such device")
	}
	if err != nil {
		return Device{}, err
	}
	d.CreatedAt = time.Unix(0, created)
	d.Revoked = revoked.Valid
	if seen.Valid {
		d.LastSeen = time.Unix(0, seen.Int64)
	}
	if pub.Valid {
		d.PublicKey = pub.String
		d.Key = fingerprint(pub.String)
	}
	if expires.Valid {
		d.EnrollExpires = time.Unix(0, expires.Int64)
	}
	return d, nil
}

// Devices lists a user's devices ("" for everyone's).
func (a *Accounts) Devices(ctx context.Context, owner string) ([]Device, error) {
	q := `SELECT id FROM devices`
	var args []any
	if owner != "" {
		q += ` WHERE owner = ?`
		args = append(args, owner)
	}
	q += ` ORDER BY owner, name, created_at`
	rows, err := a.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	out := make([]Device, 0, len(ids))
	for _, id := range ids {
		d, err := a.DeviceByID(ctx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// Seen records that a device connected, and from which host.
func (a *Accounts) Seen(ctx context.Context, id, hostname string) error {
	_, err := a.db.ExecContext(ctx, `UPDATE devices SET last_seen = ?, hostname = ? WHERE id = ?`, time.Now().UnixNano(), hostname, id)
	return err
}

// String describes a device for logs.
func (d Device) String() string { return fmt.Sprintf("%s/%s (%s)", d.Owner, d.Name, d.ID) }
