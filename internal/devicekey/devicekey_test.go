package devicekey

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestLoadOrCreate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "device.key")
	k, created, err := LoadOrCreate(path)
	if err != nil || !created {
		t.Fatalf("first start: %v, created %v", err, created)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %04o, want 0600", fi.Mode().Perm())
	}
	k2, created, err := LoadOrCreate(path)
	if err != nil || created {
		t.Fatalf("second start: %v, created %v", err, created)
	}
	if k.PublicString() != k2.PublicString() {
		t.Errorf("the key changed across starts")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}
	if fp := k.Fingerprint(); !strings.HasPrefix(fp, "SHA256:") || len(fp) != 7+43 {
		t.Errorf("fingerprint %q", fp)
	}
}

// Two agents starting at once on one data directory end up with one key.
func TestLoadOrCreateRace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "device.key")
	var wg sync.WaitGroup
	keys := make([]string, 8)
	for i := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, _, err := LoadOrCreate(path)
			if err != nil {
				t.Error(err)
				return
			}
			keys[i] = k.PublicString()
		}()
	}
	wg.Wait()
	for _, k := range keys {
		if k != keys[0] {
			t.Fatalf("different keys: %v", keys)
		}
	}
}

func TestLoadRefuses(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.key")
	if _, _, err := LoadOrCreate(good); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(good)
	write := func(name string, data []byte, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, mode)
		return p
	}
	for _, c := range []struct {
		name, path, want string
	}{
		{"readable by the group", write("group.key", b, 0o640), "may be read by others"},
		{"readable by everyone", write("world.key", b, 0o644), "chmod 600"},
		{"garbage", write("junk.key", []byte("hello"), 0o600), "not a PEM private key"},
		{"huge", write("huge.key", bytes.Repeat([]byte("A"), 1<<20), 0o600), "too big"},
		{"an RSA-looking block", write("rsa.key", []byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"), 0o600), "delete it"},
		{"a directory", filepath.Join(dir), "not a regular file"},
	} {
		_, err := Load(c.path)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
	// LoadOrCreate never replaces a key it cannot use.
	if _, _, err := LoadOrCreate(filepath.Join(dir, "world.key")); err == nil {
		t.Errorf("LoadOrCreate used a world-readable key")
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "world.key")); !bytes.Equal(got, b) {
		t.Errorf("LoadOrCreate changed a key it refused")
	}
}

func TestSignVerify(t *testing.T) {
	k, _, err := LoadOrCreate(filepath.Join(t.TempDir(), "k"))
	if err != nil {
		t.Fatal(err)
	}
	other, _, _ := LoadOrCreate(filepath.Join(t.TempDir(), "k"))
	c := Challenge{Host: "Hub.Example.com:7777", Hub: "h123", Nonce: NewNonce()}
	sig, err := k.Sign(c)
	if err != nil {
		t.Fatal(err)
	}
	if !Verify(k.Public(), c, sig) {
		t.Fatal("a good signature does not verify")
	}
	// The port and case do not matter; the name does.
	if !Verify(k.Public(), Challenge{Host: "hub.example.com", Hub: c.Hub, Nonce: c.Nonce}, sig) {
		t.Errorf("the same host without its port does not verify")
	}
	bad := []struct {
		name string
		pub  []byte
		c    Challenge
		sig  []byte
	}{
		{"another hub's host", k.Public(), Challenge{Host: "evil.example.com:7777", Hub: c.Hub, Nonce: c.Nonce}, sig},
		{"another hub id", k.Public(), Challenge{Host: c.Host, Hub: "h124", Nonce: c.Nonce}, sig},
		{"another nonce", k.Public(), Challenge{Host: c.Host, Hub: c.Hub, Nonce: NewNonce()}, sig},
		{"another key", other.Public(), c, sig},
		{"a cut signature", k.Public(), c, sig[:63]},
		{"no host", k.Public(), Challenge{Hub: c.Hub, Nonce: c.Nonce}, sig},
		{"a newline in the hub id", k.Public(), Challenge{Host: c.Host, Hub: "h123\nhub-host: x", Nonce: c.Nonce}, sig},
		{"a short nonce", k.Public(), Challenge{Host: c.Host, Hub: c.Hub, Nonce: c.Nonce[:16]}, sig},
	}
	for _, b := range bad {
		if Verify(b.pub, b.c, b.sig) {
			t.Errorf("%s: verified", b.name)
		}
	}
	if _, err := k.Sign(Challenge{Host: "x", Hub: "a\nb", Nonce: NewNonce()}); err == nil {
		t.Errorf("signed a hub id with a newline")
	}
}

func TestPublicRoundTrip(t *testing.T) {
	k, _, _ := LoadOrCreate(filepath.Join(t.TempDir(), "k"))
	pub, err := ParsePublic(k.PublicString())
	if err != nil || !bytes.Equal(pub, k.Public()) {
		t.Fatalf("round trip: %v", err)
	}
	for _, s := range []string{"", "abc", k.PublicString() + "A", strings.Repeat("!", 43)} {
		if _, err := ParsePublic(s); err == nil {
			t.Errorf("ParsePublic(%q) took it", s)
		}
	}
}

func TestNormalHost(t *testing.T) {
	for in, want := range map[string]string{
		"Hub.Example.COM":     "hub.example.com",
		"hub.example.com:443": "hub.example.com",
		"hub.example.com.":    "hub.example.com",
		"127.0.0.1:7777":      "127.0.0.1",
		"[::1]:7777":          "::1",
		"[::1]":               "::1",
		"localhost":           "localhost",
		"":                    "",
	} {
		if got := NormalHost(in); got != want {
			t.Errorf("NormalHost(%q) = %q, want %q", in, got, want)
		}
	}
}
