package backend

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"reflect"

	"github.com/corral-dev/corral/internal/api"
)

// Mux is a table of operations: one handler for each op it serves. Build it
// once with Handle (or HandleNone, HandleAny), then Serve by name. It is
// not safe to add handlers while serving.
type Mux struct {
	ops map[string]entry
}

// entry is one op's handler; req is always a pointer to the op's request.
type entry struct {
	info  api.OpInfo
	serve func(ctx context.Context, req any) (any, error)
}

// NewMux makes an empty table.
func NewMux() *Mux { return &Mux{ops: map[string]entry{}} }

// Handle serves op with fn. A second handler for the same op replaces the
// first.
func Handle[Req, Res any](m *Mux, op api.Op[Req, Res], fn func(context.Context, Req) (Res, error)) {
	m.ops[op.Name] = entry{info: op.Info(), serve: func(ctx context.Context, req any) (any, error) {
		return fn(ctx, *req.(*Req))
	}}
}

// HandleNone serves an op that answers nothing with fn.
func HandleNone[Req any](m *Mux, op api.Op[Req, api.Empty], fn func(context.Context, Req) error) {
	Handle(m, op, func(ctx context.Context, req Req) (api.Empty, error) { return api.Empty{}, fn(ctx, req) })
}

// HandleAny serves op with a handler that works for any op (the hub's
// forwarding): req is a pointer to a value of op.Request, and the answer
// must be a value of op.Result or a pointer to one.
func (m *Mux) HandleAny(op api.OpInfo, fn func(ctx context.Context, op api.OpInfo, req any) (any, error)) {
	m.ops[op.Name] = entry{info: op, serve: func(ctx context.Context, req any) (any, error) {
		return fn(ctx, op, req)
	}}
}

// Clone returns a copy of the table, to add to.
func (m *Mux) Clone() *Mux {
	c := NewMux()
	for k, v := range m.ops {
		c.ops[k] = v
	}
	return c
}

// Info describes op, if the table serves it.
func (m *Mux) Info(op string) (api.OpInfo, bool) {
	e, ok := m.ops[op]
	return e.info, ok
}

// Serve runs op: req must be a value of its request type or a pointer to
// one. A request that says it is wrong (api.Validator) is refused before
// the handler sees it.
func (m *Mux) Serve(ctx context.Context, op string, req any) (any, error) {
	e, ok := m.ops[op]
	if !ok {
		return nil, api.Errorf(api.CodeBadRequest, "unknown op %q", op)
	}
	p, err := pointerTo(e.info, req)
	if err != nil {
		return nil, err
	}
	if v, ok := p.(api.Validator); ok {
		if err := v.Validate(); err != nil {
			return nil, err
		}
	}
	return e.serve(ctx, p)
}

// pointerTo returns a pointer to req, a value of op's request type or a
// pointer to one; a value is copied, so the handler may change it.
func pointerTo(op api.OpInfo, req any) (any, error) {
	v := reflect.ValueOf(req)
	switch {
	case req == nil && op.Request == reflect.TypeFor[api.Empty]():
		return &api.Empty{}, nil
	case !v.IsValid():
	case v.Type() == op.Request:
		p := reflect.New(op.Request)
		p.Elem().Set(v)
		return p.Interface(), nil
	case v.Type() == reflect.PointerTo(op.Request) && !v.IsNil():
		return req, nil
	}
	return nil, api.Errorf(api.CodeInternal, "%s takes a %s, not a %T", op.Name, op.Request, req)
}

// Decode reads op's request from JSON (a link's args: empty means {}),
// strictly: an unknown field, trailing data or a value of the wrong type is
// a bad_request error. It returns a pointer to the request, for Serve.
func (m *Mux) Decode(op string, args json.RawMessage) (any, error) {
	e, ok := m.ops[op]
	if !ok {
		return nil, api.Errorf(api.CodeBadRequest, "unknown op %q", op)
	}
	p := reflect.New(e.info.Request).Interface()
	if len(bytes.TrimSpace(args)) == 0 {
		return p, nil
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(p); err != nil {
		return nil, api.Errorf(api.CodeBadRequest, "bad arguments for %s: %v", op, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, api.Errorf(api.CodeBadRequest, "bad arguments for %s: trailing data", op)
	}
	return p, nil
}
