//go:build !linux

package terraform

import (
	"syscall"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// detachSupported: elsewhere terraform is started directly, as terraform-exec does, and dies with
// the controller.
const detachSupported = false

func detachedAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true}
}

func processStart(int) (uint64, error) {
	return 0, errors.New("process start times are known only on Linux")
}
