package agent

import (
	"crypto/rand"
	"encoding/json"
	"sync"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/claude"
	"github.com/corral-dev/corral/internal/claude/transcript"
	"github.com/corral-dev/corral/internal/status"
	"github.com/corral-dev/corral/internal/store"
)

// session is the agent's record of one session. Guarded by Agent.mu.
type session struct {
	id      string
	name    string
	dir     string
	kind    api.Kind
	args    []string
	created time.Time
	updated time.Time

	st        status.State
	usage     api.Usage
	panePID   int
	paneID    string // tmux's %N, unique while its server lives
	claudePID int
	// claudeStart is claude's start time (external sessions: against pid
	// reuse) and ext where its terminal is.
	claudeStart uint64
	ext         *extTarget
	// watching records which pids have exit watchers, so each is watched once.
	watching map[int]bool

	// tr reads the transcript; nil until its path is known. It is replaced,
	// never changed, under Agent.mu; its reads run outside it.
	tr *transcriptReader

	// launchedAt is when corral last started claude in this pane; a process
	// that is not there yet shortly after is still starting.
	launchedAt time.Time
	// rechecking: a chain of screen reads (recheck) runs.
	rechecking bool
	// lost: its pane died with the tmux server and could not be started
	// again yet.
	lost bool

	// git is its folder's repository at a glance (git.go); worktree the
	// worktree corral made for it.
	git      *api.GitSummary
	worktree *api.SessionWorktree
}

// transcriptReader follows one transcript file. Its fields are guarded by
// mu, which a reader holds while it reads the file (outside Agent.mu).
type transcriptReader struct {
	mu   sync.Mutex
	tail *transcript.Tailer
	// tokens adds up the transcript's usage, deduplicated by message, and
	// its subagents' (read by subs).
	tokens transcript.UsageTotals
	subs   *transcript.Subagents
	// primed: the transcript's existing content has been read for
	// metadata; only lines after it are status signals.
	primed bool
}

func newTranscriptReader(path string) *transcriptReader {
	return &transcriptReader{tail: transcript.NewTailer(path, transcript.Position{}), subs: transcript.NewSubagents(path)}
}

// path is the transcript's path, which never changes.
func (r *transcriptReader) path() string { return r.tail.Path() }

// track folds one signal into the session's state: the only caller of
// status.Apply. It returns the status before, and what Apply said.
func (s *session) track(ev status.Signal) (api.Status, status.Outcome) {
	prev := s.st.Status
	ns, out := status.Apply(s.st, ev, now())
	s.st = ns
	return prev, out
}

// transcript is the path of the session's Claude transcript: the one
// Claude reported, else where Claude keeps it for the conversation's id
// (claudeDir: Claude's config directory); "" before Claude has an id.
func (s *session) transcript(claudeDir string) string {
	if s.st.TranscriptPath != "" || s.st.ClaudeSessionID == "" {
		return s.st.TranscriptPath
	}
	return claude.TranscriptPath(claudeDir, s.dir, s.st.ClaudeSessionID)
}

func (s *session) toAPI() api.Session {
	out := api.Session{
		ID:              s.id,
		Name:            s.name,
		Dir:             s.dir,
		Kind:            s.kind,
		Status:          s.st.Status,
		ClaudeSessionID: s.st.ClaudeSessionID,
		CurrentTool:     s.st.CurrentTool,
		WaitingFor:      waitingView(s.st.Waiting),
		Error:           s.st.Error,
		ErrorMessage:    s.st.ErrorMessage,
		Compacting:      s.st.Compacting,
		BusySince:       s.st.BusySince,
		LastMessage:     s.st.LastMessage,
		LastPrompt:      s.st.LastPrompt,
		Usage:           s.usage,
		Todos:           s.st.Todos,
		Background:      s.st.Background,
		ClaudePID:       s.claudePID,
		TranscriptPath:  s.st.TranscriptPath,
		Args:            s.args,
		CreatedAt:       s.created,
		UpdatedAt:       s.updated,
		Git:             s.git,
		Worktree:        s.worktree,
	}
	for _, sa := range s.st.Subagents {
		out.Subagents = append(out.Subagents, api.Subagent{Description: sa.Description, Type: sa.Type, Background: sa.Background})
	}
	if out.Usage.Model == "" {
		out.Usage.Model = s.st.Model
	}
	// The day's cost was counted when the transcript was last read: on
	// a later day nothing has been written since, so today's is zero.
	if today := transcript.DayKey(now(), nil); out.Usage.CostDay != "" && out.Usage.CostDay != today {
		out.Usage.CostDay, out.Usage.CostToday, out.Usage.TodayUnpriced = today, 0, 0
	}
	if s.kind == api.KindShell {
		out.ClaudeSessionID = ""
	}
	return out
}

// persisted is what the database keeps of a session beyond its columns.
type persisted struct {
	State status.State `json:"state"`
	Usage api.Usage    `json:"usage"`
	// External sessions are found again by their process.
	ClaudePID   int        `json:"claude_pid,omitempty"`
	ClaudeStart uint64     `json:"claude_start,omitempty"`
	Ext         *extTarget `json:"ext,omitempty"`
	// Worktree is the worktree corral made for the session.
	Worktree *api.SessionWorktree `json:"worktree,omitempty"`
}

func (s *session) record() store.Session {
	p := persisted{State: s.st, Usage: s.usage, Worktree: s.worktree}
	if s.kind == api.KindExternal {
		p.ClaudePID, p.ClaudeStart, p.Ext = s.claudePID, s.claudeStart, s.ext
	}
	b, _ := json.Marshal(p)
	return store.Session{
		ID: s.id, Name: s.name, Dir: s.dir, Kind: string(s.kind), Args: s.args,
		ClaudeSessionID: s.st.ClaudeSessionID, Status: string(s.st.Status), State: b,
		CreatedAt: s.created, UpdatedAt: s.updated,
	}
}

func fromRecord(r store.Session) *session {
	s := &session{
		id: r.ID, name: r.Name, dir: r.Dir, kind: api.Kind(r.Kind), args: r.Args,
		created: r.CreatedAt, updated: r.UpdatedAt, watching: map[int]bool{},
	}
	var p persisted
	if err := json.Unmarshal(r.State, &p); err == nil {
		s.st, s.usage, s.worktree = p.State, p.Usage, p.Worktree
		if s.kind == api.KindExternal {
			s.claudePID, s.claudeStart, s.ext = p.ClaudePID, p.ClaudeStart, p.Ext
		}
	}
	if s.st.Status == "" {
		s.st.Status = api.Status(r.Status)
	}
	if s.st.ClaudeSessionID == "" {
		s.st.ClaudeSessionID = r.ClaudeSessionID
	}
	return s
}

// newID makes a session id: 12 characters of lowercase base32 (60 bits),
// unique across machines for the hub without coordination, and safe as a
// tmux session name.
func newID() string {
	const alphabet = "abcdefghijkmnpqrstuvwxyz23456789"
	var b [12]byte
	rand.Read(b[:])
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b[:])
}

// validID reports whether id could be a session id, before any lookup.
func validID(id string) bool {
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

const (
	persistRetryMin = 100 * time.Millisecond
	persistRetryMax = 5 * time.Second
)

// waitingView is a dialog as readers see it: with its summary.
func waitingView(w *api.Waiting) *api.Waiting {
	if w == nil {
		return nil
	}
	v := *w
	v.Summary = v.Describe()
	return &v
}
