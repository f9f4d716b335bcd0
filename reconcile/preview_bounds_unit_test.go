package reconcile

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/rollout"
)

// In job mode a tenant can write its own Plan Runs' results (README, "Security and RBAC"): what
// it forges in its namespace moves only its own instances' outcomes, one count each, and never
// another namespace's counts.
func TestFleetPreviewForgedNamespace(t *testing.T) {
	ro := &v1alpha1.RolloutStatus{From: "m-1", To: "m-2", Phase: v1alpha1.RolloutWaiting}
	of := func(outcome string) *shownPreview { return &shownPreview{Revision: "m-2", Outcome: outcome} }
	b := []unstructured.Unstructured{
		previewInstance("b", "rep", map[string]any{}, &shownPreview{Revision: "m-2", Outcome: PreviewReplace, GuardRefuses: true}, "m-1"),
		previewInstance("b", "same", map[string]any{}, of(PreviewNoChanges), "m-1"),
	}
	honest := append([]unstructured.Unstructured{
		previewInstance("a", "rep", map[string]any{}, &shownPreview{Revision: "m-2", Outcome: PreviewReplace, GuardRefuses: true}, "m-1"),
	}, b...)
	// Namespace a's tenant forged its Plan Run: huge counts, a failure, and a destroy shown as none.
	forged := append([]unstructured.Unstructured{
		previewInstance("a", "rep", map[string]any{}, &shownPreview{Revision: "m-2", Outcome: PreviewNoChanges, Add: 1 << 40}, "m-1"),
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

// The destructive addresses a preview shows are bounded, whatever a Run reported.
func TestShownDestructive(t *testing.T) {
	many := make([]string, 120)
	for i := range many {
		many[i] = "terraform_data.x (replace)"
	}
	long := strings.Repeat("é", 400) // 800 bytes
	cases := map[string]struct {
		reason string
		in     []string
		want   []string
	}{
		"None": {reason: "No destructive change shows none."},
		"Few":  {reason: "A few addresses show as they are.", in: []string{"a (delete)", "b (replace)"}, want: []string{"a (delete)", "b (replace)"}},
		"Many": {reason: "Past the bound, the rest is counted.", in: many, want: append(append([]string{}, many[:maxPreviewDestructive]...), "… and 70 more")},
		"Long": {reason: "A long address is cut at a character boundary.", in: []string{long}, want: []string{strings.Repeat("é", maxPreviewAddress/2) + "…"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, shownDestructive(tc.in)); diff != "" {
				t.Errorf("%s\nshownDestructive: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
