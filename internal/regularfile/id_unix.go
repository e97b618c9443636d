//go:build unix

package regularfile

import (
	"io/fs"
	"syscall"
)

// ID returns the device and inode of a file, to notice a file replaced
// under the same name.
func ID(fi fs.FileInfo) (dev, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), uint64(st.Ino) //nolint:unconvert // Dev is int32 on darwin
	}
	return 0, 0
}
