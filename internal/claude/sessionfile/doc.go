// Package sessionfile reads Claude Code's live-session files,
// ~/.claude/sessions/<pid>.json (checked against 2.1.197): Claude writes
// one when it starts, rewrites it in place on every status change and
// removes it when it exits. Parse and Read decode one, ReadDir reads them
// all once, and Watch reports every change as it happens (fsnotify). The
// files are read-only to corral.
package sessionfile
