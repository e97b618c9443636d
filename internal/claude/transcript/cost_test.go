package transcript

import (
	"math"
	"testing"
	"time"
)

func nearUSD(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

// The fixture's turns are priced at claude-opus-4-8's list prices: "say
// hello" is one response of 12 in and 5 out, $0.000185, as Claude's status
// line counted it (statusline.jsonl).
func TestTurnCostFixture(t *testing.T) {
	var first *TimelineItem
	items := Timeline(fixtureEntries(t))
	for i := range items {
		if items[i].Kind == KindPrompt && items[i].Tokens != nil {
			first = &items[i]
			break
		}
	}
	if first == nil {
		t.Fatal("no priced prompt")
	}
	if tk := first.Tokens; !nearUSD(tk.CostUSD, 0.000185) || tk.Unpriced != 0 || tk.Responses != 1 {
		t.Fatalf("first turn %q: %+v", first.Text, *tk)
	}
	for _, it := range items {
		if tk := it.Tokens; tk != nil {
			want := (float64(tk.Input)*5 + float64(tk.Output)*25 + float64(tk.CacheCreation)*6.25 + float64(tk.CacheRead)*0.5) / 1e6
			if !nearUSD(tk.CostUSD, want) || tk.Unpriced != 0 {
				t.Errorf("turn %q: %+v, want $%v", it.Text, *tk, want)
			}
		}
	}
}

// A response written as lines with growing output counts is priced at its
// last counts; a model without a price is counted as unpriced, once.
func TestTurnCostGrowingAndUnknown(t *testing.T) {
	var b TimelineBuilder
	b.Add(prompt("p1", "go"))
	line := func(uuid, id, model string, out int64) Entry {
		return Entry{Type: EntryAssistant, UUID: uuid, Message: &Message{ID: id, Model: model,
			Content: Content{Blocks: []Block{{Type: BlockText, Text: "x"}}},
			Usage:   &MessageUsage{InputTokens: 1000, OutputTokens: out, CacheCreationInputTokens: 100, CacheCreation: &CacheCreation{Ephemeral1h: 100}}}}
	}
	b.Add(line("a1", "m1", "claude-haiku-4-5-20251001", 10))
	ch := b.Add(line("a2", "m1", "claude-haiku-4-5-20251001", 30))
	if len(ch) != 2 || ch[0].ID != "p1" {
		t.Fatalf("the larger count did not change the prompt: %+v", ch)
	}
	b.Add(line("a3", "m2", "claude-next-9", 5))
	b.Add(line("a4", "m2", "claude-next-9", 5))
	tk := b.Items()[0].Tokens
	want := (1000*1.0 + 30*5 + 100*2) / 1e6 // input, output, 1h cache writes
	if tk == nil || !nearUSD(tk.CostUSD, want) || tk.Unpriced != 1 || tk.Responses != 2 || tk.Output != 35 {
		t.Fatalf("tokens %+v, want $%v and one unpriced", tk, want)
	}
}

// UsageTotals keeps the cost of each local day: a response's lines are
// counted once, at their largest counts, on the day they were written.
func TestUsageTotalsCostByDay(t *testing.T) {
	loc := time.FixedZone("UTC+2", 2*3600)
	u := UsageTotals{Loc: loc}
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	line := func(uuid, req, model, ts string, out int64) Entry {
		e := assistantLine(uuid, "msg_"+req, req, 1000, out, 0)
		e.Message.Model, e.Timestamp = model, at(ts)
		return e
	}
	u.Add(line("a1", "r1", "claude-opus-4-8", "2026-12-01T21:30:00Z", 10)) // 23:30 local, Dec 1
	u.Add(line("a2", "r2", "claude-opus-4-8", "2026-12-01T22:30:00Z", 10)) // 00:30 local, Dec 2
	u.Add(line("a3", "r2", "claude-opus-4-8", "2026-12-01T22:30:01Z", 40)) // the same response, more output
	u.Add(line("a4", "r3", "claude-next-9", "2026-12-01T23:00:00Z", 1))
	u.Add(line("a5", "r3", "claude-next-9", "2026-12-01T23:00:00Z", 1))
	d1, d2 := u.CostOn("2026-12-01"), u.CostOn("2026-12-02")
	if !nearUSD(d1.USD, (1000*5+10*25)/1e6) || d1.Unpriced != 0 {
		t.Errorf("Dec 1: %+v", d1)
	}
	if !nearUSD(d2.USD, (1000*5+40*25)/1e6) || d2.Unpriced != 1 {
		t.Errorf("Dec 2: %+v", d2)
	}
	if d := u.CostOn("2026-12-03"); d.USD != 0 || d.Unpriced != 0 || d.Day != "2026-12-03" {
		t.Errorf("Dec 3: %+v", d)
	}
	for i, day := range []string{"2026-12-03", "2026-12-04"} {
		u.Add(line("b"+day, "rb"+day, "claude-opus-4-8", day+"T12:00:00Z", 1))
		if len(u.days) > maxCostDays {
			t.Fatalf("%d: %d days kept", i, len(u.days))
		}
	}
	if d := u.CostOn("2026-12-01"); d.USD != 0 {
		t.Errorf("the earliest day is kept: %+v", d)
	}
	u.Reset()
	if u.Loc != loc || u.days != nil {
		t.Errorf("Reset: %+v", u)
	}
}

// A turn's prompt carries Claude's own measure of the turn (turn_duration).
func TestTurnDurationFixture(t *testing.T) {
	n := 0
	for _, it := range Timeline(fixtureEntries(t)) {
		if it.Kind == KindPrompt && it.DurationMS > 0 {
			n++
		}
		if it.Kind != KindPrompt && it.DurationMS != 0 {
			t.Errorf("a %s item has a duration", it.Kind)
		}
	}
	if n != 4 { // the fixture's four turn_duration lines
		t.Errorf("%d prompts with a duration, want 4", n)
	}
}
