package reconcile

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
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/module"
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
			snap := &Snapshot{ModuleName: "net", Module: latest}
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

func TestRevisionName(t *testing.T) {
	long := strings.Repeat("m", 260)
	cases := map[string]struct {
		reason string
		module string
		want   int
	}{
		"Short": {reason: "A short Module name is kept whole.", module: "net", want: len("net-0123456789")},
		"Long":  {reason: "A long Module name is cut so that the name stays within 253 characters.", module: long, want: 253},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := revisionName(tc.module, "0123456789abcdef", 10)
			if len(got) != tc.want || !strings.HasSuffix(got, "-0123456789") {
				t.Errorf("%s\nrevisionName: got %q (%d characters), want %d ending in the digest", tc.reason, got, len(got), tc.want)
			}
		})
	}
}

func TestRecordRevision(t *testing.T) {
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	digest := "0123456789abcdef0123456789abcdef"
	existing := func(name, digest string, n int64) *v1alpha1.ModuleRevision {
		return &v1alpha1.ModuleRevision{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"modkind.io/module": "net"}},
			Spec: v1alpha1.ModuleRevisionSpec{ModuleName: "net", Revision: n, Digest: digest}}
	}
	cases := map[string]struct {
		reason     string
		have       []*v1alpha1.ModuleRevision
		wantName   string
		wantNumber int64
	}{
		"First":    {reason: "The first snapshot is revision 1.", wantName: "net-0123456789", wantNumber: 1},
		"Known":    {reason: "A snapshot already recorded keeps its revision.", have: []*v1alpha1.ModuleRevision{existing("net-0123456789", digest, 3)}, wantName: "net-0123456789", wantNumber: 3},
		"Next":     {reason: "A new snapshot is numbered after the newest.", have: []*v1alpha1.ModuleRevision{existing("net-aaaaaaaaaa", "aaaaaaaaaaaa", 4)}, wantName: "net-0123456789", wantNumber: 5},
		"Collides": {reason: "A name taken by another snapshot gives way to the whole digest.", have: []*v1alpha1.ModuleRevision{existing("net-0123456789", "0123456789ffff", 1)}, wantName: "net-" + digest, wantNumber: 2},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := fake.NewClientBuilder().WithScheme(s)
			for _, r := range tc.have {
				b = b.WithObjects(r)
			}
			c := b.Build()
			r := &ModuleReconciler{client: c, apiReader: c}
			m := &v1alpha1.Module{ObjectMeta: metav1.ObjectMeta{Name: "net", Labels: map[string]string{"channel": "beta"}}}
			got, err := r.recordRevision(context.Background(), m, &module.Module{Digest: digest, Dir: "/cache/" + digest})
			if err != nil {
				t.Fatalf("%s\n%v", tc.reason, err)
			}
			if got != tc.wantName {
				t.Errorf("%s\nname: want %s, got %s", tc.reason, tc.wantName, got)
			}
			rev := &v1alpha1.ModuleRevision{}
			if err := c.Get(context.Background(), types.NamespacedName{Name: got}, rev); err != nil {
				t.Fatal(err)
			}
			if rev.Spec.Revision != tc.wantNumber {
				t.Errorf("%s\nnumber: want %d, got %d", tc.reason, tc.wantNumber, rev.Spec.Revision)
			}
			if len(tc.have) == 0 && rev.Labels["channel"] != "beta" {
				t.Errorf("%s\na new revision starts with its Module's labels, got %v", tc.reason, rev.Labels)
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
			e := &external{inst: inst, snap: &Snapshot{Revision: "net-2"}}
			e.noteRevision(tc.err)
			cur, _, _ := unstructured.NestedString(inst.Object, "status", "moduleRevision")
			failed, _, _ := unstructured.NestedString(inst.Object, "status", "failedModuleRevision")
			if cur != tc.wantCur || failed != tc.wantFailed {
				t.Errorf("%s\nnoteRevision(%v): want moduleRevision %q, failedModuleRevision %q; got %q, %q", tc.reason, tc.err, tc.wantCur, tc.wantFailed, cur, failed)
			}
		})
	}
}

// The module cache keeps the snapshot of every ModuleRevision, also one no Module serves any more.
func TestDigestsInUseKeepRevisions(t *testing.T) {
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	m := &v1alpha1.Module{ObjectMeta: metav1.ObjectMeta{Name: "net"}, Status: v1alpha1.ModuleStatus{Digest: "d3"}}
	old := &v1alpha1.ModuleRevision{ObjectMeta: metav1.ObjectMeta{Name: "net-d1"}, Spec: v1alpha1.ModuleRevisionSpec{ModuleName: "net", Revision: 1, Digest: "d1"}}
	c := &Collector{Client: fake.NewClientBuilder().WithScheme(s).WithObjects(m, old).Build()}
	got, err := c.digestsInUse(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"d3", "d1"}, got); diff != "" {
		t.Errorf("digestsInUse: -want, +got:\n%s", diff)
	}
}
