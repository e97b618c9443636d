package pgtest

import "syscall"

// sysProcAttr runs the server as cred, and kills it if the test process
// dies first: a crashed test leaves no server behind.
func sysProcAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
}
