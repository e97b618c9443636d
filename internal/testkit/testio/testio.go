// Package testio holds small helpers that corral's tests share: short
// temporary directories, a buffer for logs written from several
// goroutines, and reading and writing fixture files. It is for test code only.
package testio

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TempDir is a temporary directory directly under the system's, removed
// when the test ends. It is short, because unix socket paths must stay
// under about 100 bytes (t.TempDir's names are long), and resolved
// through symlinks, so that paths compare equal to what processes report.
func TempDir(t testing.TB, prefix string) string {
	t.Helper()
	d, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := filepath.EvalSymlinks(d); err == nil {
		d = r
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// SyncBuffer is a buffer that goroutines may write concurrently, such as
// a logger and a process's output, while the test reads it.
type SyncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns everything written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// ReadFile is the file's content; a missing file fails the test.
func ReadFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read fixture: %v", err)
	}
	return b
}

// Lines are the non-empty lines of a JSONL file, without their newlines.
func Lines(t testing.TB, path string) [][]byte {
	t.Helper()
	var out [][]byte
	for l := range bytes.Lines(ReadFile(t, path)) {
		if l = bytes.TrimRight(l, "\n"); len(l) > 0 {
			out = append(out, l)
		}
	}
	return out
}

// WriteFile writes data to path, making its directory first.
func WriteFile(t testing.TB, path string, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
