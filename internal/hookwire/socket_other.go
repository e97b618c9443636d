//go:build !linux

package hookwire

import "syscall"

// socketCloexec opens a unix stream socket that no child inherits. Without
// SOCK_CLOEXEC (macOS) the flag comes a moment later; a hook starts no
// program in between.
func socketCloexec() (int, error) {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return -1, err
	}
	syscall.CloseOnExec(fd)
	return fd, nil
}
