package hub

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/coder/websocket"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/devicekey"
	"github.com/corral-dev/corral/internal/link"
	"github.com/corral-dev/corral/internal/store"
)

// How a device proves who it is (docs/protocol.md, "Connecting"): the
// upgrade request names its public key (and, the first time, carries a
// one-time enrolment token); the hub refuses an unknown key or a bad token
// with 401 before the upgrade. Then the hub's challenge (a fresh nonce and
// the hub's id) is answered by a signature that also covers the hub's
// host as the agent dialed it, which the hub checks against the Host of
// the request it received: a signature is good for one connection to one
// hub.

// probeTimeout bounds how long a device's live connection has to answer
// when another connection of the device arrives: one that answers is
// healthy and keeps the device; one that does not is dead and replaced.
const probeTimeout = 5 * time.Second

// conflictShown is how long the dashboard shows a refused second
// connection after the latest one.
const conflictShown = time.Hour

// linkAuth is what the upgrade request of a remote device claimed.
type linkAuth struct {
	key   string // its public key, as the link carries it
	token string // an enrolment token, if it brought one this device needs
	host  string // the Host the request came to
	from  string // its remote address
}

// loadHubID returns the hub's id, making it at the first start. A hub
// without a database gets a new one per process.
func loadHubID(ctx context.Context, st store.KV) (string, error) {
	b := make([]byte, 12)
	rand.Read(b)
	id := "h" + hex.EncodeToString(b)
	if st == nil {
		return id, nil
	}
	v, err := st.SetIfAbsent(ctx, map[string][]byte{hubIDKey: []byte(id)})
	if err != nil {
		return "", fmt.Errorf("hub id: %w", err)
	}
	return string(v[hubIDKey]), nil
}

// LinkHandler serves GET /api/v1/link: devices dial in here.
func (h *Hub) LinkHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, hasTok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		switch v := r.URL.Query().Get("v"); {
		case v == "1":
			// A corral from before device keys: its token no longer lets
			// it in, whoever holds it.
			if d, ok := h.legacy(r.Context(), tok); ok {
				h.log.Warn("device link of protocol 1 (a corral from before device keys) refused: upgrade corral there and enrol it with `corral hub device enroll "+d.Name+" --user "+d.Owner+"`",
					"device", d.String(), "from", r.RemoteAddr)
			} else {
				h.log.Warn("device link of protocol 1 (a corral from before device keys) refused", "from", r.RemoteAddr)
			}
			http.Error(w, fmt.Sprintf("this hub speaks link protocol %d, where devices prove a key: upgrade corral on this machine and enrol it again (docs/hub.md)", link.Protocol), http.StatusUnauthorized)
			return
		case v != fmt.Sprint(link.Protocol):
			http.Error(w, fmt.Sprintf("unsupported link protocol %q; this hub speaks v=%d", v, link.Protocol), http.StatusBadRequest)
			return
		}
		if h.o.Accounts == nil {
			http.Error(w, "this hub takes no devices", http.StatusUnauthorized)
			return
		}
		refuse := func(logMsg, answer string, args ...any) {
			h.log.Warn(logMsg, append(args, "from", r.RemoteAddr)...)
			http.Error(w, answer, http.StatusUnauthorized)
		}
		key := r.Header.Get(link.HeaderDeviceKey)
		if key == "" {
			if d, ok := h.legacy(r.Context(), tok); ok {
				refuse("device link with a device token from before device keys refused: enrol it with `corral hub device enroll "+d.Name+" --user "+d.Owner+"`",
					"this device token is from before device keys and no longer works: make an enrolment token with `corral hub device enroll NAME --user U`", "device", d.String())
				return
			}
			refuse("device link without a device key refused", "missing device key (header "+link.HeaderDeviceKey+")")
			return
		}
		pub, err := devicekey.ParsePublic(key)
		if err != nil {
			refuse("device link with a malformed device key refused", "malformed device key")
			return
		}
		fp := devicekey.Fingerprint(pub)
		auth := &linkAuth{key: key, host: r.Host, from: r.RemoteAddr}
		d, ok := h.o.Accounts.DeviceByKey(r.Context(), key)
		if !ok {
			// A key the hub does not know needs an enrolment token.
			if !hasTok || tok == "" {
				refuse("device link with an unknown key and no enrolment token refused",
					"this machine's key is not enrolled: start corral agent once with an enrolment token (--token-file or $CORRAL_DEVICE_TOKEN) from `corral hub device add` or `corral hub device enroll`", "key", fp)
				return
			}
			if d, ok = h.o.Accounts.DeviceByEnrollToken(r.Context(), tok); !ok {
				if ld, legacy := h.legacy(r.Context(), tok); legacy {
					refuse("device link with a device token from before device keys refused: enrol it with `corral hub device enroll "+ld.Name+" --user "+ld.Owner+"`",
						"this device token is from before device keys and no longer works: make an enrolment token with `corral hub device enroll NAME --user U`", "key", fp, "device", ld.String())
					return
				}
				refuse("device link with a wrong, spent or expired enrolment token refused",
					"wrong, spent or expired enrolment token: make a new one with `corral hub device enroll NAME --user U`", "key", fp)
				return
			}
			auth.token = tok
		}
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
		if err != nil {
			return
		}
		info := DeviceIdentity{ID: d.ID, Name: d.Name, Owner: d.Owner}
		conn := link.NewWebSocket(c, 0)
		// The link lives on a goroutine of its own and this handler
		// returns: net/http's goroutine, whose stack the request and
		// its checks grew, ends, rather than wait for hours with a
		// hub of thousands of links each holding one. The request's
		// context ends with the handler; the hub's stop ends the link.
		ctx := context.WithoutCancel(r.Context())
		from := r.RemoteAddr
		if !h.g.Go(func() {
			err := h.attach(ctx, info, conn, auth)
			h.log.Info("device link ended", "device", d.String(), "from", from, "key", fp, "err", err)
		}) {
			conn.Close(link.StatusGoingAway, "the hub is shutting down")
		}
	})
}

func (h *Hub) legacy(ctx context.Context, tok string) (Registration, bool) {
	if tok == "" || h.o.Accounts == nil {
		return Registration{}, false
	}
	return h.o.Accounts.LegacyDevice(ctx, tok)
}

// errRefused is a handshake refusal: the link closes with 1008 and this
// reason, which the agent logs.
func errRefused(format string, args ...any) error {
	return &link.CloseError{Code: link.StatusPolicy, Reason: fmt.Sprintf(format, args...)}
}

// prove checks a remote device's answer to the challenge, and spends its
// enrolment token if it came with one. enrolled says it did.
func (h *Hub) prove(ctx context.Context, info DeviceIdentity, auth *linkAuth, nonce []byte, hello link.Msg) (enrolled bool, err error) {
	pub, err := devicekey.ParsePublic(auth.key)
	if err != nil {
		return false, errRefused("malformed device key")
	}
	sig, err := base64.RawURLEncoding.DecodeString(hello.Sig)
	if err != nil || hello.Sig == "" {
		h.log.Warn("device link without a valid signature refused", "device", info.Name, "owner", info.Owner, "from", auth.from)
		return false, errRefused("the hello carries no signature of the challenge")
	}
	// What is checked is the host this hub was asked for: the agent's own
	// word (hello.Host) only explains a mismatch.
	if !devicekey.Verify(pub, devicekey.Challenge{Host: auth.host, Hub: h.id, Nonce: nonce}, sig) {
		if hello.Host != "" && devicekey.NormalHost(hello.Host) != devicekey.NormalHost(auth.host) {
			h.log.Warn("device link signed for another host refused (a reverse proxy must pass Host through, docs/hub.md)",
				"device", info.Name, "owner", info.Owner, "signed_for", cleanText(hello.Host), "host", auth.host, "from", auth.from)
			return false, errRefused("the signature is for host %q, but this hub was reached as %q: a reverse proxy must pass the Host header through",
				cleanText(devicekey.NormalHost(hello.Host)), devicekey.NormalHost(auth.host))
		}
		h.log.Warn("device link with a bad signature refused", "device", info.Name, "owner", info.Owner, "from", auth.from)
		return false, errRefused("bad signature of the challenge")
	}
	if auth.token == "" {
		return false, nil
	}
	if err := h.o.Accounts.BindKey(ctx, info.ID, auth.token, auth.key); err != nil {
		h.log.Warn("device enrolment refused", "device", info.Name, "owner", info.Owner, "from", auth.from, "err", err)
		return false, errRefused("enrolment refused: %v", err)
	}
	h.log.Info("device enrolled: its key is bound and its enrolment token spent", "device", info.Name, "owner", info.Owner,
		"key", fingerprint(auth.key), "from", auth.from)
	return true, nil
}

// claim makes this connection the device's, unless the device has a live
// connection already. A live connection is asked whether it is alive: one
// that answers within probeTimeout keeps the device, and this one is
// refused (4003) as a conflict, logged and shown to the owner; one that
// does not is dead, and this one takes over once its handshake is done. A
// live connection that proved a key which is no longer the device's (it
// enrolled again) is replaced at once.
func (h *Hub) claim(ctx context.Context, info DeviceIdentity, auth *linkAuth, hello link.Msg) error {
	h.mu.Lock()
	dev := h.devices[info.ID]
	if dev == nil {
		dev = &device{info: info, ids: map[string]bool{}, streams: map[uint32]*stream{}}
		h.devices[info.ID] = dev
		h.deviceChangedLocked(dev) // listed, offline, until the handshake ends
	}
	if dev.connecting {
		// Another connection is in its handshake: two at once is two
		// machines.
		err := h.conflictLocked(dev, auth, hello)
		h.mu.Unlock()
		return err
	}
	dev.connecting = true
	old, oldKey := dev.peer, dev.key
	h.mu.Unlock()
	if old == nil || (auth != nil && oldKey != auth.key) {
		return nil
	}
	pctx, cancel := context.WithTimeout(ctx, probeTimeout)
	err := old.Ping(pctx)
	cancel()
	h.mu.Lock()
	defer h.mu.Unlock()
	if err == nil && dev.peer == old {
		dev.connecting = false
		return h.conflictLocked(dev, auth, hello)
	}
	h.log.Info("a device's previous connection did not answer; the new one takes over", "device", info.Name, "owner", info.Owner, "probe", err)
	return nil
}

// unclaim gives up a claim whose handshake failed after it.
func (h *Hub) unclaim(deviceID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if dev := h.devices[deviceID]; dev != nil {
		dev.connecting = false
	}
}

// conflictLocked records and logs a connection refused because the device
// is connected, and returns the refusal. The caller holds h.mu.
func (h *Hub) conflictLocked(dev *device, auth *linkAuth, hello link.Msg) error {
	now := time.Now()
	c := dev.conflict
	if c == nil || now.Sub(c.At) > conflictShown {
		c = &api.DeviceConflict{}
	}
	c = &api.DeviceConflict{At: now, Count: c.Count + 1, Hostname: cleanText(hello.Hostname)}
	if auth != nil {
		c.Address = auth.from
	}
	dev.conflict = c
	h.deviceChangedLocked(dev)
	h.log.Warn("another machine is using a device's identity: a second connection was refused while the first is connected and answers",
		"device", dev.info.Name, "owner", dev.info.Owner, "from", c.Address, "host", c.Hostname, "connected_host", cleanText(dev.hello.Hostname), "refused", c.Count)
	return &link.CloseError{Code: link.StatusConflict, Reason: fmt.Sprintf(
		"device %s is connected from another machine (host %s) that answers: two machines are using one identity (a copied data directory?)",
		dev.info.Name, cleanText(dev.hello.Hostname))}
}

// shownConflict is the device's latest refused connection while it is
// recent enough to show.
func (d *device) shownConflict() *api.DeviceConflict {
	if d.conflict == nil || time.Since(d.conflict.At) > conflictShown {
		return nil
	}
	c := *d.conflict
	return &c
}

// cleanText makes a device's word fit for logs and people: printable, at
// most 64 runes.
func cleanText(s string) string {
	s = strings.ToValidUTF8(s, "?")
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n == 64 {
			b.WriteString("…")
			break
		}
		if !unicode.IsPrint(r) || r == utf8.RuneError {
			r = '?'
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// errNotKey: the link's connection proved another key than the device's.
var errNotKey = errors.New("the device's key was replaced")
