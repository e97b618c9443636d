// Package regularfile opens and reads files whose path comes from someone
// else (a hook payload, a directory listing) without ever blocking on a
// FIFO or a device, and within a size limit.
package regularfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// ErrTooLarge is wrapped by ReadFile's error about a file over its limit.
var ErrTooLarge = errors.New("input too large")

// Open opens a file for reading without ever blocking: a path from a hook
// payload is untrusted, and opening a FIFO (or a device) blocks until a
// writer comes. O_NONBLOCK makes that open return at once;
// fstat then refuses anything but a regular file.
func Open(path string) (*os.File, error) {
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

// ReadFile reads at most limit bytes of path and fails with ErrTooLarge
// beyond that, so a huge or endless file (a FIFO, /dev/zero) cannot be
// slurped.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: %w (over %d bytes)", path, ErrTooLarge, limit)
	}
	return b, nil
}
