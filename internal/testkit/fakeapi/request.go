package fakeapi

import (
	"encoding/json"
	"strings"
	"time"
)

// Kind tells what a request to the fake API was for.
type Kind string

const (
	// KindPrompt is a main-loop request: Claude asking the model to answer the
	// conversation (the typed prompt, or the turn after a tool result).
	KindPrompt Kind = "prompt"
	// KindSide is a side request Claude makes on its own (session title
	// generation, and other small single-shot requests without tools).
	KindSide Kind = "side"
	// KindCompact is the summarisation request of /compact (or auto-compact).
	KindCompact Kind = "compact"
	// KindCountTokens is POST /v1/messages/count_tokens.
	KindCountTokens Kind = "count_tokens"
	// KindOther is any other path (answered with 404).
	KindOther Kind = "other"
)

// Request is the record of one request the fake API received.
type Request struct {
	// Seq numbers requests from 1 in arrival order.
	Seq int
	// Time is when the request arrived.
	Time time.Time
	// Method, Path and Query of the HTTP request.
	Method, Path, Query string
	// Kind classifies the request.
	Kind Kind
	// Model and Stream are the request's "model" and "stream" fields.
	Model  string
	Stream bool
	// Prompt is the text the user typed: the last text block, other than a
	// <system-reminder> block, of the last message whose role is "user",
	// trimmed of surrounding white space. Empty when that message holds only
	// tool results. (After a failed turn Claude keeps the failed prompt, so the
	// next request's last user message holds both prompts as separate blocks;
	// Prompt is the newest one, Texts has all of them.)
	Prompt string
	// Texts are all the non-reminder text blocks of the last user message.
	Texts []string
	// TurnPrompt is the newest typed text of the conversation: the last
	// non-reminder text block of the last user message that has one. Unlike
	// Prompt it stays set while the turn goes on with tool results.
	TurnPrompt string
	// TurnSteps counts the assistant messages after the message that holds
	// TurnPrompt: 0 for the turn's first request, 1 after the first tool
	// result, and so on.
	TurnSteps int
	// ToolResults are the tool_result blocks of the last user message.
	ToolResults []ToolResult
	// System is the system prompt text (all text blocks joined).
	System string
	// NumMessages is len(messages); NumTools is len(tools).
	NumMessages, NumTools int
	// Rule is the name of the rule that produced the answer, and Reply a short
	// description of the answer.
	Rule, Reply string
	// ID is the message id answered ("msg_<n>"), if any.
	ID string
	// Body is the raw request body.
	Body []byte
}

// ToolResult is one tool_result block sent back to the model.
type ToolResult struct {
	ToolUseID string
	IsError   bool
	Content   string
}

type wireBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ToolUseID string          `json:"tool_use_id"`
	IsError   bool            `json:"is_error"`
	Content   json.RawMessage `json:"content"`
}

type wireMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type wireRequest struct {
	Model    string            `json:"model"`
	Stream   bool              `json:"stream"`
	System   json.RawMessage   `json:"system"`
	Messages []wireMessage     `json:"messages"`
	Tools    []json.RawMessage `json:"tools"`
	Output   struct {
		Format json.RawMessage `json:"format"`
	} `json:"output_config"`
}

// blocks decodes a content field that is either a string or a list of blocks.
func blocks(raw json.RawMessage) []wireBlock {
	if len(raw) == 0 {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []wireBlock{{Type: "text", Text: s}}
	}
	var bs []wireBlock
	if json.Unmarshal(raw, &bs) == nil {
		return bs
	}
	return nil
}

func isReminder(text string) bool {
	return strings.HasPrefix(strings.TrimSpace(text), "<system-reminder>")
}

// parseMessages fills the parsed fields of rec from a /v1/messages body.
// It reports whether the request asks for a structured output format, and
// whether the body was a valid JSON object.
func parseMessages(body []byte, rec *Request) (hasFormat, ok bool) {
	var w wireRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return false, false
	}
	rec.Model = w.Model
	rec.Stream = w.Stream
	rec.NumMessages = len(w.Messages)
	rec.NumTools = len(w.Tools)
	var sys []string
	for _, b := range blocks(w.System) {
		if b.Type == "text" {
			sys = append(sys, b.Text)
		}
	}
	rec.System = strings.Join(sys, "\n")
	for i := len(w.Messages) - 1; i >= 0; i-- {
		if w.Messages[i].Role != "user" {
			continue
		}
		for _, b := range blocks(w.Messages[i].Content) {
			switch b.Type {
			case "text":
				if !isReminder(b.Text) {
					rec.Texts = append(rec.Texts, b.Text)
				}
			case "tool_result":
				rec.ToolResults = append(rec.ToolResults, ToolResult{
					ToolUseID: b.ToolUseID,
					IsError:   b.IsError,
					Content:   contentText(b.Content),
				})
			}
		}
		if n := len(rec.Texts); n > 0 {
			rec.Prompt = strings.TrimSpace(rec.Texts[n-1])
		}
		break
	}
	for i := len(w.Messages) - 1; i >= 0; i-- {
		m := w.Messages[i]
		if m.Role == "assistant" {
			rec.TurnSteps++
			continue
		}
		if m.Role != "user" {
			continue
		}
		text := ""
		for _, b := range blocks(m.Content) {
			if b.Type == "text" && !isReminder(b.Text) {
				text = b.Text
			}
		}
		if text != "" {
			rec.TurnPrompt = strings.TrimSpace(text)
			break
		}
	}
	if rec.TurnPrompt == "" {
		rec.TurnSteps = 0
	}
	f := strings.TrimSpace(string(w.Output.Format))
	return f != "" && f != "null", true
}

// contentText flattens a tool_result content (string or blocks) to text.
func contentText(raw json.RawMessage) string {
	var parts []string
	for _, b := range blocks(raw) {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}
