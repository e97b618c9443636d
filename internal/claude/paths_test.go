package claude

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestProjectDirNameMatchesClaude(t *testing.T) {
	// testdata/projectdirs.jsonl comes from running the encoding function
	// of the 2.1.197 binary in node (testdata/projectdirs.js); it covers
	// long paths and characters outside the BMP.
	b, err := os.ReadFile("testdata/projectdirs.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var c [2]string
		if err := json.Unmarshal([]byte(l), &c); err != nil {
			t.Fatal(err)
		}
		if got := ProjectDirName(c[0]); got != c[1] {
			t.Errorf("ProjectDirName(%q) =\n%q\nwant\n%q", c[0], got, c[1])
		}
		n++
	}
	if n < 5 {
		t.Fatalf("only %d cases", n)
	}
}

func TestProjectDirNameHashEdge(t *testing.T) {
	// Math.abs(-2^31) is 2^31 in JavaScript; the hash must not overflow.
	if got := javaHashAbs([]uint16{}); got != 0 {
		t.Fatal(got)
	}
	// "polygenelubricants" hashes to exactly -2^31 with Java's hashCode.
	if got := javaHashAbs(utf16Units("polygenelubricants")); got != 1<<31 {
		t.Fatalf("javaHashAbs = %d", got)
	}
	long := "/" + strings.Repeat("x", 300)
	name := ProjectDirName(long)
	if len(name) <= 201 || name[200] != '-' || strings.Trim(name[201:], "0123456789abcdefghijklmnopqrstuvwxyz") != "" {
		t.Fatalf("long name %q", name)
	}
}

func TestProjectDirs(t *testing.T) {
	home := t.TempDir()
	long := "/" + strings.Repeat("d", 250)
	if got := ProjectDirs(home, long); len(got) != 0 {
		t.Fatalf("no folders yet: %v", got)
	}
	exact := ProjectDir(home, long)
	other := filepath.Join(ProjectsDir(home), ProjectDirName(long)[:200]+"-otherhash")
	unrelated := filepath.Join(ProjectsDir(home), "-home-dev-proj")
	for _, d := range []string{exact, other, unrelated} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	got := ProjectDirs(home, long)
	if len(got) != 2 || got[0] != exact || got[1] != other {
		t.Fatalf("ProjectDirs = %v", got)
	}
	if got := ProjectDirs(home, "/home/dev/proj"); len(got) != 1 || got[0] != unrelated {
		t.Fatalf("short path: %v", got)
	}
}

// ConfigDir must pick the directory Claude itself uses, or the watchers
// read a folder Claude never writes.
func TestConfigDir(t *testing.T) {
	for _, c := range []struct{ env, want string }{
		{"", "/home/dev/.claude"},
		{"/srv/claude-work", "/srv/claude-work"},
		{"/srv/claude-work/", "/srv/claude-work"},
		{"cfg/claude", "/home/dev/cfg/claude"},
	} {
		getenv := func(k string) string {
			if k == "CLAUDE_CONFIG_DIR" {
				return c.env
			}
			return ""
		}
		if got := ConfigDir(getenv, "/home/dev"); got != c.want {
			t.Errorf("CLAUDE_CONFIG_DIR=%q: ConfigDir = %q, want %q", c.env, got, c.want)
		}
	}
}
