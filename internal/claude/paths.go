package claude

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// maxProjectDirName is the length past which Claude 2.1.197 cuts a project
// folder name and appends a hash (its constant is 200).
const maxProjectDirName = 200

// ProjectDirName is the name of the folder under ~/.claude/projects that
// holds the transcripts of sessions started in cwd, computed as Claude
// 2.1.197 does:
//
//	name = cwd with every character other than [A-Za-z0-9] replaced by '-'
//	if len(name) > 200: name = name[:200] + "-" + base36(|javaHash(cwd)|)
//
// Claude works on JavaScript strings, so "character" and "len" count UTF-16
// code units: a character outside the BMP (an emoji) becomes two dashes, and
// the hash is Java's String.hashCode over the UTF-16 units. Bytes that are
// not valid UTF-8 count as U+FFFD, as Node decodes them.
//
// Claude also looks up long names by their 200-character prefix (a build
// using another hash writes another suffix); ProjectDirs does the same.
func ProjectDirName(cwd string) string {
	units := utf16Units(cwd)
	b := make([]byte, 0, len(units))
	for _, u := range units {
		if u < utf8.RuneSelf && isAlnum(byte(u)) {
			b = append(b, byte(u))
		} else {
			b = append(b, '-')
		}
	}
	if len(b) <= maxProjectDirName {
		return string(b)
	}
	return string(b[:maxProjectDirName]) + "-" + strconv.FormatInt(javaHashAbs(units), 36)
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func utf16Units(s string) []uint16 {
	rs := make([]rune, 0, len(s))
	for _, r := range s { // invalid bytes come out as utf8.RuneError, like Node
		rs = append(rs, r)
	}
	return utf16.Encode(rs)
}

// javaHashAbs is Math.abs of the 32-bit hash `h = 31*h + unit | 0`. In
// JavaScript Math.abs(-2**31) is 2**31, so the result is an int64.
func javaHashAbs(units []uint16) int64 {
	var h int32
	for _, u := range units {
		h = h*31 + int32(u)
	}
	v := int64(h)
	if v < 0 {
		v = -v
	}
	return v
}

// ConfigDir is Claude's configuration directory, as Claude itself picks
// it: $CLAUDE_CONFIG_DIR when that is set, else ~/.claude (claude 2.1.197:
// process.env.CLAUDE_CONFIG_DIR ?? join(homedir(), ".claude")). Settings,
// session files and transcripts all live under it, so every path in this
// package derives from the directory this returns. An empty value counts
// as unset. A relative one, which Claude would resolve against each
// session's own working directory, is taken from the home directory:
// corral watches one directory for all sessions. This package never reads
// the environment itself: getenv is passed in.
func ConfigDir(getenv func(string) string, home string) string {
	if d := getenv("CLAUDE_CONFIG_DIR"); d != "" {
		if !filepath.IsAbs(d) {
			d = filepath.Join(home, d)
		}
		return filepath.Clean(d)
	}
	return filepath.Join(home, ".claude")
}

// ProjectsDir is the transcripts folder in Claude's configuration directory
// claudeDir (see ConfigDir): ~/.claude/projects by default.
func ProjectsDir(claudeDir string) string { return filepath.Join(claudeDir, "projects") }

// ProjectDir is the transcript folder for sessions started in cwd.
func ProjectDir(claudeDir, cwd string) string {
	return filepath.Join(ProjectsDir(claudeDir), ProjectDirName(cwd))
}

// TranscriptPath is where Claude writes the transcript of sessionID started
// in cwd. Hooks and the status line carry the real path (transcript_path);
// prefer that when it is known.
func TranscriptPath(claudeDir, cwd, sessionID string) string {
	return filepath.Join(ProjectDir(claudeDir, cwd), sessionID+".jsonl")
}

// ProjectDirs lists the existing transcript folders for cwd, the computed
// one first. For names over 200 characters it adds every folder sharing the
// 200-character prefix, as Claude does, because the hash suffix differs
// between Claude builds.
func ProjectDirs(claudeDir, cwd string) []string {
	var out []string
	want := ProjectDir(claudeDir, cwd)
	if fi, err := os.Stat(want); err == nil && fi.IsDir() {
		out = append(out, want)
	}
	name := ProjectDirName(cwd)
	if len(name) <= maxProjectDirName {
		return out
	}
	prefix := name[:maxProjectDirName] + "-"
	ents, err := os.ReadDir(ProjectsDir(claudeDir))
	if err != nil {
		return out
	}
	for _, e := range ents {
		p := filepath.Join(ProjectsDir(claudeDir), e.Name())
		if e.IsDir() && strings.HasPrefix(e.Name(), prefix) && p != want {
			out = append(out, p)
		}
	}
	return out
}
