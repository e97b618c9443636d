// Package atomicfile replaces a file's content all at once: through a
// synced temporary file in the same directory renamed into place, so a
// reader (or a crash) sees the old content or the new, never a mix.
package atomicfile

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Write writes data to path through a temporary file in the same
// directory, synced and renamed into place, so readers see the old or the
// new content, never a mix. The file gets perm exactly (not masked).
func Write(path string, data []byte, perm fs.FileMode) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Chmod(perm); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	// Make the rename itself durable; not all systems allow syncing a
	// directory, and the data is already safe, so failure is ignored.
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// WriteIfChanged writes data atomically unless path already holds exactly
// data with mode perm; it reports whether it wrote.
func WriteIfChanged(path string, data []byte, perm fs.FileMode) (bool, error) {
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && fi.Size() == int64(len(data)) && fi.Mode().Perm() == perm.Perm() {
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
			return false, nil
		}
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	if err := Write(path, data, perm); err != nil {
		return false, err
	}
	return true, nil
}
