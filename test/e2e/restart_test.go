package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
)

// A Module whose source breaks keeps serving its instances with the module it was last served
// with, also after modkind restarts: the restarted controller has only the Module's status and the
// module cache to go on.
func TestBrokenModuleServedAfterRestart(t *testing.T) {
	_, c, proc := modkindOnAPIServer(t, "--module-recheck-interval", "1s")

	src, err := filepath.Abs(filepath.Join("..", "..", "reconcile", "integration", "testdata", "modules", "trace", "main.tf"))
	if err != nil {
		t.Fatal(err)
	}
	main, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	modDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(modDir, "main.tf"), main, 0o600); err != nil {
		t.Fatal(err)
	}
	gvk := schema.GroupVersionKind{Group: "restart.example.org", Version: "v1alpha1", Kind: "Trace"}
	m := &v1alpha1.Module{
		ObjectMeta: metav1.ObjectMeta{Name: "restart"},
		Spec:       v1alpha1.ModuleSpec{Source: v1alpha1.ModuleSource{Path: modDir}, CRD: v1alpha1.CRDNames{Group: gvk.Group, Kind: gvk.Kind}},
	}
	poll(t, "the Module CRD to be served", 2*time.Minute, func(ctx context.Context) (bool, error) {
		return c.Create(ctx, m) == nil, nil
	})
	traces := t.TempDir()
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"forProvider": map[string]any{
		"dir": traces, "files": []any{"a"},
	}}}}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace("default")
	u.SetName("kept")
	createAll(t, c, []*unstructured.Unstructured{u})
	waitInstanceReady(t, c, u)

	// The source breaks while modkind is down.
	proc.stop(syscall.SIGTERM)
	if err := os.WriteFile(filepath.Join(modDir, "main.tf"), []byte("this is { not terraform"), 0o600); err != nil {
		t.Fatal(err)
	}
	proc.start()
	poll(t, "the Module to report its broken source", time.Minute, func(ctx context.Context) (bool, error) {
		got := &v1alpha1.Module{}
		if err := c.Get(ctx, types.NamespacedName{Name: m.Name}, got); err != nil {
			return false, err
		}
		s := got.Status.GetCondition("Synced")
		return s.Status == "False" && strings.Contains(s.Message, "main.tf"), nil
	})

	// The instance is still served: a spec change is applied with the module last served.
	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"forProvider":{"files":["a","b"]}}}`))
	if err := c.Patch(context.Background(), u, patch); err != nil {
		t.Fatal(err)
	}
	poll(t, "trace file b from the module last served", 2*time.Minute, func(context.Context) (bool, error) {
		b, err := os.ReadFile(filepath.Join(traces, "b"))
		return err == nil && string(b) == "hello", nil
	})
}

// A restarted controller observes every Ready instance again and runs no terraform for them:
// their inputs and module did not change, and their first drift checks fall at random points of
// the interval, not at once.
func TestRestartRunsNoTerraform(t *testing.T) {
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls.log")
	wrapper := wrapTerraform(t, dir, func(tf string) string {
		return fmt.Sprintf("#!/bin/sh\necho \"$1\" >> %q\nexec %q \"$@\"\n", calls, tf)
	})
	// Settled instances observed every second too: three observes of each take seconds, in which
	// a drift check (due at a random point of the hour) is unlikely to fall.
	_, c, proc := modkindOnAPIServer(t, "--terraform-binary", wrapper, "--resync-interval", "1s", "--drift-interval", "1h")
	const n = 6
	_, insts := createTraces(t, c, "calm", n, func(i int) []any { return []any{fmt.Sprintf("c%d", i)} }, 0)
	for _, u := range insts {
		waitInstanceReady(t, c, u)
	}
	proc.stop(syscall.SIGTERM)
	before := lineCount(t, calls)

	metrics := freeAddr(t)
	proc.start("--metrics-bind-address", metrics)
	controller := "instances/trace.calm.example.org"
	// Three polls of every instance: each was observed at start, then twice more.
	poll(t, "the restarted controller to observe every instance three times", 2*time.Minute, func(ctx context.Context) (bool, error) {
		return reconcilesOf(ctx, metrics, controller) >= 3*n, nil
	})
	if got := lineCount(t, calls); got != before {
		t.Errorf("the restarted controller ran terraform %d times for %d unchanged instances, want none", got-before, n)
	}
	for _, u := range insts {
		waitInstanceReady(t, c, u)
	}
}

// lineCount is the number of lines in file.
func lineCount(t *testing.T, file string) int {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(raw), "\n")
}

// reconcilesOf is how many reconciles the controller named controller made, as the metrics at
// addr say (0 before they are served).
func reconcilesOf(ctx context.Context, addr, controller string) int {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return 0
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	n := 0
	for _, l := range strings.Split(string(body), "\n") {
		metric, value, ok := strings.Cut(l, " ")
		if ok && strings.HasPrefix(metric, `controller_runtime_reconcile_total{controller="`+controller+`"`) {
			v, _ := strconv.ParseFloat(value, 64)
			n += int(v)
		}
	}
	return n
}
