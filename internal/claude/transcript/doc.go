// Package transcript reads Claude Code's conversation transcripts, the
// JSONL files under ~/.claude/projects (checked against 2.1.197): one
// Entry per line (ParseEntry), the status signals a line carries
// (Signals), a file followed as it grows (Tailer), the state of the last
// turn (LastTurnState), token totals (UsageTotals), the conversation as
// the UI shows it (TimelineBuilder), the subagents' own transcripts
// (Subagents), and the resumable sessions of a folder (ListResumable).
//
// No state is kept between calls except in the values callers hold
// (Tailer, UsageTotals, TimelineBuilder, Subagents). Every reader has a size limit,
// and a bad line is an error or a counted, skipped line, never a panic; the
// parsers are fuzzed (fuzz_test.go). The transcripts are read-only to
// corral.
package transcript
