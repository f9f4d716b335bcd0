package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// waitForApproval waits until the instance reports a plan waiting for approval, and returns the
// plan's id from status.lastPlan.id.
func waitForApproval(t *testing.T, u *unstructured.Unstructured) string {
	t.Helper()
	var id string
	eventually(t, "a plan waiting for approval", func(ctx context.Context) (bool, error) {
		got := u.DeepCopy()
		if err := ground.client.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		s := condition(conds, "Synced")
		id, _, _ = unstructured.NestedString(got.Object, "status", "lastPlan", "id")
		return s != nil && s["status"] == "False" && s["observedGeneration"] == got.GetGeneration() &&
			id != "" && strings.Contains(s["message"].(string), "waits for approval") && strings.Contains(s["message"].(string), id), nil
	})
	return id
}

// In approval mode a plan is applied only once its id is approved; a newer plan is not covered by
// an older approval.
func TestApprovalMode(t *testing.T) {
	ctx := context.Background()
	gvk := policyModule(t, "approval")
	ns := newNamespace(t)
	traces := t.TempDir()
	inst := newInstance(gvk, ns, "careful", map[string]any{
		"forProvider": map[string]any{"dir": traces, "files": []any{"a"}},
		"approval":    map[string]any{"mode": "Manual"},
	})
	if err := ground.client.Create(ctx, inst); err != nil {
		t.Fatal(err)
	}
	first := waitForApproval(t, inst)
	pending := inst.DeepCopy()
	if err := ground.client.Get(ctx, client.ObjectKeyFromObject(inst), pending); err != nil {
		t.Fatal(err)
	}
	assertArgoHealth(t, pending, "Suspended")
	if _, err := os.Stat(filepath.Join(traces, "a")); !os.IsNotExist(err) {
		t.Errorf("nothing may be created before approval; stat says %v", err)
	}
	patchSpec(t, inst, `{"approval":{"approvedPlan":"`+first+`"}}`)
	waitInstance(t, inst, 2)
	if got := readFile(t, filepath.Join(traces, "a")); got != "hello" {
		t.Errorf("the approved plan creates trace file a, got %q", got)
	}

	patchSpec(t, inst, `{"forProvider":{"files":["a","b"]}}`)
	second := waitForApproval(t, inst)
	if second == first {
		t.Fatalf("a plan with other changes must have another id, both are %s", first)
	}
	if _, err := os.Stat(filepath.Join(traces, "b")); !os.IsNotExist(err) {
		t.Errorf("an older approval must not apply a newer plan; stat says %v", err)
	}
	patchSpec(t, inst, `{"approval":{"approvedPlan":"`+second+`"}}`)
	waitInstance(t, inst, 4)
	if got := readFile(t, filepath.Join(traces, "b")); got != "hello" {
		t.Errorf("the approved second plan creates trace file b, got %q", got)
	}
}
