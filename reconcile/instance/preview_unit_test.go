package instance

import (
	"strings"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/executor"
	"github.com/modkind/modkind/module"
	"github.com/modkind/modkind/reconcile/kinds"
	"github.com/modkind/modkind/rollout"
	"github.com/modkind/modkind/slots"
	"github.com/modkind/modkind/state"
)

// When an instance is planned again with the revision it was previewed with.
func TestPreviewDue(t *testing.T) {
	now := time.Date(2026, 11, 26, 5, 0, 0, 0, time.UTC)
	done := kinds.ShownPreview{Revision: "m-2", Outcome: kinds.PreviewUpdate, Basis: "b1", PlannedAt: now.Add(-time.Hour)}
	failed := func(ago time.Duration) kinds.ShownPreview {
		return kinds.ShownPreview{Revision: "m-2", Outcome: kinds.PreviewFailed, Basis: "b1", PlannedAt: now.Add(-ago)}
	}
	cases := map[string]struct {
		reason string
		shown  kinds.ShownPreview
		ok     bool
		target string
		basis  string
		want   bool
	}{
		"None":         {reason: "An instance never previewed is planned.", target: "m-2", basis: "b1", want: true},
		"Same":         {reason: "The same revision from the same basis is not planned again.", shown: done, ok: true, target: "m-2", basis: "b1"},
		"NewRevision":  {reason: "A preview of another revision is replaced.", shown: done, ok: true, target: "m-3", basis: "b1", want: true},
		"NewBasis":     {reason: "A changed spec, input, module or state plans again.", shown: done, ok: true, target: "m-2", basis: "b2", want: true},
		"FailedRecent": {reason: "A failed preview is not retried at once.", shown: failed(time.Minute), ok: true, target: "m-2", basis: "b1"},
		"FailedOld":    {reason: "A failed preview is retried after previewRetry.", shown: failed(previewRetry), ok: true, target: "m-2", basis: "b1", want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := previewDue(tc.shown, tc.ok, tc.target, tc.basis, now); got != tc.want {
				t.Errorf("%s\npreviewDue(...): want %t, got %t", tc.reason, tc.want, got)
			}
		})
	}
	if previewBasis(1, "in", "d2", "l", 3) == previewBasis(2, "in", "d2", "l", 3) ||
		previewBasis(1, "in", "d2", "l", 3) == previewBasis(1, "in", "d3", "l", 3) ||
		previewBasis(1, "in", "d2", "l", 3) == previewBasis(1, "in", "d2", "l", 4) {
		t.Error("previewBasis must change with the generation, the revision's module and the state serial")
	}
}

// What a plan summary means for an instance.
func TestClassifyPreview(t *testing.T) {
	type want struct {
		outcome string
		refuses bool
	}
	cases := map[string]struct {
		reason string
		plan   v1alpha1.RunPlan
		allow  bool
		want   want
	}{
		"NoChanges": {reason: "A plan with no changes.", want: want{outcome: kinds.PreviewNoChanges}},
		"Update":    {reason: "In-place changes.", plan: v1alpha1.RunPlan{Change: 2}, want: want{outcome: kinds.PreviewUpdate}},
		"Add":       {reason: "Objects created and none destroyed is an Update.", plan: v1alpha1.RunPlan{Add: 1}, want: want{outcome: kinds.PreviewUpdate}},
		"Replace": {reason: "A replacement the instance does not allow is refused.",
			plan: v1alpha1.RunPlan{Add: 1, Destroy: 1, Replace: 1, Destructive: []string{"terraform_data.a (replace)"}}, want: want{outcome: kinds.PreviewReplace, refuses: true}},
		"ReplaceAllowed": {reason: "spec.allowDestructive lets the guard pass a replacement.", allow: true,
			plan: v1alpha1.RunPlan{Add: 1, Destroy: 1, Replace: 1, Destructive: []string{"terraform_data.a (replace)"}}, want: want{outcome: kinds.PreviewReplace}},
		"Destroy": {reason: "A deletion is a Destroy.",
			plan: v1alpha1.RunPlan{Destroy: 1, Destructive: []string{"terraform_data.b (delete)"}}, want: want{outcome: kinds.PreviewDestroy, refuses: true}},
		"DestroyAndReplace": {reason: "A plan that deletes outright is a Destroy, even when it replaces too.",
			plan: v1alpha1.RunPlan{Add: 1, Destroy: 2, Replace: 1, Destructive: []string{"a (replace)", "b (delete)"}}, want: want{outcome: kinds.PreviewDestroy, refuses: true}},
		"Tainted": {reason: "A tainted object replaced finishes its creation: not destructive, an Update.",
			plan: v1alpha1.RunPlan{Add: 1, Destroy: 1}, want: want{outcome: kinds.PreviewUpdate}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			outcome, refuses := classify(&tc.plan, tc.allow)
			if diff := cmp.Diff(tc.want, want{outcome, refuses}, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nclassify(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// inManualRollout puts the kind under a Manual rollout waiting for promotion from notes-1, which
// the instance is applied with, to notes-2, the kind's newest snapshot.
func inManualRollout(t *testing.T) func(c *connector) {
	return func(c *connector) {
		old := decisionsModule()
		old.Digest = "module-0"
		rev := &v1alpha1.ModuleRevision{ObjectMeta: metav1.ObjectMeta{Name: "notes-1"},
			Spec: v1alpha1.ModuleRevisionSpec{ModuleName: "notes", Revision: 1, Digest: old.Digest, Dir: old.Dir}}
		if err := c.client.(client.Client).Create(t.Context(), rev); err != nil {
			t.Fatal(err)
		}
		c.revisions = &revisionLoader{modules: map[string]*module.Module{"notes-1": old}}
		snap := *c.kind.Snapshot()
		snap.Revision = "notes-2"
		snap.Fleet = &rollout.Fleet{Latest: "notes-2", Rollout: &v1alpha1.RolloutStatus{From: "notes-1", To: "notes-2", Phase: v1alpha1.RolloutWaiting}}
		c.kind.snapshot.Store(&snap)
	}
}

// What an instance under a Manual rollout does about the preview of the revision it will move
// to, through the real managed reconciler: it plans it only when nothing else is needed, once,
// and shows the result without changing its conditions.
func TestPreviewDecisions(t *testing.T) {
	replace := &v1alpha1.RunPlan{Add: 1, Destroy: 1, Replace: 1, Destructive: []string{"terraform_data.note (replace)"}}
	cases := []struct {
		reason string
		inst   *unstructured.Unstructured
		stored *state.Stored
		exec   fakeExecutor
		again  bool
		want   want
		// outcome is the preview status shows, "" for none; message a part of its message.
		outcome, message string
		refuses          bool
	}{
		{
			reason: "Previewed once: an up-to-date instance plans the new revision, shows a replacement the guard would refuse, and stays Ready; the next reconcile plans nothing.",
			inst:   note(nil), stored: stateOf(1, current), again: true,
			exec:    fakeExecutor{results: map[v1alpha1.RunOperation]executor.Result{v1alpha1.OperationPlan: {Preview: replace}}},
			want:    want{ran: []v1alpha1.RunOperation{v1alpha1.OperationPlan}, synced: "True", ready: "True"},
			outcome: kinds.PreviewReplace, refuses: true,
		},
		{
			reason: "Allowed: with allowDestructivePlans the guard would let the replacement through.",
			inst: note(func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(u.Object, true, "spec", "allowDestructivePlans")
			}), stored: stateOf(1, current),
			exec:    fakeExecutor{results: map[v1alpha1.RunOperation]executor.Result{v1alpha1.OperationPlan: {Preview: replace}}},
			want:    want{ran: []v1alpha1.RunOperation{v1alpha1.OperationPlan}, synced: "True", ready: "True"},
			outcome: kinds.PreviewReplace,
		},
		{
			reason: "Failed preview: the instance shows why, and stays Ready and Synced.",
			inst:   note(nil), stored: stateOf(1, current),
			exec:    fakeExecutor{results: map[v1alpha1.RunOperation]executor.Result{v1alpha1.OperationPlan: {Err: errors.New("terraform plan failed: boom")}}},
			want:    want{ran: []v1alpha1.RunOperation{v1alpha1.OperationPlan}, synced: "True", ready: "True"},
			outcome: kinds.PreviewFailed, message: "boom",
		},
		{
			reason: "Real work first: an instance whose inputs changed is applied, and not previewed in that reconcile.",
			inst:   note(nil), stored: stateOf(1, "old"),
			exec: fakeExecutor{results: map[v1alpha1.RunOperation]executor.Result{v1alpha1.OperationApply: {Stored: stateOf(1, current), Plan: plan}}},
			want: want{ran: []v1alpha1.RunOperation{v1alpha1.OperationApply}, synced: "True", ready: "True", lastPlan: "abc123"},
		},
		{
			reason: "Waiting for a run slot: nothing shown, the instance stays Synced and tries again.",
			inst:   note(nil), stored: stateOf(1, current),
			exec: fakeExecutor{results: map[v1alpha1.RunOperation]executor.Result{v1alpha1.OperationPlan: {Err: &slots.ShareFullError{Namespace: "team-a", Active: 2, Share: 2}}}},
			want: want{ran: []v1alpha1.RunOperation{v1alpha1.OperationPlan}, synced: "True", ready: "True"},
		},
		{
			reason: "Pinned: an instance the rollout passes by is not previewed.",
			inst: note(func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(u.Object, "notes-1", "spec", "moduleRevisionRef", "name")
			}), stored: stateOf(1, current),
			want: want{synced: "True", ready: "True"},
		},
	}
	for _, tc := range cases {
		t.Run(strings.SplitN(tc.reason, ":", 2)[0], func(t *testing.T) {
			got, exec, _, _, _ := decide(t, tc.inst, tc.stored, tc.exec, inManualRollout(t), tc.again)
			if diff := cmp.Diff(tc.want.ran, exec.done); diff != "" {
				t.Errorf("%s\nwhat ran: -want +got:\n%s", tc.reason, diff)
			}
			checkStatus(t, tc.reason, got, tc.want)
			p, ok := kinds.ReadPreview(got)
			if tc.outcome == "" {
				if ok {
					t.Errorf("%s\nwant no preview in status, got %+v", tc.reason, p)
				}
				return
			}
			if p.Revision != "notes-2" || p.Outcome != tc.outcome || p.GuardRefuses != tc.refuses || !strings.Contains(p.Message, tc.message) {
				t.Errorf("%s\nwant a preview of notes-2: %s (guard refuses: %t) saying %q, got %+v", tc.reason, tc.outcome, tc.refuses, tc.message, p)
			}
		})
	}
}
