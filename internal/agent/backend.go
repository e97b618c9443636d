package agent

import (
	"context"
	"errors"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/backend"
	"github.com/corral-dev/corral/internal/term"
)

// newMux is the table of the operations one machine answers: every op of
// internal/api but the link's own (agentlink adds those per connection).
func (a *Agent) newMux() *backend.Mux {
	m := backend.NewMux()
	backend.Handle(m, api.OpVersion, func(ctx context.Context, _ api.Empty) (api.VersionInfo, error) { return a.Version(ctx), nil })
	backend.Handle(m, api.OpSessions, func(ctx context.Context, _ api.Empty) ([]api.Session, error) { return a.Sessions(ctx) })
	backend.Handle(m, api.OpSession, a.Session)
	backend.Handle(m, api.OpDevices, func(ctx context.Context, _ api.Empty) ([]api.Device, error) { return a.Devices(ctx) })
	backend.Handle(m, api.OpCreate, a.Create)
	backend.Handle(m, api.OpDirs, a.ListDir)
	backend.Handle(m, api.OpResumable, a.Resumable)
	backend.HandleNone(m, api.OpKill, a.KillWith)
	backend.Handle(m, api.OpRename, a.Rename)
	backend.HandleNone(m, api.OpInput, a.SendText)
	backend.Handle(m, api.OpAnswer, a.Answer)
	backend.Handle(m, api.OpRestart, a.Restart)
	backend.HandleNone(m, api.OpKeys, a.SendKeys)
	backend.Handle(m, api.OpCapture, a.Capture)
	backend.Handle(m, api.OpRun, a.Run)
	backend.HandleNone(m, api.OpViewed, a.Viewed)
	backend.Handle(m, api.OpDownload, a.Download)
	backend.Handle(m, api.OpTimeline, a.Timeline)
	backend.Handle(m, api.OpGitStatus, a.GitStatus)
	backend.Handle(m, api.OpGitDiff, a.GitDiff)
	return m
}

// Mux is the agent's table of operations, which agentlink serves to the
// hub (under the machine's policy).
func (a *Agent) Mux() *backend.Mux { return a.mux }

// Backend serves the agent itself: `corral agent`'s own socket, and tests.
func (a *Agent) Backend() backend.Backend { return agentBackend{a} }

type agentBackend struct{ a *Agent }

func (b agentBackend) Serve(ctx context.Context, op string, req any) (any, error) {
	return b.a.mux.Serve(ctx, op, req)
}

func (b agentBackend) Subscribe(ctx context.Context, since uint64) (backend.Subscription, error) {
	return b.a.Subscribe(ctx, since)
}

func (b agentBackend) OpenTerminal(ctx context.Context, id string, cols, rows int, resume string, offset uint64) (backend.Terminal, uint64, bool, error) {
	st, from, reset, err := b.a.OpenTerminal(ctx, id, cols, rows, resume, offset)
	if err != nil {
		return nil, 0, false, err // not a typed nil
	}
	return terminal{st}, from, reset, nil
}

// terminal is a local terminal stream as the servers see it: its ends are
// backend's errors (internal/term is a leaf and knows nothing of backend).
type terminal struct{ *term.Stream }

func (t terminal) Read(ctx context.Context, offset uint64, max int) ([]byte, error) {
	b, err := t.Stream.Read(ctx, offset, max)
	switch {
	case errors.Is(err, term.ErrClosed):
		err = backend.ErrTermClosed
	case errors.Is(err, term.ErrRedraw):
		err = backend.ErrTermRedraw
	}
	return b, err
}
