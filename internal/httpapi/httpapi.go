// Package httpapi serves corral's public HTTP+JSON API over any listener: the
// daemon's unix socket for the CLI and, behind authentication, TCP for
// browsers. Its routes are the operations of internal/api, built from
// api.Ops(): one table, with nothing written per route. It knows nothing of
// tmux or Claude; it calls a backend.Backend.
package httpapi

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/backend"
)

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
	b    backend.Backend
	opts Options
	mux  *http.ServeMux
}

// New makes a Handler.
func New(b backend.Backend, opts Options) *Handler {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = 15 * time.Second
	}
	h := &Handler{b: b, opts: opts, mux: http.NewServeMux()}
	// The route table: every operation with a route, and the event stream.
	for _, op := range api.Ops() {
		if op.Path != "" {
			h.mux.Handle(op.Method+" "+op.Path, h.wrap(h.op(op)))
		}
	}
	h.mux.Handle("GET /api/v1/events", h.wrap(h.events))
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

// op serves an operation: its request is the JSON body (or, for a GET, the
// query) with the path's {id} filled in; its answer is the result as JSON
// with the op's success status, or 204 when it returns nothing.
func (h *Handler) op(op api.OpInfo) func(http.ResponseWriter, *http.Request) error {
	// A request of the path's fields alone has no body to read: DELETE of
	// a session, viewed.
	body := op.Method != http.MethodGet && op.BodyFields()
	params := op.PathParams()
	status := op.SuccessStatus()
	// An op that answers nothing has no body, whatever its status (201
	// of a push subscription, 202 of a test notification).
	empty := op.Result == reflect.TypeFor[api.Empty]()
	return func(w http.ResponseWriter, r *http.Request) error {
		req := reflect.New(op.Request).Interface()
		if body && !(op.Method == http.MethodDelete && r.ContentLength == 0) {
			// A DELETE's body carries options only (kill's
			// remove_worktree): none is the plain delete.
			if err := DecodeJSON(r.Body, req, !op.Lenient); err != nil {
				return err
			}
		}
		text := url.Values{}
		if op.Method == http.MethodGet {
			text = r.URL.Query()
		}
		for _, p := range params {
			text.Set(p, r.PathValue(p))
		}
		if err := api.DecodeText(text, req); err != nil {
			return err
		}
		res, err := h.b.Serve(r.Context(), op.Name, req)
		if err != nil {
			return err
		}
		// Every answer is the state of now.
		w.Header().Set("Cache-Control", "no-store")
		if empty {
			w.WriteHeader(status)
			return nil
		}
		return writeJSON(w, status, nonNil(res))
	}
}

// nonNil makes a nil list [], not null.
func nonNil(v any) any {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv = rv.Elem()
	}
	if rv.Kind() == reflect.Slice && rv.IsNil() {
		return reflect.MakeSlice(rv.Type(), 0, 0).Interface()
	}
	return v
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
			if err := write(*ev); err != nil {
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
					write(*ev)
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
