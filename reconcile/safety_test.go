package reconcile_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/modkind/modkind/reconcile"
)

// reconciles is how often the controller of gvk's instances has reconciled so far, from
// controller-runtime's metrics: the signal that polls happened.
func reconciles(t testing.TB, gvk schema.GroupVersionKind) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	name := "instances/" + strings.ToLower(gvk.GroupKind().String())
	var n float64
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == name {
					n += m.GetCounter().GetValue()
				}
			}
		}
	}
	return n
}

// waitPolls waits until the controller of gvk has reconciled n more times.
func waitPolls(t testing.TB, gvk schema.GroupVersionKind, n int) {
	t.Helper()
	start := reconciles(t, gvk)
	eventually(t, "more reconciles of "+gvk.Kind, func(context.Context) (bool, error) {
		return reconciles(t, gvk) >= start+float64(n), nil
	})
}

func synced(t testing.TB, u *unstructured.Unstructured) map[string]any {
	t.Helper()
	got := u.DeepCopy()
	if err := ground.client.Get(context.Background(), client.ObjectKeyFromObject(u), got); err != nil {
		t.Fatal(err)
	}
	conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
	return condition(conds, "Synced")
}

// A deleted state Secret does not make an instance create everything again beside what exists:
// the instance says the state is missing and applies nothing until a person restores it or says
// to start from an empty state.
func TestLostStateIsAnError(t *testing.T) {
	ctx := context.Background()
	gvk := policyModule(t, "loststate")
	ns := newNamespace(t)
	traces := t.TempDir()
	inst := newInstance(gvk, ns, "forgetful", map[string]any{"forProvider": map[string]any{"dir": traces, "files": []any{"a"}}})
	if err := ground.client.Create(ctx, inst); err != nil {
		t.Fatal(err)
	}
	got := waitInstance(t, inst, 1)
	lineage, _, _ := unstructured.NestedString(got.Object, "status", "state", "lineage")
	if lineage == "" {
		t.Fatalf("status.state.lineage must record the state the instance was applied with: %v", got.Object["status"])
	}

	ref := reconcile.StateRef(gvk.GroupKind().String(), ns, "forgetful")
	if err := ground.client.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "Synced=False saying the state is missing", func(context.Context) (bool, error) {
		s := synced(t, inst)
		return s != nil && s["status"] == "False" && strings.Contains(s["message"].(string), "is missing") &&
			strings.Contains(s["message"].(string), lineage), nil
	})
	assertInstanceEvent(t, got, corev1.EventTypeWarning, "is missing")
	waitPolls(t, gvk, 3)
	if s := synced(t, inst); s["status"] != "False" {
		t.Errorf("the missing state must stay an error, got %v", s)
	}
	if log := readFile(t, filepath.Join(traces, "a.log")); strings.Count(log, "created") != 1 {
		t.Errorf("nothing may be created again without the state: %q", log)
	}

	// Starting over is a person's explicit decision, for this lineage only.
	patch := client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"annotations":{"`+reconcile.AnnotationRecreateState+`":"`+lineage+`"}}}`))
	if err := ground.client.Patch(ctx, got, patch); err != nil {
		t.Fatal(err)
	}
	got = waitInstance(t, inst, 1)
	if next, _, _ := unstructured.NestedString(got.Object, "status", "state", "lineage"); next == "" || next == lineage {
		t.Errorf("starting over makes a new state with a new lineage, got %q", next)
	}
}

// An instance's work directory and state Secret fit whatever its name's length, up to the
// 253 characters Kubernetes allows.
func TestLongInstanceName(t *testing.T) {
	ctx := context.Background()
	gvk := policyModule(t, "longname")
	ns := newNamespace(t)
	traces := t.TempDir()
	name := strings.Repeat("n", 250) + ".x1"
	inst := newInstance(gvk, ns, name, map[string]any{"forProvider": map[string]any{"dir": traces, "files": []any{"a"}}})
	if err := ground.client.Create(ctx, inst); err != nil {
		t.Fatal(err)
	}
	waitInstance(t, inst, 1)
	if err := ground.client.Get(ctx, reconcile.StateRef(gvk.GroupKind().String(), ns, name).NamespacedName, &corev1.Secret{}); err != nil {
		t.Errorf("state Secret: %v", err)
	}
	if err := ground.client.Delete(ctx, inst); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the instance destroyed and gone", func(ctx context.Context) (bool, error) {
		err := ground.client.Get(ctx, client.ObjectKeyFromObject(inst), inst.DeepCopy())
		_, statErr := os.Stat(filepath.Join(traces, "a"))
		return client.IgnoreNotFound(err) == nil && err != nil && os.IsNotExist(statErr), nil
	})
}

// The work directory of an instance deleted without destroying (an orphaning delete) holds its
// rendered values and a state file: it is removed once the instance is gone. The state Secret
// stays, so the objects can be adopted again.
func TestOrphanedWorkDirIsCollected(t *testing.T) {
	ctx := context.Background()
	gvk := policyModule(t, "collected")
	ns := newNamespace(t)
	traces := t.TempDir()
	inst := newInstance(gvk, ns, "left", map[string]any{
		"forProvider":        map[string]any{"dir": traces, "files": []any{"a"}},
		"managementPolicies": []any{"Observe", "Create", "Update", "LateInitialize"},
	})
	if err := ground.client.Create(ctx, inst); err != nil {
		t.Fatal(err)
	}
	got := waitInstance(t, inst, 1)
	dir := reconcile.WorkDir(ground.config.Dir+"/work", gvk, ns, "left", got.GetUID())
	if _, err := os.Stat(filepath.Join(dir, reconcile.FileVars)); err != nil {
		t.Fatalf("the work directory holds the rendered values: %v", err)
	}
	if err := ground.client.Delete(ctx, inst); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the work directory of the deleted instance removed", func(context.Context) (bool, error) {
		_, err := os.Stat(dir)
		return os.IsNotExist(err), nil
	})
	if err := ground.client.Get(ctx, reconcile.StateRef(gvk.GroupKind().String(), ns, "left").NamespacedName, &corev1.Secret{}); err != nil {
		t.Errorf("an orphaning delete keeps the state Secret: %v", err)
	}
	if got := readFile(t, filepath.Join(traces, "a")); got != "hello" {
		t.Errorf("an orphaning delete keeps what was made, got %q", got)
	}
}

// Drift found in approval mode waits for approval, visibly, for as long as it takes: it does not
// vanish at the next poll. Approving it applies it at once.
func TestDriftWaitsForApproval(t *testing.T) {
	ctx := context.Background()
	createModule(t, "drift-approval", moduleDir(t, "drift"), "driftapproval.example.org", "Drift")
	waitModuleReady(t, "drift-approval")
	gvk := schema.GroupVersionKind{Group: "driftapproval.example.org", Version: "v1alpha1", Kind: "Drift"}
	ns := newNamespace(t)
	src := filepath.Join(t.TempDir(), "source.tfstate")
	writeSourceState(t, src, "one")
	inst := newInstance(gvk, ns, "careful", map[string]any{
		"forProvider": map[string]any{"path": src},
		"approval":    map[string]any{"mode": "Manual"},
	})
	inst.SetAnnotations(map[string]string{reconcile.AnnotationDriftInterval: "1s"})
	if err := ground.client.Create(ctx, inst); err != nil {
		t.Fatal(err)
	}
	patchSpec(t, inst, `{"approval":{"approvedPlan":"`+waitForApproval(t, inst)+`"}}`)
	waitInstance(t, inst, 2)

	writeSourceState(t, src, "two")
	id := waitForApproval(t, inst)
	waitPolls(t, gvk, 4)
	got := inst.DeepCopy()
	if err := ground.client.Get(ctx, client.ObjectKeyFromObject(inst), got); err != nil {
		t.Fatal(err)
	}
	if s := synced(t, inst); s["status"] != "False" || !strings.Contains(s["message"].(string), id) {
		t.Errorf("the drift correction must keep waiting for approval, visibly, got %v", s)
	}
	if _, found, _ := unstructured.NestedMap(got.Object, "status", "pendingDrift"); !found {
		t.Errorf("status.pendingDrift must show the drift found, got %v", got.Object["status"])
	}
	if v, _, _ := unstructured.NestedString(got.Object, "status", "atProvider", "value"); v != "one" {
		t.Errorf("nothing may be applied before approval, atProvider.value is %q", v)
	}

	patchSpec(t, inst, `{"approval":{"approvedPlan":"`+id+`"}}`)
	eventually(t, "the approved drift correction applied", func(ctx context.Context) (bool, error) {
		got := inst.DeepCopy()
		if err := ground.client.Get(ctx, client.ObjectKeyFromObject(inst), got); err != nil {
			return false, err
		}
		v, _, _ := unstructured.NestedString(got.Object, "status", "atProvider", "value")
		_, pending, _ := unstructured.NestedMap(got.Object, "status", "pendingDrift")
		return v == "two" && !pending, nil
	})
}

// An Observe-only instance reads the real objects on every poll, as Crossplane's Observe does:
// its outputs follow the world, and nothing is applied.
func TestObserveOnlyRefreshes(t *testing.T) {
	ctx := context.Background()
	createModule(t, "drift-observed", moduleDir(t, "drift"), "driftobserved.example.org", "Drift")
	waitModuleReady(t, "drift-observed")
	gvk := schema.GroupVersionKind{Group: "driftobserved.example.org", Version: "v1alpha1", Kind: "Drift"}
	ns := newNamespace(t)
	src := filepath.Join(t.TempDir(), "source.tfstate")
	writeSourceState(t, src, "one")
	inst := newInstance(gvk, ns, "watched", map[string]any{"forProvider": map[string]any{"path": src}})
	if err := ground.client.Create(ctx, inst); err != nil {
		t.Fatal(err)
	}
	got := waitInstance(t, inst, 1)
	dir := reconcile.WorkDir(ground.config.Dir+"/work", gvk, ns, "watched", got.GetUID())
	patchSpec(t, inst, `{"managementPolicies":["Observe"]}`)
	before := count(terraformRuns(t, dir), "apply")

	writeSourceState(t, src, "two")
	eventually(t, "status.atProvider.value to follow the world", func(ctx context.Context) (bool, error) {
		got := inst.DeepCopy()
		if err := ground.client.Get(ctx, client.ObjectKeyFromObject(inst), got); err != nil {
			return false, err
		}
		v, _, _ := unstructured.NestedString(got.Object, "status", "atProvider", "value")
		return v == "two", nil
	})
	if after := count(terraformRuns(t, dir), "apply"); after != before {
		t.Errorf("an Observe-only instance must apply nothing, ran apply %d times", after-before)
	}
}
