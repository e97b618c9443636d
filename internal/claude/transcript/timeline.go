package transcript

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/claude"
)

// The timeline's types are wire types (they travel to browsers and through
// the hub), so they live in package api; these names keep this package's
// code readable.
type (
	TimelineKind = api.TimelineKind
	TimelineItem = api.TimelineItem
	ToolCall     = api.ToolCall
	FileEdit     = api.FileEdit
)

const (
	KindPrompt     = api.TimelinePrompt
	KindText       = api.TimelineText
	KindThinking   = api.TimelineThinking
	KindTool       = api.TimelineTool
	KindInterrupt  = api.TimelineInterrupt
	KindCompaction = api.TimelineCompaction
	KindAPIError   = api.TimelineAPIError
	KindCommand    = api.TimelineCommand
)

// maxToolResultText caps the result text kept per tool call; the full
// result stays in the transcript.
const maxToolResultText = 64 << 10

// TimelineBuilder turns entries into timeline items incrementally. Add
// returns the items that are new or changed (a tool call changes when its
// result arrives), so a UI can patch its view. The zero value is ready.
type TimelineBuilder struct {
	items []TimelineItem
	// open maps a tool_use id to the index of its still-unanswered item.
	// Ids can repeat (fake APIs reuse them), so an answer goes to the
	// latest call with that id.
	open map[string]int
	// turn is the index+1 of the current turn's prompt item, 0 before
	// the first (turnfiles.go).
	turn int
	// counted is the id of the last API response whose usage the turn
	// counted (Claude writes one entry per content block, each with the
	// response's usage), countedUsage the counts and countedCost the
	// cost counted for it so far.
	counted      string
	countedUsage MessageUsage
	countedCost  float64
	// countedAt is when that response was written, and countedTurn the
	// turn (index+1 of its prompt item, 0 for none) it counted in: Claude
	// can write a turn's first response before the turn's prompt line, and
	// the prompt then takes it (movePromptless).
	countedAt     time.Time
	countedTurn   int
	countedPriced bool
	// countedOrphan: that response's parent entry had not been seen yet
	// (it comes later in the file); recent holds the last entries' uuids.
	countedOrphan bool
	recent        [16]string
	nrecent       int
	// sub links each subagent to the turn that launched it (AddSubagents).
	sub map[string]subLink
}

// subLink is the turn (its prompt item's id) a subagent's responses count
// in, and what of them the turn counts so far.
type subLink struct {
	turn    string
	counted api.TurnTokens
}

// Timeline builds the whole timeline of a list of entries.
func Timeline(entries []Entry) []TimelineItem {
	var b TimelineBuilder
	for _, e := range entries {
		b.Add(e)
	}
	return b.Items()
}

// Items returns a copy of all items so far.
func (b *TimelineBuilder) Items() []TimelineItem {
	return append([]TimelineItem(nil), b.items...)
}

// Trim keeps the last n items only: a tool call or a turn whose item is
// cut is forgotten, so its late result or files change nothing.
func (b *TimelineBuilder) Trim(n int) {
	cut := len(b.items) - max(n, 0)
	if cut <= 0 {
		return
	}
	b.items = append([]TimelineItem(nil), b.items[cut:]...)
	for id, i := range b.open {
		if i < cut {
			delete(b.open, id)
		} else {
			b.open[id] = i - cut
		}
	}
	if b.turn-1 < cut {
		b.turn = 0
	} else {
		b.turn -= cut
	}
	if b.countedTurn-1 < cut {
		b.countedTurn = 0
	} else {
		b.countedTurn -= cut
	}
	for id, l := range b.sub {
		if b.find(l.turn) < 0 {
			delete(b.sub, id)
		}
	}
}

// find is the index of the item with id, -1 if none.
func (b *TimelineBuilder) find(id string) int {
	for i := len(b.items) - 1; i >= 0; i-- {
		if b.items[i].ID == id {
			return i
		}
	}
	return -1
}

// AddSubagents adds to each turn what its subagents' responses add since
// the last call: totals holds, by agent id, all that an agent's transcript
// has said so far. It returns the turns changed, in timeline order.
func (b *TimelineBuilder) AddSubagents(totals map[string]api.TurnTokens) []TimelineItem {
	var idx []int
	for id, l := range b.sub {
		t, ok := totals[id]
		if !ok || t == l.counted {
			continue
		}
		i := b.find(l.turn)
		if i < 0 {
			continue
		}
		it := b.items[i]
		tt := api.TurnTokens{}
		if it.Tokens != nil {
			tt = *it.Tokens
		}
		tt.Input += t.Input - l.counted.Input
		tt.Output += t.Output - l.counted.Output
		tt.CacheRead += t.CacheRead - l.counted.CacheRead
		tt.CacheCreation += t.CacheCreation - l.counted.CacheCreation
		tt.Responses += t.Responses - l.counted.Responses
		tt.CostUSD += t.CostUSD - l.counted.CostUSD
		tt.Unpriced += t.Unpriced - l.counted.Unpriced
		it.Tokens = &tt
		b.items[i] = it
		l.counted = t
		b.sub[id] = l
		if !slices.Contains(idx, i) {
			idx = append(idx, i)
		}
	}
	slices.Sort(idx)
	out := make([]TimelineItem, 0, len(idx))
	for _, i := range idx {
		out = append(out, b.items[i])
	}
	return out
}

// linkSubagent counts a subagent's responses in the current turn. One
// reported again (continued later) moves on with what was counted, so a
// turn gets only what it added.
func (b *TimelineBuilder) linkSubagent(run SubagentRun) {
	if b.turn == 0 {
		return
	}
	if b.sub == nil {
		b.sub = map[string]subLink{}
	}
	l := b.sub[run.AgentID]
	l.turn = b.items[b.turn-1].ID
	b.sub[run.AgentID] = l
}

// Reset forgets everything, for a transcript that started over.
func (b *TimelineBuilder) Reset() { *b = TimelineBuilder{} }

// Add adds one entry and returns the new or changed items.
func (b *TimelineBuilder) Add(e Entry) []TimelineItem {
	if e.IsSidechain {
		return nil
	}
	defer b.saw(e.UUID)
	var changed []TimelineItem
	n := 0
	add := func(it TimelineItem) {
		it.ID = e.UUID
		if n > 0 {
			it.ID += "/" + strconv.Itoa(n)
		}
		n++
		it.Time = e.Timestamp
		b.items = append(b.items, it)
		changed = append(changed, it)
	}
	switch e.Type {
	case EntryUser:
		if e.Message == nil {
			return nil
		}
		if run, ok := SubagentOf(e); ok {
			b.linkSubagent(run)
		}
		c := e.Message.Content
		hadResult := false
		// toolUseResult is a result's only when the entry has one.
		var result json.RawMessage
		if countResults(c.Blocks) == 1 {
			result = e.ToolUseResult
		}
		for _, blk := range c.Blocks {
			if blk.Type != BlockToolResult {
				continue
			}
			hadResult = true
			if it, ok := b.answer(blk, result); ok {
				changed = append(changed, it)
				if p, ok := b.turnChanged(it.Tool, result); ok {
					changed = append(changed, p)
				}
			}
		}
		if hadResult {
			return changed
		}
		text := userText(c)
		t := strings.TrimSpace(text)
		switch {
		case strings.HasPrefix(t, interruptPrefix):
			add(TimelineItem{Kind: KindInterrupt, Text: t})
		case isPrompt(e, text):
			add(TimelineItem{Kind: KindPrompt, Text: text})
			b.turn = len(b.items)
			changed = append(changed, b.movePromptless(e.Timestamp)...)
			if b.countedTurn != b.turn {
				b.counted = "" // a response does not span prompts (fake APIs reuse ids)
			}
		default:
			if cmd, ok := slashCommand(text); ok && !e.IsMeta {
				add(TimelineItem{Kind: KindCommand, Text: cmd})
			}
		}
	case EntryAssistant:
		m := e.Message
		if m == nil {
			return nil
		}
		if e.IsAPIErrorMessage {
			add(TimelineItem{Kind: KindAPIError, Text: m.Content.Text(), Status: e.APIErrorStatus})
			return changed
		}
		if p, ok := b.countUsage(m, e.Timestamp, e.ParentUUID != "" && !b.seen(e.ParentUUID)); ok {
			changed = append(changed, p)
		}
		if m.Content.IsString && strings.TrimSpace(m.Content.String) != "" {
			add(TimelineItem{Kind: KindText, Text: m.Content.String})
		}
		for _, blk := range m.Content.Blocks {
			switch blk.Type {
			case BlockText:
				if strings.TrimSpace(blk.Text) != "" {
					add(TimelineItem{Kind: KindText, Text: blk.Text})
				}
			case BlockThinking:
				if strings.TrimSpace(blk.Thinking) != "" {
					add(TimelineItem{Kind: KindThinking, Text: blk.Thinking})
				}
			case BlockToolUse:
				add(TimelineItem{Kind: KindTool, Tool: &ToolCall{
					ID: blk.ID, Name: blk.Name, Input: blk.Input, Edits: editsOf(blk.Name, blk.Input),
				}})
				if b.open == nil {
					b.open = map[string]int{}
				}
				b.open[blk.ID] = len(b.items) - 1
			}
		}
	case EntrySystem:
		if e.Subtype == SubtypeTurnDuration && b.turn > 0 && e.DurationMS > 0 {
			it := b.items[b.turn-1]
			it.DurationMS = e.DurationMS
			b.items[b.turn-1] = it
			return []TimelineItem{it}
		}
		if e.Subtype == SubtypeCompactBoundary {
			trigger := ""
			if e.CompactMetadata != nil {
				trigger = e.CompactMetadata.Trigger
			}
			add(TimelineItem{Kind: KindCompaction, Text: trigger})
		}
	}
	return changed
}

// countUsage adds an API response's tokens and cost to its turn's prompt,
// once per response: the response's later lines (one per content block)
// add only what their larger counts say (streamed lines can carry growing
// output counts).
func (b *TimelineBuilder) countUsage(m *Message, at time.Time, orphan bool) (TimelineItem, bool) {
	if m.Usage == nil || m.ID == "" || m.Model == SyntheticModel {
		return TimelineItem{}, false
	}
	first := m.ID != b.counted
	if first {
		b.counted, b.countedUsage, b.countedCost = m.ID, MessageUsage{}, 0
		b.countedAt, b.countedTurn, b.countedOrphan = at, b.turn, orphan
	}
	prev := b.countedUsage
	next := *m.Usage
	next.InputTokens = max(prev.InputTokens, next.InputTokens)
	next.OutputTokens = max(prev.OutputTokens, next.OutputTokens)
	next.CacheReadInputTokens = max(prev.CacheReadInputTokens, next.CacheReadInputTokens)
	next.CacheCreationInputTokens = max(prev.CacheCreationInputTokens, next.CacheCreationInputTokens)
	if !first && next.InputTokens == prev.InputTokens && next.OutputTokens == prev.OutputTokens &&
		next.CacheReadInputTokens == prev.CacheReadInputTokens && next.CacheCreationInputTokens == prev.CacheCreationInputTokens {
		return TimelineItem{}, false
	}
	b.countedUsage = next
	usd, priced := priceOf(m.Model, &next)
	cost := b.countedCost
	if priced {
		b.countedCost = usd
	}
	b.countedPriced = priced
	if b.countedTurn == 0 {
		return TimelineItem{}, false // no turn yet; a prompt may take it
	}
	it := b.items[b.countedTurn-1]
	t := api.TurnTokens{}
	if it.Tokens != nil {
		t = *it.Tokens
	}
	t.Input += next.InputTokens - prev.InputTokens
	t.Output += next.OutputTokens - prev.OutputTokens
	t.CacheRead += next.CacheReadInputTokens - prev.CacheReadInputTokens
	t.CacheCreation += next.CacheCreationInputTokens - prev.CacheCreationInputTokens
	switch {
	case priced:
		t.CostUSD += usd - cost
	case first:
		t.Unpriced++
	}
	if first {
		t.Responses++
	}
	it.Tokens = &t
	b.items[b.countedTurn-1] = it
	return it, true
}

// saw remembers an entry's uuid among the recent ones.
func (b *TimelineBuilder) saw(uuid string) {
	if uuid == "" {
		return
	}
	b.recent[b.nrecent%len(b.recent)] = uuid
	b.nrecent++
}

// seen says whether uuid is among the recent entries' uuids.
func (b *TimelineBuilder) seen(uuid string) bool { return slices.Contains(b.recent[:], uuid) }

// movePromptless gives the prompt just added (written at promptAt) the
// response counted last, when that response came before its own parent
// in the file and was written after the prompt: Claude can write a turn's
// first response to the transcript before the turn's prompt line (seen
// under load). It returns the items changed.
func (b *TimelineBuilder) movePromptless(promptAt time.Time) []TimelineItem {
	if b.counted == "" || !b.countedOrphan || b.countedTurn == b.turn || promptAt.IsZero() || !b.countedAt.After(promptAt) {
		return nil
	}
	u := b.countedUsage
	d := api.TurnTokens{Input: u.InputTokens, Output: u.OutputTokens, CacheRead: u.CacheReadInputTokens,
		CacheCreation: u.CacheCreationInputTokens, Responses: 1, CostUSD: b.countedCost}
	if !b.countedPriced {
		d.Unpriced = 1
	}
	var changed []TimelineItem
	shift := func(i int, sign int) {
		it := b.items[i]
		t := api.TurnTokens{}
		if it.Tokens != nil {
			t = *it.Tokens
		}
		t.Input += int64(sign) * d.Input
		t.Output += int64(sign) * d.Output
		t.CacheRead += int64(sign) * d.CacheRead
		t.CacheCreation += int64(sign) * d.CacheCreation
		t.Responses += sign * d.Responses
		t.Unpriced += sign * d.Unpriced
		t.CostUSD += float64(sign) * d.CostUSD
		it.Tokens = &t
		b.items[i] = it
		changed = append(changed, it)
	}
	if b.countedTurn > 0 {
		shift(b.countedTurn-1, -1)
	}
	shift(b.turn-1, 1)
	b.countedTurn = b.turn
	return changed
}

// maxPatchLines bounds the lines of a tool's patch kept for the timeline
// (and maxToolResultText their bytes).
const maxPatchLines = 2000

// patchOf reads Claude's structured patch of an editing tool's change from
// its toolUseResult, when it names the file the tool edited.
func patchOf(tc *ToolCall, result json.RawMessage) {
	if len(tc.Edits) == 0 || len(result) == 0 || result[0] != '{' {
		return
	}
	var res struct {
		FilePath string `json:"filePath"`
		Patch    []struct {
			OldStart int      `json:"oldStart"`
			OldLines int      `json:"oldLines"`
			NewStart int      `json:"newStart"`
			NewLines int      `json:"newLines"`
			Lines    []string `json:"lines"`
		} `json:"structuredPatch"`
	}
	if claude.DecodeLoose(result, &res) != nil || res.FilePath != tc.Edits[0].Path {
		return
	}
	n, size := 0, 0
	for _, h := range res.Patch {
		if h.OldStart < 0 || h.NewStart < 0 || h.OldLines < 0 || h.NewLines < 0 {
			tc.Patch, tc.PatchCut = nil, false
			return
		}
		hs := 0
		for _, l := range h.Lines {
			hs += len(l)
		}
		if n+len(h.Lines) > maxPatchLines || size+hs > maxToolResultText {
			tc.PatchCut = true
			break
		}
		n, size = n+len(h.Lines), size+hs
		tc.Patch = append(tc.Patch, api.PatchHunk{OldStart: h.OldStart, OldLines: h.OldLines, NewStart: h.NewStart, NewLines: h.NewLines, Lines: h.Lines})
	}
}

// answer attaches a tool result (and toolUseResult, when it is the
// result's) to its call.
func (b *TimelineBuilder) answer(blk Block, result json.RawMessage) (TimelineItem, bool) {
	i, ok := b.open[blk.ToolUseID]
	if !ok {
		return TimelineItem{}, false
	}
	delete(b.open, blk.ToolUseID)
	it := b.items[i]
	tc := *it.Tool
	tc.Done = true
	tc.IsError = blk.IsError
	if blk.Content != nil {
		tc.Result = blk.Content.Text()
	}
	if len(tc.Result) > maxToolResultText {
		tc.Result = clipBytes(tc.Result, maxToolResultText)
		tc.Truncated = true
	}
	if !blk.IsError {
		patchOf(&tc, result)
	}
	it.Tool = &tc
	b.items[i] = it
	return it, true
}

// clipBytes cuts s to at most n bytes without splitting a UTF-8 sequence.
func clipBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// editsOf reads the file changes of the editing tools from their input.
func editsOf(name string, input json.RawMessage) []FileEdit {
	if len(input) == 0 {
		return nil
	}
	type edit struct {
		OldString  string `json:"old_string"`
		NewString  string `json:"new_string"`
		ReplaceAll bool   `json:"replace_all"`
	}
	var in struct {
		FilePath string `json:"file_path"`
		Content  string `json:"content"`
		edit
		Edits []edit `json:"edits"`
	}
	if err := claude.DecodeLoose(input, &in); err != nil || in.FilePath == "" {
		return nil
	}
	switch name {
	case "Edit":
		return []FileEdit{{Path: in.FilePath, Old: in.OldString, New: in.NewString, ReplaceAll: in.ReplaceAll}}
	case "MultiEdit":
		var out []FileEdit
		for _, e := range in.Edits {
			out = append(out, FileEdit{Path: in.FilePath, Old: e.OldString, New: e.NewString, ReplaceAll: e.ReplaceAll})
		}
		return out
	case "Write":
		return []FileEdit{{Path: in.FilePath, New: in.Content}}
	}
	return nil
}
