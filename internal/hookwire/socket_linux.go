package hookwire

import "syscall"

// socketCloexec opens a unix stream socket that no child inherits.
func socketCloexec() (int, error) {
	return syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
}
