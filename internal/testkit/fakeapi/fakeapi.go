// Package fakeapi is a fake Anthropic Messages API for tests that run the real
// Claude Code CLI. It listens on 127.0.0.1, answers POST /v1/messages (streamed
// SSE or plain JSON) and POST /v1/messages/count_tokens, and scripts its answers
// by the prompt the user typed: a list of rules maps a prompt to a Reply (text,
// long text, tool_use, slow or stalled streams, HTTP errors).
//
// The default rules reproduce the recording in testdata/claude-code-2.1.197:
// a prompt containing RUNTOOL gets a Bash tool_use (touch <ToolDir>/created_by_tool),
// SLOW pauses 5 s mid-stream, FAIL gets HTTP 400 "mock failure", anything else
// (and the turn after a tool result) gets "Hello from mock. Done.".
//
// Every request is recorded; tests wait for "the model was asked X" with
// AwaitPrompt.
package fakeapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Rule maps requests to a reply. A rule matches a request of its Kind when
// Match (if set) returns true and the prompt contains Contains (if set); a
// rule with neither matches every request of its Kind.
type Rule struct {
	// Name identifies the rule in the request log; empty means Contains or "rule <i>".
	Name string
	// Contains matches a substring of the extracted prompt.
	Contains string
	// Match is an arbitrary predicate on the request.
	Match func(*Request) bool
	// Kind is the kind of request the rule applies to; empty means KindPrompt.
	// Use KindSide to script title generation, KindCompact for /compact.
	Kind Kind
	// Times limits how often the rule fires; 0 means without limit.
	Times int
	// Reply is the answer.
	Reply Reply
	// ReplyFunc, when set, computes the answer instead of Reply.
	ReplyFunc func(*Request) Reply
}

// Options configure a Server. The zero value gives the recording's behaviour
// (with RUNTOOL touching created_by_tool in the current directory).
type Options struct {
	// Rules are tried in order before the default rules.
	Rules []Rule
	// NoDefaultRules drops the RUNTOOL/SLOW/FAIL rules (the plain text answer
	// stays as the final fallback).
	NoDefaultRules bool
	// ToolDir is the directory of the default RUNTOOL command
	// ("touch <ToolDir>/created_by_tool"); empty means ".".
	ToolDir string
	// RunToolCommand replaces the whole default RUNTOOL command.
	RunToolCommand string
	// SlowDelay is the mid-stream pause of the default SLOW rule; 0 means 5 s.
	SlowDelay time.Duration
	// Model is the model name reported in answers; empty echoes the request's.
	Model string
	// Logf, when set, receives one line per request (e.g. t.Logf).
	Logf func(format string, args ...any)
}

// Server is a running (or not yet started) fake API.
type Server struct {
	opts Options

	mu       sync.Mutex
	rules    []*ruleState // options rules, then AddRule rules
	defaults []*ruleState
	reqs     []Request
	nextID   int // message ids
	nextTool int // tool_use ids
	changed  chan struct{}

	ln       net.Listener
	srv      *http.Server
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup // the Serve goroutine
	handlers sync.WaitGroup // requests in flight
	closed   bool           // under mu
}

type ruleState struct {
	Rule
	name  string
	fired int
}

// New returns a server configured by opts. Call Start or Listen to serve.
func New(opts Options) *Server {
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{opts: opts, changed: make(chan struct{}), ctx: ctx, cancel: cancel}
	for _, r := range opts.Rules {
		s.rules = append(s.rules, newRuleState(r, len(s.rules)))
	}
	s.defaults = s.defaultRules()
	return s
}

func newRuleState(r Rule, i int) *ruleState {
	name := r.Name
	if name == "" {
		name = r.Contains
	}
	if name == "" {
		name = fmt.Sprintf("rule %d", i+1)
	}
	return &ruleState{Rule: r, name: name}
}

func (s *Server) defaultRules() []*ruleState {
	var rs []*ruleState
	if !s.opts.NoDefaultRules {
		cmd := s.opts.RunToolCommand
		if cmd == "" {
			dir := s.opts.ToolDir
			if dir == "" {
				dir = "."
			}
			cmd = "touch " + filepath.Join(dir, "created_by_tool")
		}
		slow := s.opts.SlowDelay
		if slow == 0 {
			slow = 5 * time.Second
		}
		rs = append(rs,
			&ruleState{name: "RUNTOOL", Rule: Rule{Contains: "RUNTOOL", Reply: Bash(cmd, "create file")}},
			&ruleState{name: "SLOW", Rule: Rule{Contains: "SLOW", Reply: Slow(slow, Text(DefaultText))}},
			&ruleState{name: "FAIL", Rule: Rule{Contains: "FAIL", Reply: MockFailure()}},
		)
	}
	rs = append(rs,
		&ruleState{name: "side-default", Rule: Rule{Kind: KindSide, ReplyFunc: sideReply}},
		&ruleState{name: "compact-default", Rule: Rule{Kind: KindCompact, Reply: Text(CompactSummary)}},
	)
	rs = append(rs, &ruleState{name: "default", Rule: Rule{Reply: Text(DefaultText)}})
	return rs
}

// CompactSummary is the default answer to a compaction request.
const CompactSummary = "<analysis>Mock analysis.</analysis>\n<summary>Mock summary of the conversation.</summary>"

// sideReply answers Claude's own side requests quickly and plausibly.
func sideReply(r *Request) Reply {
	if strings.Contains(strings.ToLower(r.System), "title") {
		return Text(`{"title": "Mock session"}`)
	}
	return Text("Mock side answer.")
}

// AddRule adds a rule after the existing custom rules (before the defaults).
// It is safe to call while the server runs.
func (s *Server) AddRule(r Rule) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules = append(s.rules, newRuleState(r, len(s.rules)))
}

// PrependRule adds a rule before every other rule.
func (s *Server) PrependRule(r Rule) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules = append([]*ruleState{newRuleState(r, len(s.rules))}, s.rules...)
}

// Start listens on 127.0.0.1:0 and serves until Close; the server is closed
// when t's test ends. It fails t if the listener cannot be opened.
func (s *Server) Start(t testing.TB) {
	t.Helper()
	if err := s.Listen(); err != nil {
		t.Fatalf("fakeapi: %v", err)
	}
	if s.opts.Logf == nil {
		s.opts.Logf = t.Logf
	}
	t.Cleanup(s.Close)
}

// Listen listens on 127.0.0.1:0 and serves in the background until Close.
func (s *Server) Listen() error {
	return s.ListenAddr("127.0.0.1:0")
}

// ListenAddr listens on addr (a loopback host:port) and serves until Close.
func (s *Server) ListenAddr(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	s.ln = ln
	s.srv = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return s.ctx },
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		_ = s.srv.Serve(ln)
	}()
	return nil
}

// URL is the base URL to put in ANTHROPIC_BASE_URL (http://127.0.0.1:<port>).
func (s *Server) URL() string {
	if s.ln == nil {
		return ""
	}
	return "http://" + s.ln.Addr().String()
}

// Close stops the server, ending stalled and slow streams, and returns once
// every request handler has finished. It is idempotent.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	if s.srv != nil {
		_ = s.srv.Close()
	}
	s.wg.Wait()
	s.handlers.Wait()
}

// Requests returns a copy of every request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Prompts returns the prompt requests (KindPrompt) received so far.
func (s *Server) Prompts() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Kind == KindPrompt {
			out = append(out, r)
		}
	}
	return out
}

// Await waits until a request satisfying match has arrived (including ones
// that arrived before the call) and returns the first such request. It gives
// up after timeout or when ctx ends.
func (s *Server) Await(ctx context.Context, timeout time.Duration, match func(Request) bool) (Request, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		s.mu.Lock()
		for _, r := range s.reqs {
			if match(r) {
				s.mu.Unlock()
				return r, nil
			}
		}
		ch := s.changed
		n := len(s.reqs)
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return Request{}, fmt.Errorf("fakeapi: no matching request after %v (%d requests seen): %w", timeout, n, ctx.Err())
		}
	}
}

// AwaitPrompt waits until the model has been asked a prompt containing substr
// (at any time before or during the call) and returns that request. It fails
// t after timeout.
func (s *Server) AwaitPrompt(t testing.TB, substr string, timeout time.Duration) Request {
	t.Helper()
	r, err := s.Await(context.Background(), timeout, func(r Request) bool {
		return r.Kind == KindPrompt && strings.Contains(r.Prompt, substr)
	})
	if err != nil {
		t.Fatalf("the model was not asked %q: %v\nprompts: %s", substr, err, s.promptSummary())
	}
	return r
}

// AwaitAfter waits for a request with Seq > after that satisfies match.
func (s *Server) AwaitAfter(t testing.TB, after int, timeout time.Duration, match func(Request) bool) Request {
	t.Helper()
	r, err := s.Await(context.Background(), timeout, func(r Request) bool {
		return r.Seq > after && match(r)
	})
	if err != nil {
		t.Fatalf("%v\nprompts: %s", err, s.promptSummary())
	}
	return r
}

// LastSeq is the Seq of the last request received (0 if none).
func (s *Server) LastSeq() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.reqs)
}

func (s *Server) promptSummary() string {
	var b strings.Builder
	for _, r := range s.Requests() {
		fmt.Fprintf(&b, "\n  #%d %s %s %q tool_results=%d -> %s", r.Seq, r.Kind, r.Path, r.Prompt, len(r.ToolResults), r.Reply)
	}
	return b.String()
}

func (s *Server) record(rec *Request) {
	s.mu.Lock()
	rec.Seq = len(s.reqs) + 1
	s.reqs = append(s.reqs, *rec)
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
	if s.opts.Logf != nil {
		p := rec.Prompt
		if len(p) > 60 {
			p = p[:60] + "..."
		}
		s.opts.Logf("fakeapi #%d %s %s %s prompt=%q tool_results=%d -> %s", rec.Seq, rec.Method, rec.Path, rec.Kind, p, len(rec.ToolResults), rec.Reply)
	}
}

// pick chooses the reply for a parsed request. Match and ReplyFunc are called
// without the server's lock held, so they may call Server methods.
func (s *Server) pick(rec *Request) Reply {
	s.mu.Lock()
	all := append(append([]*ruleState(nil), s.rules...), s.defaults...)
	s.mu.Unlock()
	for _, r := range all {
		kind := r.Kind
		if kind == "" {
			kind = KindPrompt
		}
		if kind != rec.Kind {
			continue
		}
		if r.Contains != "" && !strings.Contains(rec.Prompt, r.Contains) {
			continue
		}
		if r.Match != nil && !r.Match(rec) {
			continue
		}
		s.mu.Lock()
		if r.Times > 0 && r.fired >= r.Times {
			s.mu.Unlock()
			continue
		}
		r.fired++
		s.mu.Unlock()
		rec.Rule = r.name
		if r.ReplyFunc != nil {
			return r.ReplyFunc(rec)
		}
		return r.Reply
	}
	rec.Rule = "fallback"
	return Text(DefaultText)
}

// compactMarker is a phrase of the instruction Claude Code appends to the
// last user message when it asks the model to summarise for /compact or
// auto-compaction.
const compactMarker = "create a detailed summary of the conversation"

// classify decides what a parsed /v1/messages request is for.
func classify(rec *Request, hasFormat bool) Kind {
	// Claude Code's main loop always sends its tool list; its side requests
	// (title generation, with output_config.format a JSON schema, and similar
	// one-shot helpers) send none.
	if rec.NumTools == 0 || hasFormat {
		return KindSide
	}
	if strings.Contains(rec.Prompt, compactMarker) {
		return KindCompact
	}
	return KindPrompt
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		writeError(w, http.StatusServiceUnavailable, "api_error", "fakeapi: server closed")
		return
	}
	s.handlers.Add(1)
	s.mu.Unlock()
	defer s.handlers.Done()
	rec := Request{Time: time.Now(), Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		rec.Kind = KindOther
		rec.Reply = "read error"
		s.record(&rec)
		writeError(w, http.StatusBadRequest, "invalid_request_error", "cannot read body: "+err.Error())
		return
	}
	rec.Body = body
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		rec.Kind = KindCountTokens
		if _, ok := parseMessages(body, &rec); !ok {
			rec.Reply = "http 400"
			s.record(&rec)
			writeError(w, http.StatusBadRequest, "invalid_request_error", "request body is not valid JSON")
			return
		}
		n := inputTokens(body)
		rec.Reply = fmt.Sprintf("input_tokens %d", n)
		s.record(&rec)
		writeJSON(w, http.StatusOK, map[string]any{"input_tokens": n})
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		hasFormat, ok := parseMessages(body, &rec)
		if !ok {
			rec.Kind = KindOther
			rec.Reply = "http 400"
			s.record(&rec)
			writeError(w, http.StatusBadRequest, "invalid_request_error", "request body is not valid JSON")
			return
		}
		rec.Kind = classify(&rec, hasFormat)
		reply := s.pick(&rec)
		rec.Reply = reply.describe()
		if reply.Status == 0 {
			s.mu.Lock()
			s.nextID++
			rec.ID = fmt.Sprintf("msg_%d", s.nextID)
			s.mu.Unlock()
		}
		s.record(&rec)
		s.answer(r.Context(), w, &rec, reply, body)
	default:
		rec.Kind = KindOther
		rec.Reply = "http 404"
		s.record(&rec)
		writeError(w, http.StatusNotFound, "not_found_error",
			fmt.Sprintf("fakeapi: no route for %s %s (only POST /v1/messages and POST /v1/messages/count_tokens)", r.Method, r.URL.Path))
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("request-id", "req_fake")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	writeJSON(w, status, map[string]any{
		"type":  "error",
		"error": map[string]any{"type": typ, "message": msg},
	})
}

// inputTokens is a deterministic, plausible input token count: about one token
// per four bytes of the system prompt, messages and tools.
func inputTokens(body []byte) int {
	var w wireRequest
	if json.Unmarshal(body, &w) != nil {
		return 1
	}
	n := len(w.System)
	for _, m := range w.Messages {
		n += len(m.Content)
	}
	for _, t := range w.Tools {
		n += len(t)
	}
	return max(1, n/4)
}

// outputTokens is a deterministic output token count for a block list.
func outputTokens(bs []Block) int {
	n := 0
	for _, b := range bs {
		if b.Type == "tool_use" {
			in, _ := json.Marshal(b.ToolInput)
			n += len(b.ToolName) + len(in)
		} else {
			n += len(b.Text)
		}
	}
	return max(1, (n+3)/4)
}

// wait sleeps d, returning early (false) when ctx ends.
func wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
