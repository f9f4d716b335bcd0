package terraform

import (
	"context"
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

	ctrl "sigs.k8s.io/controller-runtime"
)

// A terraform process started by terraform-exec dies with the controller (terraform-exec gives it
// a parent-death signal) and would hit a broken pipe writing its output if it did not, so a
// controller killed with SIGKILL cut creations off midway: the object was made, terraform never
// recorded it, and the next run made it again. Runs in process mode therefore start terraform
// through a shim, the controller's own executable started with envDetach set: terraform-exec
// starts, signals and waits for the shim as it would for terraform, and the shim starts terraform
// detached from it (a session of its own, no parent-death signal, output to files) and relays
// its output and exit status. When the controller and the shim die, terraform finishes, writing
// its state file, and the next run on that work directory waits for it before adopting that
// state (Runner.recover).

const (
	// envDetach, set in the environment of the controller's own executable, makes that process
	// the shim: it runs the terraform binary the variable names, detached. The shim removes it
	// from terraform's environment.
	envDetach = "MODKIND_DETACHED_TERRAFORM"

	// dirDetached, inside a run's work directory, holds one record per detached terraform
	// (<shim pid>.json) and the files its output goes to (<shim pid>.stdout, .stderr).
	dirDetached = ".modkind-detached"

	// detachedPoll is how often the shim relays new output and a waiter checks a survivor.
	detachedPoll = 50 * time.Millisecond

	errWaitDetached = "gave up waiting for terraform left running by a previous controller"
	errShimStart    = "modkind: cannot start terraform"
)

// The shim is recognised as the process starts, before any command line is parsed, so that every
// executable that runs terraform through this package can serve as its own shim: modkind, and the
// test binaries that run modkind's controllers in process.
func init() {
	if bin := os.Getenv(envDetach); bin != "" {
		os.Exit(runDetached(bin, os.Args[1:], os.Stdout, os.Stderr))
	}
}

var (
	shimOnce sync.Once
	shimExe  string
)

// shimPath is the executable to start terraform through: the controller's own executable when
// runs can be detached on this system, else "" and terraform is started directly.
func shimPath() string {
	shimOnce.Do(func() {
		if !detachSupported {
			return
		}
		exe, err := os.Executable()
		if err != nil {
			return
		}
		shimExe = exe
	})
	return shimExe
}

// detachedExec returns the executable terraform-exec is to start for binary and sets env so that
// it runs binary detached, when this system can.
func detachedExec(binary string, env map[string]string) string {
	shim := shimPath()
	if shim == "" {
		// Nobody else may choose what the shim would run.
		delete(env, envDetach)
		return binary
	}
	env[envDetach] = binary
	return shim
}

// detachedRecord is what the shim records about the terraform it started, so that a later run can
// tell whether that very process still runs.
type detachedRecord struct {
	PID int `json:"pid"`
	// Start is the process's start time as the system counts it (clock ticks since boot on
	// Linux), so that a reused pid is not mistaken for the terraform recorded.
	Start uint64 `json:"start"`
}

// runDetached runs binary with args, detached from this process, in the current directory (the
// run's work directory), relays its output to stdout and stderr, and returns its exit code.
// SIGINT and SIGTERM are passed on to terraform, so that cancelling a run interrupts terraform
// as before; a SIGKILL of the shim (the controller dying) does not reach it.
func runDetached(binary string, args []string, stdout, stderr io.Writer) int {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)

	dir := dirDetached
	if err := os.MkdirAll(dir, 0o700); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", errShimStart, err)
		return 1
	}
	base := filepath.Join(dir, strconv.Itoa(os.Getpid()))
	outFile, errFile := base+".stdout", base+".stderr"
	out, err := os.OpenFile(outFile, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", errShimStart, err)
		return 1
	}
	errOut, err := os.OpenFile(errFile, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		_ = out.Close()
		fmt.Fprintf(stderr, "%s: %v\n", errShimStart, err)
		return 1
	}

	cmd := exec.Command(binary, args...)
	cmd.Env = withoutEnv(os.Environ(), envDetach)
	// Files, not pipes: terraform must be able to write its output after the shim is gone.
	cmd.Stdout, cmd.Stderr = out, errOut
	// The shim's own stdin, handed on as it is, so that an apply that asks before it changes
	// anything reads the controller's answer. The controller gone, terraform reads the end of
	// it and applies nothing it was not told to.
	cmd.Stdin = os.Stdin
	cmd.SysProcAttr = detachedAttr()
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
	if start, err := processStart(cmd.Process.Pid); err == nil {
		// Written whole or not at all: a torn record would hide a live terraform.
		b, _ := json.Marshal(detachedRecord{PID: cmd.Process.Pid, Start: start})
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
	t := time.NewTicker(detachedPoll)
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

// waitDetached waits until no terraform recorded in the work directory dir runs any more: one
// left running by a controller that died (or that gave up waiting for it) is still writing its
// state, which must not be touched before it has finished. Records of terraform processes that
// have ended are removed.
func waitDetached(ctx context.Context, dir string) error {
	records, err := filepath.Glob(filepath.Join(dir, dirDetached, "*.json"))
	if err != nil {
		return err
	}
	for _, p := range records {
		if err := waitRecorded(ctx, p); err != nil {
			return err
		}
		base := strings.TrimSuffix(p, ".json")
		for _, f := range []string{p, base + ".stdout", base + ".stderr"} {
			if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
				return err
			}
		}
	}
	return nil
}

// waitRecorded waits until the terraform recorded in the file at path has ended.
func waitRecorded(ctx context.Context, path string) error {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil // Its shim removed it: that terraform has ended.
	}
	if err != nil {
		return err
	}
	var rec detachedRecord
	if err := json.Unmarshal(b, &rec); err != nil || rec.PID <= 0 {
		return nil //nolint:nilerr // Records are renamed into place whole; this one is no record.
	}
	logged := false
	t := time.NewTicker(detachedPoll)
	defer t.Stop()
	for {
		start, err := processStart(rec.PID)
		if err != nil || start != rec.Start {
			// Gone, a zombie, or its pid reused by another process.
			return nil
		}
		if !logged {
			ctrl.LoggerFrom(ctx).Info("waiting for terraform left running by a previous controller", "pid", rec.PID, "dir", filepath.Dir(filepath.Dir(path)))
			logged = true
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}
