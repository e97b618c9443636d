package screen

import (
	"os"
	"path/filepath"
	"testing"
)

// fixtureDir holds the real Claude Code 2.1.197 recordings.
const fixtureDir = "../../../testdata/claude-code-2.1.197"

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir, name))
	if err != nil {
		t.Fatalf("read fixture: %v", err)
	}
	return b
}
