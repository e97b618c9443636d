package fakeapi

import (
	"encoding/json"
	"strings"
	"sync"
	"time"
)

// Block is one content block of a scripted assistant message: text or tool_use.
type Block struct {
	// Type is "text" or "tool_use".
	Type string
	// Text is the text of a "text" block.
	Text string
	// ToolName and ToolInput describe a "tool_use" block. ToolInput is marshalled
	// to JSON (a map, a struct, or a json.RawMessage); nil means {}.
	ToolName  string
	ToolInput any
	// ToolID is the tool_use id; empty means a unique "toolu_<n>" chosen by the server.
	ToolID string
}

// TextBlock returns a text content block.
func TextBlock(text string) Block { return Block{Type: "text", Text: text} }

// ToolUseBlock returns a tool_use content block for the named tool.
func ToolUseBlock(name string, input any) Block {
	return Block{Type: "tool_use", ToolName: name, ToolInput: input}
}

// Reply is what the fake model answers to one request. The zero Reply is a short
// text answer ("Hello from mock. Done.").
type Reply struct {
	// Blocks is the content of the assistant message. Empty means one text block
	// with DefaultText.
	Blocks []Block
	// StopReason overrides the stop reason; by default it is "tool_use" when a
	// tool_use block is present and "end_turn" otherwise.
	StopReason string

	// Status, when non-zero, makes the server answer with this HTTP status and an
	// Anthropic error body instead of a message (e.g. 400, 429, 500, 529).
	Status int
	// ErrorType and ErrorMessage fill the error body; empty means a type and
	// message matching Status (see ErrorTypeFor).
	ErrorType    string
	ErrorMessage string
	// RetryAfter sets a retry-after header (seconds) on an error reply.
	RetryAfter int

	// Delay pauses the stream in the middle of the first content block (after
	// its first chunk) for this long. For a non-streaming request it delays the
	// whole answer.
	Delay time.Duration
	// Stall, when set, holds the stream at the same point as Delay until the
	// gate is released (or the client goes away or the server closes).
	Stall *Gate
	// FirstByteDelay delays the HTTP response headers (time to first byte).
	FirstByteDelay time.Duration
	// ChunkSize is the number of bytes of text per content_block_delta; 0 means
	// a chunk per word group of about 24 bytes for short texts and 4 KiB for
	// texts above 16 KiB.
	ChunkSize int
	// StreamError, when non-empty, ends the stream after the first content block
	// chunk with an SSE "error" event of this error type (e.g. "overloaded_error")
	// instead of finishing the message.
	StreamError string
}

// DefaultText is the answer of the default rule, as in the recorded fixtures.
const DefaultText = "Hello from mock. Done."

// Text returns a reply with one text block.
func Text(text string) Reply { return Reply{Blocks: []Block{TextBlock(text)}} }

// LongText returns a text reply of about kib KiB of deterministic lorem-ipsum
// lines, ending with "Done.". Useful for throughput tests.
func LongText(kib int) Reply {
	return Text(longText(kib * 1024))
}

func longText(n int) string {
	const line = "The quick brown fox jumps over the lazy dog; pack my box with five dozen liquor jugs.\n"
	var b strings.Builder
	b.Grow(n + len(line))
	for i := 0; b.Len() < n; i++ {
		b.WriteString(line)
	}
	b.WriteString("Done.")
	return b.String()
}

// ToolUse returns a reply that asks to run one tool with the given input.
func ToolUse(name string, input any) Reply {
	return Reply{Blocks: []Block{ToolUseBlock(name, input)}}
}

// Bash returns a reply asking to run a Bash command, as Claude's Bash tool expects.
func Bash(command, description string) Reply {
	return ToolUse("Bash", map[string]any{"command": command, "description": description})
}

// AskUserQuestion returns a reply that calls Claude Code's AskUserQuestion tool
// with one single-choice question and the given option labels.
func AskUserQuestion(header, question string, options ...string) Reply {
	opts := make([]map[string]any, 0, len(options))
	for _, o := range options {
		opts = append(opts, map[string]any{"label": o, "description": "Choose " + o})
	}
	return ToolUse("AskUserQuestion", map[string]any{
		"questions": []map[string]any{{
			"question":    question,
			"header":      header,
			"options":     opts,
			"multiSelect": false,
		}},
	})
}

// Slow returns r with a mid-stream pause of d.
func Slow(d time.Duration, r Reply) Reply {
	r.Delay = d
	return r
}

// Stalled returns r whose stream stops mid-block until g is released.
func Stalled(g *Gate, r Reply) Reply {
	r.Stall = g
	return r
}

// HTTPError returns a reply that fails with an HTTP status and an Anthropic
// error body. Empty errType and message are derived from status.
func HTTPError(status int, errType, message string) Reply {
	return Reply{Status: status, ErrorType: errType, ErrorMessage: message}
}

// Overloaded is HTTP 529 overloaded_error.
func Overloaded() Reply { return HTTPError(529, "overloaded_error", "Overloaded") }

// RateLimited is HTTP 429 rate_limit_error with a retry-after header.
func RateLimited(retryAfterSeconds int) Reply {
	r := HTTPError(429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit")
	r.RetryAfter = retryAfterSeconds
	return r
}

// ServerError is HTTP 500 api_error.
func ServerError() Reply { return HTTPError(500, "api_error", "Internal server error") }

// MockFailure is the recorded FAIL reply: HTTP 400 invalid_request_error "mock failure".
func MockFailure() Reply { return HTTPError(400, "invalid_request_error", "mock failure") }

// ErrorTypeFor returns the Anthropic error type for an HTTP status.
func ErrorTypeFor(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	default:
		return "api_error"
	}
}

func (r Reply) blocks() []Block {
	if len(r.Blocks) == 0 {
		return []Block{TextBlock(DefaultText)}
	}
	return r.Blocks
}

func (r Reply) stopReason() string {
	if r.StopReason != "" {
		return r.StopReason
	}
	for _, b := range r.blocks() {
		if b.Type == "tool_use" {
			return "tool_use"
		}
	}
	return "end_turn"
}

// describe is a short human description of the reply, for the request log.
func (r Reply) describe() string {
	if r.Status != 0 {
		return "http " + itoa(r.Status)
	}
	var parts []string
	for _, b := range r.blocks() {
		if b.Type == "tool_use" {
			parts = append(parts, "tool_use "+b.ToolName)
		} else {
			t := b.Text
			if len(t) > 40 {
				t = t[:40] + "..."
			}
			parts = append(parts, "text "+strconvQuote(t))
		}
	}
	s := strings.Join(parts, ", ")
	if r.FirstByteDelay > 0 {
		s += " (first byte after " + r.FirstByteDelay.String() + ")"
	}
	if r.Delay > 0 {
		s += " (slow " + r.Delay.String() + ")"
	}
	if r.Stall != nil {
		s += " (stalled)"
	}
	return s
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// Gate holds stalled streams until Release is called. The zero Gate is not
// usable; create one with NewGate. A Gate is released once and for all.
type Gate struct {
	ch   chan struct{}
	once sync.Once
}

// NewGate returns a closed (holding) gate.
func NewGate() *Gate { return &Gate{ch: make(chan struct{})} }

// Release lets every stream waiting on the gate, now or later, go on.
func (g *Gate) Release() { g.once.Do(func() { close(g.ch) }) }

// Done is closed when the gate is released.
func (g *Gate) Done() <-chan struct{} { return g.ch }
