// Package proc reads Linux processes through /proc: a process's identity
// (pid, parent, comm, start time, executable, argv), its children, whether
// it is the Claude Code CLI, whether it owns a listening TCP socket, and an
// event-driven notice when it exits.
//
// corral uses it to find the claude process under a tmux pane, to key
// Claude's session files (~/.claude/sessions/<pid>.json) by pid while
// guarding against pid reuse, and to learn at once when claude exits.
// Everything here is read-only and works on processes that are not our
// children. The package builds only on Linux.
package proc
