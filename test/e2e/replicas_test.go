package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
)

// Two modkind processes without leader election reconcile the same instances at once: the state
// lock lets only one terraform run per state at a time, and each object is made once. With one run
// slot each, a process observes an instance without state, then waits for its slot while the other
// process creates it: the state must be read again once the lock is held, or the object is
// created a second time.
func TestTwoProcessesShareStatesSafely(t *testing.T) {
	kubeconfig, c := startAPIServer(t)
	dir := t.TempDir()
	// A terraform that logs when each run on a state starts and ends, with the instance's name.
	runLog := filepath.Join(dir, "runs.log")
	wrapper := wrapTerraform(t, dir, func(tf string) string {
		return fmt.Sprintf("#!/bin/sh\nid=$(basename \"$PWD\" | cut -d. -f1)\necho \"$(date +%%s%%N) start $id $1\" >> %q\n%q \"$@\"\nrc=$?\necho \"$(date +%%s%%N) end $id $1\" >> %q\nexit $rc\n", runLog, tf, runLog)
	})
	for i := range 2 {
		runModkind(t, "--kubeconfig", kubeconfig, "--work-dir", filepath.Join(dir, fmt.Sprintf("replica-%d", i)),
			"--terraform-binary", wrapper, "--lock-duration", "10s", "--poll-interval", "1s",
			"--max-concurrent-runs", "1", "--max-reconciles", "4")
	}

	watchActiveRuns(t, c)
	traces, insts := createTraces(t, c, "replicas", 6, func(i int) []any { return []any{fmt.Sprintf("r%d", i)} }, 1)
	for _, u := range insts {
		waitInstanceReady(t, c, u)
	}
	// A Run is recorded once its run holds the state Lease: the other process's run, waiting for
	// it, records none, and never takes the holder's Run for one a stopped controller left.
	for _, u := range insts {
		got := u.DeepCopy()
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(u), got); err != nil {
			t.Fatal(err)
		}
		for _, r := range runsOf(t, c, got) {
			if r.Status.Phase == v1alpha1.PhaseFailed {
				t.Errorf("Run %s of %s failed: %s", r.Name, u.GetName(), r.Status.Message)
			}
		}
	}

	for i := range insts {
		p := filepath.Join(traces, fmt.Sprintf("r%d", i))
		b, _ := os.ReadFile(p + ".log")
		if n := strings.Count(string(b), "created"); n != 1 {
			t.Errorf("%s was created %d times by two processes, want once", p, n)
		}
	}
	raw, err := os.ReadFile(runLog)
	if err != nil {
		t.Fatal(err)
	}
	if overlap := overlappingRuns(string(raw)); overlap != "" {
		t.Errorf("two terraform runs on one state overlapped: %s", overlap)
	}
}

// overlappingRuns replays a run log and names an instance with two runs at once, if any.
func overlappingRuns(log string) string {
	lines := strings.Split(strings.TrimSpace(log), "\n")
	sort.Strings(lines) // Timestamps in nanoseconds, all of one width.
	running := map[string]int{}
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) < 3 {
			continue
		}
		switch f[1] {
		case "start":
			running[f[2]]++
			if running[f[2]] > 1 {
				return f[2]
			}
		case "end":
			running[f[2]]--
		}
	}
	return ""
}
