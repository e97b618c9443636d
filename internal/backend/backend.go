// Package backend is the one interface between corral's servers (httpapi
// for the API, web for the dashboard) and what they serve: one machine's
// agent, or the hub that routes to many. Both implement Backend; neither
// server imports them.
//
// A Backend answers the operations of internal/api by name (Serve), through
// a Mux: a table of typed handlers, one per op, that checks each request's
// type, validates it and, for requests that arrive as JSON (the device
// link), decodes them strictly. What is not a request and its answer is
// here too: the event subscription, terminals, and their errors.
package backend

import (
	"context"
	"errors"

	"github.com/corral-dev/corral/internal/api"
)

// Backend is what the API and the dashboard serve.
type Backend interface {
	Server
	// Subscribe streams events from since (0: a snapshot first); see
	// events.Feed.Subscribe.
	Subscribe(ctx context.Context, since uint64) (Subscription, error)
	// OpenTerminal attaches a viewer to a session's terminal at cols×rows,
	// resuming stream resume from offset when it still can; it returns the
	// offset output starts from and whether the viewer must reset its
	// screen first (see agent.OpenTerminal).
	OpenTerminal(ctx context.Context, id string, cols, rows int, resume string, offset uint64) (Terminal, uint64, bool, error)
}

// Server answers operations by name: req is a value of the op's request
// type (or a pointer to one), the answer a value of its result type (or a
// pointer to one). *Mux is one.
type Server interface {
	Serve(ctx context.Context, op string, req any) (any, error)
}

// Subscription is a stream of events (see events.Sub).
type Subscription interface {
	C() <-chan *api.Event // shared by every reader: read-only
	Err() error
	Close()
}

// Terminal is one viewer's attached terminal (see term.Stream).
type Terminal interface {
	StreamID() string
	Close() error
	Read(ctx context.Context, offset uint64, max int) ([]byte, error)
	Write(p []byte) (int, error)
	Resize(cols, rows int) error
	AddViewer()
	DropViewer()
}

// Errors a Terminal's Read ends with, the same for a local terminal
// (internal/term) and one relayed by a hub.
var (
	// ErrTermClosed: the stream ended (the attach command exited).
	ErrTermClosed = errors.New("term: stream closed")
	// ErrTermRedraw: the stream held its producer back (the viewer fell
	// behind a flood) and may have lost lines: open a fresh one.
	ErrTermRedraw = errors.New("term: viewer fell behind; redraw")
)

// Call runs op on s with the request and result types the op declares.
func Call[Req, Res any](ctx context.Context, s Server, op api.Op[Req, Res], req Req) (Res, error) {
	var zero Res
	out, err := s.Serve(ctx, op.Name, req)
	if err != nil {
		return zero, err
	}
	switch r := out.(type) {
	case Res:
		return r, nil
	case *Res:
		return *r, nil
	}
	return zero, api.Errorf(api.CodeInternal, "%s answered a %T", op.Name, out)
}

// Override returns b with op answered by fn instead (corral serve answers
// version with its agent's data directory and tmux).
func Override[Req, Res any](b Backend, op api.Op[Req, Res], fn func(context.Context, Req) (Res, error)) Backend {
	m := NewMux()
	Handle(m, op, fn)
	return override{Backend: b, name: op.Name, m: m}
}

type override struct {
	Backend
	name string
	m    *Mux
}

func (o override) Serve(ctx context.Context, op string, req any) (any, error) {
	if op == o.name {
		return o.m.Serve(ctx, op, req)
	}
	return o.Backend.Serve(ctx, op, req)
}
