package terraform

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/modkind/modkind/terraform/detached"
)

// A terraform process started by terraform-exec dies with the controller (terraform-exec gives it
// a parent-death signal) and would hit a broken pipe writing its output if it did not, so a
// controller killed with SIGKILL cut creations off midway: the object was made, terraform never
// recorded it, and the next run made it again. Runs in process mode therefore start terraform
// through a shim, the controller's own executable started with detached.Env set (package detached): terraform-exec
// starts, signals and waits for the shim as it would for terraform, and the shim starts terraform
// detached from it (a session of its own, no parent-death signal, output to files) and relays
// its output and exit status. When the controller and the shim die, terraform finishes, writing
// its state file, and the next run on that work directory waits for it before adopting that
// state (Harness.recover).

const errWaitDetached = "gave up waiting for terraform left running by a previous controller"

var (
	shimOnce sync.Once
	shimExe  string
)

// shimPath is the executable to start terraform through: the controller's own executable when
// runs can be detached on this system, else "" and terraform is started directly.
func shimPath() string {
	shimOnce.Do(func() {
		if !detached.Supported {
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
		delete(env, detached.Env)
		return binary
	}
	env[detached.Env] = binary
	return shim
}

// waitDetached waits until no terraform recorded in the work directory dir runs any more: one
// left running by a controller that died (or that gave up waiting for it) is still writing its
// state, which must not be touched before it has finished. Records of terraform processes that
// have ended are removed.
func waitDetached(ctx context.Context, dir string) error {
	records, err := filepath.Glob(filepath.Join(dir, detached.Dir, "*.json"))
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
	var rec detached.Record
	if err := json.Unmarshal(b, &rec); err != nil || rec.PID <= 0 {
		return nil //nolint:nilerr // Records are renamed into place whole; this one is no record.
	}
	logged := false
	t := time.NewTicker(detached.Poll)
	defer t.Stop()
	for {
		start, err := detached.ProcessStart(rec.PID)
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
