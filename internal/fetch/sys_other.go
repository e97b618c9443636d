//go:build unix && !linux

package fetch

import "os"

// renameNoReplace: without renameat2, a hard link does not replace either.
func renameNoReplace(fd int, tmp, name string) error {
	return linkNoReplace(fd, tmp, name)
}

// fdPath: no portable way to ask; openDir relies on its check before the
// open.
func fdPath(f *os.File) (string, bool) { return "", false }
