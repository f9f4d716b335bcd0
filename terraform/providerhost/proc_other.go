//go:build !linux

package providerhost

import "syscall"

func childAttr() *syscall.SysProcAttr { return nil }

func hostAttr() *syscall.SysProcAttr { return nil }
