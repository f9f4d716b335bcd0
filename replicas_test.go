package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/reconcile"
)

// Two modkind processes without leader election reconcile the same instances at once: the state
// lock lets only one terraform run per state at a time, and each object is made once.
func TestTwoProcessesShareStatesSafely(t *testing.T) {
	kubeconfig, c := startAPIServer(t)
	dir := t.TempDir()
	tf, err := reconcile.TerraformBinary("")
	if err != nil {
		t.Fatal(err)
	}
	// A terraform that logs when each run on a state starts and ends, with the instance's name.
	runLog := filepath.Join(dir, "runs.log")
	wrapper := filepath.Join(dir, "terraform")
	script := fmt.Sprintf("#!/bin/sh\nid=$(basename \"$PWD\" | cut -d. -f1)\necho \"$(date +%%s%%N) start $id $1\" >> %q\n%q \"$@\"\nrc=$?\necho \"$(date +%%s%%N) end $id $1\" >> %q\nexit $rc\n", runLog, tf, runLog)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		p := startModkind(t, "--kubeconfig", kubeconfig, "--work-dir", filepath.Join(dir, fmt.Sprintf("replica-%d", i)),
			"--terraform-binary", wrapper, "--lock-duration", "10s", "--poll-interval", "1s")
		t.Cleanup(func() { _ = p.Process.Kill(); _ = p.Wait() })
	}

	modDir, err := filepath.Abs(filepath.Join("reconcile", "testdata", "modules", "trace"))
	if err != nil {
		t.Fatal(err)
	}
	m := &v1alpha1.Module{
		ObjectMeta: metav1.ObjectMeta{Name: "replicas"},
		Spec:       v1alpha1.ModuleSpec{Source: v1alpha1.ModuleSource{Path: modDir}, CRD: v1alpha1.CRDNames{Group: "replicas.example.org", Kind: "Trace"}},
	}
	poll(t, "the Module CRD to be served", 2*time.Minute, func(ctx context.Context) (bool, error) {
		return c.Create(ctx, m) == nil, nil
	})
	traces := t.TempDir()
	gvk := schema.GroupVersionKind{Group: "replicas.example.org", Version: "v1alpha1", Kind: "Trace"}
	var insts []*unstructured.Unstructured
	for i := range 3 {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"forProvider": map[string]any{
			"dir": traces, "files": []any{fmt.Sprintf("r%d", i)}, "createSeconds": int64(1),
		}}}}
		u.SetGroupVersionKind(gvk)
		u.SetNamespace("default")
		u.SetName(fmt.Sprintf("r%d", i))
		insts = append(insts, u)
	}
	poll(t, "the instances to be created", 2*time.Minute, func(ctx context.Context) (bool, error) {
		for _, u := range insts {
			if err := c.Create(ctx, u.DeepCopy()); client.IgnoreAlreadyExists(err) != nil {
				return false, nil
			}
		}
		return true, nil
	})
	for _, u := range insts {
		waitInstanceReady(t, c, u)
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
