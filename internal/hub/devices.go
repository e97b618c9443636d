package hub

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/devicekey"
	"github.com/corral-dev/corral/internal/store"
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
// off by CutRevoked).
func (a *Accounts) Enroll(ctx context.Context, owner, name string, ttl time.Duration) (Registration, string, error) {
	ttl, err := enrollTTL(ttl)
	if err != nil {
		return Registration{}, "", err
	}
	d, err := a.device(a.st.DeviceByName(ctx, owner, name))
	if err != nil {
		return Registration{}, "", api.Errorf(api.CodeNotFound, "%s has no device %q (add it with `corral hub device add`)", owner, name)
	}
	tok := newToken(enrollTokenPrefix)
	d.EnrollExpires = time.Now().Add(ttl)
	if err := a.st.SetEnrollment(ctx, d.ID, hashToken(tok), d.EnrollExpires); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return Registration{}, "", api.Errorf(api.CodeNotFound, "no device %q", name)
		}
		return Registration{}, "", err
	}
	return d, tok, nil
}

// DeviceByKey finds the device whose key is pub (as the link carries it).
func (a *Accounts) DeviceByKey(ctx context.Context, pub string) (Registration, bool) {
	if _, err := devicekey.ParsePublic(pub); err != nil {
		return Registration{}, false
	}
	d, err := a.device(a.st.DeviceByKey(ctx, pub))
	return d, err == nil
}

// DeviceByEnrollToken finds the device of an unspent enrolment token that
// has not expired.
func (a *Accounts) DeviceByEnrollToken(ctx context.Context, token string) (Registration, bool) {
	if !strings.HasPrefix(token, enrollTokenPrefix) {
		return Registration{}, false
	}
	d, err := a.device(a.st.DeviceByEnrollHash(ctx, hashToken(token), time.Now()))
	return d, err == nil
}

// LegacyDevice finds the device of a device token of link protocol 1
// (cd_…), which no longer lets anyone in: the hub tells it to enrol.
func (a *Accounts) LegacyDevice(ctx context.Context, token string) (Registration, bool) {
	if !strings.HasPrefix(token, deviceTokenPrefix) {
		return Registration{}, false
	}
	d, err := a.device(a.st.DeviceByLegacyHash(ctx, hashToken(token)))
	return d, err == nil
}

// BindKey spends an enrolment token: pub becomes the device's key, in one
// statement that succeeds only while the token is unspent and unexpired, so
// of two connections racing with one token (to this hub or another on the
// same database) one wins. A key already bound to another device is
// refused (conflict).
func (a *Accounts) BindKey(ctx context.Context, deviceID, token, pub string) error {
	if _, err := devicekey.ParsePublic(pub); err != nil {
		return api.Errorf(api.CodeBadRequest, "%v", err)
	}
	err := a.st.BindKey(ctx, deviceID, hashToken(token), pub, time.Now())
	switch {
	case errors.Is(err, store.ErrConflict):
		if other, ok := a.DeviceByKey(ctx, pub); ok {
			return api.Errorf(api.CodeConflict, "this machine's key is already enrolled as %s/%s", other.Owner, other.Name)
		}
		return api.Errorf(api.CodeConflict, "this machine's key is already enrolled as another device")
	case errors.Is(err, store.ErrNotFound):
		return api.Errorf(api.CodeUnauthorized, "the enrolment token is spent or expired")
	}
	return err
}
