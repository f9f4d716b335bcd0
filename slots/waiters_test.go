package slots

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// reconcileFunc is a reconcile.Reconciler made of a function.
type reconcileFunc func(context.Context, reconcile.Request) (reconcile.Result, error)

func (f reconcileFunc) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return f(ctx, req)
}

// An instance that found no free run slot is retried within seconds, whatever the work queue's
// backoff would say; every other result is left as the managed reconciler returned it.
func TestSlotPacedReconciler(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "example.org", Version: "v1alpha1", Kind: "Thing"}
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "team-a", Name: "one"}}
	failed := errors.New("cannot update status")
	cases := map[string]struct {
		reason  string
		waiting bool
		why     error
		inner   reconcile.Result
		err     error
		paced   bool
	}{
		"Waiting": {
			reason:  "A create refused for want of a slot comes back in 2–4 s, not after a growing backoff.",
			waiting: true, inner: reconcile.Result{Requeue: true}, paced: true,
		},
		"NotWaiting": {
			reason: "Any other requeue is the managed reconciler's.",
			inner:  reconcile.Result{Requeue: true},
		},
		"WaitingForShare": {
			reason:  "Without an executor that wakes a namespace's waiters, one waiting for its namespace's share too comes back in 2–4 s.",
			waiting: true, why: &ShareFullError{Namespace: "team-a", Active: 2, Share: 2}, inner: reconcile.Result{Requeue: true}, paced: true,
		},
		"WaitingButFailed": {
			reason:  "An error of the reconcile itself keeps its backoff.",
			waiting: true, inner: reconcile.Result{Requeue: true}, err: failed,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := &Waiters{}
			r := w.Paced(gvk, reconcileFunc(func(context.Context, reconcile.Request) (reconcile.Result, error) {
				if tc.waiting {
					w.Wait(Key(gvk, req.NamespacedName), cmpOr(tc.why, error(&FullError{Active: 4, Max: 4})))
				}
				return tc.inner, tc.err
			}))
			got, err := r.Reconcile(context.Background(), req)
			if !errors.Is(err, tc.err) {
				t.Errorf("%s\nerror: got %v, want %v", tc.reason, err, tc.err)
			}
			switch {
			case tc.paced && (got.Requeue || got.RequeueAfter < 2*time.Second || got.RequeueAfter >= 4*time.Second):
				t.Errorf("%s\ngot %+v, want a RequeueAfter of 2–4 s", tc.reason, got)
			case !tc.paced && got != tc.inner:
				t.Errorf("%s\ngot %+v, want the inner result %+v", tc.reason, got, tc.inner)
			}
			if waits, _ := w.took(Key(gvk, req.NamespacedName)); waits {
				t.Errorf("%s\nthe instance is still marked waiting after its reconcile", tc.reason)
			}
		})
	}
}

// cmpOr is a, or b when a is nil.
func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// In job mode (a Run's end wakes its namespace's longest waiter), the instances of a namespace
// that holds its share try again at a pace that keeps their namespace's tries near two a second,
// however many they are; those waiting for any free slot keep trying every 2–4 s.
func TestSharePace(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "example.org", Version: "v1alpha1", Kind: "Thing"}
	share := &ShareFullError{Namespace: "team-a", Active: 2, Share: 2}
	full := &FullError{Active: 4, Max: 4}
	cases := map[string]struct {
		reason   string
		waiting  int
		why      error
		min, max time.Duration
	}{
		"FewForTheirShare":  {reason: "A few waiters for their share try every 2–4 s.", waiting: 3, why: share, min: 2 * time.Second, max: 4 * time.Second},
		"ManyForTheirShare": {reason: "40 waiters for their share each try every 20–40 s: about two tries a second together.", waiting: 40, why: share, min: 20 * time.Second, max: 40 * time.Second},
		"ThousandsForTheirShare": {reason: "However many, each tries at least once a minute.", waiting: 5000, why: share,
			min: 30 * time.Second, max: 60 * time.Second},
		"ManyForAnySlot": {reason: "Waiters for any free slot (the slot any Run's end frees) keep trying every 2–4 s.", waiting: 40, why: full, min: 2 * time.Second, max: 4 * time.Second},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := &Waiters{WakesNamespaces: true}
			var last reconcile.Result
			for i := range tc.waiting {
				nn := types.NamespacedName{Namespace: "team-a", Name: fmt.Sprintf("i%d", i)}
				r := w.Paced(gvk, reconcileFunc(func(context.Context, reconcile.Request) (reconcile.Result, error) {
					w.Wait(Key(gvk, nn), tc.why)
					return reconcile.Result{}, nil
				}))
				var err error
				if last, err = r.Reconcile(context.Background(), reconcile.Request{NamespacedName: nn}); err != nil {
					t.Fatal(err)
				}
			}
			if last.RequeueAfter < tc.min || last.RequeueAfter >= tc.max {
				t.Errorf("%s\nthe last of %d waiters comes back after %s, want %s to %s", tc.reason, tc.waiting, last.RequeueAfter, tc.min, tc.max)
			}
		})
	}
}

// NextIn wakes the longest waiter of one namespace that was not woken yet.
func TestNextIn(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "example.org", Version: "v1alpha1", Kind: "Thing"}
	other := schema.GroupVersionKind{Group: "example.org", Version: "v1alpha1", Kind: "Other"}
	w := &Waiters{}
	for _, q := range []struct {
		gvk schema.GroupVersionKind
		nn  types.NamespacedName
	}{
		{other, types.NamespacedName{Namespace: "team-a", Name: "other"}},
		{gvk, types.NamespacedName{Namespace: "team-b", Name: "b"}},
		{gvk, types.NamespacedName{Namespace: "team-a", Name: "first"}},
		{gvk, types.NamespacedName{Namespace: "team-a", Name: "second"}},
	} {
		w.waiting(q.gvk, q.nn)
	}
	var got []string
	for {
		nn, ok := w.NextIn(gvk, "team-a")
		if !ok {
			break
		}
		got = append(got, nn.Name)
	}
	if diff := cmp.Diff([]string{"first", "second"}, got); diff != "" {
		t.Errorf("team-a's waiters of the kind, longest first, each once (another kind's and namespace's left alone):\n-want +got:\n%s", diff)
	}
}
