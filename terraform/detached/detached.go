// Package detached is the shim through which modkind starts the terraform calls that change
// state, so that they outlive a controller killed meanwhile. It imports nothing but the standard
// library, so that the shim, the controller's own executable started with Env set, exits before
// the controller's heavier packages initialize: every apply starts one.
package detached

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

const (
	// Env, set in the environment of the controller's own executable, makes that process the
	// shim: it runs the terraform binary the variable names, detached. The shim removes it from
	// terraform's environment.
	Env = "MODKIND_DETACHED_TERRAFORM"

	// Dir, inside a run's work directory, holds one record per detached terraform
	// (<shim pid>.json) and the files its output goes to (<shim pid>.stdout, .stderr).
	Dir = ".modkind-detached"

	// Poll is how often the shim relays new output and a waiter checks a survivor.
	Poll = 50 * time.Millisecond

	errShimStart = "modkind: cannot start terraform"
)

// The shim is recognised as the process starts, before any command line is parsed, so that every
// executable that runs terraform through modkind can serve as its own shim: modkind, and the test
// binaries that run modkind's controllers in process.
func init() {
	if bin := os.Getenv(Env); bin != "" {
		os.Exit(Run(bin, os.Args[1:], os.Stdout, os.Stderr))
	}
}

// Record is what the shim records about the terraform it started, so that a later run can
// tell whether that very process still runs.
type Record struct {
	PID int `json:"pid"`
	// Start is the process's start time as the system counts it (clock ticks since boot on
	// Linux), so that a reused pid is not mistaken for the terraform recorded.
	Start uint64 `json:"start"`
}

// Run runs binary with args, detached from this process, in the current directory (the
// run's work directory), relays its output to stdout and stderr, and returns its exit code.
// SIGINT and SIGTERM are passed on to terraform, so that cancelling a run interrupts terraform
// as before; a SIGKILL of the shim (the controller dying) does not reach it.
func Run(binary string, args []string, stdout, stderr io.Writer) int {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)

	base := filepath.Join(Dir, strconv.Itoa(os.Getpid()))
	outFile, errFile := base+".stdout", base+".stderr"
	out, errOut, err := outputFiles(outFile, errFile)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", errShimStart, err)
		return 1
	}

	cmd := exec.Command(binary, args...)
	cmd.Env = withoutEnv(os.Environ(), Env)
	// Files, not pipes: terraform must be able to write its output after the shim is gone.
	cmd.Stdout, cmd.Stderr = out, errOut
	// The shim's own stdin, handed on as it is, so that an apply that asks before it changes
	// anything reads the controller's answer. The controller gone, terraform reads the end of
	// it and applies nothing it was not told to.
	cmd.Stdin = os.Stdin
	cmd.SysProcAttr = attr()
	startErr := cmd.Start()
	_ = out.Close()
	_ = errOut.Close()
	if startErr != nil {
		_ = os.Remove(outFile)
		_ = os.Remove(errFile)
		fmt.Fprintf(stderr, "%s: %v\n", errShimStart, startErr)
		return 127
	}
	recordFile := base + ".json"
	if start, err := ProcessStart(cmd.Process.Pid); err == nil {
		// Written whole or not at all: a torn record would hide a live terraform.
		b, _ := json.Marshal(Record{PID: cmd.Process.Pid, Start: start})
		if err := os.WriteFile(recordFile+".tmp", b, 0o600); err == nil {
			_ = os.Rename(recordFile+".tmp", recordFile)
		}
	}

	exited := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				_ = cmd.Process.Signal(s)
			case <-exited:
				return
			}
		}
	}()
	var relays sync.WaitGroup
	for _, r := range []struct {
		path string
		to   io.Writer
	}{{outFile, stdout}, {errFile, stderr}} {
		relays.Add(1)
		go func() {
			defer relays.Done()
			relay(r.path, r.to, exited)
		}()
	}
	waitErr := cmd.Wait()
	close(exited)
	relays.Wait()
	for _, f := range []string{recordFile, outFile, errFile} {
		_ = os.Remove(f)
	}
	if waitErr != nil && cmd.ProcessState == nil {
		fmt.Fprintf(stderr, "%s: %v\n", errShimStart, waitErr)
		return 1
	}
	return exitCode(cmd.ProcessState)
}

// outputFiles creates, in Dir, the files terraform writes its output to: files, which outlive the
// shim, not pipes.
func outputFiles(outFile, errFile string) (out, errOut *os.File, err error) {
	if err := os.MkdirAll(Dir, 0o700); err != nil {
		return nil, nil, err
	}
	if out, err = os.OpenFile(outFile, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600); err != nil {
		return nil, nil, err
	}
	if errOut, err = os.OpenFile(errFile, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600); err != nil {
		_ = out.Close()
		return nil, nil, err
	}
	return out, errOut, nil
}

// exitCode is the exit code a process ended with; a process killed by a signal is reported as the
// shim killed by the same signal, as terraform-exec would have seen terraform.
func exitCode(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		signal.Reset(ws.Signal())
		_ = syscall.Kill(os.Getpid(), ws.Signal())
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// relay copies what is written to the file at path to w until done is closed and the file holds
// nothing more.
func relay(path string, w io.Writer, done <-chan struct{}) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	t := time.NewTicker(Poll)
	defer t.Stop()
	buf := make([]byte, 32*1024)
	for {
		n, err := f.Read(buf)
		if n > 0 {
			_, _ = w.Write(buf[:n])
			continue
		}
		if err != nil && err != io.EOF {
			return
		}
		select {
		case <-done:
			// Everything terraform wrote is in the file now; copy the rest.
			_, _ = io.CopyBuffer(w, f, buf)
			return
		case <-t.C:
		}
	}
}

func withoutEnv(env []string, name string) []string {
	kept := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			kept = append(kept, kv)
		}
	}
	return kept
}
