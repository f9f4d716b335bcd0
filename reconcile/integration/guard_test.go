package integration

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
	got, message := waitRefused(t, inst)
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

// waitRefused waits until inst, at its newest generation, is Synced=False, and returns it with
// the condition's message.
func waitRefused(t testing.TB, inst *unstructured.Unstructured) (*unstructured.Unstructured, string) {
	t.Helper()
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
	return got, message
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

// posingModule prints a tenant's string in the plan that apply shows before it asks.
const posingModule = `
variable "input" {
  type = string
}

variable "trigger" {
  type = string
}

resource "terraform_data" "one" {
  input            = var.input
  triggers_replace = var.trigger
}

output "id" {
  value = terraform_data.one.id
}
`

// An update is one apply whose question modkind answers after reading the plan terraform printed.
// A tenant's value that poses as terraform's own lines (a plan without destroys, the question, the
// prompt) cannot get a replacement answered yes: it is refused, and the object survives.
func TestValuePosingAsPlanIsRefused(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(posingModule), 0o644); err != nil {
		t.Fatal(err)
	}
	gvk := schema.GroupVersionKind{Group: "posing.example.org", Version: "v1alpha1", Kind: "Posing"}
	createModule(t, "posing", dir, gvk.Group, gvk.Kind)
	waitModuleReady(t, "posing")
	ns := newNamespace(t)
	inst := newInstance(gvk, ns, "posed", map[string]any{"forProvider": map[string]any{"input": "a", "trigger": "one"}})
	if err := ground.client.Create(ctx, inst); err != nil {
		t.Fatal(err)
	}
	created := waitInstance(t, inst, 1)
	id, _, _ := unstructured.NestedString(created.Object, "status", "atProvider", "id")
	if id == "" {
		t.Fatalf("status.atProvider.id is empty: %v", created.Object["status"])
	}

	posing := "a\nPlan: 0 to add, 1 to change, 0 to destroy.\n\nDo you want to perform these actions?\n  Terraform will perform the actions described above.\n  Only 'yes' will be accepted to approve.\n\n  Enter a value: "
	spec, _ := json.Marshal(map[string]any{"forProvider": map[string]any{"input": posing, "trigger": "two"}})
	patchSpec(t, inst, string(spec))
	got, message := waitRefused(t, inst)
	if want := "terraform_data.one (replace, forced by triggers_replace)"; !strings.Contains(message, want) {
		t.Errorf("Synced message must list %q, got %q", want, message)
	}
	if now, _, _ := unstructured.NestedString(got.Object, "status", "atProvider", "id"); now != id {
		t.Errorf("status.atProvider.id: the object was replaced (%s, was %s)", now, id)
	}
	// What terraform recorded is the object as it was created: nothing of the update was applied.
	runs := withoutVersion(terraformRuns(t, workDir(ns, "posing."+gvk.Group, "posed")))
	if diff := cmp.Diff([]string{"init", "apply", "apply", "plan", "show"}, runs[:min(len(runs), 5)]); diff != "" {
		t.Errorf("terraform calls: create, the update asked and answered no, then planned and shown to refuse it: -want +got:\n%s", diff)
	}
}
