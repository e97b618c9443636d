package transcript

import (
	"time"

	"github.com/corral-dev/corral/internal/api"
)

// maxUsageKeys bounds the responses UsageTotals remembers for
// deduplication; the oldest are forgotten first. A response's lines are
// written together, so only recent keys ever repeat.
const maxUsageKeys = 4096

// UsageTotals sums the token usage of a transcript, counting each API
// response once. Feed it every entry in order (Add); the zero value is
// ready to use. Call Reset when a Tailer starts over.
//
// Claude writes one response as several assistant lines (one per content
// block) that repeat the same message id, request id and usage. The key
// that identifies a response is:
//
//   - the requestId with message.id when the line has a requestId (real
//     API traffic always does: it is unique per request, so this is
//     exact; the message id tells apart the responses of a fake or proxy
//     that sends one request id for all, as internal/testkit/fakeapi does);
//   - otherwise message.id scoped to the user line that preceded it (the
//     prompt or tool result that triggered the request). Real message ids
//     are unique too, but fake APIs reuse them (the 2.1.197 fixture answers
//     every request with "msg_1"), so an id alone would merge different
//     responses; the scope tells them apart.
//
// When lines of one response differ, the largest value of each counter
// wins (streamed lines can carry growing output counts).
type UsageTotals struct {
	Input         int64
	Output        int64
	CacheRead     int64
	CacheCreation int64
	// Model is the model of the latest response.
	Model string
	// Loc is the time zone whose days CostOn counts (nil: the process's).
	Loc *time.Location

	days []DayCost // the cost of the latest days (cost.go)

	// usd, responses and unpriced are the cost of all responses, the
	// responses and those without a price (TurnTokensOf).
	usd       float64
	responses int
	unpriced  int

	anchor string // uuid of the latest user line
	// subAnchor is the anchor of each subagent's transcript (AddSubagent).
	subAnchor map[string]string
	seen      map[string]Usage
	// price is the cost of each response in seen.
	price map[string]float64
	order []string
}

// Add accounts for one entry; entries without usage only move the scope.
func (t *UsageTotals) Add(e Entry) { t.add(e, "", &t.anchor) }

// maxSubAnchors bounds the subagents whose scope AddSubagent remembers.
const maxSubAnchors = 64

// AddSubagent accounts for one entry of subagent id's transcript. Its
// responses are keyed apart from the session's: fake APIs reuse ids.
func (t *UsageTotals) AddSubagent(id string, e Entry) {
	if t.subAnchor == nil || len(t.subAnchor) >= maxSubAnchors && t.subAnchor[id] == "" {
		t.subAnchor = map[string]string{}
	}
	a := t.subAnchor[id]
	t.add(e, "agent\x00"+id+"\x00", &a)
	t.subAnchor[id] = a
}

func (t *UsageTotals) add(e Entry, scope string, anchor *string) {
	if e.Type == EntryUser {
		*anchor = e.UUID
		return
	}
	u, ok := usageOf(e)
	if !ok {
		return
	}
	key := scope
	switch {
	case u.RequestID != "":
		// With the message id too: a proxy or fake that answers every
		// request with one request id still has a message id per response.
		key += "req\x00" + u.RequestID + "\x00" + u.MessageID
	case u.MessageID != "":
		key += "msg\x00" + u.MessageID + "\x00" + *anchor
	default:
		key += "line\x00" + e.UUID
	}
	if t.seen == nil {
		t.seen = map[string]Usage{}
		t.price = map[string]float64{}
	}
	prev, dup := t.seen[key]
	next := Usage{
		Input:         max(prev.Input, u.Input),
		Output:        max(prev.Output, u.Output),
		CacheRead:     max(prev.CacheRead, u.CacheRead),
		CacheCreation: max(prev.CacheCreation, u.CacheCreation),
	}
	// The day's cost grows by what the larger counts add; a response
	// without a price counts once, on the day of its first line.
	mu := *e.Message.Usage
	mu.InputTokens, mu.OutputTokens = next.Input, next.Output
	mu.CacheReadInputTokens, mu.CacheCreationInputTokens = next.CacheRead, next.CacheCreation
	if usd, ok := priceOf(u.Model, &mu); ok {
		t.addDay(e.Timestamp, usd-t.price[key], 0)
		t.usd += usd - t.price[key]
		t.price[key] = usd
	} else if !dup {
		t.addDay(e.Timestamp, 0, 1)
		t.unpriced++
	}
	if !dup {
		t.responses++
	}
	t.Input += next.Input - prev.Input
	t.Output += next.Output - prev.Output
	t.CacheRead += next.CacheRead - prev.CacheRead
	t.CacheCreation += next.CacheCreation - prev.CacheCreation
	t.seen[key] = next
	if u.Model != "" {
		t.Model = u.Model
	}
	if !dup {
		t.order = append(t.order, key)
		if len(t.order) > maxUsageKeys {
			delete(t.seen, t.order[0])
			delete(t.price, t.order[0])
			t.order = t.order[1:]
		}
	}
}

// Reset forgets everything, for a transcript that started over (but
// keeps Loc).
func (t *UsageTotals) Reset() { *t = UsageTotals{Loc: t.Loc} }

// Fill copies the cumulative token counts into u (and the model, when u
// has none), and the cost of the day of now.
func (t *UsageTotals) Fill(u *api.Usage, now time.Time) {
	u.InputTokens = t.Input
	u.OutputTokens = t.Output
	u.CacheRead = t.CacheRead
	u.CacheCreation = t.CacheCreation
	if u.Model == "" {
		u.Model = t.Model
	}
	d := t.CostOn(DayKey(now, t.Loc))
	u.CostDay, u.CostToday, u.TodayUnpriced = d.Day, d.USD, d.Unpriced
}
