package hub

import (
	"context"
	"errors"
	"testing"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/backend"
	"github.com/corral-dev/corral/internal/identity"
)

// TestMuxServesEveryOp: the hub answers every op with a route, forwarding
// the session and device ones; a request without a user gets nothing.
func TestMuxServesEveryOp(t *testing.T) {
	h, err := New(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range api.Ops() {
		if _, ok := h.mux.Info(op.Name); ok != (op.Scope != api.ScopeLink) {
			t.Errorf("%s (%s): served %v", op.Name, op.Scope, ok)
		}
	}
	ctx := context.Background()
	if _, err := backend.Call(ctx, h, api.OpKill, api.KillRequest{SessionRef: api.SessionRef{ID: "x"}}); !errors.Is(err, api.ErrUnauthorized) {
		t.Errorf("kill without a user: %v", err)
	}
	uctx := identity.With(ctx, "alice")
	if _, err := backend.Call(uctx, h, api.OpKill, api.KillRequest{SessionRef: api.SessionRef{ID: "x"}}); !errors.Is(err, api.ErrNotFound) {
		t.Errorf("kill of no session: %v", err)
	}
	if _, err := backend.Call(uctx, h, api.OpDirs, api.DirsRequest{}); !errors.Is(err, api.ErrUnavailable) {
		t.Errorf("dirs with no device online: %v", err)
	}
	if _, err := backend.Call(uctx, h, api.OpDirs, api.DirsRequest{Device: "nosuch"}); !errors.Is(err, api.ErrNotFound) {
		t.Errorf("dirs of no such device: %v", err)
	}
	if l, err := backend.Call(uctx, h, api.OpSessions, api.Empty{}); err != nil || len(l) != 0 {
		t.Errorf("sessions: %v %v", l, err)
	}
}
