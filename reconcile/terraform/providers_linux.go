package terraform

import (
	"os/exec"
	"syscall"
)

// stopWithController has the kernel stop cmd when the controller dies: a provider started for
// a run must not outlive every process that could use or stop it.
func stopWithController(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
