package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/runs"
)

// sigkillPod kills every process of pod c (the test node runs a pod's processes in the pod's own
// directory, named by namespace, name and UID) with SIGKILL, and returns how many it killed.
func sigkillPod(t *testing.T, namespace string, c runs.Claimant) int {
	t.Helper()
	mark := "/pods/" + namespace + "/" + c.Pod + "/" + string(c.UID) + "/"
	cwds, _ := filepath.Glob("/proc/[0-9]*/cwd")
	killed := 0
	for _, cwd := range cwds {
		d, err := os.Readlink(cwd)
		if err != nil || !strings.Contains(d, mark) {
			continue
		}
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(cwd)))
		if err == nil && syscall.Kill(pid, syscall.SIGKILL) == nil {
			killed++
		}
	}
	return killed
}

// A pool pod killed while it executes a Run is handled as a runner Job that dies: the controller
// fails the Run, naming the pod, the pool makes a new pod, and the instance's next Run applies it.
func TestPoolRunnerPodDies(t *testing.T) {
	g := startJobGround(t)
	g.tenant(t, "default")
	g.startJobController(t, g.poolControllerArgs(t, time.Minute))
	watchActiveRuns(t, g.c)
	ctx := context.Background()
	_, insts := createTraces(t, g.c, "pooldie", 1, func(i int) []any { return []any{fmt.Sprintf("i%d", i)} }, 10)
	inst := insts[0]
	if err := g.c.Get(ctx, client.ObjectKeyFromObject(inst), inst); err != nil {
		t.Fatal(err)
	}

	var killed v1alpha1.Run
	var holder runs.Claimant
	poll(t, "a Running Run claimed by a pool pod", 2*time.Minute, func(ctx context.Context) (bool, error) {
		for _, r := range runsOf(t, g.c, inst) {
			if r.Status.Phase != v1alpha1.PhaseRunning {
				continue
			}
			c, ok := runs.Holder(&r)
			if !ok {
				return false, fmt.Errorf("Running Run %s has no runner", r.Name)
			}
			killed, holder = r, c
			return true, nil
		}
		return false, nil
	})
	// Killed as the kernel kills a pod out of memory: no signal it could record the Run's end on.
	if killed := sigkillPod(t, "default", holder); killed == 0 {
		t.Fatalf("no process of pod %s found to kill", holder.Pod)
	}
	want := fmt.Sprintf("the runner pool pod %s ended before the Run ended", holder.Pod)
	poll(t, "the killed pod's Run to fail", 2*time.Minute, func(ctx context.Context) (bool, error) {
		r := &v1alpha1.Run{}
		if err := g.c.Get(ctx, client.ObjectKeyFromObject(&killed), r); err != nil {
			return false, err
		}
		if r.Status.Phase == v1alpha1.PhaseRunning {
			return false, nil
		}
		if r.Status.Phase != v1alpha1.PhaseFailed || r.Status.Message != want {
			return false, fmt.Errorf("the killed pod's Run ended %s: %q; want Failed: %q", r.Status.Phase, r.Status.Message, want)
		}
		return true, nil
	})
	waitInstanceReady(t, g.c, inst)
	var by []string
	for _, r := range runsOf(t, g.c, inst) {
		if r.Status.Phase == v1alpha1.PhaseSucceeded {
			c, ok := runs.Holder(&r)
			if !ok {
				t.Fatalf("Succeeded Run %s has no runner", r.Name)
			}
			by = append(by, c.Pod)
		}
	}
	if len(by) != 1 || by[0] == holder.Pod || !strings.HasPrefix(by[0], "modkind-pool-") {
		t.Errorf("Succeeded Runs by pods %v; want one, by a pool pod other than the killed %s", by, holder.Pod)
	}
}
