package transcript

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/corral-dev/corral/internal/testkit/testio"
)

// fixtureDir holds the real Claude Code 2.1.197 recordings.
const fixtureDir = "../../../testdata/claude-code-2.1.197"

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	return testio.ReadFile(t, filepath.Join(fixtureDir, name))
}

// fixtureLines returns the non-empty lines of a JSONL fixture.
func fixtureLines(t testing.TB, name string) [][]byte {
	t.Helper()
	return testio.Lines(t, filepath.Join(fixtureDir, name))
}

func fixtureEntries(t testing.TB) []Entry {
	t.Helper()
	var out []Entry
	for i, l := range fixtureLines(t, "transcript.jsonl") {
		e, err := ParseEntry(l)
		if err != nil {
			t.Fatalf("transcript line %d: %v", i+1, err)
		}
		out = append(out, e)
	}
	return out
}

var writeFile = testio.WriteFile

func appendFile(t testing.TB, path string, data string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
}
