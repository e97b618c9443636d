package hooks

import (
	"encoding/json"
	"fmt"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/claude"
	"github.com/corral-dev/corral/internal/claude/transcript"
)

// StatusLine is the JSON Claude writes to the status-line command's stdin
// after every change (2.1.197 shape).
type StatusLine struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path,omitempty"`
	CWD            string `json:"cwd,omitempty"`
	PromptID       string `json:"prompt_id,omitempty"`
	Version        string `json:"version,omitempty"`
	Model          struct {
		ID          string `json:"id"`
		DisplayName string `json:"display_name"`
	} `json:"model"`
	Workspace struct {
		CurrentDir string   `json:"current_dir,omitempty"`
		ProjectDir string   `json:"project_dir,omitempty"`
		AddedDirs  []string `json:"added_dirs,omitempty"`
	} `json:"workspace"`
	OutputStyle struct {
		Name string `json:"name,omitempty"`
	} `json:"output_style"`
	Effort struct {
		Level string `json:"level,omitempty"`
	} `json:"effort"`
	Cost struct {
		TotalCostUSD       float64 `json:"total_cost_usd"`
		TotalDurationMS    int64   `json:"total_duration_ms"`
		TotalAPIDurationMS int64   `json:"total_api_duration_ms"`
		TotalLinesAdded    int64   `json:"total_lines_added"`
		TotalLinesRemoved  int64   `json:"total_lines_removed"`
	} `json:"cost"`
	// ContextWindow describes the current context. In 2.1.197 the
	// total_*_tokens fields follow the latest response (and drop to 0 after
	// a compaction): they are not session totals; UsageTotals has those.
	ContextWindow struct {
		TotalInputTokens  int64                    `json:"total_input_tokens"`
		TotalOutputTokens int64                    `json:"total_output_tokens"`
		ContextWindowSize int64                    `json:"context_window_size"`
		CurrentUsage      *transcript.MessageUsage `json:"current_usage"`
		// UsedPercentage and RemainingPercentage are null before the
		// first response and after a compaction.
		UsedPercentage      *float64 `json:"used_percentage"`
		RemainingPercentage *float64 `json:"remaining_percentage"`
	} `json:"context_window"`
	Exceeds200kTokens bool `json:"exceeds_200k_tokens,omitempty"`
	FastMode          bool `json:"fast_mode,omitempty"`
	// RateLimits appears only for subscription logins; kept verbatim.
	RateLimits json.RawMessage `json:"rate_limits,omitempty"`
}

// ParseStatusLine decodes one status-line input.
func ParseStatusLine(b []byte) (StatusLine, error) {
	if err := claude.CheckObject("status line", b, MaxStatusLine); err != nil {
		return StatusLine{}, err
	}
	var s StatusLine
	if err := claude.DecodeLoose(b, &s); err != nil {
		return StatusLine{}, fmt.Errorf("status line: %w", err)
	}
	if string(s.RateLimits) == "null" {
		s.RateLimits = nil
	}
	return s, nil
}

// Usage converts the status line to the API's usage: model id and name,
// context use and size, cost, rate limits, and the token counts Claude
// shows (context-scoped, see ContextWindow; UsageTotals.Fill overrides them
// with cumulative counts).
func (s StatusLine) Usage() api.Usage {
	u := api.Usage{
		Model:        s.Model.ID,
		ModelName:    s.Model.DisplayName,
		ContextSize:  s.ContextWindow.ContextWindowSize,
		InputTokens:  s.ContextWindow.TotalInputTokens,
		OutputTokens: s.ContextWindow.TotalOutputTokens,
		CostUSD:      s.Cost.TotalCostUSD,
		RateLimits:   s.RateLimits,
	}
	if p := s.ContextWindow.UsedPercentage; p != nil {
		u.ContextPercent = *p
	}
	if c := s.ContextWindow.CurrentUsage; c != nil {
		u.CacheRead = c.CacheReadInputTokens
		u.CacheCreation = c.CacheCreationInputTokens
	}
	return u
}
