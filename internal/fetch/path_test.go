package fetch

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pathTree makes a directory to check paths against, and a directory
// outside it, with the symlinks of interest:
//
//	root/file.txt, root/sub/inner.txt
//	root/in-link -> sub           root/abs-in-link -> <root>/sub
//	root/out-link -> ../outside   root/abs-out-link -> <outside>
//	root/sub/up-out -> ../../outside
//	root/file-link -> file.txt    root/file-out -> <outside>/secret
//	root/dangling -> nowhere      root/loop -> loop
func pathTree(t testing.TB) (root, outside string) {
	t.Helper()
	base := t.TempDir()
	base, err := filepath.EvalSymlinks(base)
	if err != nil {
		t.Fatal(err)
	}
	root = filepath.Join(base, "root")
	outside = filepath.Join(base, "outside")
	for _, d := range []string{root, outside, filepath.Join(root, "sub")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(root, "file.txt"), filepath.Join(root, "sub", "inner.txt"), filepath.Join(outside, "secret")} {
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"in-link":      "sub",
		"abs-in-link":  filepath.Join(root, "sub"),
		"out-link":     "../outside",
		"abs-out-link": outside,
		"sub/up-out":   "../../outside",
		"file-link":    "file.txt",
		"file-out":     filepath.Join(outside, "secret"),
		"dangling":     "nowhere",
		"loop":         "loop",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	return root, outside
}

func TestCheckPath(t *testing.T) {
	root, _ := pathTree(t)
	ok := map[string]string{
		"new.txt":                "new.txt",
		"file.txt":               "file.txt", // exists: that is Download's business
		"sub/inner.txt":          "sub/inner.txt",
		"sub/new.txt":            "sub/new.txt",
		"new/dir/a.txt":          "new/dir/a.txt",
		"a/../b.txt":             "b.txt",
		strings.Repeat("n", 255): strings.Repeat("n", 255),
		"./sub//x.txt":           "sub/x.txt",
		"in-link/x":              "in-link/x",
		"abs-in-link/x":          "abs-in-link/x",
		"file-link":              "file-link",
		"sub/../in-link/x.bin":   "in-link/x.bin",
		"名前 with spaces.txt":     "名前 with spaces.txt",
		"..foo":                  "..foo",
	}
	for rel, want := range ok {
		got, err := checkPath(root, rel, nil)
		if err != nil || got != want {
			t.Errorf("checkPath(%q) = %q, %v; want %q", rel, got, err, want)
		}
	}
	bad := map[string]error{
		"":                                ErrBadPath,
		"/etc/passwd":                     ErrBadPath,
		strings.Repeat("n", 256):          ErrBadPath,
		"sub/" + strings.Repeat("n", 256): ErrBadPath,
		"a\x00b":                          ErrBadPath,
		"a\nb":                            ErrBadPath,
		"a\x7fb":                          ErrBadPath,
		"a\u0085b":                        ErrBadPath,
		"bad\xffutf8":                     ErrBadPath,
		".":                               ErrBadPath,
		"sub":                             ErrBadPath,
		"sub/":                            ErrBadPath,
		"a/..":                            ErrBadPath,
		"new/.":                           ErrBadPath,
		"in-link":                         ErrBadPath, // a symlink to a directory
		"file.txt/x":                      ErrBadPath,
		strings.Repeat("a/", 3000) + "x":  ErrBadPath,
		"..":                              ErrEscape,
		"../x":                            ErrEscape,
		"a/../../x":                       ErrEscape,
		"sub/../../x":                     ErrEscape,
		"out-link/x":                      ErrEscape,
		"out-link":                        ErrEscape,
		"abs-out-link/x":                  ErrEscape,
		"sub/up-out/x":                    ErrEscape,
		"in-link/up-out/x":                ErrEscape,
		"file-out":                        ErrEscape,
		"dangling/x":                      ErrEscape,
		"dangling":                        ErrEscape,
		"loop/x":                          ErrEscape,
	}
	for rel, want := range bad {
		got, err := checkPath(root, rel, nil)
		if !errors.Is(err, want) {
			t.Errorf("checkPath(%q) = %q, %v; want %v", shorten(rel), got, err, want)
		}
	}
	// Nothing was created by all that.
	if _, err := os.Lstat(filepath.Join(root, "new")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("checkPath without created made a directory: %v", err)
	}
}

func TestCheckPathCreates(t *testing.T) {
	root, _ := pathTree(t)
	var created []string
	got, err := checkPath(root, "in-link/a/b/c.txt", &created)
	if err != nil || got != "in-link/a/b/c.txt" {
		t.Fatalf("checkPath = %q, %v", got, err)
	}
	want := []string{filepath.Join(root, "sub", "a"), filepath.Join(root, "sub", "a", "b")}
	if strings.Join(created, ",") != strings.Join(want, ",") {
		t.Fatalf("created %v, want %v", created, want)
	}
	// An escape is refused before anything is created past it.
	created = nil
	if _, err := checkPath(root, "new2/../out-link/a/x", &created); !errors.Is(err, ErrEscape) {
		t.Fatalf("err = %v, want ErrEscape", err)
	}
	if len(created) != 0 {
		t.Fatalf("created %v", created)
	}
}

// FuzzCheckPath: for any rel, checkPath either fails or names a place whose
// existing part resolves inside the directory, and creates nothing.
func FuzzCheckPath(f *testing.F) {
	root, _ := pathTree(f)
	for _, s := range []string{"a", "../x", "a/../../x", "out-link/x", "in-link/x", "abs-out-link/y", "/etc/passwd",
		"a\x00b", "", ".", "sub/", "dangling/x", "file.txt/x", "sub/up-out/z", "in-link/../../outside/secret", "file-out", "loop/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rel string) {
		clean, err := checkPath(root, rel, nil)
		if err != nil {
			if !errors.Is(err, ErrBadPath) && !errors.Is(err, ErrEscape) {
				// Only an unreadable directory could give another error; there is none here.
				t.Fatalf("checkPath(%q): unexpected kind of error %v", rel, err)
			}
			return
		}
		if !filepath.IsLocal(clean) {
			t.Fatalf("checkPath(%q) = %q: not local", rel, clean)
		}
		full := filepath.Join(root, clean)
		if !within(root, full) {
			t.Fatalf("checkPath(%q) = %q: outside lexically", rel, clean)
		}
		// The deepest existing prefix must resolve inside root.
		p := full
		for {
			if _, err := os.Lstat(p); err == nil {
				break
			}
			p = filepath.Dir(p)
		}
		r, err := filepath.EvalSymlinks(p)
		if err != nil {
			t.Fatalf("checkPath(%q) = %q, but %s does not resolve: %v", rel, clean, p, err)
		}
		if !within(root, r) {
			t.Fatalf("checkPath(%q) = %q, which resolves to %s outside %s", rel, clean, r, root)
		}
		if fi, err := os.Stat(full); err == nil && fi.IsDir() {
			t.Fatalf("checkPath(%q) = %q, a directory", rel, clean)
		}
		ents, err := os.ReadDir(root)
		if err != nil || len(ents) != 10 {
			t.Fatalf("the tree changed: %d entries, %v", len(ents), err)
		}
	})
}
