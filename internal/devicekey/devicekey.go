// Package devicekey is a machine's identity on a hub: an Ed25519 key pair
// the agent makes at its first start and keeps in its data directory (mode
// 0600), and the challenge it signs on every connection to prove it
// (docs/protocol.md, "Connecting"). The hub keeps only the public key,
// bound at enrolment, in the spirit of Syncthing's device IDs and
// Tailscale's node keys: nothing the hub holds or the network carries lets
// anyone else connect as the machine.
//
// What is signed names the hub the agent dialed (its host, as the agent
// wrote it in the URL) and the hub's id, with a fresh nonce from the hub, so
// a signature is good for one connection to one hub: a hub cannot pass it
// on to another to connect there as the agent, and nobody can replay it.
package devicekey

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// NonceSize is the size of a hub's challenge nonce, in bytes.
const NonceSize = 32

// Key is a machine's private key.
type Key struct {
	priv ed25519.PrivateKey
}

// ErrNoKey: the key file does not exist.
var ErrNoKey = errors.New("no device key")

// LoadOrCreate loads the key at path, making it (mode 0600) if there is
// none. created says it was made now.
func LoadOrCreate(path string) (k *Key, created bool, err error) {
	k, err = Load(path)
	if !errors.Is(err, ErrNoKey) {
		return k, false, err
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, false, fmt.Errorf("device key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, false, fmt.Errorf("device key: %w", err)
	}
	b := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	if err := writeNew(path, b); err != nil {
		if errors.Is(err, os.ErrExist) {
			// Another process made it first: use that one.
			k, err := Load(path)
			return k, false, err
		}
		return nil, false, fmt.Errorf("device key: %w", err)
	}
	return &Key{priv: priv}, true, nil
}

// Generate makes a key that lives in memory only (tests and benchmarks).
func Generate() (*Key, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("device key: %w", err)
	}
	return &Key{priv: priv}, nil
}

// writeNew writes b to a new file at path, mode 0600, whole or not at all:
// a temporary file, synced, then linked into place (which fails if path
// exists).
func writeNew(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".device-key-*") // mode 0600
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Link(tmp, path)
}

// maxKeyFile bounds what Load reads: a PEM Ed25519 key is about 120 bytes.
const maxKeyFile = 4 << 10

// Load reads the key at path. It refuses a file that others may read or
// that another user owns: the key is the machine's identity, and whoever
// read it can be the machine.
func Load(path string) (*Key, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNoKey, path)
	}
	if err != nil {
		return nil, fmt.Errorf("device key: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("device key: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("device key %s is not a regular file", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("device key %s may be read by others (mode %04o): `chmod 600 %s`, and if someone may have read it, "+
			"delete it and enrol this machine again (corral hub device enroll)", path, perm, path)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return nil, fmt.Errorf("device key %s belongs to another user (uid %d)", path, st.Uid)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return nil, fmt.Errorf("device key %s: %w", path, err)
	}
	if len(b) > maxKeyFile {
		return nil, fmt.Errorf("device key %s: not a corral device key (too big)", path)
	}
	k, err := parse(b)
	if err != nil {
		return nil, fmt.Errorf("device key %s: %w (delete it to make a new one, then enrol this machine again)", path, err)
	}
	return k, nil
}

func parse(b []byte) (*Key, error) {
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "PRIVATE KEY" {
		return nil, errors.New("not a PEM private key")
	}
	parsed, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, err
	}
	priv, ok := parsed.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("a %T, not an Ed25519 key", parsed)
	}
	return &Key{priv: priv}, nil
}

// Public returns the public key.
func (k *Key) Public() ed25519.PublicKey { return k.priv.Public().(ed25519.PublicKey) }

// PublicString is the public key as the protocol writes it: base64url
// without padding (43 characters).
func (k *Key) PublicString() string { return EncodePublic(k.Public()) }

// Fingerprint names the key for people, as ssh-keygen -l does.
func (k *Key) Fingerprint() string { return Fingerprint(k.Public()) }

// EncodePublic writes a public key as base64url without padding.
func EncodePublic(pub ed25519.PublicKey) string { return base64.RawURLEncoding.EncodeToString(pub) }

// ParsePublic reads a public key written by EncodePublic.
func ParsePublic(s string) (ed25519.PublicKey, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != ed25519.PublicKeySize {
		return nil, errors.New("not an Ed25519 public key (want 43 characters of base64url)")
	}
	return ed25519.PublicKey(b), nil
}

// Fingerprint is "SHA256:" and the unpadded base64 of the key's SHA-256.
func Fingerprint(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return "SHA256:" + base64.RawStdEncoding.EncodeToString(sum[:])
}

// Challenge is what a signature covers, besides the device's key.
type Challenge struct {
	// Host is the hub's host as the agent dialed it (the hub compares it
	// with the Host of the request it received); see NormalHost.
	Host string
	// Hub is the hub's id, from the challenge.
	Hub string
	// Nonce is the hub's fresh random challenge.
	Nonce []byte
}

// payload is the byte string signed: a fixed context, then each field on
// a line of its own. No field may hold a newline (Sign and Verify refuse
// one), so two different challenges never give the same payload.
func (c Challenge) payload(pub ed25519.PublicKey) ([]byte, error) {
	host := NormalHost(c.Host)
	if host == "" || strings.ContainsAny(host, "\r\n") || strings.ContainsAny(c.Hub, "\r\n") || c.Hub == "" {
		return nil, errors.New("challenge: no host or hub id, or a newline in one")
	}
	if len(c.Nonce) != NonceSize {
		return nil, fmt.Errorf("challenge: nonce of %d bytes, want %d", len(c.Nonce), NonceSize)
	}
	var b bytes.Buffer
	b.WriteString("corral device link v2\n")
	b.WriteString("hub-host: " + host + "\n")
	b.WriteString("hub-id: " + c.Hub + "\n")
	b.WriteString("nonce: " + base64.RawURLEncoding.EncodeToString(c.Nonce) + "\n")
	b.WriteString("device-key: " + EncodePublic(pub) + "\n")
	return b.Bytes(), nil
}

// Sign signs a challenge.
func (k *Key) Sign(c Challenge) ([]byte, error) {
	p, err := c.payload(k.Public())
	if err != nil {
		return nil, err
	}
	return ed25519.Sign(k.priv, p), nil
}

// Verify checks a signature of a challenge by pub.
func Verify(pub ed25519.PublicKey, c Challenge, sig []byte) bool {
	if len(pub) != ed25519.PublicKeySize || len(sig) != ed25519.SignatureSize {
		return false
	}
	p, err := c.payload(pub)
	if err != nil {
		return false
	}
	return ed25519.Verify(pub, p, sig)
}

// NewNonce returns a fresh random nonce.
func NewNonce() []byte {
	b := make([]byte, NonceSize)
	rand.Read(b)
	return b
}

// NormalHost is the host part of a URL's host or an HTTP Host header, as
// both ends compare it: lower case, without the port, the brackets of an
// IPv6 address or a trailing dot. The port is left out because a reverse
// proxy may pass the Host without it (nginx's $host); the name is what ties
// a signature to one hub.
func NormalHost(hostport string) string {
	h := hostport
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		h = host
	}
	h = strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"), ".")
	return strings.ToLower(h)
}
