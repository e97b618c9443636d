// Package pkgdoc checks a convention of the tree: every package says what
// it is for in a package comment ("Package x ..." or, for a main,
// "Command x ..."), in one of its non-test files.
package pkgdoc

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEveryPackageHasADoc(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found at %s: %v", root, err)
	}
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		switch d.Name() {
		case "testdata", "node_modules", ".git", "dist", "bin":
			return filepath.SkipDir
		}
		if strings.HasPrefix(d.Name(), ".") && path != root {
			return filepath.SkipDir
		}
		ents, err := os.ReadDir(path)
		if err != nil {
			return err
		}
		// The package clause of each non-test file, and its doc.
		docs := map[string]bool{}
		for _, e := range ents {
			n := e.Name()
			if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(path, n), nil, parser.ParseComments|parser.PackageClauseOnly)
			if err != nil {
				return err
			}
			name := f.Name.Name
			want := "Package " + name
			if name == "main" {
				want = "Command "
			}
			docs[name] = docs[name] || f.Doc != nil && strings.HasPrefix(f.Doc.Text(), want)
		}
		for name, ok := range docs {
			checked++
			if !ok {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s: package %s has no doc comment (\"Package %s ...\", or \"Command ...\" for a main)", rel, name, name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 20 {
		t.Fatalf("only %d packages found; is the walk right?", checked)
	}
}
