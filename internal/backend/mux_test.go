package backend_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/backend"
)

func TestMux(t *testing.T) {
	ctx := context.Background()
	m := backend.NewMux()
	var got []string
	backend.Handle(m, api.OpRename, func(_ context.Context, r api.RenameRequest) (api.Session, error) {
		got = append(got, r.ID+"="+r.Name)
		return api.Session{ID: r.ID, Name: r.Name}, nil
	})
	backend.HandleNone(m, api.OpKeys, func(_ context.Context, r api.KeysRequest) error {
		got = append(got, strings.Join(r.Keys, "+"))
		return nil
	})

	// A value, a pointer, and JSON from the link are the same request.
	s, err := backend.Call(ctx, m, api.OpRename, api.RenameRequest{SessionRef: api.SessionRef{ID: "s1"}, Name: "a"})
	if err != nil || s.Name != "a" {
		t.Fatalf("typed call: %+v %v", s, err)
	}
	if _, err := m.Serve(ctx, "rename", &api.RenameRequest{SessionRef: api.SessionRef{ID: "s2"}, Name: "b"}); err != nil {
		t.Fatal(err)
	}
	req, err := m.Decode("rename", json.RawMessage(`{"id":"s3","name":"c"}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Serve(ctx, "rename", req); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, " ") != "s1=a s2=b s3=c" {
		t.Errorf("handled %q", got)
	}

	// Validate runs before the handler; an empty result is Empty.
	if _, err := m.Serve(ctx, "keys", api.KeysRequest{}); !errors.Is(err, api.ErrBadRequest) || !strings.Contains(err.Error(), "no keys") {
		t.Errorf("keys without keys: %v", err)
	}
	if res, err := m.Serve(ctx, "keys", api.KeysRequest{Keys: []string{"C-c"}}); err != nil || res != (api.Empty{}) {
		t.Errorf("keys: %v %v", res, err)
	}

	for _, tt := range []struct {
		args, want string
	}{
		{`{"id":"x","name":"a","bogus":1}`, `unknown field "bogus"`},
		{`{"id":"x"} {}`, "trailing data"},
		{`{"id":5}`, "bad arguments for rename"},
		{`[]`, "bad arguments for rename"},
	} {
		if _, err := m.Decode("rename", json.RawMessage(tt.args)); !errors.Is(err, api.ErrBadRequest) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("decode %s: %v, want bad_request with %q", tt.args, err, tt.want)
		}
	}
	if req, err := m.Decode("rename", nil); err != nil || *req.(*api.RenameRequest) != (api.RenameRequest{}) {
		t.Errorf("empty args: %v %v", req, err)
	}
	if _, err := m.Decode("nosuch", nil); !errors.Is(err, api.ErrBadRequest) {
		t.Errorf("decode of an unknown op: %v", err)
	}
	if _, err := m.Serve(ctx, "kill", api.SessionRef{ID: "x"}); !errors.Is(err, api.ErrBadRequest) || !strings.Contains(err.Error(), "unknown op") {
		t.Errorf("an op the table does not serve: %v", err)
	}
	if _, err := m.Serve(ctx, "rename", api.KeysRequest{}); api.AsError(err).Code != api.CodeInternal {
		t.Errorf("a request of another op: %v", err)
	}
	if _, err := m.Serve(ctx, "rename", nil); api.AsError(err).Code != api.CodeInternal {
		t.Errorf("no request: %v", err)
	}

	// A pointer the handler changes is the caller's; a value is copied.
	c := m.Clone()
	backend.Handle(c, api.OpRename, func(_ context.Context, r api.RenameRequest) (api.Session, error) {
		return api.Session{Name: "clone"}, nil
	})
	if s, _ := backend.Call(ctx, m, api.OpRename, api.RenameRequest{}); s.Name == "clone" {
		t.Error("a clone's handler reached the original")
	}
}

type fakeBackend struct{ *backend.Mux }

func (fakeBackend) Subscribe(context.Context, uint64) (backend.Subscription, error) { return nil, nil }
func (fakeBackend) OpenTerminal(context.Context, string, int, int, string, uint64) (backend.Terminal, uint64, bool, error) {
	return nil, 0, false, nil
}

func TestOverride(t *testing.T) {
	ctx := context.Background()
	m := backend.NewMux()
	backend.Handle(m, api.OpVersion, func(context.Context, api.Empty) (api.VersionInfo, error) { return api.VersionInfo{Version: "hub"}, nil })
	backend.Handle(m, api.OpSessions, func(context.Context, api.Empty) ([]api.Session, error) { return []api.Session{{ID: "a"}}, nil })
	b := backend.Override(fakeBackend{m}, api.OpVersion, func(context.Context, api.Empty) (api.VersionInfo, error) {
		return api.VersionInfo{Version: "agent"}, nil
	})
	if v, err := backend.Call(ctx, b, api.OpVersion, api.Empty{}); err != nil || v.Version != "agent" {
		t.Errorf("overridden: %+v %v", v, err)
	}
	if l, err := backend.Call(ctx, b, api.OpSessions, api.Empty{}); err != nil || len(l) != 1 {
		t.Errorf("the rest: %+v %v", l, err)
	}
}
