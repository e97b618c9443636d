// Package claude is what corral's readers of Claude Code's data share, and
// Claude's command line: where Claude keeps things (ConfigDir, the
// transcript folders and paths, computed as claude 2.1.197 does), the
// error of input over a size limit (ErrTooLarge), the lenient decoding
// every one of Claude's formats needs (CheckObject, DecodeLoose,
// FlexString: the formats drift between versions, and one odd field must
// not hide an event), and which arguments of `claude` a request may not
// pass (DangerousArgs).
//
// The readers themselves are its subpackages, each with its own limits
// and fuzz targets: screen (what the pane shows, and the keys that answer
// a dialog), sessionfile (~/.claude/sessions), transcript (the JSONL
// conversations) and hooks (hook payloads, the status line, and the
// settings that register corral's hooks); pricing, which reads nothing,
// prices a response's usage. Nothing here keeps state or
// reads the environment; every bad input is an error, never a panic.
//
// Claude's files are read-only to corral, except the global install of
// hooks.InstallGlobal, which a person runs explicitly. The real artifacts
// these packages are tested against are in testdata/claude-code-2.1.197 at
// the top of the repository; README.md there explains each step of the
// recorded scenario, and flows/ holds a recording of every dialog.
package claude
