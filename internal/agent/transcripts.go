package agent

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"sync"

	"github.com/fsnotify/fsnotify"

	"github.com/corral-dev/corral/internal/claude/transcript"
	"github.com/corral-dev/corral/internal/status"
)

// transcripts follows the sessions' transcripts with one fsnotify watcher,
// reads them outside the lock and hands what they say to the intake.
type transcripts struct {
	*Agent
	// twatch watches the directories of the transcripts followed (tdirs,
	// guarded by dmu: watches are added outside the registry's lock).
	twatch *fsnotify.Watcher
	dmu    sync.Mutex
	tdirs  map[string]bool
	// sdirs are the subagents' directories watched (guarded by dmu),
	// earliest first: at most maxSubagentDirs.
	sdirs []string
}

// maxSubagentDirs bounds the subagents' directories watched, one per
// Claude conversation that ran subagents; the earliest watch goes first.
const maxSubagentDirs = 64

// ensureTranscriptLocked starts following a session's transcript once its
// path is known. It returns the transcript's directory ("" if none), which
// the caller watches (watchDir) once it has let go of the lock.
func (a *transcripts) ensureTranscriptLocked(s *session) (dir string) {
	path := s.transcript(a.cfg.ClaudeDir)
	if path == "" {
		return ""
	}
	if s.tr == nil || s.tr.path() != path {
		s.tr = newTranscriptReader(path)
	}
	return filepath.Dir(path)
}

// watchDir watches a transcripts' directory, once. Adding a watch reads
// the file system: it runs without the registry's lock.
func (a *transcripts) watchDir(dir string) {
	if dir == "" || a.twatch == nil {
		return
	}
	a.dmu.Lock()
	defer a.dmu.Unlock()
	if a.tdirs[dir] {
		return
	}
	if err := a.twatch.Add(dir); err == nil {
		a.tdirs[dir] = true
	}
}

// watchSubagents watches the directory of a session's subagents'
// transcripts, so that what they write is read as it comes (a background
// subagent writes while the session's transcript does not change). It
// reports whether the watch is new: what was written before it started
// sent no event, and the caller reads it.
func (a *transcripts) watchSubagents(dir string) (added bool) {
	if dir == "" || a.twatch == nil {
		return false
	}
	a.dmu.Lock()
	defer a.dmu.Unlock()
	if slices.Contains(a.sdirs, dir) {
		return false
	}
	if a.twatch.Add(dir) != nil {
		return false
	}
	a.sdirs = append(a.sdirs, dir)
	if len(a.sdirs) > maxSubagentDirs {
		_ = a.twatch.Remove(a.sdirs[0])
		a.sdirs = a.sdirs[1:]
	}
	return true
}

// readTranscript reads what is new in a session's transcript. The file is
// read outside the agent's lock (one reader per session at a time); the
// lock is taken to apply what was found. The first read of a transcript
// only gathers metadata (usage, last message): old interruptions and turn
// ends are history, not signals. The subagents the transcript reports are
// read too, for the usage and the day's cost.
func (a *transcripts) readTranscript(id string) {
	a.mu.Lock()
	s, ok := a.sessions[id]
	var r *transcriptReader
	if ok {
		r = s.tr
	}
	a.mu.Unlock()
	if r == nil {
		return
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	var evs []status.Signal
	read := false
	for {
		b, err := r.tail.Read()
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				a.warn("transcript", "session", id, "err", err)
			}
			break
		}
		read = true
		if b.Reset {
			r.tokens.Reset()
			r.subs.Reset()
		}
		for _, e := range b.Entries {
			r.tokens.Add(e)
			if run, ok := transcript.SubagentOf(e); ok {
				// Its responses are in its own file, complete by now
				// unless it runs in the background (Poll follows those).
				r.subs.Read(run, func(se transcript.Entry) { r.tokens.AddSubagent(run.AgentID, se) })
			}
			for _, sig := range transcript.Signals(e) {
				ev, ok := transcriptSignal(sig)
				if !ok || !r.primed && (ev.Kind == status.Interrupt || ev.Kind == status.TurnEnded || ev.Kind == status.PromptSeen) {
					continue // history, not news
				}
				evs = append(evs, ev)
			}
		}
		if !b.More {
			break
		}
	}
	if !read {
		return
	}
	r.subs.Poll(r.tokens.AddSubagent)
	if r.subs.Following() && a.watchSubagents(r.subs.Dir()) {
		// A subagent's last lines, written between the read above and
		// the watch, would otherwise wait for the next write to either
		// file, which may never come once the turn has ended.
		r.subs.Poll(r.tokens.AddSubagent)
	}
	r.primed = true
	totals := r.tokens

	a.mu.Lock()
	defer a.mu.Unlock()
	if s2, ok := a.sessions[id]; !ok || s2 != s || s.tr != r {
		return // the session, or its transcript, changed meanwhile
	}
	for _, ev := range evs {
		if ev.Kind == status.Interrupt {
			a.log.Debug("transcript interrupt", "session", id, "status", s.st.Status)
		}
		a.in.applyLocked(s, ev)
	}
	u := s.usage
	totals.Fill(&u, now())
	if !usageEqual(u, s.usage) {
		s.usage = u
		a.in.publishLocked(s, s.st.Status, false)
	}
}

// watchTranscripts reads transcripts as Claude writes them.
func (a *transcripts) watchTranscripts() {
	for {
		select {
		case <-a.ctx.Done():
			return
		case err, ok := <-a.twatch.Errors:
			if !ok {
				return
			}
			a.log.Warn("transcript watcher", "err", err)
		case ev, ok := <-a.twatch.Events:
			if !ok {
				return
			}
			if !ev.Has(fsnotify.Write) && !ev.Has(fsnotify.Create) {
				continue
			}
			a.mu.Lock()
			var ids []string
			for _, s := range a.sessions {
				if s.tr != nil && (s.tr.path() == ev.Name || s.tr.subs.Dir() == filepath.Dir(ev.Name)) {
					ids = append(ids, s.id)
				}
			}
			a.mu.Unlock()
			for _, id := range ids {
				a.readTranscript(id)
			}
		}
	}
}

func transcriptSignal(sig transcript.Signal) (status.Signal, bool) {
	switch v := sig.(type) {
	case transcript.Interrupt:
		return status.Signal{Kind: status.Interrupt, At: v.At}, true
	case transcript.ToolUse:
		return status.Signal{Kind: status.ToolSeen, Tool: v.Name, ToolInput: v.Input}, true
	case transcript.AssistantText:
		return status.Signal{Kind: status.AssistantText, Message: v.Text}, true
	case transcript.TurnEnded:
		return status.Signal{Kind: status.TurnEnded, At: v.At}, true
	case transcript.PromptSubmitted:
		return status.Signal{Kind: status.PromptSeen, At: v.At, Prompt: v.Text}, true
	}
	return status.Signal{}, false
}
