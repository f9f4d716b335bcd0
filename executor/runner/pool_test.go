package runner

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/modkind/modkind/apis"
	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/runs"
)

// poolClient is a fake API server holding objs. With selectable, it lists Runs by the status fields
// the pool's pods select on, as an API server that knows the CRD's selectableFields does (its
// watches, unlike a real one's, send every event: the stores may hold more, never less); without,
// it refuses such lists as an API server that does not know them does.
func poolClient(s *runtime.Scheme, selectable bool, objs ...client.Object) client.WithWatch {
	b := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).WithStatusSubresource(&v1alpha1.Run{})
	if selectable {
		return b.WithIndex(&v1alpha1.Run{}, fieldRunner, func(o client.Object) []string { return []string{o.(*v1alpha1.Run).Status.Runner} }).
			WithIndex(&v1alpha1.Run{}, fieldPhase, func(o client.Object) []string { return []string{string(o.(*v1alpha1.Run).Status.Phase)} }).
			Build()
	}
	return b.WithInterceptorFuncs(interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, l client.ObjectList, opts ...client.ListOption) error {
		o := client.ListOptions{}
		o.ApplyOptions(opts)
		if o.FieldSelector != nil && !o.FieldSelector.Empty() {
			return kerrors.NewBadRequest("Unable to find \"modkind.io/v1alpha1, Resource=runs\" that match label selector \"\", field selector \"" +
				o.FieldSelector.String() + "\": field label not supported: " + fieldRunner)
		}
		return c.List(ctx, l, opts...)
	}}).Build()
}

// selectableCases are the two kinds of API server a pool's pod meets.
var selectableCases = map[string]bool{"FieldsSelectable": true, "FieldsNotSelectable": false}

func TestPoolTakesItsOwnPendingRuns(t *testing.T) {
	for name, selectable := range selectableCases {
		t.Run(name, func(t *testing.T) { testPoolTakesItsOwnPendingRuns(t, selectable) })
	}
}

func testPoolTakesItsOwnPendingRuns(t *testing.T, selectable bool) {
	s, err := apis.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	const label, key = "modkind.io/pool", "k"
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	run := func(ns, name string, pool string, phase v1alpha1.RunPhase, age time.Duration) *v1alpha1.Run {
		return &v1alpha1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name),
			Labels: map[string]string{label: pool}, CreationTimestamp: metav1.NewTime(t0.Add(-age))},
			Status: v1alpha1.RunStatus{Phase: phase}}
	}
	claimed := run("team-a", "claimed", key, v1alpha1.PhasePending, 5*time.Minute)
	objs := []client.Object{
		run("team-a", "older", key, v1alpha1.PhasePending, 4*time.Minute),
		run("team-a", "newer", key, v1alpha1.PhasePending, time.Minute),
		run("team-a", "running", key, v1alpha1.PhaseRunning, 7*time.Minute),
		run("team-a", "queued", key, v1alpha1.PhaseQueued, 7*time.Minute),
		run("team-a", "other-pool", "other", v1alpha1.PhasePending, 8*time.Minute),
		run("team-b", "other-namespace", key, v1alpha1.PhasePending, 9*time.Minute),
		claimed,
	}
	c := poolClient(s, selectable, objs...)
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(claimed), claimed); err != nil {
		t.Fatal(err)
	}
	if won, err := runs.Claim(context.Background(), c, claimed, runs.Claimant{Pod: "another", UID: "u2"}); !won || err != nil {
		t.Fatalf("claiming as another pod: %v, %v", won, err)
	}
	var took []string
	p := &Pool{Client: c, Namespace: "team-a", Label: label, Key: key, Self: runs.Claimant{Pod: "me", UID: "u1"}, Out: io.Discard,
		Execute: func(_ context.Context, run *v1alpha1.Run) error {
			if run.Status.Phase != v1alpha1.PhaseRunning {
				t.Errorf("Run %s executed %s: its claim marks it Running", run.Name, run.Status.Phase)
			}
			took = append(took, run.Name)
			return nil
		}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := p.follow(ctx); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		if _, err := p.takeNext(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Of the pool's Runs of its own namespace, only Pending ones that no other pod claimed, each
	// once, though the watch may show a claimed Run as it was before the claim for a moment.
	slices.Sort(took)
	if diff := cmp.Diff([]string{"newer", "older"}, took); diff != "" {
		t.Errorf("Runs taken: -want, +got:\n%s", diff)
	}
	for _, name := range took {
		got := &v1alpha1.Run{}
		if err := c.Get(context.Background(), types.NamespacedName{Namespace: "team-a", Name: name}, got); err != nil {
			t.Fatal(err)
		}
		if holder, ok := runs.Holder(got); !ok || holder != p.Self {
			t.Errorf("claim of %s: %+v, %v; want held by this pod", name, holder, ok)
		}
	}
}

// A Run the controller handed to this pod (Running, its status.runner naming this pod by name and
// UID) is executed first, as handed: with no write of the pod's own before it, and once only,
// though the watch shows it Running until its outcome is written. A Run handed to another pod, or
// to an earlier pod of the same name, is not this pod's.
func TestPoolExecutesRunsHandedToIt(t *testing.T) {
	for name, selectable := range selectableCases {
		t.Run(name, func(t *testing.T) { testPoolExecutesRunsHandedToIt(t, selectable) })
	}
}

func testPoolExecutesRunsHandedToIt(t *testing.T, selectable bool) {
	s, err := apis.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	const label, key = "modkind.io/pool", "k"
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	run := func(name string, phase v1alpha1.RunPhase, runner string, age time.Duration) *v1alpha1.Run {
		return &v1alpha1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name, UID: types.UID("uid-" + name),
			Labels: map[string]string{label: key}, CreationTimestamp: metav1.NewTime(t0.Add(-age))},
			Status: v1alpha1.RunStatus{Phase: phase, Runner: runner}}
	}
	objs := []client.Object{
		run("open", v1alpha1.PhasePending, "", 9*time.Minute),
		run("handed-newer", v1alpha1.PhaseRunning, "me/u1", time.Minute),
		run("handed-older", v1alpha1.PhaseRunning, "me/u1", 2*time.Minute),
		run("handed-to-other", v1alpha1.PhaseRunning, "other/u2", 10*time.Minute),
		run("handed-to-predecessor", v1alpha1.PhaseRunning, "me/u0", 10*time.Minute),
	}
	c := poolClient(s, selectable, objs...)
	versions := map[string]string{}
	for _, o := range objs {
		got := &v1alpha1.Run{}
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(o), got); err != nil {
			t.Fatal(err)
		}
		versions[got.Name] = got.ResourceVersion
	}
	var took []string
	p := &Pool{Client: c, Namespace: "team-a", Label: label, Key: key, Self: runs.Claimant{Pod: "me", UID: "u1"}, Out: io.Discard,
		Execute: func(_ context.Context, run *v1alpha1.Run) error {
			took = append(took, run.Name)
			return nil
		}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := p.follow(ctx); err != nil {
		t.Fatal(err)
	}
	// What the pod listed: where the API server selects by status fields, only the Runs handed to
	// it and those waiting for any pod; elsewhere every Run of the pool.
	mine, open := []string{"handed-newer", "handed-older"}, []string{"open"}
	if !selectable {
		mine = []string{"handed-newer", "handed-older", "handed-to-other", "handed-to-predecessor", "open"}
		open = mine
	}
	if diff := cmp.Diff(mine, storeNames(p.mine)); diff != "" {
		t.Errorf("Runs the pod follows as its own: -want, +got:\n%s", diff)
	}
	if diff := cmp.Diff(open, storeNames(p.open)); diff != "" {
		t.Errorf("Runs the pod follows as open to claims: -want, +got:\n%s", diff)
	}
	for range 5 {
		if _, err := p.takeNext(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff([]string{"handed-older", "handed-newer", "open"}, took); diff != "" {
		t.Errorf("Runs executed, in order: -want, +got:\n%s", diff)
	}
	for _, name := range []string{"handed-older", "handed-newer", "handed-to-other", "handed-to-predecessor"} {
		got := &v1alpha1.Run{}
		if err := c.Get(context.Background(), types.NamespacedName{Namespace: "team-a", Name: name}, got); err != nil {
			t.Fatal(err)
		}
		if got.ResourceVersion != versions[name] {
			t.Errorf("Run %s was written (version %s, was %s): a handed Run costs its pod no write before the outcome", name, got.ResourceVersion, versions[name])
		}
	}
}

// storeNames are the names of the Runs in store, sorted.
func storeNames(store toolscache.Store) []string {
	var names []string
	for _, obj := range store.List() {
		names = append(names, obj.(*v1alpha1.Run).Name)
	}
	slices.Sort(names)
	return names
}

// A pod whose first list fails for a moment (the API server busy, not refusing the field selector)
// lists again until it succeeds, and then follows its own Runs; one whose context ends first
// stops with the list's error.
func TestPoolListsAgainAfterAFailure(t *testing.T) {
	s, err := apis.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	const label, key = "modkind.io/pool", "k"
	handed := &v1alpha1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "handed", UID: "uid-handed", Labels: map[string]string{label: key}},
		Status: v1alpha1.RunStatus{Phase: v1alpha1.PhaseRunning, Runner: "me/u1"}}
	cases := map[string]struct {
		reason   string
		failures int // how many lists fail before they succeed; -1: all of them
		wantErr  bool
		wantMine []string
	}{
		"BusyForAMoment": {
			reason:   "Two failed lists are tried again; the third succeeds and the pod follows the Run handed to it.",
			failures: 2,
			wantMine: []string{"handed"},
		},
		"BusyUntilTheEnd": {
			reason:   "A pod whose lists fail until its context ends stops, saying why.",
			failures: -1,
			wantErr:  true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			failed := 0
			c := fake.NewClientBuilder().WithScheme(s).WithObjects(handed.DeepCopy()).WithStatusSubresource(&v1alpha1.Run{}).
				WithIndex(&v1alpha1.Run{}, fieldRunner, func(o client.Object) []string { return []string{o.(*v1alpha1.Run).Status.Runner} }).
				WithIndex(&v1alpha1.Run{}, fieldPhase, func(o client.Object) []string { return []string{string(o.(*v1alpha1.Run).Status.Phase)} }).
				WithInterceptorFuncs(interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, l client.ObjectList, opts ...client.ListOption) error {
					if tc.failures < 0 || failed < tc.failures {
						failed++
						return kerrors.NewServiceUnavailable("the API server is busy")
					}
					return c.List(ctx, l, opts...)
				}}).Build()
			p := &Pool{Client: c, Namespace: "team-a", Label: label, Key: key, Self: runs.Claimant{Pod: "me", UID: "u1"}, Out: io.Discard,
				listRetry: time.Millisecond}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if tc.wantErr {
				cancel()
			}
			defer cancel()
			err := p.follow(ctx)
			if tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), "the API server is busy") {
					t.Errorf("%s\nfollow: %v, want the list's error", tc.reason, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\nfollow: %v", tc.reason, err)
			}
			if failed != tc.failures {
				t.Errorf("%s\nfailed lists: %d, want %d", tc.reason, failed, tc.failures)
			}
			if diff := cmp.Diff(tc.wantMine, storeNames(p.mine)); diff != "" {
				t.Errorf("%s\nRuns the pod follows as its own: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
