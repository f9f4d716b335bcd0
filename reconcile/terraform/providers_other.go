//go:build !linux

package terraform

import "os/exec"

// stopWithController does nothing where the kernel offers no parent-death signal.
func stopWithController(*exec.Cmd) {}
