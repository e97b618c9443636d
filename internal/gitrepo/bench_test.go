package gitrepo_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/corral-dev/corral/internal/gitrepo"
)

// benchRepo is a repository of files in folders of 100, with changed of
// them modified and as many new files untracked.
func benchRepo(b *testing.B, files, changed int) (*fixture, gitrepo.Repo) {
	b.Helper()
	f := newFixture(b)
	for i := range files {
		p := filepath.Join(f.dir, fmt.Sprintf("d%03d", i/100), fmt.Sprintf("f%05d.txt", i))
		if i%100 == 0 {
			os.MkdirAll(filepath.Dir(p), 0o755)
		}
		os.WriteFile(p, []byte(lines(20, nil)), 0o644)
	}
	f.git("add", "-A")
	f.git("commit", "-qm", "files")
	for i := range changed {
		os.WriteFile(filepath.Join(f.dir, fmt.Sprintf("d%03d", i/100), fmt.Sprintf("f%05d.txt", i)), []byte(lines(20, map[int]string{10: "changed"})), 0o644)
		os.WriteFile(filepath.Join(f.dir, fmt.Sprintf("new%03d.txt", i)), []byte("new\n"), 0o644)
	}
	return f, f.open()
}

// What a row's refresh costs: one git status.
func BenchmarkSummary(b *testing.B) {
	for _, n := range []int{1000, 20000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			f, r := benchRepo(b, n, 50)
			for b.Loop() {
				if _, err := f.g.Status(ctx(b), r, false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// What the Git panel's status costs: the status and line counts.
func BenchmarkStatusLines(b *testing.B) {
	f, r := benchRepo(b, 20000, 50)
	for b.Loop() {
		if _, err := f.g.Status(ctx(b), r, true); err != nil {
			b.Fatal(err)
		}
	}
}

// The unstaged diff of 50 changed and 50 new files.
func BenchmarkDiff(b *testing.B) {
	f, r := benchRepo(b, 20000, 50)
	for b.Loop() {
		if _, err := f.g.Diff(ctx(b), r, false, ""); err != nil {
			b.Fatal(err)
		}
	}
}
