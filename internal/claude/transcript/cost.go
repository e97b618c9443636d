package transcript

import (
	"time"

	"github.com/corral-dev/corral/internal/claude/pricing"
)

// priceOf is what one response cost at list prices (internal/claude/pricing),
// false for a model or tier the table does not know.
func priceOf(model string, u *MessageUsage) (float64, bool) {
	if u == nil || model == SyntheticModel {
		return 0, false
	}
	p := pricing.Usage{
		Input:       u.InputTokens,
		Output:      u.OutputTokens,
		CacheWrite:  u.CacheCreationInputTokens,
		CacheRead:   u.CacheReadInputTokens,
		ServiceTier: u.ServiceTier,
		Speed:       u.Speed,
	}
	if u.CacheCreation != nil {
		p.CacheWrite1h = u.CacheCreation.Ephemeral1h
	}
	return pricing.Cost(model, p)
}

// DayCost is what a transcript's API responses of one local day cost.
type DayCost struct {
	Day string // YYYY-MM-DD in the reader's time zone
	USD float64
	// Unpriced counts the responses of the day that have no price (a
	// model the table does not know): USD leaves them out.
	Unpriced int
}

// maxCostDays bounds the days UsageTotals keeps a cost for: the latest.
const maxCostDays = 3

// DayKey is the local day of t, as DayCost.Day writes it (loc nil: the
// process's time zone).
func DayKey(t time.Time, loc *time.Location) string {
	if loc == nil {
		loc = time.Local
	}
	return t.In(loc).Format(time.DateOnly)
}

// addDay adds a response's cost (or its lack of one) to the day of at.
func (t *UsageTotals) addDay(at time.Time, usd float64, unpriced int) {
	if at.IsZero() || usd == 0 && unpriced == 0 {
		return
	}
	day := DayKey(at, t.Loc)
	for i := range t.days {
		if t.days[i].Day == day {
			t.days[i].USD += usd
			t.days[i].Unpriced += unpriced
			return
		}
	}
	t.days = append(t.days, DayCost{Day: day, USD: usd, Unpriced: unpriced})
	if len(t.days) > maxCostDays {
		// Forget the earliest day (lines can come out of order around
		// midnight, so it is not always the first).
		old := 0
		for i := range t.days {
			if t.days[i].Day < t.days[old].Day {
				old = i
			}
		}
		t.days = append(t.days[:old], t.days[old+1:]...)
	}
}

// CostOn returns the cost of the responses written on day (DayKey).
func (t *UsageTotals) CostOn(day string) DayCost {
	for _, d := range t.days {
		if d.Day == day {
			return d
		}
	}
	return DayCost{Day: day}
}
