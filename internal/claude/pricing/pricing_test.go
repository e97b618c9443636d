package pricing

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func TestCost(t *testing.T) {
	cases := []struct {
		name  string
		model string
		u     Usage
		want  float64
		ok    bool
	}{
		// The first reply of the 2.1.197 fixture (statusline.jsonl): Claude's
		// own count for it is cost.total_cost_usd 0.000185.
		{"fixture opus 4.8", "claude-opus-4-8", Usage{Input: 12, Output: 5, ServiceTier: "standard", Speed: "standard"}, 0.000185, true},
		{"1m context suffix", "claude-opus-4-8[1m]", Usage{Input: 12, Output: 5}, 0.000185, true},
		{"opus 4.1 dated", "claude-opus-4-1-20250805", Usage{Input: 1e6, Output: 1e6}, 15 + 75, true},
		{"sonnet 4.5 cache", "claude-sonnet-4-5-20250929", Usage{CacheWrite: 1e5, CacheRead: 1e5}, 0.1 * (3.75 + 0.3), true},
		{"sonnet 4.5 1h writes", "claude-sonnet-4-5", Usage{CacheWrite: 1e5, CacheWrite1h: 4e4}, 0.06*3.75 + 0.04*6, true},
		{"sonnet 4.5 long prompt", "claude-sonnet-4-5", Usage{Input: 100_000, CacheRead: 100_001, Output: 1000}, 0.1*6 + 0.100001*0.6 + 0.001*22.5, true},
		{"sonnet 4.5 at 200k", "claude-sonnet-4-5", Usage{Input: 200_000}, 0.6, true},
		{"sonnet 4.6 no surcharge", "claude-sonnet-4-6", Usage{Input: 300_000}, 0.9, true},
		{"sonnet 4 vertex id", "claude-sonnet-4@20250514", Usage{Output: 1e6}, 15, true},
		{"haiku 4.5", "claude-haiku-4-5-20251001", Usage{Input: 1e6, Output: 1e6, CacheRead: 1e6}, 1 + 5 + 0.1, true},
		{"haiku 3.5", "claude-3-5-haiku-20241022", Usage{Input: 1e6, CacheWrite: 1e6}, 0.8 + 1, true},
		{"haiku 3", "claude-3-haiku-20240307", Usage{Output: 1e6}, 1.25, true},
		{"1h over whole", "claude-haiku-4-5", Usage{CacheWrite: 10, CacheWrite1h: 20}, 10 * 2 / 1e6, true},
		{"unknown model", "claude-sonnet-5-5", Usage{Input: 1}, 0, false},
		{"synthetic", "<synthetic>", Usage{Input: 1}, 0, false},
		{"empty model", "", Usage{Input: 1}, 0, false},
		{"fast mode", "claude-opus-4-8", Usage{Input: 1, Speed: "fast"}, 0, false},
		{"batch tier", "claude-opus-4-8", Usage{Input: 1, ServiceTier: "batch"}, 0, false},
		{"negative", "claude-opus-4-8", Usage{Input: -1}, 0, false},
		{"zero", "claude-opus-4-8", Usage{}, 0, true},
	}
	for _, c := range cases {
		got, ok := Cost(c.model, c.u)
		if ok != c.ok || !near(got, c.want) {
			t.Errorf("%s: Cost(%q, %+v) = %v, %v; want %v, %v", c.name, c.model, c.u, got, ok, c.want, c.ok)
		}
	}
}

// TestFixtureUsage prices every response of the real 2.1.197 transcripts:
// each is priced (they are all claude-opus-4-8, standard speed and tier)
// except Claude's own made-up messages, and each at input*5 + output*25
// per million.
func TestFixtureUsage(t *testing.T) {
	files, err := filepath.Glob("../../../testdata/claude-code-2.1.197/flows/*/transcript*.jsonl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixture transcripts: %v", err)
	}
	priced := 0
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 8<<20)
		for sc.Scan() {
			var e struct {
				Message *struct {
					Model string `json:"model"`
					Usage *struct {
						Input         int64 `json:"input_tokens"`
						Output        int64 `json:"output_tokens"`
						CacheCreation int64 `json:"cache_creation_input_tokens"`
						CacheRead     int64 `json:"cache_read_input_tokens"`
						Split         struct {
							H1 int64 `json:"ephemeral_1h_input_tokens"`
						} `json:"cache_creation"`
						Tier  string `json:"service_tier"`
						Speed string `json:"speed"`
					} `json:"usage"`
				} `json:"message"`
			}
			if json.Unmarshal(sc.Bytes(), &e) != nil || e.Message == nil || e.Message.Usage == nil {
				continue
			}
			m, u := e.Message.Model, e.Message.Usage
			got, ok := Cost(m, Usage{Input: u.Input, Output: u.Output, CacheWrite: u.CacheCreation, CacheWrite1h: u.Split.H1, CacheRead: u.CacheRead, ServiceTier: u.Tier, Speed: u.Speed})
			if m == "<synthetic>" {
				if ok {
					t.Errorf("%s: synthetic message priced", f)
				}
				continue
			}
			want := (float64(u.Input)*5 + float64(u.Output)*25 + float64(u.CacheCreation)*6.25 + float64(u.CacheRead)*0.5) / 1e6
			if !ok || !near(got, want) {
				t.Errorf("%s: %s %+v = %v, %v; want %v", f, m, *u, got, ok, want)
			}
			priced++
		}
		fh.Close()
	}
	if priced < 50 {
		t.Errorf("priced %d fixture responses, want the 2.1.197 flows' ~90", priced)
	}
}

func TestKnown(t *testing.T) {
	if !Known("claude-opus-4-8[1m]") || Known("gpt-4") || Known("claude-opus-4-8-x") {
		t.Error("Known")
	}
}

func FuzzCost(f *testing.F) {
	f.Add("claude-opus-4-8[1m]", int64(12), int64(5), int64(0), int64(0), int64(0))
	f.Add("claude-sonnet-4-5-20250929", int64(300000), int64(1), int64(7), int64(3), int64(9))
	f.Fuzz(func(t *testing.T, model string, in, out, w, w1h, r int64) {
		usd, ok := Cost(model, Usage{Input: in, Output: out, CacheWrite: w, CacheWrite1h: w1h, CacheRead: r})
		if !ok {
			if usd != 0 {
				t.Fatalf("no price but %v", usd)
			}
			return
		}
		if usd < 0 || math.IsNaN(usd) {
			t.Fatalf("Cost = %v", usd)
		}
	})
}

// BenchmarkCost is the price of one response, as the timeline and the
// day's total pay it per assistant line.
func BenchmarkCost(b *testing.B) {
	u := Usage{Input: 12, Output: 5, CacheWrite: 300, CacheWrite1h: 100, CacheRead: 20000, ServiceTier: "standard", Speed: "standard"}
	for b.Loop() {
		if _, ok := Cost("claude-opus-4-8[1m]", u); !ok {
			b.Fatal("no price")
		}
	}
}
