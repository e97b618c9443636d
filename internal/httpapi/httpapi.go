// Package httpapi serves corral's public HTTP+JSON API over any listener: the
// daemon's unix socket for the CLI and, behind authentication, TCP for
// browsers. It knows nothing of tmux or Claude; it calls a Backend.
package httpapi

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/corral-dev/corral/internal/api"
)

// Subscription is a stream of events (see events.Sub).
type Subscription interface {
	C() <-chan api.Event
	Err() error
	Close()
}

// Backend is what the API serves: one machine's agent, or the hub that
// routes to many.
type Backend interface {
	Sessions(ctx context.Context) ([]api.Session, error)
	Session(ctx context.Context, id string) (api.Session, error)
	Create(ctx context.Context, req api.CreateRequest) (api.Session, error)
	Kill(ctx context.Context, id string) error
	Rename(ctx context.Context, id, name string) (api.Session, error)
	SendText(ctx context.Context, id string, req api.InputRequest) error
	SendKeys(ctx context.Context, id string, keys []string) error
	Answer(ctx context.Context, id string, req api.AnswerRequest) (api.AnswerResult, error)
	Restart(ctx context.Context, id string, req api.RestartRequest) (api.Session, error)
	Capture(ctx context.Context, id string, history int) (api.Screen, error)
	Run(ctx context.Context, id string, req api.RunRequest) (api.RunResult, error)
	Viewed(ctx context.Context, id string) error
	ListDir(ctx context.Context, device, path string) (api.DirListing, error)
	Resumable(ctx context.Context, device, dir string) ([]api.Resumable, error)
	Download(ctx context.Context, id string, req api.DownloadRequest) (api.DownloadResult, error)
	Devices(ctx context.Context) ([]api.Device, error)
	Subscribe(ctx context.Context, since uint64) (Subscription, error)
	Version(ctx context.Context) api.VersionInfo
}

// MaxBody caps request bodies: the largest legitimate one is a long prompt.
const MaxBody = 1 << 20

// writeTimeout bounds one write of an event stream.
const writeTimeout = 30 * time.Second

// Options configure a Handler.
type Options struct {
	Logger *slog.Logger
	// RefuseBrowsers rejects requests that carry Origin or Referer: on the
	// unix socket a browser has no business, and a page that tricks a local
	// proxy into forwarding must not reach it.
	RefuseBrowsers bool
	// Heartbeat is the keepalive interval of event streams (default 15 s).
	Heartbeat time.Duration
}

// Handler serves the API.
type Handler struct {
	b    Backend
	opts Options
	mux  *http.ServeMux
}

// New makes a Handler.
func New(b Backend, opts Options) *Handler {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = 15 * time.Second
	}
	h := &Handler{b: b, opts: opts, mux: http.NewServeMux()}
	// The route table: every route of the API, in one place.
	routes := []struct {
		pattern string
		fn      func(http.ResponseWriter, *http.Request) error
	}{
		{"GET /api/v1/version", h.version},
		{"GET /api/v1/sessions", h.list},
		{"POST /api/v1/sessions", h.create},
		{"GET /api/v1/sessions/{id}", h.get},
		{"DELETE /api/v1/sessions/{id}", h.kill},
		{"PATCH /api/v1/sessions/{id}", h.rename},
		{"POST /api/v1/sessions/{id}/input", h.input},
		{"POST /api/v1/sessions/{id}/keys", h.keys},
		{"POST /api/v1/sessions/{id}/answer", h.answer},
		{"POST /api/v1/sessions/{id}/restart", h.restart},
		{"GET /api/v1/sessions/{id}/screen", h.screen},
		{"POST /api/v1/sessions/{id}/run", h.run},
		{"POST /api/v1/sessions/{id}/viewed", h.viewed},
		{"POST /api/v1/sessions/{id}/download", h.download},
		{"GET /api/v1/devices", h.devices},
		{"GET /api/v1/dirs", h.dirs},
		{"GET /api/v1/resumable", h.resumable},
		{"GET /api/v1/events", h.events},
	}
	for _, r := range routes {
		h.mux.Handle(r.pattern, h.wrap(r.fn))
	}
	h.mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		// The catch-all matches every method, so tell a wrong method on a
		// known route from an unknown route here.
		var allow []string
		for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
			probe := r.Clone(r.Context())
			probe.Method = m
			if _, pattern := h.mux.Handler(probe); pattern != "/api/" {
				allow = append(allow, m)
			}
		}
		if len(allow) > 0 {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			WriteError(w, api.Errorf(api.CodeMethodNotAllowed, "%s is not allowed on %s (allowed: %s)", r.Method, r.URL.Path, strings.Join(allow, ", ")))
			return
		}
		WriteError(w, api.Errorf(api.CodeNotFound, "no such API route: %s %s", r.Method, r.URL.Path))
	})
	return h
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.opts.RefuseBrowsers && (r.Header.Get("Origin") != "" || r.Header.Get("Referer") != "") {
		WriteError(w, api.Errorf(api.CodeForbidden, "browser requests are not accepted on this socket"))
		return
	}
	h.mux.ServeHTTP(w, r)
}

func (h *Handler) wrap(fn func(http.ResponseWriter, *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, MaxBody)
		if err := fn(w, r); err != nil {
			e := api.AsError(err)
			if e.Code == api.CodeInternal {
				h.opts.Logger.Error("api", "method", r.Method, "path", r.URL.Path, "err", err)
			}
			WriteError(w, e)
		}
	})
}

// WriteError writes an API error as JSON.
func WriteError(w http.ResponseWriter, e *api.Error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(api.HTTPStatus(e.Code))
	json.NewEncoder(w).Encode(e)
}

func writeJSON(w http.ResponseWriter, status int, v any) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	return json.NewEncoder(w).Encode(v)
}

func readJSON(r *http.Request, v any) error { return DecodeJSON(r.Body, v, true) }

// DecodeJSON reads one JSON value from a request body (already limited with
// http.MaxBytesReader) into v, with an API error that says what is wrong:
// too large, empty, malformed, or followed by more data. Strict refuses
// fields v does not have; browsers' own objects (a push subscription) may
// carry more than corral reads.
func DecodeJSON(body io.Reader, v any, strict bool) error {
	dec := json.NewDecoder(body)
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return api.Errorf(api.CodeTooLarge, "request body over %d bytes", mbe.Limit)
		}
		if errors.Is(err, io.EOF) {
			return api.Errorf(api.CodeBadRequest, "empty request body, want JSON")
		}
		return api.Errorf(api.CodeBadRequest, "bad JSON: %v", err)
	}
	if dec.More() {
		return api.Errorf(api.CodeBadRequest, "bad JSON: trailing data after the object")
	}
	return nil
}

func (h *Handler) version(w http.ResponseWriter, r *http.Request) error {
	return writeJSON(w, 200, h.b.Version(r.Context()))
}

func (h *Handler) list(w http.ResponseWriter, r *http.Request) error {
	s, err := h.b.Sessions(r.Context())
	if err != nil {
		return err
	}
	if s == nil {
		s = []api.Session{}
	}
	return writeJSON(w, 200, s)
}

func (h *Handler) get(w http.ResponseWriter, r *http.Request) error {
	s, err := h.b.Session(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	return writeJSON(w, 200, s)
}

func (h *Handler) create(w http.ResponseWriter, r *http.Request) error {
	var req api.CreateRequest
	if err := readJSON(r, &req); err != nil {
		return err
	}
	s, err := h.b.Create(r.Context(), req)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, s)
}

func (h *Handler) kill(w http.ResponseWriter, r *http.Request) error {
	if err := h.b.Kill(r.Context(), r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h *Handler) rename(w http.ResponseWriter, r *http.Request) error {
	var req api.RenameRequest
	if err := readJSON(r, &req); err != nil {
		return err
	}
	s, err := h.b.Rename(r.Context(), r.PathValue("id"), req.Name)
	if err != nil {
		return err
	}
	return writeJSON(w, 200, s)
}

func (h *Handler) input(w http.ResponseWriter, r *http.Request) error {
	var req api.InputRequest
	if err := readJSON(r, &req); err != nil {
		return err
	}
	if err := h.b.SendText(r.Context(), r.PathValue("id"), req); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h *Handler) answer(w http.ResponseWriter, r *http.Request) error {
	var req api.AnswerRequest
	if err := readJSON(r, &req); err != nil {
		return err
	}
	res, err := h.b.Answer(r.Context(), r.PathValue("id"), req)
	if err != nil {
		return err
	}
	return writeJSON(w, 200, res)
}

func (h *Handler) restart(w http.ResponseWriter, r *http.Request) error {
	var req api.RestartRequest
	if err := readJSON(r, &req); err != nil {
		return err
	}
	s, err := h.b.Restart(r.Context(), r.PathValue("id"), req)
	if err != nil {
		return err
	}
	return writeJSON(w, 200, s)
}

func (h *Handler) keys(w http.ResponseWriter, r *http.Request) error {
	var req api.KeysRequest
	if err := readJSON(r, &req); err != nil {
		return err
	}
	if len(req.Keys) == 0 {
		return api.Errorf(api.CodeBadRequest, "no keys given")
	}
	if err := h.b.SendKeys(r.Context(), r.PathValue("id"), req.Keys); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h *Handler) screen(w http.ResponseWriter, r *http.Request) error {
	history := 0
	if v := r.URL.Query().Get("history"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 100000 {
			return api.Errorf(api.CodeBadRequest, "history must be a number of lines between 0 and 100000")
		}
		history = n
	}
	s, err := h.b.Capture(r.Context(), r.PathValue("id"), history)
	if err != nil {
		return err
	}
	return writeJSON(w, 200, s)
}

func (h *Handler) run(w http.ResponseWriter, r *http.Request) error {
	var req api.RunRequest
	if err := readJSON(r, &req); err != nil {
		return err
	}
	if len(req.Argv) == 0 || req.Argv[0] == "" {
		return api.Errorf(api.CodeBadRequest, "no command given")
	}
	res, err := h.b.Run(r.Context(), r.PathValue("id"), req)
	if err != nil {
		return err
	}
	return writeJSON(w, 200, res)
}

func (h *Handler) viewed(w http.ResponseWriter, r *http.Request) error {
	if err := h.b.Viewed(r.Context(), r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h *Handler) download(w http.ResponseWriter, r *http.Request) error {
	var req api.DownloadRequest
	if err := readJSON(r, &req); err != nil {
		return err
	}
	if req.URL == "" {
		return api.Errorf(api.CodeBadRequest, "url is required")
	}
	res, err := h.b.Download(r.Context(), r.PathValue("id"), req)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, res)
}

func (h *Handler) devices(w http.ResponseWriter, r *http.Request) error {
	l, err := h.b.Devices(r.Context())
	if err != nil {
		return err
	}
	if l == nil {
		l = []api.Device{}
	}
	return writeJSON(w, 200, l)
}

func (h *Handler) dirs(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	l, err := h.b.ListDir(r.Context(), q.Get("device"), q.Get("path"))
	if err != nil {
		return err
	}
	return writeJSON(w, 200, l)
}

func (h *Handler) resumable(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	if q.Get("dir") == "" {
		return api.Errorf(api.CodeBadRequest, "dir is required")
	}
	l, err := h.b.Resumable(r.Context(), q.Get("device"), q.Get("dir"))
	if err != nil {
		return err
	}
	if l == nil {
		l = []api.Resumable{}
	}
	return writeJSON(w, 200, l)
}

// events streams events as newline-delimited JSON (or as Server-Sent Events
// when the client asks for text/event-stream). The stream starts with a
// snapshot, or with the events after ?since=N when they are still known. A
// reader that falls behind gets a "resync" event and a fresh snapshot rather
// than silently losing changes.
func (h *Handler) events(w http.ResponseWriter, r *http.Request) error {
	var since uint64
	if v := r.URL.Query().Get("since"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return api.Errorf(api.CodeBadRequest, "since must be a sequence number")
		}
		since = n
	}
	ctx := r.Context()
	sub, err := h.b.Subscribe(ctx, since)
	if err != nil {
		return err
	}
	defer func() { sub.Close() }()

	sse := strings.Contains(r.Header.Get("Accept"), "text/event-stream")
	if sse {
		w.Header().Set("Content-Type", "text/event-stream")
	} else {
		w.Header().Set("Content-Type", "application/x-ndjson")
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(200)
	rc := http.NewResponseController(w)
	bw := bufio.NewWriter(w)
	write := func(ev api.Event) error {
		b, err := ev.Encode()
		if err != nil {
			return err
		}
		if sse {
			fmt.Fprintf(bw, "id: %d\ndata: %s\n\n", ev.Seq, b)
		} else {
			bw.Write(b)
			bw.WriteByte('\n')
		}
		return nil
	}
	flush := func() error {
		// A reader that stops reading but keeps the connection open must
		// not hold this goroutine forever.
		_ = rc.SetWriteDeadline(time.Now().Add(writeTimeout))
		if err := bw.Flush(); err != nil {
			return err
		}
		return rc.Flush()
	}
	if err := flush(); err != nil {
		return nil
	}
	tick := time.NewTicker(h.opts.Heartbeat)
	defer tick.Stop()
	var last uint64
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			if sse {
				bw.WriteString(": keepalive\n\n")
			} else {
				bw.WriteByte('\n')
			}
			if err := flush(); err != nil {
				return nil
			}
		case ev, ok := <-sub.C():
			if !ok {
				if sub.Err() == nil {
					return nil
				}
				// Fell behind: say so, then start over with a snapshot,
				// which is smaller than the backlog that did not fit.
				write(api.Event{Seq: last, Type: api.EventResync, Time: time.Now()})
				if err := flush(); err != nil {
					return nil
				}
				next, err := h.b.Subscribe(ctx, 0)
				if err != nil {
					return nil
				}
				sub = next
				continue
			}
			last = ev.Seq
			if err := write(ev); err != nil {
				return nil
			}
			// Drain what is already queued before one flush: a burst of
			// changes costs one write.
			for drained := false; !drained; {
				select {
				case ev, ok := <-sub.C():
					if !ok {
						drained = true
						break
					}
					last = ev.Seq
					write(ev)
				default:
					drained = true
				}
			}
			if err := flush(); err != nil {
				return nil
			}
		}
	}
}
