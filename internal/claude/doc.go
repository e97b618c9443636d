// Package claude reads what Claude Code (the `claude` CLI, checked against
// version 2.1.197) writes and sends, and writes the little corral needs to
// hand it: hook payloads, the live-session files in ~/.claude/sessions,
// conversation transcripts (JSONL under ~/.claude/projects), the status-line
// input, the settings file that registers corral's hooks, the list of
// resumable sessions, and what the pane's screen shows: ReadScreen tells
// which dialog is open (or the input box and its draft), and Dialog.Keys
// plans the keys that answer it from that screen alone.
//
// Everything here is pure parsing and small file helpers: no state is kept
// between calls except in the values callers hold (Tailer, UsageTotals,
// TimelineBuilder), and nothing is global. Every reader has a size limit and
// every bad input becomes an error (or a counted, skipped line), never a
// panic. The parsers are fuzzed (see fuzz_test.go).
//
// Claude's files are read-only to corral. The one exception is
// InstallGlobal/UninstallGlobal, which a person runs explicitly
// (`corral hooks install --global`) to edit ~/.claude/settings.json: they
// merge rather than clobber, keep a timestamped backup, and write atomically.
//
// The real artifacts this package is tested against are in
// testdata/claude-code-2.1.197 at the top of the repository; README.md there
// explains each step of the recorded scenario, and flows/ holds a recording
// of every dialog.
package claude
