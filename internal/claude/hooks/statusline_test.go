package hooks

import (
	"strings"
	"testing"

	"github.com/corral-dev/corral/internal/api"
)

func TestParseStatusLineFixture(t *testing.T) {
	lines := fixtureLines(t, "statusline.jsonl")
	var all []StatusLine
	for i, l := range lines {
		s, err := ParseStatusLine(l)
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		all = append(all, s)
	}
	first := all[0]
	if first.ContextWindow.UsedPercentage != nil || first.ContextWindow.CurrentUsage != nil {
		t.Errorf("first line has usage: %+v", first.ContextWindow)
	}
	u := first.Usage()
	want := api.Usage{Model: "claude-opus-4-8[1m]", ModelName: "Opus 4.8 (1M context)", ContextSize: 1000000}
	if !usageEqual(u, want) {
		t.Errorf("first Usage = %+v", u)
	}
	u = all[2].Usage()
	want = api.Usage{Model: "claude-opus-4-8[1m]", ModelName: "Opus 4.8 (1M context)", ContextSize: 1000000,
		InputTokens: 12, OutputTokens: 20, CostUSD: 0.0013050000000000002}
	if !usageEqual(u, want) || all[2].PromptID != "887032be-dba4-438b-aacb-781ce67129b3" || all[2].Workspace.ProjectDir != "/home/dev/proj" {
		t.Errorf("third Usage = %+v", u)
	}
	last := all[len(all)-1]
	if last.Cost.TotalCostUSD != 0.003165 || last.Version != "2.1.197" || last.Effort.Level != "high" {
		t.Errorf("last = %+v", last)
	}
	// The status line's token counts follow the context, not the session:
	// they drop to zero after /compact while the cost keeps growing.
	if last.ContextWindow.TotalInputTokens != 0 {
		t.Errorf("tokens after compaction: %d", last.ContextWindow.TotalInputTokens)
	}
}

func usageEqual(a, b api.Usage) bool {
	return a.Model == b.Model && a.ModelName == b.ModelName && a.ContextPercent == b.ContextPercent &&
		a.ContextSize == b.ContextSize && a.InputTokens == b.InputTokens && a.OutputTokens == b.OutputTokens &&
		a.CacheRead == b.CacheRead && a.CacheCreation == b.CacheCreation && a.CostUSD == b.CostUSD &&
		string(a.RateLimits) == string(b.RateLimits)
}

func TestStatusLineRateLimitsAndPercent(t *testing.T) {
	s, err := ParseStatusLine([]byte(`{"model":{"id":"m"},"context_window":{"used_percentage":42.5,"context_window_size":200000,
		"current_usage":{"cache_read_input_tokens":7,"cache_creation_input_tokens":3}},
		"rate_limits":{"five_hour":{"used_percentage":10}}}`))
	if err != nil {
		t.Fatal(err)
	}
	u := s.Usage()
	if u.ContextPercent != 42.5 || u.CacheRead != 7 || u.CacheCreation != 3 || string(u.RateLimits) != `{"five_hour":{"used_percentage":10}}` {
		t.Fatalf("%+v", u)
	}
	s, _ = ParseStatusLine([]byte(`{"rate_limits":null}`))
	if s.RateLimits != nil {
		t.Fatalf("null rate limits kept: %s", s.RateLimits)
	}
}

func TestParseStatusLineRejects(t *testing.T) {
	for _, in := range []string{"", "[]", "1", `{"model":`} {
		if _, err := ParseStatusLine([]byte(in)); err == nil {
			t.Errorf("ParseStatusLine(%q) succeeded", in)
		}
	}
	if _, err := ParseStatusLine([]byte(`{"x":"` + strings.Repeat("a", MaxStatusLine) + `"}`)); err == nil {
		t.Error("oversize accepted")
	}
}
