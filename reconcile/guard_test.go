package reconcile_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A spec change whose plan would delete or replace objects is refused and listed, the objects
// survive and the instance stays Ready; allowing destructive plans lets it through.
func TestDestructivePlanRefused(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	traces := t.TempDir()
	createModule(t, "trace-guard", moduleDir(t, "trace"), "guard.example.org", "Trace")
	waitModuleReady(t, "trace-guard")
	gvk := schema.GroupVersionKind{Group: "guard.example.org", Version: "v1alpha1", Kind: "Trace"}
	inst := newInstance(gvk, ns, "guarded", map[string]any{
		"forProvider": map[string]any{"dir": traces, "files": []any{"a", "b"}},
	})
	if err := ground.client.Create(ctx, inst); err != nil {
		t.Fatal(err)
	}
	waitInstance(t, inst, 1)

	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"forProvider":{"files":["a"],"generation":2}}}`))
	if err := ground.client.Patch(ctx, inst.DeepCopy(), patch); err != nil {
		t.Fatal(err)
	}
	var got *unstructured.Unstructured
	var message string
	eventually(t, "the plan to be refused", func(ctx context.Context) (bool, error) {
		got = inst.DeepCopy()
		if err := ground.client.Get(ctx, client.ObjectKeyFromObject(inst), got); err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		synced := condition(conds, "Synced")
		if synced == nil || synced["status"] != "False" || synced["observedGeneration"] != got.GetGeneration() {
			return false, nil
		}
		message, _ = synced["message"].(string)
		return true, nil
	})
	for _, want := range []string{
		`terraform_data.file["b"] (delete)`,
		`terraform_data.generation (replace, forced by triggers_replace)`,
		"allowDestructivePlans",
	} {
		if !strings.Contains(message, want) {
			t.Errorf("Synced message must list %q, got %q", want, message)
		}
	}
	conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
	if ready := condition(conds, "Ready"); ready == nil || ready["status"] != "True" {
		t.Errorf("a refused plan must leave the instance Ready, got %v", ready)
	}
	if d, _, _ := unstructured.NestedInt64(got.Object, "status", "lastPlan", "destroy"); d != 2 {
		t.Errorf("status.lastPlan.destroy: want 2, got %d", d)
	}
	if _, err := os.Stat(filepath.Join(traces, "b")); err != nil {
		t.Errorf("trace file b must survive a refused plan: %v", err)
	}
	assertInstanceEvent(t, got, corev1.EventTypeWarning, "refused to apply")
	assertArgoHealth(t, got, "Degraded")

	allow := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"allowDestructivePlans":true}}`))
	if err := ground.client.Patch(ctx, inst.DeepCopy(), allow); err != nil {
		t.Fatal(err)
	}
	waitInstance(t, inst, 3)
	if _, err := os.Stat(filepath.Join(traces, "b")); !os.IsNotExist(err) {
		t.Errorf("once allowed, the plan deletes trace file b; stat says %v", err)
	}
}

func assertInstanceEvent(t testing.TB, u *unstructured.Unstructured, typ, contains string) {
	t.Helper()
	eventually(t, "a "+typ+" event containing "+contains, func(ctx context.Context) (bool, error) {
		evs := &corev1.EventList{}
		if err := ground.client.List(ctx, evs, client.InNamespace(u.GetNamespace())); err != nil {
			return false, err
		}
		for _, e := range evs.Items {
			if e.InvolvedObject.UID == u.GetUID() && e.Type == typ && strings.Contains(e.Message, contains) {
				return true, nil
			}
		}
		return false, nil
	})
}
