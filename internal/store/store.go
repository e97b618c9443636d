// Package store keeps corral's persistent state behind typed methods: the
// agent's sessions, and everything a hub keeps about people (users,
// devices, the devices' last known sessions, browser logins, push
// subscriptions, the notification log, small settings). Nothing outside
// this package writes SQL.
//
// Store is what a hub, the dashboard and the notifier use. It has two
// implementations that one conformance suite (internal/store/storetest)
// holds to the same behaviour: SQLite (this package, the default: one
// file in the data directory, no service to run) and PostgreSQL
// (internal/store/postgres, for a hub of several processes). Several
// processes may use one database at once (the management commands beside
// a running hub, or hub replicas on one PostgreSQL): no method keeps a
// cache, and every method whose outcome another process could race
// (enrolment, the claim of a session id, a login link's one use) decides
// it in the database, in one statement or transaction.
//
// The agent's own sessions are SQLite's only (SQLite.PutSession and the
// like): an agent keeps its data directory to itself.
package store

import (
	"context"
	"errors"
	"time"
)

// Errors every implementation returns, to be tested with errors.Is; the
// message around them says what was missing or taken.
var (
	// ErrNotFound: no such row (a user, a device, an unspent token...).
	ErrNotFound = errors.New("not found")
	// ErrConflict: a name, key or token another row holds.
	ErrConflict = errors.New("conflict")
	// ErrOtherUser: the push endpoint is another user's subscription.
	ErrOtherUser = errors.New("another user's push subscription")
)

// Store is everything a hub keeps. Both implementations are safe for
// concurrent use, by goroutines and by processes.
type Store interface {
	Users
	Devices
	DeviceSessions
	Logins
	Push
	NotificationLog
	KV
	// Close releases the database.
	Close() error
}

// User is a person with an account: a hub's user, or the one user of a
// single machine's `corral serve`.
type User struct {
	// ID is stable and never reused: what browser sessions and login
	// links belong to, so a new user under an old name inherits nothing.
	ID   string
	Name string
	// PasswordHash is a bcrypt hash, empty for token login only.
	PasswordHash []byte
	// TokenHash is the SHA-256 of the user's API token ("" for none).
	TokenHash string
	CreatedAt time.Time
}

// UserRef names a user by their stable id (never reused) and their current
// name (which a new user may take after the old one is removed).
type UserRef struct {
	ID   string
	Name string
}

// Users are the people of a hub.
type Users interface {
	// AddUser stores a new user; ErrConflict when the name (or the token
	// hash) is taken.
	AddUser(ctx context.Context, u User) error
	// SoleUser makes sure u.Name exists and is the only user (adding u if
	// it does not exist) and returns it: the one account of a single
	// machine. ErrConflict when another user exists: the database is a
	// hub's.
	SoleUser(ctx context.Context, u User) (User, error)
	// UserByName finds a user; ErrNotFound.
	UserByName(ctx context.Context, name string) (User, error)
	// UserByTokenHash finds the user of an API token's hash; ErrNotFound.
	UserByTokenHash(ctx context.Context, hash string) (UserRef, error)
	// ListUsers lists the users by name.
	ListUsers(ctx context.Context) ([]User, error)
	// HasPassword tells whether the user name has a password; "" asks
	// whether any user has one.
	HasPassword(ctx context.Context, name string) (bool, error)
	// SetPasswordHash replaces a user's password hash (nil: none), and
	// SetTokenHash their API token's; both end the user's browser
	// sessions and login links in the same transaction, since a new
	// secret takes back every login made with the old one. ErrNotFound;
	// ErrConflict when the token hash is another user's.
	SetPasswordHash(ctx context.Context, name string, hash []byte) error
	SetTokenHash(ctx context.Context, name, hash string) error
	// RemoveUser deletes a user and everything kept for them, in one
	// transaction: browser sessions, login links, devices and their
	// sessions, push subscriptions, the notification log, and the kv
	// keys given (settings kept under the user's name). ErrNotFound.
	RemoveUser(ctx context.Context, name string, keys ...string) error
}

// DeviceRecord is the stored row of a machine allowed to connect to a hub.
type DeviceRecord struct {
	ID        string
	Name      string // unique per owner
	Owner     string // the user's name
	CreatedAt time.Time
	Hostname  string    // as it said when it last connected
	LastSeen  time.Time // zero: never connected
	// PublicKey is the key the device proved at enrolment, as the link
	// carries it; "" until it enrols.
	PublicKey  string
	EnrolledAt time.Time
	// EnrollExpires is when its unspent enrolment token stops working
	// (zero: it has none).
	EnrollExpires time.Time
}

// Devices are the machines of a hub's users. Tokens are given and looked
// up by their hashes only.
type Devices interface {
	// AddDevice stores a new device with an enrolment token's hash, good
	// until d.EnrollExpires. ErrNotFound when d.Owner is no user;
	// ErrConflict when the owner has a device of that name.
	AddDevice(ctx context.Context, d DeviceRecord, enrollHash string) error
	// Device, DeviceByName, DeviceByKey find a device; ErrNotFound.
	Device(ctx context.Context, id string) (DeviceRecord, error)
	DeviceByName(ctx context.Context, owner, name string) (DeviceRecord, error)
	DeviceByKey(ctx context.Context, publicKey string) (DeviceRecord, error)
	// DeviceByEnrollHash finds the device of an enrolment token that is
	// unspent and unexpired at now; ErrNotFound.
	DeviceByEnrollHash(ctx context.Context, hash string, now time.Time) (DeviceRecord, error)
	// DeviceByLegacyHash finds the device of a device token of link
	// protocol 1 (which no longer lets anyone in); ErrNotFound.
	DeviceByLegacyHash(ctx context.Context, hash string) (DeviceRecord, error)
	// ListDevices lists a user's devices ("" for everyone's), by owner and
	// name.
	ListDevices(ctx context.Context, owner string) ([]DeviceRecord, error)
	// SetEnrollment gives a device a new enrolment token's hash, good
	// until expires, replacing an unspent one; ErrNotFound.
	SetEnrollment(ctx context.Context, id, hash string, expires time.Time) error
	// BindKey spends an enrolment token: publicKey becomes the device's
	// key, only while the token is unspent and unexpired at now, in one
	// statement, so of two connections racing with one token (to one hub
	// or to two) exactly one wins. ErrNotFound when the token is spent,
	// expired or not the device's; ErrConflict when the key is another
	// device's.
	BindKey(ctx context.Context, id, enrollHash, publicKey string, now time.Time) error
	// RemoveDevice deletes a device and its cached sessions; ErrNotFound.
	RemoveDevice(ctx context.Context, id string) error
	// DeviceSeen records that a device connected at at, from hostname.
	DeviceSeen(ctx context.Context, id, hostname string, at time.Time) error
}

// DeviceSession is a hub's copy of one session of a device, kept for when
// the device is offline or the hub restarts. Data is the session as the
// hub encodes it (JSON); the store does not read it.
type DeviceSession struct {
	DeviceID  string
	SessionID string
	Data      []byte
}

// DeviceSessionChange is what changed of one device's sessions: with
// Replace, its earlier rows go first (a full sync); then Delete goes, and
// Put is written.
type DeviceSessionChange struct {
	DeviceID string
	Replace  bool
	Delete   []string
	Put      []DeviceSession
}

// DeviceSessions are the hub's copies of its devices' sessions. A session
// id belongs to one device at a time: a device naming another's session
// must neither take it over nor unlist it.
type DeviceSessions interface {
	// SaveDeviceSessions applies changes in one transaction, every
	// deletion before any write, so an id one device gives up in a batch
	// can be taken by another in the same batch. A Put whose session id
	// another device holds is not written and is returned in refused (the
	// claim is decided in the database, so two hubs racing for one id get
	// one winner); an id held by a device that no longer exists is free.
	SaveDeviceSessions(ctx context.Context, changes []DeviceSessionChange) (refused []DeviceSession, err error)
	// LoadDeviceSessions returns every device's sessions.
	LoadDeviceSessions(ctx context.Context) ([]DeviceSession, error)
}

// WebSession is a browser's login. The cookie holds a random secret; the
// database holds only its hash, and a public id to list and revoke it by.
type WebSession struct {
	ID        string    `json:"id"`
	UserID    string    `json:"-"`
	User      string    `json:"user"`
	CreatedAt time.Time `json:"created_at"`
	LastSeen  time.Time `json:"last_seen"`
	ExpiresAt time.Time `json:"expires_at"` // absolute; the idle limit is the caller's
	UserAgent string    `json:"user_agent,omitempty"`
	Address   string    `json:"address,omitempty"`
}

// Logins are browser sessions and one-time login links.
type Logins interface {
	// AddWebSession stores a new browser session (secretHash: the hash of
	// the cookie's secret). It drops the user's expired sessions, and the
	// oldest beyond keep, so a user's list stays bounded. An error for a
	// user id that does not exist.
	AddWebSession(ctx context.Context, ws WebSession, secretHash string, keep int) error
	// WebSessionBySecret finds the session of a cookie's secret hash, with
	// its user's current name; ErrNotFound when there is none (ended, or
	// its user removed).
	WebSessionBySecret(ctx context.Context, secretHash string) (WebSession, error)
	// TouchWebSession records that a session was used at at.
	TouchWebSession(ctx context.Context, id string, at time.Time) error
	// WebSessions lists a user's browser sessions, most recently used
	// first.
	WebSessions(ctx context.Context, userID string) ([]WebSession, error)
	// EndWebSession ends one of a user's sessions; ErrNotFound if the user
	// has no session with that id.
	EndWebSession(ctx context.Context, userID, id string) error
	// EndUserLogins ends every browser session and unspent login link of
	// a user and returns how many sessions there were.
	EndUserLogins(ctx context.Context, userID string) (int64, error)
	// AddLoginLink stores a one-time login link (by the hash of its
	// secret) for a user until expires, and drops the expired ones.
	AddLoginLink(ctx context.Context, hash, userID string, created, expires time.Time) error
	// SpendLoginLink uses up a login link: valid or not, it is gone
	// afterwards, so a link works once at most, however many hubs it is
	// brought to at once. ErrNotFound when it does not exist, was spent,
	// has expired at now, or its user is gone.
	SpendLoginLink(ctx context.Context, hash string, now time.Time) (UserRef, error)
}

// PushSubscription is a browser's Web Push subscription.
type PushSubscription struct {
	Endpoint  string
	P256dh    string
	Auth      string
	User      string
	CreatedAt time.Time
}

// Push are the browsers' Web Push subscriptions.
type Push interface {
	// PutPushSubscription adds a subscription of p.User, or replaces that
	// user's own with the same endpoint. An endpoint another user holds is
	// neither taken over nor changed: ErrOtherUser.
	PutPushSubscription(ctx context.Context, p PushSubscription) error
	// DeletePushSubscription removes a subscription, whoever's it is (the
	// push service said it is gone); a missing one is not an error.
	DeletePushSubscription(ctx context.Context, endpoint string) error
	// DeleteUserPushSubscription removes one of a user's subscriptions;
	// another user's, or a missing one, is left as it is and is not an
	// error.
	DeleteUserPushSubscription(ctx context.Context, user, endpoint string) error
	// PushSubscriptions lists a user's subscriptions, oldest first.
	PushSubscriptions(ctx context.Context, user string) ([]PushSubscription, error)
}

// Notification is one entry of the notification log.
type Notification struct {
	ID          int64     `json:"id"`
	User        string    `json:"-"`
	Time        time.Time `json:"time"`
	Device      string    `json:"device,omitempty"`
	SessionID   string    `json:"session_id"`
	SessionName string    `json:"session_name"`
	Reason      string    `json:"reason"`
	Message     string    `json:"message,omitempty"`
}

// KeepNotifications bounds the notification log.
const KeepNotifications = 1000

// NotificationLog is what was notified, newest kept.
type NotificationLog interface {
	// AddNotification appends to the log and returns the entry's id
	// (increasing), dropping the oldest beyond KeepNotifications.
	AddNotification(ctx context.Context, n Notification) (int64, error)
	// UpdateNotification changes the message of the user's entry id (a
	// dialog's details came after it was logged); another user's entry,
	// or a missing one, is left as it is and is not an error.
	UpdateNotification(ctx context.Context, user string, id int64, message string) error
	// Notifications returns a user's newest entries first.
	Notifications(ctx context.Context, user string, limit int) ([]Notification, error)
}

// KV are small settings and secrets by key.
type KV interface {
	// Get reads a key; ErrNotFound if it is not set.
	Get(ctx context.Context, key string) ([]byte, error)
	// Set writes a key.
	Set(ctx context.Context, key string, value []byte) error
	// SetIfAbsent writes each key of values that is not set, in one
	// transaction, and returns what is stored under every key: a secret
	// made on first run is made once, and values made together (a key
	// pair) stay together when two processes make them at once.
	SetIfAbsent(ctx context.Context, values map[string][]byte) (map[string][]byte, error)
	// Delete removes a key; a missing one is not an error.
	Delete(ctx context.Context, key string) error
}
