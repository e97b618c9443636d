package transcript

import (
	"bytes"
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

// fixtureLines returns the non-empty lines of a JSONL fixture.
func fixtureLines(t testing.TB, name string) [][]byte {
	t.Helper()
	var out [][]byte
	for l := range bytes.Lines(readFixture(t, name)) {
		l = bytes.TrimRight(l, "\n")
		if len(l) > 0 {
			out = append(out, l)
		}
	}
	return out
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

func writeFile(t testing.TB, path string, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

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
