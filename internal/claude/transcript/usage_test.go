package transcript

import (
	"fmt"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/api"
)

func TestUsageTotalsFixture(t *testing.T) {
	// The fake API answered five requests, all as "msg_1" and without
	// request ids: 12 in each; 5 out for text, 20 for a tool call.
	var u UsageTotals
	for _, e := range fixtureEntries(t) {
		u.Add(e)
	}
	if u.Input != 60 || u.Output != 55 || u.CacheRead != 0 || u.Model != "claude-opus-4-8" {
		t.Fatalf("totals %+v", u)
	}
}

// assistantLine builds an assistant entry of a response split into lines.
func assistantLine(uuid, msgID, reqID string, in, out, cacheRead int64) Entry {
	return Entry{Type: EntryAssistant, UUID: uuid, RequestID: reqID, Message: &Message{
		ID: msgID, Model: "claude-x", Content: Content{Blocks: []Block{{Type: BlockText, Text: "t"}}},
		Usage: &MessageUsage{InputTokens: in, OutputTokens: out, CacheReadInputTokens: cacheRead},
	}}
}

func TestUsageTotalsRealShape(t *testing.T) {
	// Real traffic: unique request and message ids; one response written
	// as three lines (text, tool_use, tool_use) repeating its usage, the
	// last with the final output count; a tool result in between does not
	// split the response.
	var u UsageTotals
	u.Add(Entry{Type: EntryUser, UUID: "p1"})
	u.Add(assistantLine("a1", "msg_A", "req_A", 100, 10, 1000))
	u.Add(assistantLine("a2", "msg_A", "req_A", 100, 10, 1000))
	u.Add(Entry{Type: EntryUser, UUID: "r1"})
	u.Add(assistantLine("a3", "msg_A", "req_A", 100, 30, 1000))
	u.Add(assistantLine("b1", "msg_B", "req_B", 5, 7, 0))
	if u.Input != 105 || u.Output != 37 || u.CacheRead != 1000 {
		t.Fatalf("totals %+v", u)
	}

	// Without request ids the message id counts once per triggering line.
	var v UsageTotals
	v.Add(Entry{Type: EntryUser, UUID: "p1"})
	v.Add(assistantLine("a1", "msg_1", "", 10, 1, 0))
	v.Add(assistantLine("a2", "msg_1", "", 10, 2, 0))
	v.Add(Entry{Type: EntryUser, UUID: "p2"})
	v.Add(assistantLine("a3", "msg_1", "", 10, 1, 0))
	if v.Input != 20 || v.Output != 3 {
		t.Fatalf("scoped totals %+v", v)
	}

	// Synthetic messages and lines without usage count nothing.
	var w UsageTotals
	w.Add(Entry{Type: EntryAssistant, Message: &Message{Model: SyntheticModel, Usage: &MessageUsage{InputTokens: 9}}})
	w.Add(Entry{Type: EntryAssistant, Message: &Message{Model: "m"}})
	w.Add(Entry{Type: EntrySystem})
	if w.Input != 0 || w.Model != "" {
		t.Fatalf("%+v", w)
	}

	var au api.Usage
	au.Model = "from-statusline"
	u.Fill(&au, time.Now())
	if au.InputTokens != 105 || au.OutputTokens != 37 || au.CacheRead != 1000 || au.Model != "from-statusline" {
		t.Fatalf("Fill: %+v", au)
	}
	u.Reset()
	if u.Input != 0 || u.seen != nil {
		t.Fatalf("Reset: %+v", u)
	}
}

func TestUsageTotalsBoundedMemory(t *testing.T) {
	var u UsageTotals
	for i := range maxUsageKeys + 100 {
		u.Add(assistantLine(fmt.Sprint(i), fmt.Sprint("m", i), fmt.Sprint("r", i), 1, 1, 0))
	}
	if len(u.seen) != maxUsageKeys || len(u.order) != maxUsageKeys || u.Input != maxUsageKeys+100 {
		t.Fatalf("seen %d order %d input %d", len(u.seen), len(u.order), u.Input)
	}
}

// A fake or proxy that answers every request with one request id still
// has a message id per response: each is counted.
func TestUsageTotalsSharedRequestID(t *testing.T) {
	var u UsageTotals
	u.Add(Entry{Type: EntryUser, UUID: "p1"})
	u.Add(assistantLine("a1", "msg_1", "req_fake", 10, 1, 0))
	u.Add(assistantLine("a2", "msg_1", "req_fake", 10, 2, 0))
	u.Add(assistantLine("b1", "msg_2", "req_fake", 20, 3, 0))
	if u.Input != 30 || u.Output != 5 {
		t.Fatalf("totals %+v", u)
	}
}
