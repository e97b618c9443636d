package web

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"
	"golang.org/x/time/rate"

	"github.com/corral-dev/corral/internal/store"
)

// Keys of the secrets kept in the store.
const (
	KeyAccessToken = "web.access_token"
	KeyCookieKey   = "web.cookie_key"
	KeyPassword    = "web.password"   // bcrypt hash
	KeyGeneration  = "web.generation" // bumped to log every browser out
)

// Cookie names.
const (
	cookieSession = "corral_session"
	cookieCSRF    = "corral_csrf"
	headerCSRF    = "X-Corral-CSRF"
	sessionLife   = 30 * 24 * time.Hour
)

// Auth checks who is calling: a browser with a session cookie, or a script
// with the access token as a bearer token.
type Auth struct {
	store  *store.Store
	token  string
	key    []byte
	secure bool

	mu         sync.Mutex
	generation string
	limits     map[string]*rate.Limiter
	lastSweep  time.Time
}

// LoadAuth loads (making on first run) the access token and cookie key.
func LoadAuth(ctx context.Context, st *store.Store, secure bool) (*Auth, error) {
	tok, err := st.SetIfAbsent(ctx, KeyAccessToken, []byte(randomString(32)))
	if err != nil {
		return nil, fmt.Errorf("access token: %w", err)
	}
	key, err := st.SetIfAbsent(ctx, KeyCookieKey, []byte(randomString(32)))
	if err != nil {
		return nil, fmt.Errorf("cookie key: %w", err)
	}
	gen, err := st.SetIfAbsent(ctx, KeyGeneration, []byte("1"))
	if err != nil {
		return nil, err
	}
	return &Auth{store: st, token: string(tok), key: key, secure: secure, generation: string(gen), limits: map[string]*rate.Limiter{}}, nil
}

// AccessToken is the token printed in the login URL.
func (a *Auth) AccessToken() string { return a.token }

func randomString(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (a *Auth) mac(parts ...string) string {
	m := hmac.New(sha256.New, a.key)
	for _, p := range parts {
		m.Write([]byte(p))
		m.Write([]byte{0})
	}
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func (a *Auth) currentGeneration(ctx context.Context) string {
	// The generation changes when `corral passwd` runs in another process:
	// read it through, it is one indexed row.
	if g, err := a.store.Get(ctx, KeyGeneration); err == nil {
		a.mu.Lock()
		a.generation = string(g)
		a.mu.Unlock()
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.generation
}

// checkToken compares a presented access token in constant time.
func (a *Auth) checkToken(t string) bool {
	return t != "" && subtle.ConstantTimeCompare([]byte(t), []byte(a.token)) == 1
}

// newCookies logs a browser in.
func (a *Auth) newCookies(ctx context.Context, w http.ResponseWriter) {
	exp := strconv.FormatInt(time.Now().Add(sessionLife).Unix(), 10)
	nonce := randomString(16)
	val := "v1." + exp + "." + nonce + "." + a.mac("session", exp, nonce, a.currentGeneration(ctx))
	http.SetCookie(w, &http.Cookie{Name: cookieSession, Value: val, Path: "/", HttpOnly: true, Secure: a.secure,
		SameSite: http.SameSiteStrictMode, MaxAge: int(sessionLife.Seconds())})
	http.SetCookie(w, &http.Cookie{Name: cookieCSRF, Value: a.csrfFor(nonce), Path: "/", Secure: a.secure,
		SameSite: http.SameSiteStrictMode, MaxAge: int(sessionLife.Seconds())})
}

func (a *Auth) csrfFor(nonce string) string { return a.mac("csrf", nonce)[:32] }

func clearCookies(w http.ResponseWriter) {
	for _, n := range []string{cookieSession, cookieCSRF} {
		http.SetCookie(w, &http.Cookie{Name: n, Value: "", Path: "/", MaxAge: -1})
	}
}

// sessionNonce validates the session cookie and returns its nonce.
func (a *Auth) sessionNonce(r *http.Request) (string, bool) {
	c, err := r.Cookie(cookieSession)
	if err != nil {
		return "", false
	}
	parts := strings.Split(c.Value, ".")
	if len(parts) != 4 || parts[0] != "v1" {
		return "", false
	}
	exp, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil || time.Now().Unix() > exp {
		return "", false
	}
	want := a.mac("session", parts[1], parts[2], a.currentGeneration(r.Context()))
	if subtle.ConstantTimeCompare([]byte(parts[3]), []byte(want)) != 1 {
		return "", false
	}
	return parts[2], true
}

// how a request authenticated.
type credential int

const (
	credNone credential = iota
	credCookie
	credBearer
)

// authenticate says how r proves who it is.
func (a *Auth) authenticate(r *http.Request) credential {
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		if a.checkToken(strings.TrimPrefix(h, "Bearer ")) {
			return credBearer
		}
		return credNone
	}
	if _, ok := a.sessionNonce(r); ok {
		return credCookie
	}
	return credNone
}

// checkCSRF: a state-changing request made with the cookie must echo the
// CSRF value that only our own page can read.
func (a *Auth) checkCSRF(r *http.Request) bool {
	nonce, ok := a.sessionNonce(r)
	if !ok {
		return false
	}
	h := r.Header.Get(headerCSRF)
	return h != "" && subtle.ConstantTimeCompare([]byte(h), []byte(a.csrfFor(nonce))) == 1
}

// blocked reports whether a client address has used up its failed
// attempts (bursts of 5, then one per 6 s) and how long it must wait.
// Only failures are charged (see failed), so a person who types the right
// password is not locked out by someone else's guessing on their address
// unless the guessing is going on right now.
func (a *Auth) blocked(r *http.Request) (bool, time.Duration) {
	l := a.limiter(clientIP(r))
	now := time.Now()
	if l.TokensAt(now) >= 1 {
		return false, 0
	}
	res := l.ReserveN(now, 1)
	d := res.DelayFrom(now)
	res.CancelAt(now)
	return true, d
}

// failed charges a failed attempt to a client address.
func (a *Auth) failed(r *http.Request) {
	a.limiter(clientIP(r)).Allow()
}

func (a *Auth) limiter(ip string) *rate.Limiter {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := time.Now()
	if now.Sub(a.lastSweep) > 10*time.Minute {
		for k, l := range a.limits {
			if l.TokensAt(now) >= float64(l.Burst()) {
				delete(a.limits, k)
			}
		}
		a.lastSweep = now
	}
	l, ok := a.limits[ip]
	if !ok {
		l = rate.NewLimiter(rate.Every(6*time.Second), 5)
		a.limits[ip] = l
	}
	return l
}

func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// PasswordSet reports whether a password login is configured.
func (a *Auth) PasswordSet(ctx context.Context) bool {
	_, err := a.store.Get(ctx, KeyPassword)
	return err == nil
}

// checkPassword compares a password with the stored hash.
func (a *Auth) checkPassword(ctx context.Context, pw string) bool {
	hash, err := a.store.Get(ctx, KeyPassword)
	if err != nil || pw == "" {
		return false
	}
	return bcrypt.CompareHashAndPassword(hash, []byte(pw)) == nil
}

// SetPassword stores a password (empty: none) and logs every browser out.
func SetPassword(ctx context.Context, st *store.Store, pw string) error {
	if pw == "" {
		if err := st.Delete(ctx, KeyPassword); err != nil {
			return err
		}
	} else {
		if len(pw) < 8 {
			return errors.New("password: use at least 8 characters")
		}
		if len(pw) > 72 {
			return errors.New("password: at most 72 bytes")
		}
		hash, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.DefaultCost)
		if err != nil {
			return err
		}
		if err := st.Set(ctx, KeyPassword, hash); err != nil {
			return err
		}
	}
	return st.Set(ctx, KeyGeneration, []byte(randomString(8)))
}
