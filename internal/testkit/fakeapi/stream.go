package fakeapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// pingEvery is how often a stalled stream sends a ping event.
const pingEvery = 5 * time.Second

type usage struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	OutputTokens             int `json:"output_tokens"`
}

// resolved is a reply's content with tool ids and inputs fixed.
type resolvedBlock struct {
	Block
	input json.RawMessage
}

func (s *Server) resolve(r Reply) []resolvedBlock {
	var out []resolvedBlock
	for _, b := range r.blocks() {
		rb := resolvedBlock{Block: b}
		if b.Type == "tool_use" {
			if b.ToolID == "" {
				s.mu.Lock()
				s.nextTool++
				rb.ToolID = fmt.Sprintf("toolu_%02d", s.nextTool)
				s.mu.Unlock()
			}
			switch in := b.ToolInput.(type) {
			case nil:
				rb.input = json.RawMessage("{}")
			case json.RawMessage:
				rb.input = in
			default:
				raw, err := json.Marshal(in)
				if err != nil {
					raw = []byte("{}")
				}
				rb.input = raw
			}
		}
		out = append(out, rb)
	}
	return out
}

func (rb resolvedBlock) json() map[string]any {
	if rb.Type == "tool_use" {
		return map[string]any{"type": "tool_use", "id": rb.ToolID, "name": rb.ToolName, "input": rb.input}
	}
	return map[string]any{"type": "text", "text": rb.Text}
}

func (s *Server) model(rec *Request) string {
	if s.opts.Model != "" {
		return s.opts.Model
	}
	if rec.Model != "" {
		return rec.Model
	}
	return "claude-fake"
}

// answer writes the reply for a /v1/messages request.
func (s *Server) answer(ctx context.Context, w http.ResponseWriter, rec *Request, r Reply, body []byte) {
	if !wait(ctx, r.FirstByteDelay) {
		return
	}
	if r.Status != 0 {
		typ, msg := r.ErrorType, r.ErrorMessage
		if typ == "" {
			typ = ErrorTypeFor(r.Status)
		}
		if msg == "" {
			msg = http.StatusText(r.Status)
		}
		if r.RetryAfter > 0 {
			w.Header().Set("retry-after", strconv.Itoa(r.RetryAfter))
		}
		writeError(w, r.Status, typ, msg)
		return
	}
	bs := s.resolve(r)
	u := usage{InputTokens: inputTokens(body), OutputTokens: outputTokens(r.blocks())}
	if !rec.Stream {
		if r.Stall != nil {
			select {
			case <-r.Stall.Done():
			case <-ctx.Done():
				return
			}
		}
		if !wait(ctx, r.Delay) {
			return
		}
		content := make([]map[string]any, 0, len(bs))
		for _, b := range bs {
			content = append(content, b.json())
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"id": rec.ID, "type": "message", "role": "assistant", "model": s.model(rec),
			"content": content, "stop_reason": r.stopReason(), "stop_sequence": nil, "usage": u,
		})
		return
	}
	s.stream(ctx, w, rec, r, bs, u)
}

type sse struct {
	w   http.ResponseWriter
	f   http.Flusher
	ctx context.Context
	err error
}

func (e *sse) event(name string, v any) {
	if e.err != nil {
		return
	}
	if e.ctx.Err() != nil {
		e.err = e.ctx.Err()
		return
	}
	b, _ := json.Marshal(v)
	if _, err := fmt.Fprintf(e.w, "event: %s\ndata: %s\n\n", name, b); err != nil {
		e.err = err
		return
	}
	if e.f != nil {
		e.f.Flush()
	}
}

// chunks splits s into pieces of about n bytes, on rune boundaries.
func chunks(s string, n int) []string {
	var out []string
	for len(s) > n {
		i := n
		for i < len(s) && (s[i]&0xC0) == 0x80 {
			i++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	if s != "" || len(out) == 0 {
		out = append(out, s)
	}
	return out
}

func (s *Server) stream(ctx context.Context, w http.ResponseWriter, rec *Request, r Reply, bs []resolvedBlock, u usage) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("request-id", "req_fake")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	e := &sse{w: w, f: f, ctx: ctx}

	startUsage := u
	startUsage.OutputTokens = 1
	e.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": rec.ID, "type": "message", "role": "assistant", "model": s.model(rec),
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": startUsage,
	}})
	e.event("ping", map[string]any{"type": "ping"})

	paused := false
	// pause holds the stream once, after the first chunk of the first block.
	pause := func() bool {
		if paused {
			return true
		}
		paused = true
		if r.StreamError != "" {
			e.event("error", map[string]any{"type": "error", "error": map[string]any{"type": r.StreamError, "message": "fake stream error"}})
			return false
		}
		if r.Stall != nil {
			// Keep the connection visibly alive while stalled, as the real API
			// does with ping events.
			tick := time.NewTicker(pingEvery)
			defer tick.Stop()
		stalled:
			for {
				select {
				case <-r.Stall.Done():
					break stalled
				case <-ctx.Done():
					return false
				case <-tick.C:
					e.event("ping", map[string]any{"type": "ping"})
					if e.err != nil {
						return false
					}
				}
			}
		}
		if !wait(ctx, r.Delay) {
			return false
		}
		return e.err == nil
	}

	for i, b := range bs {
		if b.Type == "tool_use" {
			e.event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": b.ToolID, "name": b.ToolName, "input": map[string]any{}}})
			for j, c := range chunks(string(b.input), 32) {
				e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "input_json_delta", "partial_json": c}})
				if j == 0 && !pause() {
					return
				}
			}
		} else {
			e.event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "text", "text": ""}})
			n := r.ChunkSize
			if n <= 0 {
				n = 16
				if len(b.Text) > 16<<10 {
					n = 4 << 10
				}
			}
			for j, c := range textChunks(b.Text, n) {
				e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "text_delta", "text": c}})
				if j == 0 && !pause() {
					return
				}
			}
		}
		e.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	e.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": r.stopReason(), "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": u.OutputTokens}})
	e.event("message_stop", map[string]any{"type": "message_stop"})
}

// textChunks splits text for streaming: short texts at word boundaries so
// that "Hello from mock." arrives before " Done." (as in the recording);
// long ones every n bytes.
func textChunks(text string, n int) []string {
	if n >= 4<<10 {
		return chunks(text, n)
	}
	var out []string
	start := 0
	for i := 0; i < len(text); i++ {
		if text[i] == ' ' && i-start >= n {
			out = append(out, text[start:i])
			start = i
		}
	}
	out = append(out, text[start:])
	return out
}
