package fetch

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// renameNoReplace renames with RENAME_NOREPLACE, falling back to a hard link
// on filesystems that do not support the flag.
func renameNoReplace(fd int, tmp, name string) error {
	err := unix.Renameat2(fd, tmp, fd, name, unix.RENAME_NOREPLACE)
	switch err {
	case nil:
		return nil
	case unix.EEXIST:
		return os.ErrExist
	case unix.EINVAL, unix.ENOSYS, unix.EOPNOTSUPP:
		return linkNoReplace(fd, tmp, name)
	}
	return err
}

// fdPath returns the path the kernel has for an open file, if /proc tells.
func fdPath(f *os.File) (string, bool) {
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	if err != nil || len(p) == 0 || p[0] != '/' {
		return "", false
	}
	return p, true
}
