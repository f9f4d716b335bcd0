package modules

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/reconcile/kinds"
	"github.com/modkind/modkind/rollout"
)

func previewInstance(ns, name string, spec map[string]any, preview *kinds.ShownPreview, current string) unstructured.Unstructured {
	u := unstructured.Unstructured{Object: map[string]any{"spec": spec, "status": map[string]any{}}}
	u.SetNamespace(ns)
	u.SetName(name)
	if preview != nil {
		_ = unstructured.SetNestedField(u.Object, preview.Value(), "status", "revisionPreview")
	}
	if current != "" {
		_ = unstructured.SetNestedField(u.Object, current, "status", "moduleRevision")
	}
	return u
}

// How the Module counts its instances' previews.
func TestFleetPreview(t *testing.T) {
	ro := &v1alpha1.RolloutStatus{From: "m-1", To: "m-2", Phase: v1alpha1.RolloutWaiting}
	of := func(outcome string, refuses bool) *kinds.ShownPreview {
		return &kinds.ShownPreview{Revision: "m-2", Outcome: outcome, GuardRefuses: refuses}
	}
	list := []unstructured.Unstructured{
		previewInstance("a", "same", map[string]any{}, of(kinds.PreviewNoChanges, false), "m-1"),
		previewInstance("a", "upd", map[string]any{}, of(kinds.PreviewUpdate, false), "m-1"),
		previewInstance("a", "rep", map[string]any{}, of(kinds.PreviewReplace, true), "m-1"),
		previewInstance("a", "pending", map[string]any{}, nil, "m-1"),
		previewInstance("a", "old", map[string]any{}, &kinds.ShownPreview{Revision: "m-0", Outcome: kinds.PreviewUpdate}, "m-1"),
		previewInstance("a", "pinned", map[string]any{"moduleRevisionRef": map[string]any{"name": "m-1"}}, nil, "m-1"),
		previewInstance("b", "rep-ok", map[string]any{}, of(kinds.PreviewReplace, false), "m-1"),
		previewInstance("b", "del", map[string]any{}, of(kinds.PreviewDestroy, true), "m-1"),
		previewInstance("b", "fail", map[string]any{}, of(kinds.PreviewFailed, false), "m-1"),
	}
	want := &v1alpha1.FleetPreview{Revision: "m-2",
		PreviewCounts: v1alpha1.PreviewCounts{Instances: 8, Pending: 2, NoChanges: 1, Update: 1, Replace: 2, ReplaceRefused: 2, Destroy: 1, Failed: 1},
		Namespaces: []v1alpha1.NamespacePreview{
			{Namespace: "a", PreviewCounts: v1alpha1.PreviewCounts{Instances: 5, Pending: 2, NoChanges: 1, Update: 1, Replace: 1, ReplaceRefused: 1}},
			{Namespace: "b", PreviewCounts: v1alpha1.PreviewCounts{Instances: 3, Replace: 1, ReplaceRefused: 1, Destroy: 1, Failed: 1}},
		}}
	if diff := cmp.Diff(want, fleetPreview("m-2", rollout.Fleet{Latest: "m-2", Rollout: ro}, list)); diff != "" {
		t.Errorf("A pinned instance is not counted, one without a preview of To (or with one of another revision) is pending, "+
			"and each outcome is counted in all and in its namespace: -want, +got:\n%s", diff)
	}

	// Promoted: every instance moved. Those previewed stay counted; one moved before its preview
	// came is no longer pending: none will come.
	promoted := ro.DeepCopy()
	promoted.Phase = v1alpha1.RolloutProgressing
	promoted.StepStarted = &metav1.Time{Time: time.Now()}
	got := fleetPreview("m-2", rollout.Fleet{Latest: "m-2", Rollout: promoted, Spec: v1alpha1.Rollout{Policy: v1alpha1.RolloutManual}}, list)
	if got.Pending != 0 || got.Instances != 6 || got.Replace != 2 {
		t.Errorf("after promotion: want 6 instances counted with their previews and none pending, got %+v", got.PreviewCounts)
	}
}

// A preview in status reads back as written.
func TestReadPreview(t *testing.T) {
	p := kinds.ShownPreview{Revision: "m-2", Outcome: kinds.PreviewReplace, Add: 1, Change: 2, Destroy: 1, Replace: 1, GuardRefuses: true,
		Destructive: []string{"terraform_data.a (replace)"}, Basis: "b", Message: "m", PlannedAt: time.Date(2026, 11, 26, 5, 0, 0, 0, time.UTC)}
	u := previewInstance("a", "x", map[string]any{}, &p, "")
	got, ok := kinds.ReadPreview(&u)
	if diff := cmp.Diff(p, got); !ok || diff != "" {
		t.Errorf("ReadPreview(Value()): ok %t, -want, +got:\n%s", ok, diff)
	}
}
