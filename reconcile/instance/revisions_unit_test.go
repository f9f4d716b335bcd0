package instance

import (
	"context"
	"strings"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/module"
	"github.com/modkind/modkind/reconcile/kinds"
	"github.com/modkind/modkind/rollout"
	"github.com/modkind/modkind/slots"
	"github.com/modkind/modkind/terraform"
)

// Which snapshot an instance is applied with, and what an instance may not ask for.
func TestSnapshotFor(t *testing.T) {
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	latest := &module.Module{Digest: "d2", Variables: []module.Variable{{Name: "name", Type: cty.String}}}
	foreign := &v1alpha1.ModuleRevision{ObjectMeta: metav1.ObjectMeta{Name: "other-d1"},
		Spec: v1alpha1.ModuleRevisionSpec{ModuleName: "other", Revision: 1, Digest: "d1", Dir: t.TempDir()}}
	cases := map[string]struct {
		reason  string
		spec    map[string]any
		fleet   rollout.Fleet
		want    string
		wantErr string
	}{
		"Latest": {reason: "An unpinned instance without a rollout gets the kind's snapshot.", spec: map[string]any{},
			fleet: rollout.Fleet{Latest: "net-d2"}, want: "net-d2"},
		"ForeignRevision": {reason: "A tenant may not pin a revision of another Module.",
			spec:  map[string]any{"moduleRevisionRef": map[string]any{"name": "other-d1"}},
			fleet: rollout.Fleet{Latest: "net-d2"}, wantErr: "belongs to Module other, not to Module net"},
		"MissingRevision": {reason: "A pin naming no revision says which.",
			spec:  map[string]any{"moduleRevisionRef": map[string]any{"name": "net-gone"}},
			fleet: rollout.Fleet{Latest: "net-d2"}, wantErr: "net-gone"},
		"NoRevisions": {reason: "A pin on a kind without revisions (a resource kind) is refused, not ignored.",
			spec: map[string]any{"moduleRevisionRef": map[string]any{"name": "net-d1"}}, wantErr: "has recorded no ModuleRevisions"},
		"SelectorMatchesNothing": {reason: "A selector matching no revision is an error naming the Module.",
			spec:  map[string]any{"moduleRevisionSelector": map[string]any{"matchLabels": map[string]any{"channel": "stable"}}},
			fleet: rollout.Fleet{Latest: "net-d2"}, wantErr: "matches no ModuleRevision of Module net"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(s).WithObjects(foreign.DeepCopy()).Build()
			k := &generatedKind{gvk: decisionsGVK}
			snap := &kinds.Snapshot{ModuleName: "net", Module: latest}
			if tc.fleet.Latest != "" {
				fleet := tc.fleet
				snap.Revision, snap.Fleet = "net-d2", &fleet
			}
			k.snapshot.Store(snap)
			conn := &connector{kind: k, client: c, revisions: &revisionLoader{}}
			inst := &kind.Instance{Unstructured: unstructured.Unstructured{Object: map[string]any{"spec": tc.spec}}}
			inst.SetNamespace("ns")
			inst.SetName("i")
			snap, _, err := conn.snapshotFor(context.Background(), inst)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("%s\nwant an error containing %q, got %v", tc.reason, tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\n%v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, snap.Revision); diff != "" {
				t.Errorf("%s\nrevision: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// An instance held on an older revision may not set what that revision lacks, unless the API
// server put it there as the newest schema's default.
func TestFitsRevision(t *testing.T) {
	old := &module.Module{Variables: []module.Variable{{Name: "name", Type: cty.String}}}
	latest := &module.Module{Variables: []module.Variable{{Name: "name", Type: cty.String},
		{Name: "suffix", Type: cty.String, Default: "", HasDefault: true}}}
	rev := &v1alpha1.ModuleRevision{ObjectMeta: metav1.ObjectMeta{Name: "net-d1"}, Spec: v1alpha1.ModuleRevisionSpec{ModuleName: "net", Revision: 1}}
	cases := map[string]struct {
		reason  string
		fp      map[string]any
		want    map[string]any
		wantErr string
	}{
		"Fits":      {reason: "Fields the revision has pass.", fp: map[string]any{"name": "a"}, want: map[string]any{"name": "a"}},
		"Defaulted": {reason: "A newer variable at its default was filled in by the API server: left out.", fp: map[string]any{"name": "a", "suffix": ""}, want: map[string]any{"name": "a"}},
		"Set": {reason: "A newer variable set to another value is refused, naming the revision and field.", fp: map[string]any{"name": "a", "suffix": "!"},
			wantErr: "ModuleRevision net-d1 (revision 1 of Module net) has no variable for spec.forProvider field(s) suffix"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := fitsRevision(tc.fp, rev, old, latest)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("%s\nwant an error containing %q, got %v", tc.reason, tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\n%v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nfitsRevision(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// What a run's end says of the revision the instance was applied with: a guard refusal counts as
// a failure with the revision; waiting for a slot or for approval is neither success nor failure.
func TestNoteRevision(t *testing.T) {
	cases := map[string]struct {
		reason     string
		err        error
		wantCur    string
		wantFailed string
	}{
		"Applied":  {reason: "A successful apply records the revision and clears an old failure.", wantCur: "net-2"},
		"Failed":   {reason: "A failed apply records the revision as failed.", err: errors.New("apply failed"), wantCur: "net-1", wantFailed: "net-2"},
		"Refused":  {reason: "A plan the guard refused counts as a failure of the revision.", err: &terraform.RefusedPlanError{}, wantCur: "net-1", wantFailed: "net-2"},
		"Waiting":  {reason: "Waiting for a run slot is no failure.", err: errors.Wrap(&slots.FullError{Active: 1, Max: 1}, "update failed"), wantCur: "net-1", wantFailed: "net-0"},
		"Approval": {reason: "A plan waiting for approval is no failure.", err: &terraform.AwaitingApprovalError{}, wantCur: "net-1", wantFailed: "net-0"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			inst := &kind.Instance{Unstructured: unstructured.Unstructured{Object: map[string]any{
				"status": map[string]any{"moduleRevision": "net-1", "failedModuleRevision": "net-0"}}}}
			e := &external{inst: inst, snap: &kinds.Snapshot{Revision: "net-2"}}
			e.noteRevision(tc.err)
			cur, _, _ := unstructured.NestedString(inst.Object, "status", "moduleRevision")
			failed, _, _ := unstructured.NestedString(inst.Object, "status", "failedModuleRevision")
			if cur != tc.wantCur || failed != tc.wantFailed {
				t.Errorf("%s\nnoteRevision(%v): want moduleRevision %q, failedModuleRevision %q; got %q, %q", tc.reason, tc.err, tc.wantCur, tc.wantFailed, cur, failed)
			}
		})
	}
}
