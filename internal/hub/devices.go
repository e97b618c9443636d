package hub

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/devicekey"
)

// Enrolment: a device is added with a one-time enrolment token (ce_…, shown
// once, kept hashed, short-lived). The first connection that brings it
// proves a key (internal/devicekey) and binds that key to the device; the
// token is then spent. From then on the device connects by its key alone.

// Enrolment tokens last DefaultEnrollTTL unless told otherwise, at most
// MaxEnrollTTL.
const (
	DefaultEnrollTTL = time.Hour
	MaxEnrollTTL     = 7 * 24 * time.Hour
)

func enrollTTL(ttl time.Duration) (time.Duration, error) {
	switch {
	case ttl == 0:
		return DefaultEnrollTTL, nil
	case ttl < time.Minute || ttl > MaxEnrollTTL:
		return 0, api.Errorf(api.CodeBadRequest, "an enrolment token lasts from 1m to %v", MaxEnrollTTL)
	}
	return ttl, nil
}

// newDeviceID makes a device's id: random, so that it says nothing about
// any token or key.
func newDeviceID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return "d" + hex.EncodeToString(b)[:15]
}

func fingerprint(pub string) string {
	k, err := devicekey.ParsePublic(pub)
	if err != nil {
		return ""
	}
	return devicekey.Fingerprint(k)
}

// Enroll gives a device a new one-time enrolment token, replacing an
// unspent one: for a machine that lost its key (a reinstall), or a device
// from before keys. A key it has keeps working until the token is used;
// then the new key replaces it (and a connection with the old one is cut
// off by Watch).
func (a *Accounts) Enroll(ctx context.Context, owner, name string, ttl time.Duration) (Device, string, error) {
	ttl, err := enrollTTL(ttl)
	if err != nil {
		return Device{}, "", err
	}
	d, err := a.device(ctx, `owner = ? AND name = ? AND revoked_at IS NULL`, owner, name)
	if err != nil {
		return Device{}, "", api.Errorf(api.CodeNotFound, "%s has no device %q (add it with `corral hub device add`)", owner, name)
	}
	tok := newToken(enrollTokenPrefix)
	d.EnrollExpires = time.Now().Add(ttl)
	if err := a.exec1(ctx, "device", name, `UPDATE devices SET enroll_hash = ?, enroll_expires = ? WHERE id = ?`,
		hashToken(tok), d.EnrollExpires.UnixNano(), d.ID); err != nil {
		return Device{}, "", err
	}
	return d, tok, nil
}

// DeviceByKey finds the live device whose key is pub (as the link carries
// it).
func (a *Accounts) DeviceByKey(ctx context.Context, pub string) (Device, bool) {
	if _, err := devicekey.ParsePublic(pub); err != nil {
		return Device{}, false
	}
	d, err := a.device(ctx, `public_key = ? AND revoked_at IS NULL`, pub)
	return d, err == nil
}

// DeviceByEnrollToken finds the device of an unspent enrolment token that
// has not expired.
func (a *Accounts) DeviceByEnrollToken(ctx context.Context, token string) (Device, bool) {
	if !strings.HasPrefix(token, enrollTokenPrefix) {
		return Device{}, false
	}
	d, err := a.device(ctx, `enroll_hash = ? AND enroll_expires > ? AND revoked_at IS NULL`, hashToken(token), time.Now().UnixNano())
	return d, err == nil
}

// LegacyDevice finds the device of a device token of link protocol 1
// (cd_…), which no longer lets anyone in: the hub tells it to enrol.
func (a *Accounts) LegacyDevice(ctx context.Context, token string) (Device, bool) {
	if !strings.HasPrefix(token, deviceTokenPrefix) {
		return Device{}, false
	}
	d, err := a.device(ctx, `token_hash = ? AND revoked_at IS NULL`, hashToken(token))
	return d, err == nil
}

// BindKey spends an enrolment token: pub becomes the device's key, in one
// statement that succeeds only while the token is unspent and unexpired, so
// of two connections racing with one token one wins. A key already bound
// to another device is refused (conflict).
func (a *Accounts) BindKey(ctx context.Context, deviceID, token, pub string) error {
	if _, err := devicekey.ParsePublic(pub); err != nil {
		return api.Errorf(api.CodeBadRequest, "%v", err)
	}
	now := time.Now().UnixNano()
	res, err := a.db.ExecContext(ctx, `UPDATE devices SET public_key = ?, enroll_hash = NULL, enroll_expires = NULL, enrolled_at = ?, token_hash = NULL
		WHERE id = ? AND enroll_hash = ? AND enroll_expires > ? AND revoked_at IS NULL`, pub, now, deviceID, hashToken(token), now)
	if err != nil {
		if strings.Contains(err.Error(), "UNIQUE") {
			if other, ok := a.DeviceByKey(ctx, pub); ok {
				return api.Errorf(api.CodeConflict, "this machine's key is already enrolled as %s/%s", other.Owner, other.Name)
			}
			return api.Errorf(api.CodeConflict, "this machine's key is already enrolled as another device")
		}
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return api.Errorf(api.CodeUnauthorized, "the enrolment token is spent or expired")
	}
	return nil
}

// exec1 runs a statement that must change one row of a what called name.
func (a *Accounts) exec1(ctx context.Context, what, name, q string, args ...any) error {
	res, err := a.db.ExecContext(ctx, q, args...)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return api.Errorf(api.CodeNotFound, "no %s %q", what, name)
	}
	return nil
}
