package fakeapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// reqBody builds a Messages API request like Claude Code's: the typed prompt
// next to a <system-reminder> block, an optional trailing system message.
func reqBody(prompt string, stream bool, tools bool) []byte {
	content := []map[string]any{
		{"type": "text", "text": "<system-reminder>\nAs you answer the user's questions...\n</system-reminder>"},
		{"type": "text", "text": prompt, "cache_control": map[string]any{"type": "ephemeral"}},
	}
	m := map[string]any{
		"model":      "claude-opus-4-8",
		"max_tokens": 64000,
		"stream":     stream,
		"system":     []map[string]any{{"type": "text", "text": "You are Claude Code, Anthropic's official CLI for Claude."}},
		"messages": []map[string]any{
			{"role": "user", "content": content},
			{"role": "system", "content": "Available agent types for the Agent tool: ..."},
		},
	}
	if tools {
		m["tools"] = []map[string]any{{"name": "Bash", "input_schema": map[string]any{"type": "object"}}}
	} else {
		m["tools"] = []any{}
	}
	b, _ := json.Marshal(m)
	return b
}

func toolResultBody(id string) []byte {
	b, _ := json.Marshal(map[string]any{
		"model":  "claude-opus-4-8",
		"stream": true,
		"tools":  []map[string]any{{"name": "Bash"}},
		"messages": []map[string]any{
			{"role": "user", "content": "RUNTOOL one"},
			{"role": "assistant", "content": []map[string]any{{"type": "tool_use", "id": id, "name": "Bash", "input": map[string]any{}}}},
			{"role": "user", "content": []map[string]any{{"type": "tool_result", "tool_use_id": id, "content": "(Bash completed with no output)", "is_error": false}}},
		},
	})
	return b
}

type event struct {
	name string
	data map[string]any
	at   time.Time
}

func post(t *testing.T, s *Server, path string, body []byte) *http.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func readSSE(t *testing.T, r io.Reader) []event {
	t.Helper()
	var out []event
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var name string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var d map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &d); err != nil {
				t.Fatalf("bad data line %q: %v", line, err)
			}
			if d["type"] != name {
				t.Fatalf("event %q carries type %v", name, d["type"])
			}
			out = append(out, event{name: name, data: d, at: time.Now()})
		}
	}
	return out
}

func names(evs []event) string {
	var n []string
	for _, e := range evs {
		n = append(n, e.name)
	}
	return strings.Join(n, " ")
}

// assembled rebuilds the message content from stream events, like a client.
func assembled(t *testing.T, evs []event) (text string, tools []map[string]any, stop string) {
	t.Helper()
	partial := map[int]string{}
	starts := map[int]map[string]any{}
	for _, e := range evs {
		switch e.name {
		case "content_block_start":
			i := int(e.data["index"].(float64))
			starts[i] = e.data["content_block"].(map[string]any)
		case "content_block_delta":
			i := int(e.data["index"].(float64))
			d := e.data["delta"].(map[string]any)
			switch d["type"] {
			case "text_delta":
				text += d["text"].(string)
			case "input_json_delta":
				partial[i] += d["partial_json"].(string)
			}
		case "content_block_stop":
			i := int(e.data["index"].(float64))
			if starts[i]["type"] == "tool_use" {
				var in map[string]any
				if err := json.Unmarshal([]byte(partial[i]), &in); err != nil {
					t.Fatalf("tool input %q: %v", partial[i], err)
				}
				b := starts[i]
				b["input"] = in
				tools = append(tools, b)
			}
		case "message_delta":
			stop = e.data["delta"].(map[string]any)["stop_reason"].(string)
		}
	}
	return text, tools, stop
}

func start(t *testing.T, opts Options) *Server {
	s := New(opts)
	s.Start(t)
	return s
}

func TestDefaultTextStream(t *testing.T) {
	s := start(t, Options{})
	resp := post(t, s, "/v1/messages?beta=true", reqBody("say hello", true, true))
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	evs := readSSE(t, resp.Body)
	want := "message_start ping content_block_start content_block_delta content_block_delta content_block_stop message_delta message_stop"
	if got := names(evs); got != want {
		t.Fatalf("events:\n got %s\nwant %s", got, want)
	}
	text, tools, stop := assembled(t, evs)
	if text != DefaultText || len(tools) != 0 || stop != "end_turn" {
		t.Fatalf("text %q tools %v stop %q", text, tools, stop)
	}
	msg := evs[0].data["message"].(map[string]any)
	if msg["id"] != "msg_1" || msg["model"] != "claude-opus-4-8" {
		t.Fatalf("message_start %v", msg)
	}
	u := msg["usage"].(map[string]any)
	if u["input_tokens"].(float64) < 10 {
		t.Fatalf("implausible usage %v", u)
	}
	md := evs[len(evs)-2].data["usage"].(map[string]any)
	if md["output_tokens"].(float64) != 6 { // 22 bytes / 4, rounded up
		t.Fatalf("output tokens %v", md)
	}
	r := s.AwaitPrompt(t, "say hello", time.Second)
	if r.Prompt != "say hello" || r.Kind != KindPrompt || !r.Stream || r.Query != "beta=true" || r.ID != "msg_1" {
		t.Fatalf("record %+v", r)
	}
	// A second request gets a new id and the same (deterministic) usage.
	resp2 := post(t, s, "/v1/messages?beta=true", reqBody("say hello", true, true))
	evs2 := readSSE(t, resp2.Body)
	msg2 := evs2[0].data["message"].(map[string]any)
	if msg2["id"] != "msg_2" {
		t.Fatalf("second id %v", msg2["id"])
	}
	if a, b := msg["usage"].(map[string]any)["input_tokens"], msg2["usage"].(map[string]any)["input_tokens"]; a != b {
		t.Fatalf("usage not deterministic: %v vs %v", a, b)
	}
}

func TestRunToolThenToolResult(t *testing.T) {
	s := start(t, Options{ToolDir: "/tmp/scratch"})
	evs := readSSE(t, post(t, s, "/v1/messages", reqBody("please RUNTOOL one", true, true)).Body)
	_, tools, stop := assembled(t, evs)
	if stop != "tool_use" || len(tools) != 1 {
		t.Fatalf("stop %q tools %v", stop, tools)
	}
	tu := tools[0]
	if tu["name"] != "Bash" || tu["input"].(map[string]any)["command"] != "touch /tmp/scratch/created_by_tool" || !strings.HasPrefix(tu["id"].(string), "toolu_") {
		t.Fatalf("tool_use %v", tu)
	}
	// The turn after the tool result: no prompt, a tool result, plain text.
	evs = readSSE(t, post(t, s, "/v1/messages", toolResultBody(tu["id"].(string))).Body)
	text, _, stop := assembled(t, evs)
	if text != DefaultText || stop != "end_turn" {
		t.Fatalf("after tool: %q %q", text, stop)
	}
	r := s.Requests()[1]
	if r.Prompt != "" || len(r.ToolResults) != 1 || r.ToolResults[0].Content != "(Bash completed with no output)" {
		t.Fatalf("tool result record %+v", r)
	}
}

func TestFailAndErrors(t *testing.T) {
	s := start(t, Options{Rules: []Rule{
		{Contains: "BUSY", Reply: Overloaded()},
		{Contains: "LIMIT", Reply: RateLimited(7)},
		{Contains: "BOOM", Reply: ServerError()},
		{Contains: "TEAPOT", Reply: HTTPError(418, "", "")},
	}})
	cases := []struct {
		prompt, typ, msg string
		status           int
	}{
		{"FAIL please", "invalid_request_error", "mock failure", 400},
		{"BUSY", "overloaded_error", "Overloaded", 529},
		{"LIMIT", "rate_limit_error", "", 429},
		{"BOOM", "api_error", "Internal server error", 500},
		{"TEAPOT", "api_error", "I'm a teapot", 418},
	}
	for _, c := range cases {
		resp := post(t, s, "/v1/messages", reqBody(c.prompt, true, true))
		var body struct {
			Type  string
			Error struct{ Type, Message string }
		}
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != c.status || body.Type != "error" || body.Error.Type != c.typ || (c.msg != "" && body.Error.Message != c.msg) {
			t.Errorf("%s: %d %+v", c.prompt, resp.StatusCode, body)
		}
		if c.status == 429 && resp.Header.Get("retry-after") != "7" {
			t.Errorf("retry-after %q", resp.Header.Get("retry-after"))
		}
	}
}

func TestNonStreamingAndCountTokensAnd404(t *testing.T) {
	s := start(t, Options{})
	resp := post(t, s, "/v1/messages", reqBody("hi", false, true))
	var msg struct {
		ID, Type, Role, Model string
		StopReason            string `json:"stop_reason"`
		Content               []struct{ Type, Text string }
		Usage                 usage
	}
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
		t.Fatal(err)
	}
	if msg.ID != "msg_1" || msg.Type != "message" || msg.Role != "assistant" || msg.StopReason != "end_turn" ||
		len(msg.Content) != 1 || msg.Content[0].Text != DefaultText || msg.Usage.OutputTokens == 0 {
		t.Fatalf("message %+v", msg)
	}
	resp = post(t, s, "/v1/messages/count_tokens?beta=true", reqBody("hi", false, true))
	var ct struct {
		InputTokens int `json:"input_tokens"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&ct); err != nil || ct.InputTokens != msg.Usage.InputTokens {
		t.Fatalf("count_tokens %+v %v (message said %d)", ct, err, msg.Usage.InputTokens)
	}
	resp = post(t, s, "/v1/models", nil)
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 404 || !strings.Contains(string(b), `"not_found_error"`) || !strings.Contains(string(b), "/v1/models") {
		t.Fatalf("404: %d %s", resp.StatusCode, b)
	}
	resp = post(t, s, "/v1/messages", []byte("{not json"))
	if resp.StatusCode != 400 {
		t.Fatalf("bad json: %d", resp.StatusCode)
	}
	kinds := ""
	for _, r := range s.Requests() {
		kinds += string(r.Kind) + " "
	}
	if kinds != "prompt count_tokens other other " {
		t.Fatalf("kinds %q", kinds)
	}
}

func TestSideAndCompactRequests(t *testing.T) {
	s := start(t, Options{})
	// Title generation: no tools, a JSON schema output format, the prompt
	// quoted inside <session> tags. It must not trip the RUNTOOL rule.
	title, _ := json.Marshal(map[string]any{
		"model": "claude-opus-4-8", "stream": true, "tools": []any{},
		"system":        []map[string]any{{"type": "text", "text": "Generate a concise, sentence-case title (3-7 words)..."}},
		"output_config": map[string]any{"format": map[string]any{"type": "json_schema"}},
		"messages":      []map[string]any{{"role": "user", "content": []map[string]any{{"type": "text", "text": "<session>\nRUNTOOL one\n</session>\n\nWrite the title..."}}}},
	})
	text, tools, _ := assembled(t, readSSE(t, post(t, s, "/v1/messages", title).Body))
	if len(tools) != 0 || !json.Valid([]byte(text)) || !strings.Contains(text, `"title"`) {
		t.Fatalf("title answer %q %v", text, tools)
	}
	compact := reqBody("RUNTOOL two\nCRITICAL: Respond with TEXT ONLY. ... Your task is to create a detailed summary of the conversation so far", true, true)
	text, tools, _ = assembled(t, readSSE(t, post(t, s, "/v1/messages", compact).Body))
	if len(tools) != 0 || text != CompactSummary {
		t.Fatalf("compact answer %q %v", text, tools)
	}
	rs := s.Requests()
	if rs[0].Kind != KindSide || rs[1].Kind != KindCompact || len(s.Prompts()) != 0 {
		t.Fatalf("kinds %s %s", rs[0].Kind, rs[1].Kind)
	}
	if _, err := s.Await(context.Background(), 50*time.Millisecond, func(r Request) bool { return r.Kind == KindPrompt }); err == nil {
		t.Fatal("side request counted as a prompt")
	}
}

func TestCustomRulesTimesAndToolUse(t *testing.T) {
	s := start(t, Options{NoDefaultRules: true})
	s.AddRule(Rule{Name: "ask", Contains: "ASK", Times: 1, Reply: AskUserQuestion("Color", "Which color?", "Red", "Blue")})
	s.PrependRule(Rule{Match: func(r *Request) bool { return strings.HasPrefix(r.Prompt, "edit") },
		ReplyFunc: func(r *Request) Reply {
			return Reply{Blocks: []Block{TextBlock("Editing."), ToolUseBlock("Edit", map[string]any{"file_path": "/x", "old_string": "a", "new_string": "b"})}}
		}})
	_, tools, _ := assembled(t, readSSE(t, post(t, s, "/v1/messages", reqBody("ASK me", true, true)).Body))
	q := tools[0]["input"].(map[string]any)["questions"].([]any)[0].(map[string]any)
	if tools[0]["name"] != "AskUserQuestion" || q["question"] != "Which color?" || len(q["options"].([]any)) != 2 {
		t.Fatalf("ask %v", tools)
	}
	// Times: 1 - the second ASK falls to the default text; RUNTOOL is off.
	text, tools, _ := assembled(t, readSSE(t, post(t, s, "/v1/messages", reqBody("ASK RUNTOOL", true, true)).Body))
	if text != DefaultText || len(tools) != 0 {
		t.Fatalf("second ask %q %v", text, tools)
	}
	text, tools, stop := assembled(t, readSSE(t, post(t, s, "/v1/messages", reqBody("edit it", true, true)).Body))
	if text != "Editing." || len(tools) != 1 || tools[0]["name"] != "Edit" || stop != "tool_use" {
		t.Fatalf("edit %q %v %q", text, tools, stop)
	}
	rs := s.Requests()
	if rs[0].Rule != "ask" || rs[1].Rule != "default" || rs[2].Rule != "rule 2" {
		t.Fatalf("rules %q %q %q", rs[0].Rule, rs[1].Rule, rs[2].Rule)
	}
}

func TestSlowStreamPausesMidBlock(t *testing.T) {
	s := start(t, Options{SlowDelay: 300 * time.Millisecond})
	t0 := time.Now()
	evs := readSSE(t, post(t, s, "/v1/messages", reqBody("SLOW answer", true, true)).Body)
	var first, second time.Time
	for _, e := range evs {
		if e.name == "content_block_delta" {
			if first.IsZero() {
				first = e.at
			} else if second.IsZero() {
				second = e.at
			}
		}
	}
	if first.Sub(t0) > 250*time.Millisecond || second.Sub(first) < 280*time.Millisecond {
		t.Fatalf("first delta after %v, second %v later", first.Sub(t0), second.Sub(first))
	}
	if text, _, _ := assembled(t, evs); text != DefaultText {
		t.Fatalf("text %q", text)
	}
}

func TestStallUntilReleased(t *testing.T) {
	g := NewGate()
	s := start(t, Options{Rules: []Rule{{Contains: "STALL", Reply: Stalled(g, Text("released"))}}})
	resp := post(t, s, "/v1/messages", reqBody("STALL now", true, true))
	br := bufio.NewReader(resp.Body)
	// Read up to the first text delta, then check nothing more comes until release.
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(line, "text_delta") {
			break
		}
	}
	got := make(chan string, 1)
	go func() {
		rest, _ := io.ReadAll(br)
		got <- string(rest)
	}()
	select {
	case r := <-got:
		t.Fatalf("stream went on before release: %q", r)
	case <-time.After(200 * time.Millisecond):
	}
	g.Release()
	select {
	case r := <-got:
		if !strings.Contains(r, "message_stop") {
			t.Fatalf("rest %q", r)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("stream not finished after release")
	}
}

func TestCloseEndsStalledStream(t *testing.T) {
	g := NewGate()
	s := New(Options{Rules: []Rule{{Reply: Stalled(g, Text("never"))}}})
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	resp := post(t, s, "/v1/messages", reqBody("x", true, true))
	done := make(chan struct{})
	go func() {
		_, _ = io.ReadAll(resp.Body)
		close(done)
	}()
	if _, err := s.Await(context.Background(), 5*time.Second, func(Request) bool { return true }); err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	for _, ch := range []chan struct{}{closed, done} {
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
			t.Fatal("Close did not end the stalled stream")
		}
	}
	s.Close() // idempotent
}

func TestLongText(t *testing.T) {
	s := start(t, Options{Rules: []Rule{{Contains: "BIG", Reply: LongText(64)}}})
	evs := readSSE(t, post(t, s, "/v1/messages", reqBody("BIG", true, true)).Body)
	text, _, _ := assembled(t, evs)
	if len(text) < 64*1024 || !strings.HasSuffix(text, "Done.") {
		t.Fatalf("long text %d bytes", len(text))
	}
	deltas := 0
	for _, e := range evs {
		if e.name == "content_block_delta" {
			deltas++
		}
	}
	if deltas < 16 || deltas > 20 {
		t.Fatalf("%d deltas for 64 KiB", deltas)
	}
}

func TestAwaitTimesOut(t *testing.T) {
	s := start(t, Options{})
	t0 := time.Now()
	_, err := s.Await(context.Background(), 100*time.Millisecond, func(Request) bool { return true })
	if err == nil || time.Since(t0) > 2*time.Second {
		t.Fatalf("err %v after %v", err, time.Since(t0))
	}
	// A request arriving while waiting wakes the waiter.
	go func() {
		req, _ := http.NewRequest(http.MethodPost, s.URL()+"/v1/messages", bytes.NewReader(reqBody("late", false, true)))
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	r, err := s.Await(context.Background(), 5*time.Second, func(r Request) bool { return r.Prompt == "late" })
	if err != nil || r.Seq != 1 {
		t.Fatalf("%+v %v", r, err)
	}
}

func TestPromptIsNewestBlockAfterFailedTurn(t *testing.T) {
	// After an API error Claude keeps the failed prompt: the next request's
	// last user message holds both prompts, the newest last.
	s := start(t, Options{})
	b, _ := json.Marshal(map[string]any{
		"model": "claude-opus-4-8", "stream": true, "tools": []map[string]any{{"name": "Bash"}},
		"messages": []map[string]any{{"role": "user", "content": []map[string]any{
			{"type": "text", "text": "<system-reminder>\ncontext\n</system-reminder>\n\n"},
			{"type": "text", "text": "FAIL one\n"},
			{"type": "text", "text": "second prompt", "cache_control": map[string]any{"type": "ephemeral"}},
		}}},
	})
	text, _, _ := assembled(t, readSSE(t, post(t, s, "/v1/messages", b).Body))
	r := s.AwaitPrompt(t, "second prompt", time.Second)
	if text != DefaultText || r.Prompt != "second prompt" || len(r.Texts) != 2 || r.Texts[0] != "FAIL one\n" {
		t.Fatalf("answer %q, prompt %q, texts %q", text, r.Prompt, r.Texts)
	}
}

func TestReplyFuncMayUseServer(t *testing.T) {
	var s *Server
	s = start(t, Options{Rules: []Rule{{
		Match: func(*Request) bool { return len(s.Requests()) >= 0 },
		ReplyFunc: func(r *Request) Reply {
			return Text(fmt.Sprintf("seen %d prompts", len(s.Prompts())))
		},
	}}})
	text, _, _ := assembled(t, readSSE(t, post(t, s, "/v1/messages", reqBody("x", true, true)).Body))
	if text != "seen 0 prompts" {
		t.Fatalf("text %q", text)
	}
}

func TestTurnPromptStepsAndPlan(t *testing.T) {
	s := start(t, Options{NoDefaultRules: true, Rules: []Rule{
		Steps("EDITF", Read("/p/hello.txt"), Edit("/p/hello.txt", "a", "b")),
		Plan("PLANX", "# Plan\n"),
	}})
	tools := []map[string]any{{"name": "Bash"}}
	user := func(blocks ...map[string]any) map[string]any {
		return map[string]any{"role": "user", "content": blocks}
	}
	text := func(s string) map[string]any { return map[string]any{"type": "text", "text": s} }
	result := func(id string) map[string]any {
		return map[string]any{"type": "tool_result", "tool_use_id": id, "content": "ok"}
	}
	asst := map[string]any{"role": "assistant", "content": []map[string]any{{"type": "tool_use", "id": "t", "name": "Read", "input": map[string]any{}}}}
	ask := func(msgs ...map[string]any) []map[string]any {
		b, _ := json.Marshal(map[string]any{"model": "m", "stream": true, "tools": tools, "messages": msgs,
			"system": "No plan file exists yet. You should create your plan at /h/.claude/plans/x.md using the Write tool."})
		_, got, _ := assembled(t, readSSE(t, post(t, s, "/v1/messages", b).Body))
		return got
	}
	reminder := text("<system-reminder>x</system-reminder>")
	if got := ask(user(reminder, text("EDITF please"))); len(got) != 1 || got[0]["name"] != "Read" {
		t.Fatalf("step 0: %v", got)
	}
	if got := ask(user(text("EDITF please")), asst, user(result("t"), reminder)); len(got) != 1 || got[0]["name"] != "Edit" {
		t.Fatalf("step 1: %v", got)
	}
	if got := ask(user(text("EDITF please")), asst, user(result("t")), asst, user(result("t"))); len(got) != 0 {
		t.Fatalf("after the steps: %v", got)
	}
	last := s.Requests()[len(s.Requests())-1]
	if last.TurnPrompt != "EDITF please" || last.TurnSteps != 2 || last.Prompt != "" {
		t.Fatalf("turn prompt %q steps %d prompt %q", last.TurnPrompt, last.TurnSteps, last.Prompt)
	}
	got := ask(user(text("PLANX now")))
	if len(got) != 1 || got[0]["name"] != "Write" {
		t.Fatalf("plan step 0: %v", got)
	}
	if in := got[0]["input"].(map[string]any); in["file_path"] != "/h/.claude/plans/x.md" || in["content"] != "# Plan\n" {
		t.Fatalf("plan write: %v", in)
	}
	if got := ask(user(text("PLANX now")), asst, user(result("t"))); len(got) != 1 || got[0]["name"] != "ExitPlanMode" {
		t.Fatalf("plan step 1: %v", got)
	}
	if p := PlanPath(&Request{Body: []byte(`"A plan file already exists at /a/b.md. You can read it"`)}); p != "/a/b.md" {
		t.Errorf("existing plan path %q", p)
	}
	if p := PlanPath(&Request{Body: []byte(`no plan here`)}); p != "" {
		t.Errorf("plan path %q", p)
	}
}
