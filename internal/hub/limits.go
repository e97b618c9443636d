package hub

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/time/rate"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/link"
)

// What one device may put in the hub (Options.MaxSessions,
// Options.EventRate): a device is its owner's, but a broken or compromised
// one must not grow the hub's memory, database or event stream without
// bound, nor show its owner strings that are not what they seem.
const (
	// DefaultMaxSessions is how many sessions one device may have listed.
	DefaultMaxSessions = 1000
	// DefaultEventRate is how many events (and syncs) a second one device
	// may send, sustained, with bursts of eventBurst.
	DefaultEventRate = 200
	eventBurst       = 2000

	// Lengths of a session's fields, in bytes: labels (name, tool, error
	// kind, ids), paths, texts (last message, prompt, error message), and
	// the raw JSON of a waiting tool's input and suggestions (larger is
	// dropped: the UI shows the tool without it).
	maxLabel   = 256
	maxPath    = 4096
	maxText    = 16 << 10
	maxRaw     = 256 << 10
	maxArgs    = 64
	maxOptions = 32
	// maxCostUSD bounds a session's cost today, in dollars.
	maxCostUSD = 1e6
)

// limiter bounds one connection's events: over the rate they are dropped
// (logged once per episode), and a device that goes on at twice its burst
// without a pause is cut off with 1008: it reconnects, with backoff, and
// its sync brings the hub back to its true state.
type limiter struct {
	lim     *rate.Limiter
	dropped int // in the current episode
	bad     int // malformed sessions reported
}

// maxMalformedWarnings is how many malformed sessions of one connection are
// logged.
const maxMalformedWarnings = 10

func newLimiter(perSecond float64) *limiter {
	return &limiter{lim: rate.NewLimiter(rate.Limit(perSecond), eventBurst)}
}

// admit says whether one more message may be applied. The caller holds
// h.mu.
func (h *Hub) admitLocked(info DeviceIdentity, dev *device) bool {
	l := dev.limit
	if l == nil {
		return true
	}
	now := time.Now()
	if l.lim.AllowN(now, 1) {
		if l.dropped > 0 && l.lim.TokensAt(now) >= eventBurst-1 {
			l.dropped = 0 // quiet again: the episode is over
		}
		return true
	}
	l.dropped++
	switch l.dropped {
	case 1:
		h.log.Warn("device sends events faster than its limit; dropping them", "device", info.Name, "owner", info.Owner,
			"per_second", float64(l.lim.Limit()), "burst", eventBurst)
	case eventBurst:
		h.log.Warn("device keeps flooding the hub with events; cutting it off", "device", info.Name, "owner", info.Owner, "dropped", l.dropped)
		if dev.peer != nil {
			dev.peer.Close(link.StatusPolicy, "too many events")
		}
	}
	return false
}

// malformedLocked logs a malformed session a device reported, the first
// few per connection. The caller holds h.mu.
func (h *Hub) malformedLocked(info DeviceIdentity, dev *device, err error) {
	if dev.limit != nil {
		dev.limit.bad++
		if dev.limit.bad > maxMalformedWarnings {
			return
		}
	}
	h.log.Warn("device reported a malformed session; ignored", "device", info.Name, "owner", info.Owner, "err", err)
}

// overCapLocked logs, once per connection, that a device has more
// sessions than the hub keeps. The caller holds h.mu.
func (h *Hub) overCapLocked(info DeviceIdentity, dev *device) {
	if !dev.capWarned {
		dev.capWarned = true
		h.log.Warn("device has more sessions than the hub keeps; ignoring the rest", "device", info.Name, "owner", info.Owner,
			"limit", h.o.MaxSessions)
	}
}

// cleanSession checks a session a device reported: one whose id, status or
// kind is not of this protocol is refused (the error says why); the rest
// is cleaned: invalid UTF-8 and control characters (C0 but newline and
// tab in texts, DEL, C1, bidi overrides) out of every string, each cut to
// its length.
func cleanSession(s api.Session) (api.Session, error) {
	if !validSessionID(s.ID) {
		return s, fmt.Errorf("session id %q: want 1-64 of a-z, 0-9, - and _", clipBytes(cleanString(s.ID, false), 80))
	}
	if !s.Status.Valid() {
		return s, fmt.Errorf("session %s: unknown status %q", s.ID, clipBytes(cleanString(string(s.Status), false), 40))
	}
	switch s.Kind {
	case "", api.KindClaude, api.KindShell, api.KindExternal:
	default:
		return s, fmt.Errorf("session %s: unknown kind %q", s.ID, clipBytes(cleanString(string(s.Kind), false), 40))
	}
	label := func(v string, n int) string { return clipBytes(cleanString(v, false), n) }
	text := func(v string) string { return clipBytes(cleanString(v, true), maxText) }
	s.Name = label(s.Name, maxLabel)
	s.Dir = label(s.Dir, maxPath)
	s.ClaudeSessionID = label(s.ClaudeSessionID, maxLabel)
	s.CurrentTool = label(s.CurrentTool, maxLabel)
	s.Error = label(s.Error, maxLabel)
	s.TranscriptPath = label(s.TranscriptPath, maxPath)
	s.ErrorMessage = text(s.ErrorMessage)
	s.LastMessage = text(s.LastMessage)
	s.LastPrompt = text(s.LastPrompt)
	s.Usage.Model = label(s.Usage.Model, maxLabel)
	s.Usage.ModelName = label(s.Usage.ModelName, maxLabel)
	// The day's cost is summed over devices in the dashboard: a date, and
	// a count within reason.
	if _, err := time.Parse(time.DateOnly, s.Usage.CostDay); err != nil {
		s.Usage.CostDay = ""
	}
	if !(s.Usage.CostToday >= 0 && s.Usage.CostToday <= maxCostUSD) {
		s.Usage.CostToday = 0
	}
	s.Usage.TodayUnpriced = max(s.Usage.TodayUnpriced, 0)
	if len(s.Args) > maxArgs {
		s.Args = s.Args[:maxArgs]
	}
	for i, a := range s.Args {
		s.Args[i] = label(a, maxPath)
	}
	if len(s.Subagents) > maxOptions {
		s.Subagents = s.Subagents[:maxOptions]
	}
	subs := make([]api.Subagent, len(s.Subagents))
	for i, sa := range s.Subagents {
		sa.Description, sa.Type = text(sa.Description), label(sa.Type, maxLabel)
		subs[i] = sa
	}
	if s.Subagents != nil {
		s.Subagents = subs
	}
	if s.Todos != nil {
		t := *s.Todos
		t.Current = text(t.Current)
		s.Todos = &t
	}
	if g := s.Git; g != nil {
		c := *g
		c.Root, c.Branch, c.Head, c.Upstream = label(c.Root, maxPath), label(c.Branch, maxLabel), label(c.Head, maxLabel), label(c.Upstream, maxLabel)
		c.Error = text(c.Error)
		for _, n := range []*int{&c.Ahead, &c.Behind, &c.Changed, &c.Staged, &c.Unstaged, &c.Untracked, &c.Conflicted} {
			*n = max(*n, 0)
		}
		s.Git = &c
	}
	if w := s.Worktree; w != nil {
		c := *w
		c.Repo, c.Path, c.Branch, c.Base = label(c.Repo, maxPath), label(c.Path, maxPath), label(c.Branch, maxLabel), label(c.Base, maxLabel)
		s.Worktree = &c
	}
	if w := s.WaitingFor; w != nil {
		c := *w
		c.DialogID = label(c.DialogID, maxLabel)
		c.Kind = label(c.Kind, maxLabel)
		c.Tool = label(c.Tool, maxLabel)
		c.Message, c.Title, c.Question, c.Body, c.Summary = text(c.Message), text(c.Title), text(c.Question), text(c.Body), text(c.Summary)
		c.Plan = clipBytes(cleanString(c.Plan, true), maxRaw)
		if len(c.Input) > maxRaw {
			c.Input = nil
		}
		if len(c.Suggestions) > maxRaw {
			c.Suggestions = nil
		}
		if len(c.Options) > maxOptions {
			c.Options = c.Options[:maxOptions]
		}
		opts := make([]api.Option, len(c.Options))
		for i, o := range c.Options {
			o.Label, o.Description = label(o.Label, maxLabel), text(o.Description)
			opts[i] = o
		}
		if c.Options != nil {
			c.Options = opts
		}
		if len(c.Questions) > maxOptions {
			c.Questions = c.Questions[:maxOptions]
		}
		qs := make([]api.Question, len(c.Questions))
		for i, q := range c.Questions {
			q.Header, q.Question = label(q.Header, maxLabel), text(q.Question)
			if len(q.Options) > maxOptions {
				q.Options = q.Options[:maxOptions]
			}
			qo := make([]api.QuestionOption, len(q.Options))
			for j, o := range q.Options {
				qo[j] = api.QuestionOption{Label: label(o.Label, maxLabel), Description: text(o.Description)}
			}
			if q.Options != nil {
				q.Options = qo
			}
			qs[i] = q
		}
		if c.Questions != nil {
			c.Questions = qs
		}
		s.WaitingFor = &c
	}
	return s, nil
}

// validSessionID is the agent's rule for session ids (agent.validID).
func validSessionID(id string) bool {
	if len(id) == 0 || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// cleanString replaces invalid UTF-8 and drops control characters: C0 (but
// newline and tab when multiline), DEL, C1, and the bidi controls that make
// text read otherwise than it is.
func cleanString(s string, multiline bool) string {
	ok := utf8.ValidString(s)
	if ok {
		ok = strings.IndexFunc(s, func(r rune) bool { return dropRune(r, multiline) }) < 0
	}
	if ok {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		if dropRune(r, multiline) {
			return -1
		}
		return r
	}, s)
}

func dropRune(r rune, multiline bool) bool {
	switch {
	case r == '\n' || r == '\t':
		return !multiline
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	}
	return false
}

// clipBytes cuts s to at most n bytes, on a character boundary.
func clipBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}
