package fetch

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the server killed if the test binary dies without
// cleaning up.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
