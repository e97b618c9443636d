package agent_test

import (
	"testing"

	"github.com/corral-dev/corral/internal/api"
)

// TestMuxServesEveryOp: one machine answers every operation but the link's
// own, which agentlink adds for each connection, and the users' own, which
// the hub keeps.
func TestMuxServesEveryOp(t *testing.T) {
	r := newRig(t)
	for _, op := range api.Ops() {
		info, ok := r.a.Mux().Info(op.Name)
		if ok != (op.Scope != api.ScopeLink && op.Scope != api.ScopeUser) {
			t.Errorf("%s (%s): served %v", op.Name, op.Scope, ok)
		}
		if ok && (info.Request != op.Request || info.Result != op.Result) {
			t.Errorf("%s: served as %s -> %s", op.Name, info.Request, info.Result)
		}
	}
}
