package agent

import (
	"context"
	"os"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/claude/screen"
	"github.com/corral-dev/corral/internal/claude/transcript"
)

// What the timeline reads and keeps: the last timelineTail bytes of a
// transcript when a view is first made, at most timelineItems items in an
// answer, and views of the timelineViews transcripts read last.
const (
	timelineTail  = 4 << 20
	timelineItems = 1000
	timelineViews = 8
	// liveWait bounds the screen read of a running tool's output.
	liveWait = time.Second
)

// timelines holds a view of each transcript being read (transcript.TimelineView),
// so that an answer costs what was appended since the reader's cursor, not a
// reread of the transcript. Only transcripts somebody reads have one.
type timelines struct {
	mu    sync.Mutex
	views map[string]*transcript.TimelineView // by session id
	used  []string                            // session ids, least recently read first
}

// view returns the view of a session's transcript at path, made anew when
// the session's transcript changed; the least recently read view goes
// beyond timelineViews.
func (t *timelines) view(id, path string) *transcript.TimelineView {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.views == nil {
		t.views = map[string]*transcript.TimelineView{}
	}
	v := t.views[id]
	if v == nil || v.Path() != path {
		v = transcript.NewTimelineView(path, timelineTail, timelineItems)
		t.views[id] = v
	}
	for i, u := range t.used {
		if u == id {
			t.used = append(t.used[:i], t.used[i+1:]...)
			break
		}
	}
	t.used = append(t.used, id)
	if len(t.used) > timelineViews {
		delete(t.views, t.used[0])
		t.used = t.used[1:]
	}
	return v
}

// Timeline returns the readable view of a session's transcript: its last
// items, or with a cursor what changed since.
func (a *views) Timeline(ctx context.Context, req api.TimelineRequest) (api.Timeline, error) {
	a.mu.Lock()
	s, err := a.getLocked(req.ID)
	if err != nil {
		a.mu.Unlock()
		return api.Timeline{}, err
	}
	path := s.transcript(a.cfg.ClaudeDir)
	toolRuns := s.kind != api.KindShell && s.st.Status == api.StatusBusy && s.st.CurrentTool != ""
	a.mu.Unlock()
	empty := api.Timeline{Items: []api.TimelineItem{}, Reset: true}
	if path == "" {
		return empty, nil
	}
	if _, err := os.Stat(path); err != nil {
		return empty, nil // no transcript yet
	}
	d, err := a.timelines.view(req.ID, path).Since(req.Since)
	if err != nil {
		return api.Timeline{}, api.Errorf(api.CodeInternal, "read transcript: %v", err)
	}
	tl := api.Timeline{Items: d.Items, Reset: d.Reset, Cursor: d.Cursor}
	if toolRuns {
		tl.Live = a.liveOutput(ctx, req.ID)
	}
	return tl, nil
}

// liveOutput reads what the screen shows of the running tool's output
// (nil when it shows none, or the screen cannot be read: the timeline
// answers without it). It does I/O; call it without a.mu.
func (a *views) liveOutput(ctx context.Context, id string) *api.LiveOutput {
	// Briefly: the timeline's answer waits for it, and the next poll asks again.
	ctx, cancel := context.WithTimeout(ctx, liveWait)
	defer cancel()
	v, err := a.screen.look(ctx, id)
	if err != nil {
		return nil
	}
	out, ok := screen.RunningTool(v.text)
	if !ok {
		return nil
	}
	return boundLive(out)
}

// boundLive keeps the last api.LiveLines lines, each cut at
// api.LiveLineBytes on a character boundary.
func boundLive(out screen.ToolOutput) *api.LiveOutput {
	lines := out.Lines
	hidden := out.Hidden
	if n := len(lines) - api.LiveLines; n > 0 {
		lines, hidden = lines[n:], hidden+n
	}
	l := &api.LiveOutput{Tool: cut(out.Tool, 100), Header: cut(out.Header, api.LiveLineBytes), Lines: make([]string, len(lines)), Hidden: hidden}
	for i, s := range lines {
		l.Lines[i] = cut(s, api.LiveLineBytes)
	}
	return l
}

// cut shortens s to at most n bytes, on a character boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
