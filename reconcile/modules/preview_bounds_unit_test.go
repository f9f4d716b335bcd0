package modules

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/reconcile/kinds"
	"github.com/modkind/modkind/rollout"
)

// In job mode a tenant can write its own Plan Runs' results (docs/security.md): what
// it forges in its namespace moves only its own instances' outcomes, one count each, and never
// another namespace's counts.
func TestFleetPreviewForgedNamespace(t *testing.T) {
	ro := &v1alpha1.RolloutStatus{From: "m-1", To: "m-2", Phase: v1alpha1.RolloutWaiting}
	of := func(outcome string) *kinds.ShownPreview {
		return &kinds.ShownPreview{Revision: "m-2", Outcome: outcome}
	}
	b := []unstructured.Unstructured{
		previewInstance("b", "rep", map[string]any{}, &kinds.ShownPreview{Revision: "m-2", Outcome: kinds.PreviewReplace, GuardRefuses: true}, "m-1"),
		previewInstance("b", "same", map[string]any{}, of(kinds.PreviewNoChanges), "m-1"),
	}
	honest := append([]unstructured.Unstructured{
		previewInstance("a", "rep", map[string]any{}, &kinds.ShownPreview{Revision: "m-2", Outcome: kinds.PreviewReplace, GuardRefuses: true}, "m-1"),
	}, b...)
	// Namespace a's tenant forged its Plan Run: huge counts, a failure, and a destroy shown as none.
	forged := append([]unstructured.Unstructured{
		previewInstance("a", "rep", map[string]any{}, &kinds.ShownPreview{Revision: "m-2", Outcome: kinds.PreviewNoChanges, Add: 1 << 40}, "m-1"),
	}, b...)
	before := fleetPreview("m-2", rollout.Fleet{Latest: "m-2", Rollout: ro}, honest)
	after := fleetPreview("m-2", rollout.Fleet{Latest: "m-2", Rollout: ro}, forged)
	nsCounts := func(p *v1alpha1.FleetPreview, ns string) v1alpha1.PreviewCounts {
		for _, n := range p.Namespaces {
			if n.Namespace == ns {
				return n.PreviewCounts
			}
		}
		return v1alpha1.PreviewCounts{}
	}
	if diff := cmp.Diff(nsCounts(before, "b"), nsCounts(after, "b")); diff != "" {
		t.Errorf("a forged result in namespace a changes nothing of namespace b's counts: -before, +after:\n%s", diff)
	}
	if diff := cmp.Diff(v1alpha1.PreviewCounts{Instances: 1, NoChanges: 1}, nsCounts(after, "a")); diff != "" {
		t.Errorf("a forged result counts as its one instance's outcome in its namespace, whatever its numbers: -want, +got:\n%s", diff)
	}
	if diff := cmp.Diff(v1alpha1.PreviewCounts{Instances: 3, NoChanges: 2, Replace: 1, ReplaceRefused: 1}, after.PreviewCounts); diff != "" {
		t.Errorf("in all, a forged result moves one count from one outcome to another: -want, +got:\n%s", diff)
	}
}
