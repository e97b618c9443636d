package pricing

// Rates are the list prices of one model, in US dollars per million tokens.
type Rates struct {
	Input        float64
	Output       float64
	CacheWrite   float64 // a 5-minute cache write (Claude Code's default)
	CacheWrite1h float64
	CacheRead    float64
}

// longContext is the prompt size (input, cache writes and cache reads of
// one request) above which the long-context rates apply, where a model
// has them.
const longContext = 200_000

// model is a row of the table: the rates, and the rates of a request whose
// prompt is over longContext tokens (zero where the model has none).
type model struct {
	base, long Rates
}

// The list prices, read from Anthropic's pricing page
// (https://platform.claude.com/docs/en/about-claude/pricing, "Model
// pricing" and "Long context pricing") on 2026-12-02. Keys are model ids
// without their date suffix (claude-sonnet-4-5-20250929 is
// claude-sonnet-4-5) or context suffix (claude-opus-4-8[1m]). Only the
// models whose every rate is on that page are here; models priced in
// tiers by prompt length or by date (the 5.5 family, Fable, Mythos) are
// left out until they are added with their tiers, so they show tokens
// only. docs/timeline.md repeats the source.
var table = map[string]model{
	// Opus 4.5 to 5: $5 / $25.
	"claude-opus-5":   {base: opus45},
	"claude-opus-4-8": {base: opus45},
	"claude-opus-4-7": {base: opus45},
	"claude-opus-4-6": {base: opus45},
	"claude-opus-4-5": {base: opus45},
	// Opus 4 and 4.1 (and 3): $15 / $75.
	"claude-opus-4-1": {base: opus4},
	"claude-opus-4-0": {base: opus4},
	"claude-opus-4":   {base: opus4},
	"claude-3-opus":   {base: opus4},
	// Sonnet 5: $2 / $10.
	"claude-sonnet-5": {base: Rates{Input: 2, Output: 10, CacheWrite: 2.5, CacheWrite1h: 4, CacheRead: 0.2}},
	// Sonnet 4.6 has no long-context surcharge; 4.5 and 4 charge more
	// for a prompt over 200K tokens (the 1M-context beta).
	"claude-sonnet-4-6": {base: sonnet4},
	"claude-sonnet-4-5": {base: sonnet4, long: sonnet4Long},
	"claude-sonnet-4-0": {base: sonnet4, long: sonnet4Long},
	"claude-sonnet-4":   {base: sonnet4, long: sonnet4Long},
	"claude-3-7-sonnet": {base: sonnet4},
	// Haiku.
	"claude-haiku-4-5": {base: Rates{Input: 1, Output: 5, CacheWrite: 1.25, CacheWrite1h: 2, CacheRead: 0.1}},
	"claude-3-5-haiku": {base: Rates{Input: 0.8, Output: 4, CacheWrite: 1, CacheWrite1h: 1.6, CacheRead: 0.08}},
	"claude-3-haiku":   {base: Rates{Input: 0.25, Output: 1.25, CacheWrite: 0.3, CacheWrite1h: 0.5, CacheRead: 0.03}},
}

var (
	opus45      = Rates{Input: 5, Output: 25, CacheWrite: 6.25, CacheWrite1h: 10, CacheRead: 0.5}
	opus4       = Rates{Input: 15, Output: 75, CacheWrite: 18.75, CacheWrite1h: 30, CacheRead: 1.5}
	sonnet4     = Rates{Input: 3, Output: 15, CacheWrite: 3.75, CacheWrite1h: 6, CacheRead: 0.3}
	sonnet4Long = Rates{Input: 6, Output: 22.5, CacheWrite: 7.5, CacheWrite1h: 12, CacheRead: 0.6}
)
