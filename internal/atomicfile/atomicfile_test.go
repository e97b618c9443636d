package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	if err := Write(path, []byte("one"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	fi, _ := os.Stat(path)
	if string(b) != "two" || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%q %v", b, fi.Mode())
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("temp files left: %v", ents)
	}
	if err := Write(filepath.Join(dir, "missing", "f"), []byte("x"), 0o600); err == nil {
		t.Fatal("wrote into a missing directory")
	}

	changed, err := WriteIfChanged(path, []byte("two"), 0o600)
	if err != nil || changed {
		t.Fatalf("same content rewritten: %v %v", changed, err)
	}
	changed, err = WriteIfChanged(path, []byte("two"), 0o644)
	if err != nil || !changed {
		t.Fatalf("mode change not written: %v %v", changed, err)
	}
	changed, err = WriteIfChanged(path, []byte("three"), 0o644)
	if b, _ := os.ReadFile(path); err != nil || !changed || string(b) != "three" {
		t.Fatalf("%v %v %q", changed, err, b)
	}
	changed, err = WriteIfChanged(filepath.Join(dir, "new"), []byte("n"), 0o600)
	if err != nil || !changed {
		t.Fatalf("new file: %v %v", changed, err)
	}
}
