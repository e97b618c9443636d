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

// The operations the agent's parts answer.

// SendText types text into a session (inputGate.SendText).
func (a *Agent) SendText(ctx context.Context, req api.InputRequest) error {
	return a.input.SendText(ctx, req)
}

// SendKeys presses named keys in a session (inputGate.SendKeys).
func (a *Agent) SendKeys(ctx context.Context, req api.KeysRequest) error {
	return a.input.SendKeys(ctx, req)
}

// Answer answers the dialog a session shows (inputGate.Answer).
func (a *Agent) Answer(ctx context.Context, req api.AnswerRequest) (api.AnswerResult, error) {
	return a.input.Answer(ctx, req)
}

// TerminalInput is told when a viewer typed into a session's terminal
// (inputGate.TerminalInput).
func (a *Agent) TerminalInput(id string) { a.input.TerminalInput(id) }

// OpenTerminal attaches a viewer to a session's terminal
// (views.OpenTerminal).
func (a *Agent) OpenTerminal(ctx context.Context, id string, cols, rows int, resume string, offset uint64) (*term.Stream, uint64, bool, error) {
	return a.views.OpenTerminal(ctx, id, cols, rows, resume, offset)
}

// Timeline returns the readable view of a session's transcript
// (views.Timeline).
func (a *Agent) Timeline(ctx context.Context, req api.TimelineRequest) (api.Timeline, error) {
	return a.views.Timeline(ctx, req)
}

// Capture returns a session's screen (views.Capture).
func (a *Agent) Capture(ctx context.Context, req api.CaptureRequest) (api.Screen, error) {
	return a.views.Capture(ctx, req)
}

// GitStatus reads the git status of a session's folder (gitState.GitStatus).
func (a *Agent) GitStatus(ctx context.Context, req api.SessionRef) (api.GitStatus, error) {
	return a.git.GitStatus(ctx, req)
}

// GitDiff reads the diff of a session's folder (gitState.GitDiff).
func (a *Agent) GitDiff(ctx context.Context, req api.GitDiffRequest) (api.GitDiff, error) {
	return a.git.GitDiff(ctx, req)
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

// Devices: an agent is one machine, with no hub in front of it.
func (a *Agent) Devices(ctx context.Context) ([]api.Device, error) {
	return []api.Device{}, nil
}
