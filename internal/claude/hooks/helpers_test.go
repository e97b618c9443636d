package hooks

import (
	"path/filepath"
	"testing"

	"github.com/corral-dev/corral/internal/testkit/testio"
)

// fixtureDir holds the real Claude Code 2.1.197 recordings.
const fixtureDir = "../../../testdata/claude-code-2.1.197"

// fixtureLines returns the non-empty lines of a JSONL fixture.
func fixtureLines(t testing.TB, name string) [][]byte {
	t.Helper()
	return testio.Lines(t, filepath.Join(fixtureDir, name))
}

var writeFile = testio.WriteFile
