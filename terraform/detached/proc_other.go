//go:build !linux

package detached

import (
	"errors"
	"syscall"
)

// Supported: elsewhere terraform is started directly, as terraform-exec does, and dies with
// the controller.
const Supported = false

func attr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true}
}

// ProcessStart cannot tell a process's start time here.
func ProcessStart(int) (uint64, error) {
	return 0, errors.New("process start times are known only on Linux")
}
