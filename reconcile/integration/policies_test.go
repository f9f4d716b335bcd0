package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/executor/process"
	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/state"
)

// policyModule creates a Module of its own for one test, so each test's module directory lives
// exactly as long as the test.
func policyModule(t *testing.T, name string) schema.GroupVersionKind {
	t.Helper()
	gvk := schema.GroupVersionKind{Group: name + ".example.org", Version: "v1alpha1", Kind: "Trace"}
	createModule(t, "trace-"+name, moduleDir(t, "trace"), gvk.Group, gvk.Kind)
	waitModuleReady(t, "trace-"+name)
	return gvk
}

func stateSecret(gvk schema.GroupVersionKind, ns, name string) types.NamespacedName {
	return kind.StateRef(gvk.GroupKind().String(), ns, name).NamespacedName
}

func patchSpec(t *testing.T, u *unstructured.Unstructured, spec string) {
	t.Helper()
	if err := ground.client.Patch(context.Background(), u.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"spec":`+spec+`}`))); err != nil {
		t.Fatal(err)
	}
}

func waitGone(t *testing.T, u *unstructured.Unstructured) {
	t.Helper()
	eventually(t, u.GetName()+" gone", func(ctx context.Context) (bool, error) {
		err := ground.client.Get(ctx, client.ObjectKeyFromObject(u), u.DeepCopy())
		return kerrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}

// deleteAtEnd deletes u when the test ends and waits until it is gone: an instance that is
// drift-checked or observed every second would otherwise keep running terraform for the rest of
// the package, beside every later test's runs.
func deleteAtEnd(t *testing.T, u *unstructured.Unstructured) {
	t.Helper()
	t.Cleanup(func() {
		if err := ground.client.Delete(context.Background(), u.DeepCopy()); client.IgnoreNotFound(err) != nil {
			t.Errorf("deleting %s: %v", u.GetName(), err)
			return
		}
		waitGone(t, u)
	})
}

// With managementPolicies [Observe], a spec change is never applied: nothing outside changes.
func TestObserveOnlyChangesNothing(t *testing.T) {
	ctx := context.Background()
	gvk := policyModule(t, "observed")
	ns := newNamespace(t)
	traces := t.TempDir()
	inst := newInstance(gvk, ns, "observed", map[string]any{"forProvider": map[string]any{"dir": traces, "files": []any{"a"}}})
	if err := ground.client.Create(ctx, inst); err != nil {
		t.Fatal(err)
	}
	deleteAtEnd(t, inst)
	waitInstance(t, inst, 1)
	dir := workDir(ns, "trace."+gvk.Group, "observed")
	applied := appliedInputs(t, stateSecret(gvk, ns, "observed"))

	patchSpec(t, inst, `{"managementPolicies":["Observe"],"forProvider":{"files":["a","b"]}}`)
	eventually(t, "the spec change to be observed", func(ctx context.Context) (bool, error) {
		got := inst.DeepCopy()
		if err := ground.client.Get(ctx, client.ObjectKeyFromObject(inst), got); err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		s := condition(conds, "Synced")
		return s != nil && s["observedGeneration"] == got.GetGeneration(), nil
	})
	// An Observe-only instance refreshes on every poll: two terraform runs after the change are
	// two observations (each an apply -refresh-only), and none may have applied anything.
	runs := len(terraformRuns(t, dir))
	eventually(t, "two observations after the spec change", func(context.Context) (bool, error) {
		return len(terraformRuns(t, dir)) >= runs+2, nil
	})
	if _, err := os.Stat(filepath.Join(traces, "b")); !os.IsNotExist(err) {
		t.Errorf("an Observe-only instance must not create trace file b; stat says %v", err)
	}
	if log := readFile(t, filepath.Join(traces, "a.log")); log != "created\n" {
		t.Errorf("trace file a must have been created once and left alone, its log says %q", log)
	}
	if got := appliedInputs(t, stateSecret(gvk, ns, "observed")); got != applied {
		t.Errorf("the state must still record the inputs applied before, %q, not %q", applied, got)
	}
	// Applying a change takes a plan first; an observation plans nothing and destroys nothing.
	for _, r := range terraformRuns(t, dir)[runs:] {
		if r == "plan" || r == "destroy" {
			t.Errorf("an Observe-only instance ran terraform %s", r)
		}
	}
}

// appliedInputs returns what a state Secret records as the inputs last applied.
func appliedInputs(t *testing.T, ref types.NamespacedName) string {
	t.Helper()
	sec := &corev1.Secret{}
	if err := ground.client.Get(context.Background(), ref, sec); err != nil {
		t.Fatal(err)
	}
	v := sec.Annotations[state.AnnotationApplied]
	if v == "" {
		t.Fatalf("state Secret %s records no applied inputs", ref)
	}
	return v
}

// Without Delete in managementPolicies, deleting the instance orphans what Terraform created and
// keeps the state, so that the objects can be adopted again.
func TestDeleteWithoutDeletePolicyOrphans(t *testing.T) {
	ctx := context.Background()
	gvk := policyModule(t, "orphaned")
	ns := newNamespace(t)
	traces := t.TempDir()
	inst := newInstance(gvk, ns, "orphaned", map[string]any{
		"forProvider":        map[string]any{"dir": traces, "files": []any{"a"}},
		"managementPolicies": []any{"Observe", "Create", "Update", "LateInitialize"},
	})
	if err := ground.client.Create(ctx, inst); err != nil {
		t.Fatal(err)
	}
	waitInstance(t, inst, 1)
	if err := ground.client.Delete(ctx, inst); err != nil {
		t.Fatal(err)
	}
	waitGone(t, inst)
	if got := readFile(t, filepath.Join(traces, "a")); got != "hello" {
		t.Errorf("an orphaned trace file must stay as it was, got %q", got)
	}
	if err := ground.client.Get(ctx, stateSecret(gvk, ns, "orphaned"), &corev1.Secret{}); err != nil {
		t.Errorf("the state of an orphaned instance must stay: %v", err)
	}

	// Created again with the same name, the instance adopts the kept state: nothing is created twice.
	again := newInstance(gvk, ns, "orphaned", map[string]any{"forProvider": map[string]any{"dir": traces, "files": []any{"a"}}})
	if err := ground.client.Create(ctx, again); err != nil {
		t.Fatal(err)
	}
	adopted := waitInstance(t, again, 1)
	runs := terraformRuns(t, process.WorkDir(filepath.Join(ground.config.Dir, "work"), gvk, ns, "orphaned", adopted.GetUID()))
	if n := count(runs, "apply"); n != 0 {
		t.Errorf("adopting the kept state must not apply again (nothing changed); applies: %d in %v", n, runs)
	}
	if log := readFile(t, filepath.Join(traces, "a.log")); strings.Count(log, "created") != 1 {
		t.Errorf("adopting the kept state must create nothing again: %q", log)
	}
}

// A destroy that fails keeps the finalizer and the state, says why, and succeeds once the cause
// is gone; the state is never dropped to get unstuck.
func TestFailingDestroyKeepsState(t *testing.T) {
	ctx := context.Background()
	gvk := policyModule(t, "stubborn")
	ns := newNamespace(t)
	traces := t.TempDir()
	inst := newInstance(gvk, ns, "stubborn", map[string]any{"forProvider": map[string]any{"dir": traces, "files": []any{"a"}}})
	if err := ground.client.Create(ctx, inst); err != nil {
		t.Fatal(err)
	}
	waitInstance(t, inst, 1)
	flag := filepath.Join(traces, "fail-destroy")
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ground.client.Delete(ctx, inst); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the failed destroy to be reported", func(ctx context.Context) (bool, error) {
		got := inst.DeepCopy()
		if err := ground.client.Get(ctx, client.ObjectKeyFromObject(inst), got); err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		s := condition(conds, "Synced")
		return s != nil && s["status"] == "False" && strings.Contains(s["message"].(string), "destroy failed on purpose"), nil
	})
	if err := ground.client.Get(ctx, stateSecret(gvk, ns, "stubborn"), &corev1.Secret{}); err != nil {
		t.Errorf("the state must stay while destroy fails: %v", err)
	}
	deleting := inst.DeepCopy()
	if err := ground.client.Get(ctx, client.ObjectKeyFromObject(inst), deleting); err != nil {
		t.Fatal(err)
	}
	assertArgoHealth(t, deleting, "Progressing")
	if _, err := os.Stat(filepath.Join(traces, "a")); err != nil {
		t.Errorf("trace file a must still exist: %v", err)
	}

	if err := os.Remove(flag); err != nil {
		t.Fatal(err)
	}
	waitGone(t, inst)
	if _, err := os.Stat(filepath.Join(traces, "a")); !os.IsNotExist(err) {
		t.Errorf("trace file a must be destroyed once destroy can succeed; stat says %v", err)
	}
	if err := ground.client.Get(ctx, stateSecret(gvk, ns, "stubborn"), &corev1.Secret{}); !kerrors.IsNotFound(err) {
		t.Errorf("the state goes only after destroy succeeded; get says %v", err)
	}
}
