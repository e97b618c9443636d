package fetch

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// maxPathLen bounds rel; the kernel would refuse longer paths anyway.
const maxPathLen = 4096

// maxNameLen bounds each component (NAME_MAX on Linux and the BSDs).
const maxNameLen = 255

// resolveDir makes dir absolute and resolves its symlinks: the directory
// every target must stay in.
func resolveDir(dir string) (string, error) {
	if dir == "" {
		return "", newErr(ErrBadPath, nil, "no directory")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("fetch: %w", err)
	}
	r, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("fetch: directory: %w", err)
	}
	fi, err := os.Stat(r)
	if err != nil {
		return "", fmt.Errorf("fetch: directory: %w", err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("fetch: %s is not a directory", dir)
	}
	return r, nil
}

// within reports whether p is root or lies under it (both clean and absolute).
func within(root, p string) bool {
	r, err := filepath.Rel(root, p)
	return err == nil && (r == "." || filepath.IsLocal(r))
}

// checkPath checks rel against rdir (absolute, symlinks resolved) and returns
// it cleaned. It refuses an empty or absolute rel, control characters, a
// path that leaves rdir lexically, names a directory, or goes through a
// symlink (any component, the last included) that resolves outside rdir or
// not at all. With created non-nil it also creates the missing parent
// directories, checking each step, and appends them to *created; with nil it
// changes nothing.
func checkPath(rdir, rel string, created *[]string) (string, error) {
	if rel == "" {
		return "", newErr(ErrBadPath, nil, "empty path")
	}
	if len(rel) > maxPathLen {
		return "", newErr(ErrBadPath, nil, "path longer than %d bytes", maxPathLen)
	}
	if !utf8.ValidString(rel) {
		return "", newErr(ErrBadPath, nil, "path %q is not UTF-8", rel)
	}
	for _, r := range rel {
		if unicode.IsControl(r) { // NUL, C0, DEL, C1
			return "", newErr(ErrBadPath, nil, "path %q has a control character", rel)
		}
	}
	if filepath.IsAbs(rel) || strings.HasPrefix(rel, "/") {
		return "", newErr(ErrBadPath, nil, "path %q is absolute; give it relative to the session's directory", rel)
	}
	clean := filepath.Clean(rel)
	if !filepath.IsLocal(clean) {
		return "", newErr(ErrEscape, nil, "path %q leaves the directory", rel)
	}
	last := rel[strings.LastIndexByte(rel, '/')+1:]
	if clean == "." || last == "" || last == "." || last == ".." {
		return "", newErr(ErrBadPath, nil, "path %q names a directory", rel)
	}

	parts := strings.Split(clean, string(filepath.Separator))
	cur := rdir // resolved, under rdir
	for _, p := range parts {
		if len(p) > maxNameLen {
			return "", newErr(ErrBadPath, nil, "a name in path %q is longer than %d bytes", shorten(rel), maxNameLen)
		}
	}
	for i, p := range parts {
		final := i == len(parts)-1
		next := filepath.Join(cur, p)
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			if final || created == nil {
				return clean, nil // the rest does not exist: nothing to follow
			}
			if err := os.Mkdir(next, 0o755); err != nil {
				return "", fmt.Errorf("fetch: creating %s: %w", next, err)
			}
			*created = append(*created, next)
			// Look again: whatever is there now is checked like any other.
			if fi, err = os.Lstat(next); err != nil {
				return "", fmt.Errorf("fetch: %w", err)
			}
		} else if errors.Is(err, syscall.ENAMETOOLONG) {
			return "", newErr(ErrBadPath, err, "path %q is too long", shorten(rel))
		} else if err != nil {
			return "", fmt.Errorf("fetch: %w", err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			sub := strings.Join(parts[:i+1], "/")
			r, err := filepath.EvalSymlinks(next)
			if err != nil {
				return "", newErr(ErrEscape, nil, "%s is a symlink that does not resolve", sub)
			}
			if !within(rdir, r) {
				return "", newErr(ErrEscape, nil, "%s is a symlink that leads out of the directory", sub)
			}
			if fi, err = os.Stat(r); err != nil {
				return "", fmt.Errorf("fetch: %w", err)
			}
			if final {
				// The rename replaces the link itself, not what it points to.
				if fi.IsDir() {
					return "", newErr(ErrBadPath, nil, "path %q names a directory", rel)
				}
				return clean, nil
			}
			next = r
		}
		if final {
			if fi.IsDir() {
				return "", newErr(ErrBadPath, nil, "path %q names a directory", rel)
			}
			return clean, nil
		}
		if !fi.IsDir() {
			return "", newErr(ErrBadPath, nil, "%s is not a directory", strings.Join(parts[:i+1], "/"))
		}
		cur = next
	}
	return clean, nil
}

// openDir opens the target's parent directory and makes sure, where the
// system can tell, that what was opened is still inside rdir: a component
// swapped for a symlink after checkPath is caught here.
func openDir(rdir, parent string) (*os.File, error) {
	real, err := filepath.EvalSymlinks(parent)
	if err != nil {
		return nil, fmt.Errorf("fetch: %w", err)
	}
	if !within(rdir, real) {
		return nil, newErr(ErrEscape, nil, "the target directory leads out of the directory")
	}
	f, err := os.OpenFile(real, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, fmt.Errorf("fetch: %w", err)
	}
	if got, ok := fdPath(f); ok && !within(rdir, got) {
		f.Close()
		return nil, newErr(ErrEscape, nil, "the target directory leads out of the directory")
	}
	return f, nil
}

// createTemp creates a new temporary file in dir.
func createTemp(dir *os.File) (*os.File, string, error) {
	for range 5 {
		var b [8]byte
		_, _ = rand.Read(b[:])
		name := ".corral-download-" + hex.EncodeToString(b[:]) + ".tmp"
		fd, err := unix.Openat(int(dir.Fd()), name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
		if err == unix.EEXIST {
			continue
		}
		if err != nil {
			return nil, "", err
		}
		return os.NewFile(uintptr(fd), filepath.Join(dir.Name(), name)), name, nil
	}
	return nil, "", errors.New("no free temporary name")
}

func removeAt(dir *os.File, name string) {
	_ = unix.Unlinkat(int(dir.Fd()), name, 0)
}

// renameAt moves tmp to name in dir; without overwrite an existing name is
// not replaced and the error wraps os.ErrExist.
func renameAt(dir *os.File, tmp, name string, overwrite bool) error {
	fd := int(dir.Fd())
	if overwrite {
		return unix.Renameat(fd, tmp, fd, name)
	}
	return renameNoReplace(fd, tmp, name)
}

// linkNoReplace is the portable no-replace rename: a hard link fails when
// the name exists; then the temporary name goes.
func linkNoReplace(fd int, tmp, name string) error {
	if err := unix.Linkat(fd, tmp, fd, name, 0); err != nil {
		if err == unix.EEXIST {
			return os.ErrExist
		}
		return err
	}
	_ = unix.Unlinkat(fd, tmp, 0) // the file is in place; a stray temporary name is harmless
	return nil
}
