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

	"github.com/corral-dev/corral/internal/identity"
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

// Accounts says who may log in: the one person of a single-machine
// `corral serve` (LocalAccounts), or a hub's users.
type Accounts interface {
	// ByToken finds the user of an access token.
	ByToken(ctx context.Context, token string) (user string, ok bool)
	// ByPassword checks a password; in single-user mode user is ignored.
	ByPassword(ctx context.Context, user, password string) (string, bool)
	// PasswordSet: a password login is possible.
	PasswordSet(ctx context.Context) bool
	// MultiUser: the login form asks for a user name.
	MultiUser() bool
}

// Auth checks who is calling: a browser with a session cookie, or a script
// with an access token as a bearer token.
type Auth struct {
	store    *store.Store
	accounts Accounts
	key      []byte
	secure   bool

	mu         sync.Mutex
	generation string
	limits     map[string]*rate.Limiter
	lastSweep  time.Time
}

// NewAuth loads (making on first run) the cookie key.
func NewAuth(ctx context.Context, st *store.Store, accounts Accounts, secure bool) (*Auth, error) {
	key, err := st.SetIfAbsent(ctx, KeyCookieKey, []byte(randomString(32)))
	if err != nil {
		return nil, fmt.Errorf("cookie key: %w", err)
	}
	gen, err := st.SetIfAbsent(ctx, KeyGeneration, []byte("1"))
	if err != nil {
		return nil, err
	}
	return &Auth{store: st, accounts: accounts, key: key, secure: secure, generation: string(gen), limits: map[string]*rate.Limiter{}}, nil
}

// LocalAccounts is the single person of `corral serve`: the access token
// made on first run, and the optional password of `corral passwd`.
type LocalAccounts struct {
	store *store.Store
	token string
}

// LoadLocalAccounts loads (making on first run) the access token.
func LoadLocalAccounts(ctx context.Context, st *store.Store) (*LocalAccounts, error) {
	tok, err := st.SetIfAbsent(ctx, KeyAccessToken, []byte(randomString(32)))
	if err != nil {
		return nil, fmt.Errorf("access token: %w", err)
	}
	return &LocalAccounts{store: st, token: string(tok)}, nil
}

// AccessToken is the token printed in the login URL.
func (l *LocalAccounts) AccessToken() string { return l.token }

func (l *LocalAccounts) ByToken(_ context.Context, t string) (string, bool) {
	if t != "" && subtle.ConstantTimeCompare([]byte(t), []byte(l.token)) == 1 {
		return identity.Local, true
	}
	return "", false
}

func (l *LocalAccounts) ByPassword(ctx context.Context, _, pw string) (string, bool) {
	hash, err := l.store.Get(ctx, KeyPassword)
	if err != nil || pw == "" {
		return "", false
	}
	if bcrypt.CompareHashAndPassword(hash, []byte(pw)) != nil {
		return "", false
	}
	return identity.Local, true
}

func (l *LocalAccounts) PasswordSet(ctx context.Context) bool {
	_, err := l.store.Get(ctx, KeyPassword)
	return err == nil
}

func (l *LocalAccounts) MultiUser() bool { return false }

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

// newCookies logs a browser in as user.
func (a *Auth) newCookies(ctx context.Context, w http.ResponseWriter, user string) {
	exp := strconv.FormatInt(time.Now().Add(sessionLife).Unix(), 10)
	nonce := randomString(16)
	u := base64.RawURLEncoding.EncodeToString([]byte(user))
	val := "v2." + u + "." + exp + "." + nonce + "." + a.mac("session", u, exp, nonce, a.currentGeneration(ctx))
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

// session validates the session cookie and returns its user and nonce.
func (a *Auth) session(r *http.Request) (user, nonce string, ok bool) {
	c, err := r.Cookie(cookieSession)
	if err != nil {
		return "", "", false
	}
	parts := strings.Split(c.Value, ".")
	if len(parts) != 5 || parts[0] != "v2" {
		return "", "", false
	}
	exp, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil || time.Now().Unix() > exp {
		return "", "", false
	}
	want := a.mac("session", parts[1], parts[2], parts[3], a.currentGeneration(r.Context()))
	if subtle.ConstantTimeCompare([]byte(parts[4]), []byte(want)) != 1 {
		return "", "", false
	}
	u, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil || len(u) == 0 {
		return "", "", false
	}
	return string(u), parts[3], true
}

// how a request authenticated.
type credential int

const (
	credNone credential = iota
	credCookie
	credBearer
)

// authenticate says how r proves who it is, and who.
func (a *Auth) authenticate(r *http.Request) (credential, string) {
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		if u, ok := a.accounts.ByToken(r.Context(), strings.TrimPrefix(h, "Bearer ")); ok {
			return credBearer, u
		}
		return credNone, ""
	}
	if u, _, ok := a.session(r); ok {
		return credCookie, u
	}
	return credNone, ""
}

// checkCSRF: a state-changing request made with the cookie must echo the
// CSRF value that only our own page can read.
func (a *Auth) checkCSRF(r *http.Request) bool {
	_, nonce, ok := a.session(r)
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
