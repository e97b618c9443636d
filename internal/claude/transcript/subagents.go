package transcript

import (
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/claude"
)

// SubagentRun is a subagent (the Agent or Task tool) a session's
// transcript reports: the tool result that carries its agentId.
type SubagentRun struct {
	ToolUseID string
	AgentID   string
	// Done says the subagent had finished when its result was written (a
	// background one, "async_launched", goes on writing).
	Done bool
}

// SubagentOf reads the subagent a main-transcript entry reports: the
// agentId in the toolUseResult of an Agent (Task) tool's result.
func SubagentOf(e Entry) (SubagentRun, bool) {
	if e.Type != EntryUser || e.IsSidechain || e.Message == nil || len(e.ToolUseResult) == 0 || e.ToolUseResult[0] != '{' {
		return SubagentRun{}, false
	}
	blocks := e.Message.Content.Blocks
	if countResults(blocks) != 1 {
		return SubagentRun{}, false
	}
	var res struct {
		AgentID string `json:"agentId"`
		Status  string `json:"status"`
		IsAsync bool   `json:"isAsync"`
	}
	if claude.DecodeLoose(e.ToolUseResult, &res) != nil || !validAgentID(res.AgentID) {
		return SubagentRun{}, false
	}
	run := SubagentRun{AgentID: res.AgentID, Done: !res.IsAsync && res.Status != "async_launched"}
	for _, blk := range blocks {
		if blk.Type == BlockToolResult {
			run.ToolUseID = blk.ToolUseID
		}
	}
	return run, true
}

// validAgentID: the id names a file, so it may hold nothing that could
// leave the subagents' directory (Claude's are 17 hex digits).
func validAgentID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// SubagentDir is where Claude keeps the transcripts of the subagents of
// the session whose transcript is at path: <project dir>/<session
// id>/subagents ("" for a path that is not a .jsonl transcript).
func SubagentDir(transcriptPath string) string {
	id, ok := strings.CutSuffix(filepath.Base(transcriptPath), ".jsonl")
	if !ok || !validSessionID(id) {
		return ""
	}
	return filepath.Join(filepath.Dir(transcriptPath), id, "subagents")
}

func validSessionID(id string) bool { return validAgentID(id) }

// maxLiveSubagents bounds the subagents Subagents follows; the earliest
// are let go first.
const maxLiveSubagents = 16

// doneGrace is how long a finished subagent's transcript is still
// followed: Claude writes the Agent tool's result to the session's
// transcript before the subagent's own last lines reach its file.
const doneGrace = time.Minute

// Subagents reads the transcripts of one session's subagents, each from
// where it stopped. A subagent's file is read when the main transcript
// reports it, then followed (Poll): for doneGrace once it finished, until
// maxLiveSubagents later ones push it out while it runs in the
// background. It is not safe for concurrent use; it never writes
// Claude's files.
type Subagents struct {
	dir   string
	live  map[string]*followed
	order []string // followed agent ids, earliest first
}

type followed struct {
	t *Tailer
	// until is when a finished subagent is let go (zero: still running).
	until time.Time
}

// NewSubagents reads the subagents of the session whose transcript is at
// transcriptPath.
func NewSubagents(transcriptPath string) *Subagents {
	return &Subagents{dir: SubagentDir(transcriptPath)}
}

// Dir is the directory of the subagents' transcripts ("" if none can be).
func (s *Subagents) Dir() string { return s.dir }

// Read reads what is new in run's transcript, passing each entry to fn,
// and returns the bytes it consumed. A missing or unreadable file gives
// nothing.
func (s *Subagents) Read(run SubagentRun, fn func(Entry)) int64 {
	if s.dir == "" || !validAgentID(run.AgentID) {
		return 0
	}
	f := s.live[run.AgentID]
	if f == nil {
		f = &followed{t: NewTailer(filepath.Join(s.dir, "agent-"+run.AgentID+".jsonl"), Position{})}
		if s.live == nil {
			s.live = map[string]*followed{}
		}
		s.live[run.AgentID] = f
		s.order = append(s.order, run.AgentID)
		if len(s.order) > maxLiveSubagents {
			s.forget(s.order[0])
		}
	}
	if run.Done && f.until.IsZero() {
		f.until = time.Now().Add(doneGrace)
	}
	return drain(f.t, fn)
}

// Poll reads what is new in the transcripts of the subagents followed,
// and returns the bytes it consumed.
func (s *Subagents) Poll(fn func(id string, e Entry)) int64 {
	var n int64
	now := time.Now()
	for _, id := range slices.Clone(s.order) {
		f := s.live[id]
		n += drain(f.t, func(e Entry) { fn(id, e) })
		if !f.until.IsZero() && now.After(f.until) {
			s.forget(id)
		}
	}
	return n
}

// Reset forgets every subagent followed, for a transcript that started over.
func (s *Subagents) Reset() { s.live, s.order = nil, nil }

func (s *Subagents) forget(id string) {
	if s.live[id] == nil {
		return
	}
	delete(s.live, id)
	if i := slices.Index(s.order, id); i >= 0 {
		s.order = slices.Delete(s.order, i, i+1)
	}
}

// drain reads t to the end of what is written. A file replaced or cut
// starts over: its responses count again only where the caller does not
// deduplicate them (UsageTotals does).
func drain(t *Tailer, fn func(Entry)) int64 {
	var n int64
	for {
		before := t.Position().Offset
		b, err := t.Read()
		if err != nil {
			break
		}
		if b.Reset {
			before = 0
		}
		n += max(t.Position().Offset-before, 0)
		for _, e := range b.Entries {
			fn(e)
		}
		if !b.More {
			break
		}
	}
	return n
}

// TurnTokensOf is what a UsageTotals' responses add to a turn.
func TurnTokensOf(t *UsageTotals) api.TurnTokens {
	return api.TurnTokens{
		Input: t.Input, Output: t.Output, CacheRead: t.CacheRead, CacheCreation: t.CacheCreation,
		Responses: t.responses, CostUSD: t.usd, Unpriced: t.unpriced,
	}
}

// Following says whether Poll has any subagent to read.
func (s *Subagents) Following() bool { return len(s.order) > 0 }

// Follows says whether Poll reads subagent id's transcript.
func (s *Subagents) Follows(id string) bool { return s.live[id] != nil }
