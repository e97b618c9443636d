package agent_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/api"
)

// TestCostFromTranscript: the agent prices a session's transcript. A
// turn's prompt in the timeline carries its cost, and the session's usage
// the cost of the responses written today (the agent's local day), not
// yesterday's; a model without a price is counted apart, never guessed.
func TestCostFromTranscript(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	s := r.shell("")
	dir := filepath.Join(r.home, ".claude", "projects", "-proj")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "c1.jsonl")
	now := time.Now()
	// A day ago: the first turn is not today (whatever the time zone, 30 h
	// back is another local day).
	old := now.Add(-30 * time.Hour)
	ts := func(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
	user := func(uuid, text string, at time.Time) string {
		return fmt.Sprintf(`{"type":"user","uuid":%q,"timestamp":%q,"message":{"role":"user","content":%q}}`+"\n", uuid, ts(at), text)
	}
	reply := func(uuid, msg, req, model string, in, out, cw, cw1h int64, at time.Time) string {
		return fmt.Sprintf(`{"type":"assistant","uuid":%q,"requestId":%q,"timestamp":%q,"message":{"id":%q,"role":"assistant","model":%q,"content":[{"type":"text","text":"ok"}],`+
			`"usage":{"input_tokens":%d,"output_tokens":%d,"cache_creation_input_tokens":%d,"cache_read_input_tokens":0,"cache_creation":{"ephemeral_5m_input_tokens":%d,"ephemeral_1h_input_tokens":%d},"service_tier":"standard","speed":"standard"}}}`+"\n",
			uuid, req, ts(at), msg, model, in, out, cw, cw-cw1h, cw1h)
	}
	body := user("u1", "yesterday's question", old) +
		reply("a1", "m1", "r1", "claude-opus-4-8", 1_000_000, 0, 0, 0, old) + // $5, yesterday
		user("u2", "today's question", now) +
		reply("a2", "m2", "r2", "claude-opus-4-8", 10_000, 2_000, 4_000, 1_000, now) +
		reply("a3", "m3", "r3", "claude-unreleased-9", 1, 1, 0, 0, now)
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	r.sendHook(header(s.ID), payload{"session_id": "c1", "hook_event_name": "UserPromptSubmit", "prompt": "x", "transcript_path": path})

	// 10k in at $5, 2k out at $25, 3k 5-minute writes at $6.25 and 1k
	// 1-hour writes at $10, per million.
	want := (10_000*5 + 2_000*25 + 3_000*6.25 + 1_000*10) / 1e6
	var got api.Usage
	waitUntil(t, 10*time.Second, "the cost today", func() bool {
		cur, err := r.a.Session(ctxT(t), api.SessionRef{ID: s.ID})
		got = cur.Usage
		return err == nil && got.CostDay != ""
	})
	if math.Abs(got.CostToday-want) > 1e-12 || got.TodayUnpriced != 1 || got.CostDay != now.Format(time.DateOnly) {
		t.Errorf("usage %+v, want $%v today (%s) and one unpriced", got, want, now.Format(time.DateOnly))
	}

	tl, err := r.a.Timeline(ctxT(t), api.TimelineRequest{SessionRef: api.SessionRef{ID: s.ID}})
	if err != nil {
		t.Fatal(err)
	}
	var prompts []api.TurnTokens
	for _, it := range tl.Items {
		if it.Kind == api.TimelinePrompt && it.Tokens != nil {
			prompts = append(prompts, *it.Tokens)
		}
	}
	if len(prompts) != 2 || math.Abs(prompts[0].CostUSD-5) > 1e-12 || prompts[0].Unpriced != 0 ||
		math.Abs(prompts[1].CostUSD-want) > 1e-12 || prompts[1].Unpriced != 1 || prompts[1].Responses != 2 {
		t.Errorf("turn tokens %+v, want $5 and $%v with one unpriced", prompts, want)
	}
}

// TestSubagentCost: a subagent's responses, in its own transcript
// (<project dir>/<session id>/subagents/agent-<id>.jsonl), count in the
// day's cost and in the turn that launched it.
func TestSubagentCost(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	s := r.shell("")
	dir := filepath.Join(r.home, ".claude", "projects", "-proj")
	sub := filepath.Join(dir, "c2", "subagents")
	if err := os.MkdirAll(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "c2.jsonl")
	at := time.Now().UTC().Format(time.RFC3339Nano)
	reply := func(uuid, msg string, in, out int64, content string) string {
		return fmt.Sprintf(`{"type":"assistant","uuid":%q,"requestId":"req_fake","timestamp":%q,"message":{"id":%q,"role":"assistant","model":"claude-opus-4-8","content":%s,`+
			`"usage":{"input_tokens":%d,"output_tokens":%d,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}}}`+"\n", uuid, at, msg, content, in, out)
	}
	agent := `{"type":"user","isSidechain":true,"agentId":"a0123456789abcdef","uuid":"s1","timestamp":"` + at + `","message":{"role":"user","content":"sub task"}}` + "\n" +
		reply("s2", "msg_2", 100_000, 0, `[{"type":"text","text":"done"}]`) // $0.50
	if err := os.WriteFile(filepath.Join(sub, "agent-a0123456789abcdef.jsonl"), []byte(agent), 0o600); err != nil {
		t.Fatal(err)
	}
	body := `{"type":"user","uuid":"u1","timestamp":"` + at + `","message":{"role":"user","content":"delegate"}}` + "\n" +
		reply("a1", "msg_1", 200_000, 0, `[{"type":"tool_use","id":"toolu_01","name":"Agent","input":{"prompt":"sub task"}}]`) + // $1
		`{"type":"user","uuid":"u2","timestamp":"` + at + `","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01","content":"done"}]},` +
		`"toolUseResult":{"status":"completed","agentId":"a0123456789abcdef"}}` + "\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	r.sendHook(header(s.ID), payload{"session_id": "c2", "hook_event_name": "UserPromptSubmit", "prompt": "x", "transcript_path": path})

	var got api.Usage
	waitUntil(t, 10*time.Second, "the cost today", func() bool {
		cur, err := r.a.Session(ctxT(t), api.SessionRef{ID: s.ID})
		got = cur.Usage
		return err == nil && got.CostDay != ""
	})
	if math.Abs(got.CostToday-1.5) > 1e-12 || got.InputTokens != 300_000 {
		t.Errorf("usage %+v, want $1.50 today and 300k in (the subagent's too)", got)
	}
	tl, err := r.a.Timeline(ctxT(t), api.TimelineRequest{SessionRef: api.SessionRef{ID: s.ID}})
	if err != nil {
		t.Fatal(err)
	}
	var turn *api.TurnTokens
	for _, it := range tl.Items {
		if it.Kind == api.TimelinePrompt {
			turn = it.Tokens
		}
	}
	if turn == nil || math.Abs(turn.CostUSD-1.5) > 1e-12 || turn.Responses != 2 || turn.Input != 300_000 {
		t.Errorf("turn tokens %+v, want $1.50 in 2 responses", turn)
	}

	// What the subagent writes later (Claude's last lines come after the
	// result; a background one goes on) is read as it comes: the
	// session's transcript does not change.
	f, err := os.OpenFile(filepath.Join(sub, "agent-a0123456789abcdef.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString(reply("s3", "msg_3", 50_000, 0, `[{"type":"text","text":"more"}]`)) // $0.25
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 10*time.Second, "the subagent's later response in the cost today", func() bool {
		cur, err := r.a.Session(ctxT(t), api.SessionRef{ID: s.ID})
		return err == nil && math.Abs(cur.Usage.CostToday-1.75) < 1e-12
	})
}
