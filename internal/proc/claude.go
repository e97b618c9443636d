//go:build linux

package proc

import (
	"path"
	"strconv"
	"strings"
)

// FindClaude looks for the Claude Code CLI in the process tree of a tmux
// pane: the pane's own process first (claude started directly as the pane
// command), then its descendants breadth first, so the interactive claude
// wins over any claude it runs as a tool. Zombies are skipped. found is
// false when no claude runs there; err is set only when panePID itself
// does not exist (matching ErrNoProcess) or cannot be read.
func FindClaude(panePID int) (p Proc, found bool, err error) {
	root, err := Stat(panePID)
	if err != nil {
		return Proc{}, false, err
	}
	if root.State != "Z" && IsClaude(root) {
		return root, true, nil
	}
	desc, err := Descendants(panePID)
	if err != nil {
		return Proc{}, false, err
	}
	for _, pid := range desc {
		p, err := Stat(pid)
		if err != nil || p.State == "Z" {
			continue
		}
		if IsClaude(p) {
			return p, true, nil
		}
	}
	return Proc{}, false, nil
}

// IsClaude reports whether p looks like the Claude Code CLI. Observed with
// 2.1.197 (npm package, a Bun-compiled native binary), started as `claude`:
// comm "claude", exe .../@anthropic-ai/claude-code/bin/claude.exe, argv
// ["claude", ...]; started by its real path, comm and argv[0] say
// "claude.exe". The native installer runs ~/.local/share/claude/versions/<v>,
// and older npm installs run `node .../@anthropic-ai/claude-code/cli.js`
// (argv[1] may be the `claude` symlink instead).
//
// The executable decides when it is readable: a shell script or wrapper
// merely named claude is not claude. comm and argv[0] are trusted only when
// exe is unreadable (another user's process).
func IsClaude(p Proc) bool {
	if p.Exe != "" {
		base := path.Base(p.Exe)
		switch {
		case isClaudeName(base):
			return true
		case path.Base(path.Dir(p.Exe)) == "versions" && path.Base(path.Dir(path.Dir(p.Exe))) == "claude":
			return true
		case isJSRuntime(base):
			return claudeScript(p.Cmdline)
		}
		return false
	}
	if isClaudeName(p.Comm) {
		return true
	}
	if len(p.Cmdline) == 0 {
		return false
	}
	arg0 := path.Base(p.Cmdline[0])
	if isClaudeName(arg0) {
		return true
	}
	return isJSRuntime(arg0) && claudeScript(p.Cmdline)
}

func isClaudeName(s string) bool {
	return s == "claude" || s == "claude.exe"
}

func isJSRuntime(base string) bool {
	return base == "node" || base == "nodejs" || base == "bun" ||
		(strings.HasPrefix(base, "node") && strings.Trim(base[len("node"):], "0123456789.") == "")
}

// claudeScript reports whether a JavaScript runtime's argv runs Claude
// Code: the first argument that is not a runtime flag names the script.
func claudeScript(argv []string) bool {
	for _, a := range argv[min(1, len(argv)):] {
		if strings.HasPrefix(a, "-") {
			continue
		}
		base := path.Base(a)
		if isClaudeName(base) {
			return true
		}
		return (base == "cli.js" || base == "cli.mjs") && strings.Contains(a, "claude-code")
	}
	return false
}

// StartTimeMatches reports whether pid is still the process that Claude's
// session file describes. procStart is the file's "procStart" string,
// which is /proc/<pid>/stat field 22 (start time in clock ticks since
// boot) of the claude process that wrote it: a different value means the
// pid was reused. A dead pid or an unparsable procStart gives false.
func StartTimeMatches(pid int, procStart string) bool {
	want, err := strconv.ParseUint(strings.TrimSpace(procStart), 10, 64)
	if err != nil {
		return false
	}
	st, err := readStat(pid)
	return err == nil && st.startTime == want && st.state != "Z"
}

// ClaudeAncestor walks up from pid (itself included) at most depth
// generations and returns the first process that is claude. A hook runs as
// claude -> sh -c -> hook, so a hook finds its claude two levels up.
func ClaudeAncestor(pid, depth int) (Proc, bool) {
	for range depth {
		if pid <= 1 {
			return Proc{}, false
		}
		p, err := Stat(pid)
		if err != nil {
			return Proc{}, false
		}
		if IsClaude(p) {
			return p, true
		}
		pid = p.PPID
	}
	return Proc{}, false
}
