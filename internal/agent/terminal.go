package agent

import (
	"bytes"
	"context"
	"strings"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/metrics"
	"github.com/corral-dev/corral/internal/proc"
	"github.com/corral-dev/corral/internal/term"
	"github.com/corral-dev/corral/internal/tmux"
)

// views serves what viewers see of a session: its terminal stream, its
// timeline, a capture of its screen.
type views struct {
	*Agent
	// streams are the terminals attached by viewers; termStats counts
	// their output and redraws (TermStats).
	streams   *term.Registry
	termStats term.Stats
	// timelines are the views of the transcripts being read (timeline.go).
	timelines timelines
	// opened wakes watchWindowSizes when a stream opens.
	opened chan struct{}
}

// TermStats is what the terminal streams did, for metrics.
func (a *views) TermStats() metrics.TermStats {
	return metrics.TermStats{Streams: a.streams.Count(), Bytes: a.termStats.Bytes.Load(), Redraws: a.termStats.Redraws.Load()}
}

// Terminal sizes of the scrollback a new viewer gets before the live screen.
const (
	prefillLines = 10000
	prefillBytes = 192 << 10
	// streamGrace is how long a stream waits for its viewer to come back.
	streamGrace = 60 * time.Second
)

// attachResize bounds the wait for a new client's size to reach the window.
const attachResize = time.Second

// OpenTerminal attaches a viewer to a session's terminal. With a resume
// stream id and offset it continues that stream when it still can; else it
// starts a new one, whose output begins with the session's scrollback. The
// returned offset is where the viewer should start reading; reset says
// the viewer must clear its screen (a new stream replaced the one it asked
// for).
func (a *views) OpenTerminal(ctx context.Context, id string, cols, rows int, resume string, offset uint64) (s *term.Stream, from uint64, reset bool, err error) {
	a.mu.Lock()
	sess, err := a.getLocked(id)
	if err != nil {
		a.mu.Unlock()
		return nil, 0, false, err
	}
	kind := sess.kind
	a.mu.Unlock()
	if kind == api.KindExternal {
		return nil, 0, false, api.Errorf(api.CodeConflict, "corral cannot attach to a claude it did not start; its screen is available as a capture")
	}
	if resume != "" {
		if st, ok := a.streams.Get(id, resume); ok {
			if start, end := st.Offsets(); offset >= start && offset <= end {
				if cols > 0 && rows > 0 {
					st.Resize(cols, rows)
				}
				return st, offset, false, nil
			}
			// Too far behind to resume: a fresh stream. (Only this
			// one: other viewers' streams of the session go on.)
			st.Close()
		}
		reset = true
	}
	// The history is captured before the attach: whatever scrolls off the
	// screen in between, the new viewer would lack. The marks of the
	// history before the capture and after the attach's first screen tell.
	replaces := a.streams.TakeRedrawn(id)
	a.fitWindow(ctx, id, cols, rows)
	scrolled := a.scrolledSince(ctx, id, cols, rows)
	prefill := a.scrollback(ctx, id, rows)
	env := append(a.tmux.Env(), "TERM=xterm-256color", "COLORTERM=truecolor")
	st, err := term.Start(term.Options{Argv: a.tmux.AttachCommand(id), Env: env, Cols: cols, Rows: rows, Prefill: prefill,
		Suspend: a.suspendViewer, Activity: a.tmuxActivity, Scrolled: scrolled, Replaces: replaces,
		Stats: &a.termStats, WindowSize: a.windowSize(id)})
	if err != nil {
		for _, old := range replaces {
			old.Close()
		}
		return nil, 0, false, api.Errorf(api.CodeUnavailable, "attach: %v", err)
	}
	a.streams.Add(id, st)
	select {
	case a.opened <- struct{}{}:
	default:
	}
	return st, 0, reset, nil
}

// fitWindow gives the window the viewer's size before its history is
// captured, when no client is attached (else the latest client decides):
// resized by the attach instead, the window would move lines between its
// screen and its history, and the viewer would need a redraw at once.
func (a *views) fitWindow(ctx context.Context, id string, cols, rows int) {
	if cols <= 0 || rows <= 0 {
		return
	}
	p, err := a.tmux.PaneInfo(ctx, id)
	if err != nil || p.Clients > 0 || (p.Width == cols && p.Height == rows) {
		return
	}
	if err := a.tmux.Resize(ctx, id, cols, rows); err != nil {
		a.log.Debug("resize before attach", "session", id, "err", err)
	}
}

// scrolledSince returns a func that says whether the session's history
// changed since now, or nil when it cannot tell. The func is called at the
// attach's first output. A client attaches at the window's size and the
// window takes its own size only after that, when the client says it is
// ready; the change moves lines between screen and history, which the
// func must see, so it waits for the window to be cols x rows first (for
// at most attachResize: another client may be the one whose size counts).
func (a *views) scrolledSince(ctx context.Context, id string, cols, rows int) func() bool {
	mark, err := a.tmux.History(ctx, id)
	if err != nil {
		return nil
	}
	return func() bool {
		ctx, cancel := context.WithTimeout(a.ctx, attachResize+2*time.Second)
		defer cancel()
		for deadline := time.Now().Add(attachResize); cols > 0 && rows > 0 && time.Now().Before(deadline); {
			p, err := a.tmux.PaneInfo(ctx, id)
			if err != nil || (p.Width == cols && p.Height == rows) {
				break
			}
			select {
			case <-ctx.Done():
				return false
			case <-time.After(10 * time.Millisecond):
			}
		}
		now, err := a.tmux.History(ctx, id)
		// Unknown counts as unchanged: a redraw that cannot tell either
		// would only ask for another.
		return err == nil && now != mark
	}
}

// windowSize returns the size of a session's window, for a stream to report
// to its viewer: with several viewers, the one that typed (or attached, or
// resized) last sizes it, and the others draw at that size (docs/web-protocol.md).
func (a *views) windowSize(id string) func() (int, int, error) {
	return func() (int, int, error) {
		tm, target, err := a.panes.terminal(id)
		if err != nil {
			return 0, 0, err
		}
		ctx, cancel := context.WithTimeout(a.ctx, 2*time.Second)
		defer cancel()
		p, err := tm.PaneInfo(ctx, target)
		if err != nil {
			return 0, 0, err
		}
		return p.Width, p.Height, nil
	}
}

// How watchWindowSizes waits: a wait-for ends after sizeWaitMax at the
// latest, and after a tmux error the watcher tries again after sizeRetry.
const (
	sizeWaitMax = time.Minute
	sizeRetry   = time.Second
)

// watchWindowSizes tells the viewers' streams when a window changed size,
// so that each reports its window's size (term.Options.WindowSize): tmux's
// window-resized hook signals a channel this loop waits on, whatever
// resized the window (a viewer that attached, typed or resized, a person's
// own tmux client, one that detached). One waiting tmux client replaces a
// poll per stream, which cost the tmux server (a flood's bottleneck) a
// command every 500 ms per viewer. It waits only while there are streams.
// Every wake-up asks every stream, one PaneInfo each; a wait that ends at
// sizeWaitMax does too, which bounds how stale a report can be if a hook
// is ever lost (a tmux server restarted under a waiting client is seen as
// an error, and hooked again).
func (a *views) watchWindowSizes() {
	hooked := false
	for a.ctx.Err() == nil {
		if a.streams.Count() == 0 {
			select {
			case <-a.ctx.Done():
				return
			case <-a.opened:
			}
			continue
		}
		var err error
		if !hooked {
			if err = a.tmux.HookWindowResized(a.ctx); err == nil {
				hooked = true
				// What changed before the hook was in place.
				a.streams.CheckSizes()
			}
		}
		if err == nil {
			if err = a.tmux.WaitWindowResized(a.ctx, sizeWaitMax); err == nil {
				a.streams.CheckSizes()
				continue
			}
		}
		hooked = false
		a.log.Debug("window-size hook", "err", err)
		select {
		case <-a.ctx.Done():
			return
		case <-time.After(sizeRetry):
		}
	}
}

// suspendViewer stops tmux drawing to a viewer's client during a flood
// (see package term): rendering every line for a client costs the tmux
// server, which is what a flood waits on, 15-30% more time.
func (a *views) suspendViewer(tty string) error {
	ctx, cancel := context.WithTimeout(a.ctx, 2*time.Second)
	defer cancel()
	err := a.tmux.SuspendAlone(ctx, tty)
	if err != nil {
		a.log.Debug("viewer left awake during a flood", "tty", tty, "err", err)
	} else {
		a.log.Debug("viewer suspended during a flood", "tty", tty)
	}
	return err
}

// tmuxActivity is how much the tmux server has read, its panes' output
// included: a suspended viewer wakes once this stops growing fast.
func (a *views) tmuxActivity() (uint64, error) {
	a.mu.Lock()
	pid := a.serverPID
	a.mu.Unlock()
	return proc.ReadChars(pid)
}

// scrollback is the session's tmux history (not the visible screen, which
// the attach draws), as terminal output, followed by enough newlines to
// push it into the viewer's scrollback before the attach clears the screen:
// one screen of them (rows). More would stay in the viewer's scrollback as
// blank lines between the history and the live screen: a fixed 200 left
// 155 of them on a 45-row terminal, after every reload and every redraw
// (such as the one after /compact).
func (a *views) scrollback(ctx context.Context, id string, rows int) []byte {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	hist, err := a.tmux.Capture(ctx, id, tmux.CaptureOptions{Escapes: true, History: prefillLines, HistoryOnly: true})
	if err != nil || strings.TrimSpace(hist) == "" {
		return nil
	}
	lines := strings.Split(strings.TrimRight(hist, "\n"), "\n")
	var b bytes.Buffer
	// Keep the newest lines that fit.
	size := 0
	first := len(lines)
	for first > 0 && size+len(lines[first-1])+2 <= prefillBytes {
		first--
		size += len(lines[first]) + 2
	}
	for _, l := range lines[first:] {
		b.WriteString(l)
		b.WriteString("\x1b[0m\r\n")
	}
	b.WriteString(strings.Repeat("\r\n", pushLines(rows)))
	return b.Bytes()
}

// pushLines is how many newlines push a terminal's whole screen of rows
// into its scrollback: rows-1 scroll every line off the screen, and one more
// leaves a blank line between the history and the live screen.
// The stream's defaults and bounds are term's (clampSize).
func pushLines(rows int) int {
	if rows <= 0 {
		rows = 40
	}
	return min(max(rows, 5), 500)
}

// Capture returns the visible screen, with history lines of scrollback.
func (a *views) Capture(ctx context.Context, req api.CaptureRequest) (api.Screen, error) {
	id, history := req.ID, req.History
	tm, target, err := a.panes.terminal(id)
	if err != nil {
		return api.Screen{}, err
	}
	text, err := tm.Capture(ctx, target, tmux.CaptureOptions{History: history})
	if err != nil {
		return api.Screen{}, a.panes.tmuxErr(err)
	}
	scr := api.Screen{Text: text}
	if p, err := tm.PaneInfo(ctx, target); err == nil {
		scr.Cols, scr.Rows, scr.Cursor = p.Width, p.Height, [2]int{p.CursorX, p.CursorY}
	}
	return scr, nil
}

// TermStats is what the viewers' terminal streams did, for metrics.
func (a *Agent) TermStats() metrics.TermStats { return a.views.TermStats() }
