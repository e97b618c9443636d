package claude

// Fuzz targets. Each package under internal/claude fuzzes its own parsers,
// seeded from the real 2.1.197 fixtures; plain `go test` runs the seeds,
// and
//
//	go test ./internal/claude/transcript -run '^$' -fuzz '^FuzzParseEntry$' -fuzztime 1m
//
// explores one target (one -fuzz pattern at a time; scripts/fuzz.sh runs
// them all).

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzProjectDirName(f *testing.F) {
	f.Add("/home/dev/proj")
	f.Add("/tmp/ünï/😀")
	f.Add("/" + strings.Repeat("a", 250))
	f.Add("\xff\xfe/x")
	f.Fuzz(func(t *testing.T, cwd string) {
		name := ProjectDirName(cwd)
		if len(name) > maxProjectDirName+1+7 {
			t.Fatalf("name too long: %d", len(name))
		}
		for i := 0; i < len(name); i++ {
			if !isAlnum(name[i]) && name[i] != '-' {
				t.Fatalf("bad byte %q in %q", name[i], name)
			}
		}
		if utf8.ValidString(cwd) && len(utf16Units(cwd)) <= maxProjectDirName && len(name) != len(utf16Units(cwd)) {
			t.Fatalf("short name changed length: %q -> %q", cwd, name)
		}
	})
}
