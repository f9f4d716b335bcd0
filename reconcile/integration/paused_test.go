package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const annotationPaused = "crossplane.io/paused"

// setPaused sets or removes the pause annotation.
func setPaused(t *testing.T, u *unstructured.Unstructured, paused bool) {
	t.Helper()
	v := `null`
	if paused {
		v = `"true"`
	}
	p := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"`+annotationPaused+`":`+v+`}}}`))
	if err := ground.client.Patch(context.Background(), u.DeepCopy(), p); err != nil {
		t.Fatal(err)
	}
}

// waitPaused waits until modkind has seen the instance paused at generation gen or later: its
// Synced condition says ReconcilePaused for the generation the instance has.
func waitPaused(t *testing.T, u *unstructured.Unstructured, gen int64) *unstructured.Unstructured {
	t.Helper()
	var got *unstructured.Unstructured
	eventually(t, fmt.Sprintf("%s paused at generation %d", u.GetName(), gen), func(ctx context.Context) (bool, error) {
		got = u.DeepCopy()
		if err := ground.client.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		s := condition(conds, "Synced")
		if s == nil {
			return false, nil
		}
		og, _, _ := unstructured.NestedInt64(s, "observedGeneration")
		return s["reason"] == string(xpv2.ReasonReconcilePaused) && got.GetGeneration() >= gen && og == got.GetGeneration(), &conditionError{s}
	})
	return got
}

// crossplane.io/paused: "true" stops every terraform run of an instance: a spec change is not
// applied and a deletion destroys nothing, until the annotation goes.
func TestPausedRunsNothing(t *testing.T) {
	ctx := context.Background()
	gvk := policyModule(t, "paused")
	ns := newNamespace(t)
	traces := t.TempDir()
	inst := newInstance(gvk, ns, "held", map[string]any{"forProvider": map[string]any{"dir": traces, "files": []any{"a"}}})
	if err := ground.client.Create(ctx, inst); err != nil {
		t.Fatal(err)
	}
	waitInstance(t, inst, 1)
	dir := workDir(ns, "trace."+gvk.Group, "held")

	setPaused(t, inst, true)
	paused := waitPaused(t, inst, 1)
	if status, _ := argoHealthMessage(t, paused); status != "Suspended" {
		t.Errorf("Argo CD health of a paused instance: want Suspended, got %s", status)
	}
	before := terraformRuns(t, dir)
	patchSpec(t, inst, `{"forProvider":{"files":["a","b"]}}`)
	waitPaused(t, inst, 2)
	if diff := cmp.Diff(before, terraformRuns(t, dir)); diff != "" {
		t.Errorf("a spec change of a paused instance ran terraform: -before +after:\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(traces, "b")); !os.IsNotExist(err) {
		t.Errorf("a paused instance must not create trace file b; stat says %v", err)
	}

	setPaused(t, inst, false)
	waitInstance(t, inst, 2)
	if got := readFile(t, filepath.Join(traces, "b")); got != "hello" {
		t.Errorf("once unpaused, the spec change is applied: trace file b want hello, got %q", got)
	}
	if n, was := count(terraformRuns(t, dir), "apply"), count(before, "apply"); n != was+1 {
		t.Errorf("once unpaused, the spec change is applied once: %d applies before, %d after", was, n)
	}

	// Deleting a paused instance destroys nothing until it is unpaused.
	setPaused(t, inst, true)
	waitPaused(t, inst, 2)
	before = terraformRuns(t, dir)
	if err := ground.client.Delete(ctx, inst); err != nil {
		t.Fatal(err)
	}
	waitPaused(t, inst, 3)
	if diff := cmp.Diff(before, terraformRuns(t, dir)); diff != "" {
		t.Errorf("deleting a paused instance ran terraform: -before +after:\n%s", diff)
	}
	for _, f := range []string{"a", "b"} {
		if _, err := os.Stat(filepath.Join(traces, f)); err != nil {
			t.Errorf("deleting a paused instance must destroy nothing: trace file %s: %v", f, err)
		}
	}
	setPaused(t, inst, false)
	waitGone(t, inst)
	for _, f := range []string{"a", "b"} {
		if _, err := os.Stat(filepath.Join(traces, f)); !os.IsNotExist(err) {
			t.Errorf("once unpaused, the deletion destroys trace file %s; stat says %v", f, err)
		}
	}
}
