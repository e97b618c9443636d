// Package fakemcp is a tiny MCP server over stdio (newline-delimited
// JSON-RPC 2.0) for tests that run the real Claude Code CLI. It offers tools
// that, when called, ask the client for input with elicitation/create and
// return what the client answered, so that Claude's elicitation dialog can be
// recorded and answered:
//
//   - "form": asks for a form (a string, an enum, a boolean and a number) and
//     returns the action and content;
//   - "confirm": asks a yes/no question with a form of one boolean;
//   - "echo": returns its "text" argument without asking anything.
//
// Every message received and sent is appended, one JSON line each, to the
// log file named in Options.Log, so a test can see the elicitation result.
package fakemcp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// maxLine bounds one JSON-RPC message.
const maxLine = 1 << 20

// Options configure Serve.
type Options struct {
	// Name is the server name reported in initialize; empty means "fake".
	Name string
	// Log, when set, is a file each message is appended to as
	// {"dir":"in"|"out","t":<unix ns>,"msg":<message>}.
	Log string
	// ElicitTimeout bounds how long a tool call waits for the client's
	// answer; 0 means 10 minutes.
	ElicitTimeout time.Duration
}

type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type server struct {
	opts Options
	out  io.Writer

	mu      sync.Mutex // guards out, the log file, pending and next
	pending map[string]chan message
	next    int
	wg      sync.WaitGroup
}

// Serve answers JSON-RPC messages read from in on out until in ends or ctx
// is done, and waits for the tool calls it started.
func Serve(ctx context.Context, in io.Reader, out io.Writer, opts Options) error {
	if opts.Name == "" {
		opts.Name = "fake"
	}
	if opts.ElicitTimeout == 0 {
		opts.ElicitTimeout = 10 * time.Minute
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s := &server{opts: opts, out: out, pending: map[string]chan message{}}
	defer s.wg.Wait()
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for sc.Scan() {
		var m message
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			s.log("in", json.RawMessage(mustJSON(string(sc.Bytes()))))
			s.send(message{ID: json.RawMessage("null"), Error: &rpcError{Code: -32700, Message: "parse error"}})
			continue
		}
		s.log("in", json.RawMessage(sc.Bytes()))
		s.handle(ctx, m)
	}
	return sc.Err()
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

func (s *server) log(dir string, msg json.RawMessage) {
	if s.opts.Log == "" {
		return
	}
	b := mustJSON(map[string]any{"dir": dir, "t": time.Now().UnixNano(), "msg": msg})
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := os.OpenFile(s.opts.Log, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	_, _ = f.Write(append(b, '\n'))
	_ = f.Close()
}

func (s *server) send(m message) {
	m.JSONRPC = "2.0"
	b := mustJSON(m)
	s.log("out", b)
	s.mu.Lock()
	defer s.mu.Unlock()
	_, _ = s.out.Write(append(b, '\n'))
}

func (s *server) reply(id json.RawMessage, result any) {
	s.send(message{ID: id, Result: mustJSON(result)})
}

func (s *server) handle(ctx context.Context, m message) {
	switch {
	case m.Method == "" && len(m.ID) > 0:
		// The client's answer to one of our requests.
		s.mu.Lock()
		ch, ok := s.pending[string(m.ID)]
		delete(s.pending, string(m.ID))
		s.mu.Unlock()
		if ok {
			ch <- m
		}
	case m.Method == "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(m.Params, &p)
		if p.ProtocolVersion == "" {
			p.ProtocolVersion = "2025-06-18"
		}
		s.reply(m.ID, map[string]any{
			"protocolVersion": p.ProtocolVersion,
			"capabilities":    map[string]any{"tools": map[string]any{}},
			"serverInfo":      map[string]any{"name": s.opts.Name, "version": "1.0.0"},
		})
	case m.Method == "tools/list":
		s.reply(m.ID, map[string]any{"tools": tools})
	case m.Method == "tools/call":
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.call(ctx, m)
		}()
	case m.Method == "ping":
		s.reply(m.ID, map[string]any{})
	case len(m.ID) == 0:
		// A notification (notifications/initialized, cancelled...): nothing to say.
	default:
		s.send(message{ID: m.ID, Error: &rpcError{Code: -32601, Message: "method not found: " + m.Method}})
	}
}

var tools = []map[string]any{
	{"name": "form", "description": "Ask the user to fill in a form.", "inputSchema": map[string]any{
		"type": "object", "properties": map[string]any{"message": map[string]any{"type": "string"}}}},
	{"name": "confirm", "description": "Ask the user to confirm.", "inputSchema": map[string]any{
		"type": "object", "properties": map[string]any{"message": map[string]any{"type": "string"}}}},
	{"name": "echo", "description": "Return the text.", "inputSchema": map[string]any{
		"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}}},
}

// FormSchema is the requestedSchema of the "form" tool's elicitation.
var FormSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"name":   map[string]any{"type": "string", "title": "Name", "description": "Your name"},
		"color":  map[string]any{"type": "string", "title": "Color", "enum": []string{"red", "green", "blue"}},
		"notify": map[string]any{"type": "boolean", "title": "Notify me", "default": false},
		"count":  map[string]any{"type": "integer", "title": "Count", "minimum": 1, "maximum": 9},
	},
	"required": []string{"name", "color"},
}

// ConfirmSchema is the requestedSchema of the "confirm" tool's elicitation.
var ConfirmSchema = map[string]any{
	"type":       "object",
	"properties": map[string]any{"ok": map[string]any{"type": "boolean", "title": "Proceed", "default": true}},
	"required":   []string{"ok"},
}

func (s *server) call(ctx context.Context, m message) {
	var p struct {
		Name      string `json:"name"`
		Arguments struct {
			Message string `json:"message"`
			Text    string `json:"text"`
		} `json:"arguments"`
	}
	_ = json.Unmarshal(m.Params, &p)
	var schema map[string]any
	switch p.Name {
	case "echo":
		s.reply(m.ID, textResult(p.Arguments.Text, false))
		return
	case "form":
		schema = FormSchema
	case "confirm":
		schema = ConfirmSchema
	default:
		s.reply(m.ID, textResult("unknown tool "+p.Name, true))
		return
	}
	msg := p.Arguments.Message
	if msg == "" {
		msg = "Please fill in the form"
	}
	res, err := s.request(ctx, "elicitation/create", map[string]any{"message": msg, "requestedSchema": schema})
	if err != nil {
		s.reply(m.ID, textResult("elicitation failed: "+err.Error(), true))
		return
	}
	s.reply(m.ID, textResult("elicitation result: "+string(res), false))
}

func textResult(text string, isErr bool) map[string]any {
	return map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}, "isError": isErr}
}

// request sends a request to the client and waits for its answer.
func (s *server) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	ch := make(chan message, 1)
	s.mu.Lock()
	s.next++
	id := mustJSON(fmt.Sprintf("srv-%d", s.next))
	s.pending[string(id)] = ch
	s.mu.Unlock()
	s.send(message{ID: id, Method: method, Params: mustJSON(params)})
	t := time.NewTimer(s.opts.ElicitTimeout)
	defer t.Stop()
	select {
	case r := <-ch:
		if r.Error != nil {
			return nil, fmt.Errorf("client error %d: %s", r.Error.Code, r.Error.Message)
		}
		return r.Result, nil
	case <-t.C:
		return nil, errors.New("no answer from the client")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
