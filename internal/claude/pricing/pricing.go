package pricing

import "strings"

// Usage is the token usage of one API response, as its usage object says.
type Usage struct {
	Input  int64
	Output int64
	// CacheWrite is cache_creation_input_tokens: all tokens written to
	// the cache. CacheWrite1h is the part of them written for an hour
	// (cache_creation.ephemeral_1h_input_tokens); the rest are priced as
	// 5-minute writes.
	CacheWrite   int64
	CacheWrite1h int64
	CacheRead    int64
	// Speed and ServiceTier are usage.speed and usage.service_tier:
	// anything but "" or "standard" (fast mode, the priority or batch
	// tiers) is priced otherwise, and this table does not hold it.
	Speed       string
	ServiceTier string
}

// Known says whether the table has prices for model.
func Known(model string) bool {
	_, ok := table[canonical(model)]
	return ok
}

// Cost returns what one response cost in US dollars, and false when it
// cannot say: an unknown model, a fast or non-standard tier, or negative
// counts.
func Cost(model string, u Usage) (float64, bool) {
	m, ok := table[canonical(model)]
	if !ok || !standard(u.Speed) || !standard(u.ServiceTier) {
		return 0, false
	}
	if u.Input < 0 || u.Output < 0 || u.CacheWrite < 0 || u.CacheRead < 0 || u.CacheWrite1h < 0 {
		return 0, false
	}
	r := m.base
	if m.long != (Rates{}) && u.Input+u.CacheWrite+u.CacheRead > longContext {
		r = m.long
	}
	// The 1h part cannot exceed the whole; a usage that says otherwise
	// is priced as if it were all 1h writes.
	w1h := min(u.CacheWrite1h, u.CacheWrite)
	w5m := u.CacheWrite - w1h
	usd := float64(u.Input)*r.Input +
		float64(u.Output)*r.Output +
		float64(w5m)*r.CacheWrite +
		float64(w1h)*r.CacheWrite1h +
		float64(u.CacheRead)*r.CacheRead
	return usd / 1e6, true
}

func standard(s string) bool { return s == "" || s == "standard" }

// canonical turns a model id as Claude Code writes it into a table key:
// lower case, without a context suffix ("[1m]") or a date suffix
// ("-20250929", "@20250514").
func canonical(model string) string {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.IndexByte(m, '['); i >= 0 {
		m = m[:i]
	}
	if i := strings.IndexByte(m, '@'); i >= 0 {
		m = m[:i]
	}
	if i := strings.LastIndexByte(m, '-'); i >= 0 && isDate(m[i+1:]) {
		m = m[:i]
	}
	return m
}

// isDate says whether s is eight digits (a model id's YYYYMMDD).
func isDate(s string) bool {
	if len(s) != 8 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
