package web

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"
	"unicode"

	"golang.org/x/time/rate"

	"github.com/corral-dev/corral/internal/store"
)

// Cookie names.
const (
	cookieSession = "corral_session"
	cookieCSRF    = "corral_csrf"
	headerCSRF    = "X-Corral-CSRF"
)

// Browser sessions (docs/web-protocol.md): a row in the store that the
// cookie names; the cookie is worth nothing once the row is gone.
const (
	// SessionLife is the most a browser session lasts after logging in.
	SessionLife = 30 * 24 * time.Hour
	// SessionIdle ends a browser session that was not used for this long.
	SessionIdle = 7 * 24 * time.Hour
	// touchEvery: last seen is written at most this often, not on every
	// request.
	touchEvery = time.Minute
	// keepSessions bounds a user's sessions; logging in again drops the
	// least recently used beyond it.
	keepSessions = 50
	// maxClientText bounds the user agent and address kept per session.
	maxClientText = 200
)

// Accounts say who may log in: the users of a hub, or the one person of a
// single-machine `corral serve` (internal/hub.Accounts both).
type Accounts interface {
	// ByToken finds the user of a long-lived API token.
	ByToken(ctx context.Context, token string) (store.UserRef, bool)
	// ByPassword checks a password; in single-user mode user is ignored.
	ByPassword(ctx context.Context, user, password string) (store.UserRef, bool)
	// ByLoginLink spends a one-time login link: true at most once.
	ByLoginLink(ctx context.Context, link string) (store.UserRef, bool)
	// PasswordSet: a password login is possible.
	PasswordSet(ctx context.Context) bool
	// MultiUser: the login form asks for a user name.
	MultiUser() bool
}

// AuthOptions configure Auth.
type AuthOptions struct {
	// Secure marks the cookies Secure (the dashboard is served with TLS).
	Secure bool
	// TrustedProxies are the reverse proxies whose X-Forwarded-For names
	// the client (--trusted-proxy); from anyone else the header is ignored.
	TrustedProxies []netip.Prefix
	// Recheck is how often a long-lived request (a WebSocket, the event
	// stream) checks that its credential still holds; default 5 s.
	Recheck time.Duration
	// Now is the clock (tests); default time.Now.
	Now func() time.Time
	// AddressLimit and AccountLimit bound failed logins per client address
	// and per account. By default an address gets 20, then one every 3 s
	// (it may be many people behind a NAT); an account 5, then one every
	// 6 s.
	AddressLimit, AccountLimit Limit
}

// Limit allows Burst failed attempts, then one more every Every.
type Limit struct {
	Burst int
	Every time.Duration
}

// Auth checks who is calling: a browser with a session cookie, or a script
// with an API token as a bearer token.
type Auth struct {
	store    *store.Store
	accounts Accounts
	o        AuthOptions

	// Failed logins are limited per client address and per account: behind
	// a proxy many people share an address, and a guesser may use many.
	addrs, accts *limiters
}

// NewAuth checks credentials against accounts, with browser sessions in st.
func NewAuth(st *store.Store, accounts Accounts, o AuthOptions) *Auth {
	if o.Recheck <= 0 {
		o.Recheck = 5 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.AddressLimit.Burst <= 0 || o.AddressLimit.Every <= 0 {
		o.AddressLimit = Limit{Burst: 20, Every: 3 * time.Second}
	}
	if o.AccountLimit.Burst <= 0 || o.AccountLimit.Every <= 0 {
		o.AccountLimit = Limit{Burst: 5, Every: 6 * time.Second}
	}
	return &Auth{store: st, accounts: accounts, o: o,
		addrs: newLimiters(rate.Every(o.AddressLimit.Every), o.AddressLimit.Burst),
		accts: newLimiters(rate.Every(o.AccountLimit.Every), o.AccountLimit.Burst)}
}

func randomString(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func hashSecret(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// csrfFor is the CSRF value of a session: a MAC keyed by the session's own
// secret, which only our page can read from its cookie.
func csrfFor(secret string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("corral csrf"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))[:32]
}

// how a request authenticated.
type credential int

const (
	credNone credential = iota
	credCookie
	credBearer
)

// principal is who a request is, and how it proved it.
type principal struct {
	cred    credential
	user    store.UserRef
	session store.WebSession // credCookie
	secret  string           // credCookie: the cookie's secret
}

// authenticate says how r proves who it is, and who. A bearer token is
// never mixed with a cookie: a wrong token is no credential at all.
func (a *Auth) authenticate(ctx context.Context, r *http.Request) principal {
	if h := r.Header.Get("Authorization"); h != "" {
		tok, ok := strings.CutPrefix(h, "Bearer ")
		if !ok {
			return principal{}
		}
		if u, ok := a.accounts.ByToken(ctx, tok); ok {
			return principal{cred: credBearer, user: u}
		}
		return principal{}
	}
	c, err := r.Cookie(cookieSession)
	if err != nil || c.Value == "" || len(c.Value) > 100 {
		return principal{}
	}
	ws, err := a.store.WebSessionBySecret(ctx, hashSecret(c.Value))
	if err != nil {
		return principal{}
	}
	now := a.o.Now()
	if !now.Before(ws.ExpiresAt) || now.Sub(ws.LastSeen) >= SessionIdle {
		a.store.EndWebSession(ctx, ws.UserID, ws.ID)
		return principal{}
	}
	if now.Sub(ws.LastSeen) >= touchEvery {
		// Best effort: a failed write only makes last seen older.
		if a.store.TouchWebSession(ctx, ws.ID, now) == nil {
			ws.LastSeen = now
		}
	}
	return principal{cred: credCookie, user: store.UserRef{ID: ws.UserID, Name: ws.User}, session: ws, secret: c.Value}
}

// checkCSRF: a state-changing request made with the cookie must echo the
// CSRF value that only our own page can read.
func (p principal) checkCSRF(r *http.Request) bool {
	h := r.Header.Get(headerCSRF)
	return p.cred == credCookie && h != "" && subtle.ConstantTimeCompare([]byte(h), []byte(csrfFor(p.secret))) == 1
}

// newSession logs a browser in as u: a new row, and cookies that name it.
func (a *Auth) newSession(ctx context.Context, w http.ResponseWriter, r *http.Request, u store.UserRef) error {
	now := a.o.Now()
	secret := randomString(32)
	ws := store.WebSession{ID: randomHex(8), UserID: u.ID, User: u.Name, CreatedAt: now, LastSeen: now,
		ExpiresAt: now.Add(SessionLife), UserAgent: clientText(r.UserAgent()), Address: clientText(a.clientIP(r))}
	if err := a.store.AddWebSession(ctx, ws, hashSecret(secret), keepSessions); err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: cookieSession, Value: secret, Path: "/", HttpOnly: true, Secure: a.o.Secure,
		SameSite: http.SameSiteStrictMode, MaxAge: int(SessionLife.Seconds())})
	http.SetCookie(w, &http.Cookie{Name: cookieCSRF, Value: csrfFor(secret), Path: "/", Secure: a.o.Secure,
		SameSite: http.SameSiteStrictMode, MaxAge: int(SessionLife.Seconds())})
	return nil
}

// endSession ends the session r's cookie names, if it is a live one.
func (a *Auth) endSession(ctx context.Context, r *http.Request) error {
	c, err := r.Cookie(cookieSession)
	if err != nil || c.Value == "" || len(c.Value) > 100 {
		return nil
	}
	ws, err := a.store.WebSessionBySecret(ctx, hashSecret(c.Value))
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := a.store.EndWebSession(ctx, ws.UserID, ws.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// clientText keeps what a client says about itself printable and short:
// it is shown in a terminal by `corral sessions`.
func clientText(s string) string {
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= maxClientText {
			break
		}
		if unicode.IsPrint(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func clearCookies(w http.ResponseWriter) {
	for _, n := range []string{cookieSession, cookieCSRF} {
		http.SetCookie(w, &http.Cookie{Name: n, Value: "", Path: "/", MaxAge: -1})
	}
}

// watch returns a context that ends as soon as p's credential no longer
// holds (logged out, revoked, a new password or token, the user removed),
// checked every Recheck, and a stop that the caller must call: a WebSocket
// or an event stream outlives the check made when it opened. Revocations
// come from other processes (`corral hub user passwd`) through the
// database, so they are polled, like revoked devices.
func (a *Auth) watch(ctx context.Context, r *http.Request, p principal) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(a.o.Recheck)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				now := a.authenticate(ctx, r)
				if ctx.Err() != nil {
					return
				}
				if now.cred != p.cred || now.user.ID != p.user.ID {
					cancel()
					return
				}
			}
		}
	}()
	return ctx, func() {
		cancel()
		<-done
	}
}

// limiters bound failed attempts per key: bursts of burst, then one per
// every. Only failures are charged (see blocked), so a person who types the
// right password is not locked out by someone else's guessing unless the
// guessing is going on right now.
type limiters struct {
	every rate.Limit
	burst int

	mu        sync.Mutex
	m         map[string]*rate.Limiter
	lastSweep time.Time
}

// maxLimiterKeys bounds the memory of a guesser who makes up names or
// addresses: beyond it they share one limiter.
const maxLimiterKeys = 10000

func newLimiters(every rate.Limit, burst int) *limiters {
	return &limiters{every: every, burst: burst, m: map[string]*rate.Limiter{}}
}

func (l *limiters) get(key string) *rate.Limiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	// Sweep now and then, and when full (at most once a second: a sweep
	// walks the whole map).
	if now.Sub(l.lastSweep) > 10*time.Minute || len(l.m) >= maxLimiterKeys && now.Sub(l.lastSweep) > time.Second {
		for k, lim := range l.m {
			if lim.TokensAt(now) >= float64(lim.Burst()) {
				delete(l.m, k)
			}
		}
		l.lastSweep = now
	}
	lim, ok := l.m[key]
	if !ok {
		if len(l.m) >= maxLimiterKeys {
			key = "\x00overflow"
			if lim, ok = l.m[key]; ok {
				return lim
			}
		}
		lim = rate.NewLimiter(l.every, l.burst)
		l.m[key] = lim
	}
	return lim
}

// blocked reports whether key used up its failed attempts, and how long it
// must wait.
func (l *limiters) blocked(key string) (bool, time.Duration) {
	lim := l.get(key)
	now := time.Now()
	if lim.TokensAt(now) >= 1 {
		return false, 0
	}
	res := lim.ReserveN(now, 1)
	d := res.DelayFrom(now)
	res.CancelAt(now)
	return true, d
}

func (l *limiters) failed(key string) { l.get(key).Allow() }

// blocked reports whether r's client address, or the account it names
// ("" for none), used up its failed attempts, and how long to wait.
func (a *Auth) blocked(r *http.Request, account string) (bool, time.Duration) {
	b, d := a.addrs.blocked(a.clientIP(r))
	if account != "" {
		if b2, d2 := a.accts.blocked(account); b2 {
			return true, max(d, d2)
		}
	}
	return b, d
}

// failed charges a failed attempt to r's client address and the account.
func (a *Auth) failed(r *http.Request, account string) {
	a.addrs.failed(a.clientIP(r))
	if account != "" {
		a.accts.failed(account)
	}
}

// maxForwardedHops bounds the X-Forwarded-For entries looked at.
const maxForwardedHops = 16

// clientIP is the address of r's client: the direct peer, unless the peer
// is a trusted proxy; then the nearest address in X-Forwarded-For that is
// not a trusted proxy (the ones further left could be made up by the
// client).
func (a *Auth) clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	if err != nil || !a.trusted(peer) {
		return host
	}
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(v, ",")...)
	}
	client := peer
	for i, n := len(hops)-1, 0; i >= 0 && n < maxForwardedHops; i, n = i-1, n+1 {
		ip, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break // a malformed hop: trust nothing beyond it
		}
		client = ip.Unmap()
		if !a.trusted(client) {
			break
		}
	}
	return client.String()
}

func (a *Auth) trusted(ip netip.Addr) bool {
	ip = ip.Unmap()
	for _, p := range a.o.TrustedProxies {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// ParseTrustedProxies parses --trusted-proxy values: CIDRs, or single
// addresses.
func ParseTrustedProxies(list []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range list {
		s = strings.TrimSpace(s)
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		ip, err := netip.ParseAddr(s)
		if err != nil {
			return nil, errors.New("--trusted-proxy " + s + ": want a CIDR such as 127.0.0.1/32 or 10.0.0.0/8")
		}
		ip = ip.Unmap()
		out = append(out, netip.PrefixFrom(ip, ip.BitLen()))
	}
	return out, nil
}
