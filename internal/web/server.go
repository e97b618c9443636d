// Package web serves the dashboard: authentication, the embedded UI, and the
// WebSockets for events and terminals; behind authentication it mounts the
// API (internal/httpapi) for everything else. It calls a backend.Backend
// (the local agent, or the hub that routes to many) and knows nothing of
// tmux or Claude.
package web

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/backend"
	"github.com/corral-dev/corral/internal/httpapi"
	"github.com/corral-dev/corral/internal/identity"
	"github.com/corral-dev/corral/internal/store"
)

// Options configure the server.
type Options struct {
	Logger *slog.Logger
	Auth   *Auth
	// Loopback: the server listens on loopback only, so Host must name a
	// loopback address (a defence against DNS rebinding) or one of
	// AllowedHosts (the public name of a TLS reverse proxy in front).
	Loopback     bool
	AllowedHosts []string
	// Assets overrides the embedded UI (tests, development: os.DirFS).
	Assets fs.FS
	// Link serves GET /api/v1/link, where devices dial in (a hub). It does
	// its own authentication, by device key.
	Link http.Handler
	// TLS: the server serves HTTPS itself, and says so with HSTS.
	TLS bool
	// Metrics, when set, serves GET /metrics (Prometheus) to a logged-in
	// user or an API token.
	Metrics http.Handler
}

// Server is the dashboard's HTTP handler.
type Server struct {
	b    backend.Backend
	opts Options
	log  *slog.Logger
	mux  *http.ServeMux
	api  http.Handler
}

// New makes the dashboard's handler.
func New(b backend.Backend, opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{b: b, opts: opts, log: opts.Logger, mux: http.NewServeMux()}
	s.api = httpapi.New(b, httpapi.Options{Logger: opts.Logger})
	// Routes without authentication: the UI's files and logging in.
	s.mux.HandleFunc("POST /api/v1/auth/login", s.login)
	s.mux.HandleFunc("POST /api/v1/auth/logout", s.logout)
	s.mux.HandleFunc("GET /api/v1/auth/me", s.me)
	if opts.Link != nil {
		s.mux.Handle("GET /api/v1/link", opts.Link)
	}
	// Everything else under /api/ needs a credential. The operations are
	// the API's (httpapi, one table from api.Ops()); what is here is the
	// browser's own: its cookie sessions, and the WebSockets
	// (docs/architecture.md, "What the dashboard serves itself").
	authed := []struct {
		pattern string
		fn      http.HandlerFunc
	}{
		{"GET /api/v1/auth/sessions", s.webSessions},
		{"DELETE /api/v1/auth/sessions/{id}", s.endWebSession},
		{"GET /api/v1/ws/events", s.eventsWS},
		{"GET /api/v1/sessions/{id}/terminal", s.terminalWS},
		{"/api/", s.api.ServeHTTP},
	}
	if opts.Metrics != nil {
		authed = append(authed, struct {
			pattern string
			fn      http.HandlerFunc
		}{"GET /metrics", opts.Metrics.ServeHTTP})
	}
	for _, r := range authed {
		s.mux.Handle(r.pattern, s.requireAuth(r.fn))
	}
	if opts.Metrics == nil {
		// Not the UI's page: a scraper should hear why.
		s.mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
			httpapi.WriteError(w, api.Errorf(api.CodeNotFound, "metrics are not served here: read them on the API socket, or start the hub with --web-metrics"))
		})
	}
	s.mux.Handle("/", s.assets())
	return s
}

// ServeHTTP applies the checks every request gets, then routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.opts.Loopback && !loopbackHost(r.Host) && !s.allowedHost(r.Host) {
		// A page on another name that resolves to 127.0.0.1 (DNS
		// rebinding) must not reach the dashboard.
		httpapi.WriteError(w, api.Errorf(api.CodeForbidden, "host %q is not a loopback name; open http://127.0.0.1 or http://localhost", r.Host))
		return
	}
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	if s.opts.TLS {
		// Once on HTTPS, never plain HTTP again: a cookie or token must not
		// go out in the clear on a downgraded connection.
		h.Set("Strict-Transport-Security", "max-age=63072000")
	}
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self' data:; worker-src 'self'; manifest-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
	if r.URL.Path == "/" && r.URL.Query().Has("token") {
		s.tokenLogin(w, r)
		return
	}
	s.mux.ServeHTTP(w, r)
}

func (s *Server) allowedHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	for _, a := range s.opts.AllowedHosts {
		if strings.EqualFold(a, host) || strings.EqualFold(a, hostport) {
			return true
		}
	}
	return false
}

func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// requireAuth lets through requests with a valid credential, and
// state-changing cookie requests only with the CSRF header. A request that
// stays open (a WebSocket, the event stream) ends when its credential is
// taken back.
func (s *Server) requireAuth(next http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Tokens and cookies are unguessable (256-bit): a valid one always
		// passes; wrong tokens are counted, and a client that keeps
		// presenting them is answered 429. A dead cookie (logged out,
		// revoked, expired) is not a guess: it is cleared, so the browser
		// stops sending it.
		p := s.opts.Auth.authenticate(r.Context(), r)
		if p.cred == credNone {
			if r.Header.Get("Authorization") != "" {
				if blocked, wait := s.opts.Auth.blocked(r, ""); blocked {
					tooMany(w, wait)
					return
				}
				s.opts.Auth.failed(r, "")
			} else if hasCookie(r, cookieSession) {
				clearCookies(w)
			}
			httpapi.WriteError(w, api.Errorf(api.CodeUnauthorized, "log in first (a login link, a password, or an API token as a bearer token)"))
			return
		}
		if p.cred == credCookie && unsafeMethod(r.Method) && !p.checkCSRF(r) {
			httpapi.WriteError(w, api.Errorf(api.CodeForbidden, "missing or wrong %s header", headerCSRF))
			return
		}
		ctx := identity.With(r.Context(), p.user.Name)
		ctx = withPrincipal(ctx, p)
		if longLived(r) {
			var stop func()
			ctx, stop = s.opts.Auth.watch(ctx, r, p)
			defer stop()
		}
		next(w, r.WithContext(ctx))
	})
}

// longLived: requests that stay open after their credential was checked.
func longLived(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket") || r.URL.Path == "/api/v1/events"
}

type principalKey struct{}

func withPrincipal(ctx context.Context, p principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

func principalOf(ctx context.Context) principal {
	p, _ := ctx.Value(principalKey{}).(principal)
	return p
}

func hasCookie(r *http.Request, name string) bool {
	_, err := r.Cookie(name)
	return err == nil
}

func unsafeMethod(m string) bool {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}

func tooMany(w http.ResponseWriter, wait time.Duration) {
	w.Header().Set("Retry-After", itoa(int(wait.Seconds())+1))
	httpapi.WriteError(w, api.Errorf(api.CodeTooMany, "too many login attempts; wait %v", wait.Round(time.Second)))
}

// tokenLogin trades a one-time login link in the URL for a session cookie
// and sends the browser on without it in its address bar. Only login links
// are taken here, never API tokens: a GET can be made by any page, and must
// not log a victim into someone else's account.
func (s *Server) tokenLogin(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if blocked, wait := s.opts.Auth.blocked(r, ""); blocked {
		tooMany(w, wait)
		return
	}
	user, ok := s.opts.Auth.accounts.ByLoginLink(r.Context(), r.URL.Query().Get("token"))
	if !ok {
		s.opts.Auth.failed(r, "")
		s.log.Warn("login with a wrong, used or expired link", "from", s.opts.Auth.clientIP(r))
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte("This login link is not valid: a link works once, and only for a few minutes. Run `corral login-link` for a new one.\n"))
		return
	}
	if err := s.startSession(w, r, user); err != nil {
		httpapi.WriteError(w, api.AsError(err))
		return
	}
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// startSession logs the browser of r in as user, ending the session it
// had, if any.
func (s *Server) startSession(w http.ResponseWriter, r *http.Request, user store.UserRef) error {
	if err := s.opts.Auth.endSession(r.Context(), r); err != nil {
		return err
	}
	if err := s.opts.Auth.newSession(r.Context(), w, r, user); err != nil {
		return err
	}
	s.log.Info("browser logged in", "user", user.Name, "from", s.opts.Auth.clientIP(r))
	return nil
}

// sameOriginJSON refuses a login or logout that a page of another site
// could have sent: it needs a JSON body type (a form or a text/plain post
// cannot have it without a CORS preflight, which is never answered) and
// an Origin naming this very host.
func (s *Server) sameOriginJSON(w http.ResponseWriter, r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		httpapi.WriteError(w, api.Errorf(api.CodeBadRequest, "send a JSON body with Content-Type: application/json"))
		return false
	}
	if !sameOrigin(r) {
		s.log.Warn("cross-origin login or logout refused", "origin", r.Header.Get("Origin"), "from", s.opts.Auth.clientIP(r))
		httpapi.WriteError(w, api.Errorf(api.CodeForbidden, "this request must come from the dashboard's own page (Origin)"))
		return false
	}
	return true
}

// sameOrigin: the Origin header names the host the request was sent to, as
// for WebSockets (a reverse proxy must pass Host on unchanged).
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return false
	}
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false
	}
	return strings.EqualFold(u.Host, r.Host)
}

// accountKey is the per-account limiter key of a password login.
func (s *Server) accountKey(user string) string {
	if !s.opts.Auth.accounts.MultiUser() {
		return "\x00single"
	}
	return user
}

func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if !s.sameOriginJSON(w, r) {
		return
	}
	if blocked, wait := s.opts.Auth.blocked(r, ""); blocked {
		tooMany(w, wait)
		return
	}
	var req struct {
		User     string `json:"user"`
		Password string `json:"password"`
		Token    string `json:"token"`
	}
	if !readBody(w, r, 4096, &req, false) {
		return
	}
	account := ""
	if req.Token == "" {
		account = s.accountKey(req.User)
		if blocked, wait := s.opts.Auth.blocked(r, account); blocked {
			tooMany(w, wait)
			return
		}
	}
	acc := s.opts.Auth.accounts
	var user store.UserRef
	ok := false
	switch {
	case req.Token != "":
		// A login link, or the long-lived API token.
		if user, ok = acc.ByLoginLink(r.Context(), req.Token); !ok {
			user, ok = acc.ByToken(r.Context(), req.Token)
		}
	case req.Password != "":
		user, ok = acc.ByPassword(r.Context(), req.User, req.Password)
	}
	if !ok {
		s.opts.Auth.failed(r, account)
		s.log.Warn("failed login", "from", s.opts.Auth.clientIP(r))
		httpapi.WriteError(w, api.Errorf(api.CodeUnauthorized, "wrong user name or password"))
		return
	}
	if err := s.startSession(w, r, user); err != nil {
		httpapi.WriteError(w, api.AsError(err))
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"authenticated": true})
}

// logout ends this browser's session on the server, then clears its
// cookies.
func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	if !s.sameOriginJSON(w, r) {
		return
	}
	if err := s.opts.Auth.endSession(r.Context(), r); err != nil {
		httpapi.WriteError(w, api.AsError(err))
		return
	}
	clearCookies(w)
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) me(w http.ResponseWriter, r *http.Request) {
	acc := s.opts.Auth.accounts
	p := s.opts.Auth.authenticate(r.Context(), r)
	if p.cred == credNone {
		if r.Header.Get("Authorization") == "" && hasCookie(r, cookieSession) {
			clearCookies(w)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		json.NewEncoder(w).Encode(map[string]any{"code": api.CodeUnauthorized, "error": "not logged in",
			"password_set": acc.PasswordSet(r.Context()), "multi_user": acc.MultiUser()})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"authenticated": true, "user": p.user.Name,
		"password_set": acc.PasswordSet(r.Context()), "multi_user": acc.MultiUser()})
}

// webSession is a browser session as GET /api/v1/auth/sessions shows it.
type webSession struct {
	store.WebSession
	Current bool `json:"current,omitempty"`
}

// webSessions lists the caller's browser sessions ("signed-in devices"). They
// are the dashboard's own (Auth keeps them, and ends the WebSockets of one
// ended), and "current" means the cookie of this very request.
func (s *Server) webSessions(w http.ResponseWriter, r *http.Request) {
	p := principalOf(r.Context())
	list, err := s.opts.Auth.store.WebSessions(r.Context(), p.user.ID)
	if err != nil {
		httpapi.WriteError(w, api.AsError(err))
		return
	}
	out := make([]webSession, 0, len(list))
	for _, ws := range list {
		out = append(out, webSession{WebSession: ws, Current: p.cred == credCookie && ws.ID == p.session.ID})
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, out)
}

// endWebSession signs one of the caller's browsers out.
func (s *Server) endWebSession(w http.ResponseWriter, r *http.Request) {
	p := principalOf(r.Context())
	id := r.PathValue("id")
	if err := s.opts.Auth.store.EndWebSession(r.Context(), p.user.ID, id); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			err = api.Errorf(api.CodeNotFound, "no browser session %q", id)
		}
		httpapi.WriteError(w, api.AsError(err))
		return
	}
	if p.cred == credCookie && id == p.session.ID {
		clearCookies(w)
	}
	w.WriteHeader(http.StatusNoContent)
}

// readBody decodes a JSON request body of at most limit bytes into v (see
// httpapi.DecodeJSON); when it cannot, it writes the error and says false.
func readBody(w http.ResponseWriter, r *http.Request, limit int64, v any, strict bool) bool {
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	if err := httpapi.DecodeJSON(r.Body, v, strict); err != nil {
		httpapi.WriteError(w, api.AsError(err))
		return false
	}
	return true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// ErrInsecure is returned by CheckListen for an unprotected public address.
var ErrInsecure = errors.New("refusing to listen beyond loopback without TLS")

// CheckListen refuses to serve a non-loopback address in the clear unless
// insecure is set: the dashboard drives terminals. It reports whether the
// address is loopback.
func CheckListen(addr string, tls, insecure bool) (loopback bool, err error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, err
	}
	loopback = host == "localhost" || (net.ParseIP(host) != nil && net.ParseIP(host).IsLoopback())
	if !loopback && !tls && !insecure {
		return false, errors.Join(ErrInsecure, errors.New("give --tls-cert and --tls-key, put corral behind a TLS reverse proxy on loopback, or pass --insecure if the network is private"))
	}
	return loopback, nil
}
