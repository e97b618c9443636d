package hub

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
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
	st store.Store
	// single is the one user of a single-machine `corral serve`
	// (LocalAccounts); "" on a hub.
	single string
}

// NewAccounts keeps the accounts in st.
func NewAccounts(st store.Store) *Accounts { return &Accounts{st: st} }

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
	err := a.st.AddUser(ctx, store.User{ID: newUserID(), Name: name, PasswordHash: hash, TokenHash: hashToken(tok), CreatedAt: time.Now()})
	if errors.Is(err, store.ErrConflict) {
		return "", api.Errorf(api.CodeConflict, "user %q exists", name)
	}
	if err != nil {
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
	return userErr(name, a.st.SetPasswordHash(ctx, name, hash))
}

// RotateToken gives a user a new API token; the old one stops working, and
// the user's browser sessions end.
func (a *Accounts) RotateToken(ctx context.Context, name string) (string, error) {
	tok := newToken(userTokenPrefix)
	if err := userErr(name, a.st.SetTokenHash(ctx, name, hashToken(tok))); err != nil {
		return "", err
	}
	return tok, nil
}

// userErr says which user a store error is about.
func userErr(name string, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return api.Errorf(api.CodeNotFound, "no user %q", name)
	}
	return err
}

// RemoveUser deletes a user, their devices, browser sessions, push
// subscriptions and notification log.
func (a *Accounts) RemoveUser(ctx context.Context, name string) error {
	// The webhook is kept by name like the push subscriptions: it would
	// reach a new user of that name.
	return userErr(name, a.st.RemoveUser(ctx, name, notify.WebhookKey(name)))
}

// Users lists the users.
func (a *Accounts) Users(ctx context.Context) ([]User, error) {
	list, err := a.st.ListUsers(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]User, 0, len(list))
	for _, u := range list {
		out = append(out, User{Name: u.Name, HasPassword: len(u.PasswordHash) > 0, CreatedAt: u.CreatedAt})
	}
	return out, nil
}

// ByToken finds the user of an API token (web.Accounts). A token of an
// older corral serve has no prefix (LocalAccounts), so any string is
// looked up: by its hash, one indexed row.
func (a *Accounts) ByToken(ctx context.Context, token string) (store.UserRef, bool) {
	if token == "" || strings.HasPrefix(token, deviceTokenPrefix) || strings.HasPrefix(token, loginLinkPrefix) {
		return store.UserRef{}, false
	}
	u, err := a.st.UserByTokenHash(ctx, hashToken(token))
	return u, err == nil
}

// ByPassword checks a user's password (web.Accounts). On one machine the
// name is ignored: there is one user.
func (a *Accounts) ByPassword(ctx context.Context, user, password string) (store.UserRef, bool) {
	if a.single != "" {
		user = a.single
	}
	u, err := a.st.UserByName(ctx, user)
	if err != nil || len(u.PasswordHash) == 0 {
		// Spend the same time as a real check, so a wrong name and a wrong
		// password look alike.
		bcrypt.CompareHashAndPassword(dummyHash(), []byte(password))
		return store.UserRef{}, false
	}
	if bcrypt.CompareHashAndPassword(u.PasswordHash, []byte(password)) != nil {
		return store.UserRef{}, false
	}
	return store.UserRef{ID: u.ID, Name: u.Name}, true
}

// dummyHash is made on first use: bcrypt takes ~50 ms, which every corral
// command would pay at start if it were made at package init.
var dummyHash = sync.OnceValue(func() []byte {
	h, _ := bcrypt.GenerateFromPassword([]byte("corral-dummy-password"), bcrypt.DefaultCost)
	return h
})

// PasswordSet: the login form offers passwords (web.Accounts).
func (a *Accounts) PasswordSet(ctx context.Context) bool {
	ok, _ := a.st.HasPassword(ctx, a.single) // a hub's single is "": any user
	return ok
}

// MultiUser: the login form asks for a user name (web.Accounts).
func (a *Accounts) MultiUser() bool { return a.single == "" }

// Registration is a machine allowed to connect: what the hub's admin
// commands show of it (its enrolment, its key, whether it is revoked).
type Registration struct {
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
func (a *Accounts) AddDevice(ctx context.Context, owner, name string, ttl time.Duration) (Registration, string, error) {
	if err := checkName("device", name); err != nil {
		return Registration{}, "", err
	}
	ttl, err := enrollTTL(ttl)
	if err != nil {
		return Registration{}, "", err
	}
	tok := newToken(enrollTokenPrefix)
	d := Registration{ID: newDeviceID(), Name: name, Owner: owner, CreatedAt: time.Now(), EnrollExpires: time.Now().Add(ttl)}
	err = a.st.AddDevice(ctx, store.DeviceRecord{ID: d.ID, Name: d.Name, Owner: d.Owner, CreatedAt: d.CreatedAt, EnrollExpires: d.EnrollExpires}, hashToken(tok))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return Registration{}, "", api.Errorf(api.CodeNotFound, "no user %q (add one with `corral hub user add`)", owner)
	case errors.Is(err, store.ErrConflict):
		return Registration{}, "", api.Errorf(api.CodeConflict, "%s already has a device %q (enrol it again with `corral hub device enroll`, or revoke it first)", owner, name)
	case err != nil:
		return Registration{}, "", err
	}
	return d, tok, nil
}

// RevokeDevice forgets a device: its token stops working at once (a
// connected device is cut off by the hub), its cached sessions go, and the
// name is free for a new device.
func (a *Accounts) RevokeDevice(ctx context.Context, owner, name string) (Registration, error) {
	sd, err := a.st.DeviceByName(ctx, owner, name)
	if err == nil {
		err = a.st.RemoveDevice(ctx, sd.ID)
	}
	if errors.Is(err, store.ErrNotFound) {
		return Registration{}, api.Errorf(api.CodeNotFound, "%s has no device %q", owner, name)
	}
	if err != nil {
		return Registration{}, err
	}
	d := deviceOf(sd)
	d.Revoked = true
	return d, nil
}

// DeviceByID finds a device.
func (a *Accounts) DeviceByID(ctx context.Context, id string) (Registration, error) {
	return a.device(a.st.Device(ctx, id))
}

// device is a store's answer as the hub's Registration.
func (a *Accounts) device(d store.DeviceRecord, err error) (Registration, error) {
	if errors.Is(err, store.ErrNotFound) {
		return Registration{}, api.Errorf(api.CodeNotFound, "no such device")
	}
	if err != nil {
		return Registration{}, err
	}
	return deviceOf(d), nil
}

func deviceOf(d store.DeviceRecord) Registration {
	return Registration{ID: d.ID, Name: d.Name, Owner: d.Owner, CreatedAt: d.CreatedAt, Hostname: d.Hostname, LastSeen: d.LastSeen,
		Key: fingerprint(d.PublicKey), EnrollExpires: d.EnrollExpires, PublicKey: d.PublicKey}
}

// Devices lists a user's devices ("" for everyone's).
func (a *Accounts) Devices(ctx context.Context, owner string) ([]Registration, error) {
	list, err := a.st.ListDevices(ctx, owner)
	if err != nil {
		return nil, err
	}
	out := make([]Registration, 0, len(list))
	for _, d := range list {
		out = append(out, deviceOf(d))
	}
	return out, nil
}

// Seen records that a device connected, and from which host.
func (a *Accounts) Seen(ctx context.Context, id, hostname string) error {
	return a.st.DeviceSeen(ctx, id, hostname, time.Now())
}

// String describes a device for logs.
func (d Registration) String() string { return fmt.Sprintf("%s/%s (%s)", d.Owner, d.Name, d.ID) }
