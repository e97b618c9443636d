package claude

import (
	"fmt"
	"os"
	"syscall"
)

// openRegular opens a file of Claude's for reading without ever blocking:
// a path from a hook payload is untrusted, and opening a FIFO (or a device)
// blocks until a writer comes. O_NONBLOCK makes that open return at once;
// fstat then refuses anything but a regular file.
func openRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	return f, nil
}
