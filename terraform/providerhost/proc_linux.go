package providerhost

import "syscall"

// childAttr has the kernel stop the provider when its host dies: nothing else could stop it.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}

// hostAttr puts a host in a session of its own: a signal for the controller's process group (a
// terminal's Ctrl-C) does not reach it, and it outlives the controller while terraform uses it.
func hostAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true}
}
