package detached

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// Supported: Linux tells a process's start time, which a pid alone does not identify.
const Supported = true

const errNotRunning = "process is not running"

// attr puts terraform in a session of its own, without a parent-death signal, so that
// neither the shim's death nor a signal to the controller's process group reaches it.
func attr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true}
}

// ProcessStart returns when the running process pid started, in clock ticks since boot, or an
// error when no such process runs (a zombie has ended, even before its parent reaps it).
func ProcessStart(pid int) (uint64, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, err
	}
	// The command name, in parentheses, may hold spaces and parentheses: fields are counted
	// from the last ')'. State is field 3 and starttime field 22 of proc(5).
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New(errNotRunning)
	}
	fields := bytes.Fields(b[i+1:])
	if len(fields) < 20 {
		return 0, errors.New(errNotRunning)
	}
	if s := fields[0]; len(s) != 1 || s[0] == 'Z' || s[0] == 'X' || s[0] == 'x' {
		return 0, errors.New(errNotRunning)
	}
	return strconv.ParseUint(string(fields[19]), 10, 64)
}
