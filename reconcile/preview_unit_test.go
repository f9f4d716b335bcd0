package reconcile

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
	"github.com/modkind/modkind/rollout"
	"github.com/modkind/modkind/slots"
	"github.com/modkind/modkind/state"
)

// Which instances a rollout previews, and with which revision.
func TestPreviewTarget(t *testing.T) {
	waiting := &v1alpha1.RolloutStatus{From: "m-1", To: "m-2", Phase: v1alpha1.RolloutWaiting}
	with := func(phase v1alpha1.RolloutPhase) *rollout.Fleet {
		r := waiting.DeepCopy()
		r.Phase = phase
		return &rollout.Fleet{Latest: "m-2", Rollout: r}
	}
	x := rollout.Member{Key: "a/x", Namespace: "a", UID: "u-x", Current: "m-1"}
	// The rollout moved it: it is applied with To.
	moved := rollout.Member{Key: "a/moved", Namespace: "a", UID: "u-moved", Current: "m-2"}
	cases := map[string]struct {
		reason string
		key    rollout.Member
		pin    rollout.Pin
		fleet  *rollout.Fleet
		want   string
	}{
		"Manual":      {reason: "A Manual rollout waiting for promotion previews To for every instance not moved.", key: x, fleet: with(v1alpha1.RolloutWaiting), want: "m-2"},
		"Progressing": {reason: "A Staged rollout previews the instances its later steps will move.", key: x, fleet: with(v1alpha1.RolloutProgressing), want: "m-2"},
		"Paused":      {reason: "A paused rollout still previews what it will move.", key: x, fleet: with(v1alpha1.RolloutPausedPhase), want: "m-2"},
		"Moved":       {reason: "An instance the rollout moved is applied with To, not previewed.", key: moved, fleet: with(v1alpha1.RolloutWaiting)},
		"Pinned":      {reason: "A pinned instance does not move: nothing to preview.", key: x, pin: rollout.Pin{Ref: "m-1"}, fleet: with(v1alpha1.RolloutWaiting)},
		"Selector":    {reason: "An instance following a selector does not move with the rollout.", key: x, pin: rollout.Pin{Selector: map[string]string{"channel": "stable"}}, fleet: with(v1alpha1.RolloutWaiting)},
		"Automatic":   {reason: "Without status.rollout (Automatic) every instance moves at once: no preview.", key: x, fleet: &rollout.Fleet{Latest: "m-2"}},
		"NoFleet":     {reason: "A kind without revisions has nothing to preview.", key: x},
		"Complete":    {reason: "A complete rollout moved everything.", key: x, fleet: with(v1alpha1.RolloutComplete)},
		"Stopped":     {reason: "A stopped rollout moves nothing further.", key: x, fleet: with(v1alpha1.RolloutStopped)},
		"Undone":      {reason: "An undone rollout moves nothing to To.", key: x, fleet: with(v1alpha1.RolloutUndone)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, previewTarget(tc.key, tc.pin, tc.fleet)); diff != "" {
				t.Errorf("%s\npreviewTarget(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// When an instance is planned again with the revision it was previewed with.
func TestPreviewDue(t *testing.T) {
	now := time.Date(2026, 11, 26, 5, 0, 0, 0, time.UTC)
	done := shownPreview{Revision: "m-2", Outcome: PreviewUpdate, Basis: "b1", PlannedAt: now.Add(-time.Hour)}
	failed := func(ago time.Duration) shownPreview {
		return shownPreview{Revision: "m-2", Outcome: PreviewFailed, Basis: "b1", PlannedAt: now.Add(-ago)}
	}
	cases := map[string]struct {
		reason string
		shown  shownPreview
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
		"NoChanges": {reason: "A plan with no changes.", want: want{outcome: PreviewNoChanges}},
		"Update":    {reason: "In-place changes.", plan: v1alpha1.RunPlan{Change: 2}, want: want{outcome: PreviewUpdate}},
		"Add":       {reason: "Objects created and none destroyed is an Update.", plan: v1alpha1.RunPlan{Add: 1}, want: want{outcome: PreviewUpdate}},
		"Replace": {reason: "A replacement the instance does not allow is refused.",
			plan: v1alpha1.RunPlan{Add: 1, Destroy: 1, Replace: 1, Destructive: []string{"terraform_data.a (replace)"}}, want: want{outcome: PreviewReplace, refuses: true}},
		"ReplaceAllowed": {reason: "spec.allowDestructive lets the guard pass a replacement.", allow: true,
			plan: v1alpha1.RunPlan{Add: 1, Destroy: 1, Replace: 1, Destructive: []string{"terraform_data.a (replace)"}}, want: want{outcome: PreviewReplace}},
		"Destroy": {reason: "A deletion is a Destroy.",
			plan: v1alpha1.RunPlan{Destroy: 1, Destructive: []string{"terraform_data.b (delete)"}}, want: want{outcome: PreviewDestroy, refuses: true}},
		"DestroyAndReplace": {reason: "A plan that deletes outright is a Destroy, even when it replaces too.",
			plan: v1alpha1.RunPlan{Add: 1, Destroy: 2, Replace: 1, Destructive: []string{"a (replace)", "b (delete)"}}, want: want{outcome: PreviewDestroy, refuses: true}},
		"Tainted": {reason: "A tainted object replaced finishes its creation: not destructive, an Update.",
			plan: v1alpha1.RunPlan{Add: 1, Destroy: 1}, want: want{outcome: PreviewUpdate}},
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

func previewInstance(ns, name string, spec map[string]any, preview *shownPreview, current string) unstructured.Unstructured {
	u := unstructured.Unstructured{Object: map[string]any{"spec": spec, "status": map[string]any{}}}
	u.SetNamespace(ns)
	u.SetName(name)
	if preview != nil {
		_ = unstructured.SetNestedField(u.Object, preview.value(), "status", "revisionPreview")
	}
	if current != "" {
		_ = unstructured.SetNestedField(u.Object, current, "status", "moduleRevision")
	}
	return u
}

// How the Module counts its instances' previews.
func TestFleetPreview(t *testing.T) {
	ro := &v1alpha1.RolloutStatus{From: "m-1", To: "m-2", Phase: v1alpha1.RolloutWaiting}
	of := func(outcome string, refuses bool) *shownPreview {
		return &shownPreview{Revision: "m-2", Outcome: outcome, GuardRefuses: refuses}
	}
	list := []unstructured.Unstructured{
		previewInstance("a", "same", map[string]any{}, of(PreviewNoChanges, false), "m-1"),
		previewInstance("a", "upd", map[string]any{}, of(PreviewUpdate, false), "m-1"),
		previewInstance("a", "rep", map[string]any{}, of(PreviewReplace, true), "m-1"),
		previewInstance("a", "pending", map[string]any{}, nil, "m-1"),
		previewInstance("a", "old", map[string]any{}, &shownPreview{Revision: "m-0", Outcome: PreviewUpdate}, "m-1"),
		previewInstance("a", "pinned", map[string]any{"moduleRevisionRef": map[string]any{"name": "m-1"}}, nil, "m-1"),
		previewInstance("b", "rep-ok", map[string]any{}, of(PreviewReplace, false), "m-1"),
		previewInstance("b", "del", map[string]any{}, of(PreviewDestroy, true), "m-1"),
		previewInstance("b", "fail", map[string]any{}, of(PreviewFailed, false), "m-1"),
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
	p := shownPreview{Revision: "m-2", Outcome: PreviewReplace, Add: 1, Change: 2, Destroy: 1, Replace: 1, GuardRefuses: true,
		Destructive: []string{"terraform_data.a (replace)"}, Basis: "b", Message: "m", PlannedAt: time.Date(2026, 11, 26, 5, 0, 0, 0, time.UTC)}
	u := previewInstance("a", "x", map[string]any{}, &p, "")
	got, ok := readPreview(&u)
	if diff := cmp.Diff(p, got); !ok || diff != "" {
		t.Errorf("readPreview(value()): ok %t, -want, +got:\n%s", ok, diff)
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
			outcome: PreviewReplace, refuses: true,
		},
		{
			reason: "Allowed: with allowDestructivePlans the guard would let the replacement through.",
			inst: note(func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(u.Object, true, "spec", "allowDestructivePlans")
			}), stored: stateOf(1, current),
			exec:    fakeExecutor{results: map[v1alpha1.RunOperation]executor.Result{v1alpha1.OperationPlan: {Preview: replace}}},
			want:    want{ran: []v1alpha1.RunOperation{v1alpha1.OperationPlan}, synced: "True", ready: "True"},
			outcome: PreviewReplace,
		},
		{
			reason: "Failed preview: the instance shows why, and stays Ready and Synced.",
			inst:   note(nil), stored: stateOf(1, current),
			exec:    fakeExecutor{results: map[v1alpha1.RunOperation]executor.Result{v1alpha1.OperationPlan: {Err: errors.New("terraform plan failed: boom")}}},
			want:    want{ran: []v1alpha1.RunOperation{v1alpha1.OperationPlan}, synced: "True", ready: "True"},
			outcome: PreviewFailed, message: "boom",
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
			p, ok := readPreview(got)
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
