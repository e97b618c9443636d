package store

import (
	"context"
	"time"
)

// A hub of several replicas (internal/hub, cluster.go) keeps, besides the
// Store, one log of changes per user (its sessions, its devices, its
// notifications): the order every replica shows them in. Only PostgreSQL has it (postgres.Store.EventLog); a hub on
// SQLite is one process and needs none.

// EventLog orders the session changes of a hub of several replicas.
type EventLog interface {
	// ClaimLink records that replica now holds a device's link, with an
	// epoch higher than any before: changes from an older holder are
	// refused from then on (Append). It returns the device's sessions as
	// the log last had them (by session id, the session's JSON).
	ClaimLink(ctx context.Context, deviceID, replica string) (epoch int64, sessions map[string][]byte, err error)
	// ReleaseLink records that the holder of epoch no longer holds the
	// link (the device is offline), unless a newer holder claimed it.
	ReleaseLink(ctx context.Context, deviceID string, epoch int64) error
	// Append writes changes of a device's sessions, in order, each with
	// the user's next sequence number, and the sessions' new state, in one
	// transaction. It fails with ErrConflict if epoch is no longer the
	// device's (another replica claimed its link). A removal of a session
	// the log does not hold is no change and gets no number.
	Append(ctx context.Context, user, deviceID string, epoch int64, changes []Change) ([]LoggedEvent, error)
	// Since returns up to max of a user's events after seq, in order; ok
	// is false when the log no longer holds the one right after seq.
	Since(ctx context.Context, user string, seq uint64, max int) (evs []LoggedEvent, ok bool, err error)
	// Publish writes events that carry no state (notifications: news, not
	// state, which a snapshot does not hold), each with the user's next
	// number. Unlike Append it needs no link: a notification is not lost
	// because its device's link moved meanwhile.
	Publish(ctx context.Context, user string, events [][]byte) ([]LoggedEvent, error)
	// Retire removes a device from the log (revoked): its link is taken
	// from whoever holds it (its holder's writes and reclaims are refused
	// from then on), its sessions and its state are deleted, and
	// each removal is logged with the event removed gives (sessionID ""
	// for the device itself).
	Retire(ctx context.Context, user, deviceID string, removed func(sessionID string) []byte) ([]LoggedEvent, error)
	// Snapshot is every session and device of a user (JSON) and the
	// sequence number they are the state at.
	Snapshot(ctx context.Context, user string) (seq uint64, sessions, devices [][]byte, err error)
	// Online says which of the devices have a link held by a replica.
	Online(ctx context.Context, deviceIDs []string) (map[string]bool, error)
	// Alive records that replica is alive for ttl more.
	Alive(ctx context.Context, replica string, ttl time.Duration) error
	// Reap takes over, for replica, the links held by replicas that did
	// not say they were alive in time (killed, or cut off): each with a new
	// epoch, so a replica that was only slow can no longer write, and its
	// sessions as the log has them, for the taker to write offline.
	Reap(ctx context.Context, replica string) ([]Reaped, error)
	// Reclaim claims a device's link again for a replica that still holds
	// it, if it was reaped (offline, nobody's): ok is false when another
	// replica holds it now.
	Reclaim(ctx context.Context, deviceID, replica string) (epoch int64, sessions map[string][]byte, ok bool, err error)
}

// Reaped is a link taken over from a dead replica.
type Reaped struct {
	DeviceID string
	User     string
	Epoch    int64
	Sessions map[string][]byte
	// Device is the device's state as the log has it (nil: none written).
	Device []byte
}

// Change is one change of a session: its new state (JSON), or nil for its
// removal, and the event that tells it (JSON, without its number). With
// Device set it is a change of the device itself (online, offline, its
// name): Session is then the device's state and SessionID is unused; one that
// leaves the log's copy as it was gets no number.
type Change struct {
	SessionID string
	Session   []byte
	Event     []byte
	Device    bool
}

// LoggedEvent is an event with its number in its user's order.
type LoggedEvent struct {
	Seq   uint64
	Event []byte
}
