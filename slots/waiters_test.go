package slots

import (
	"context"
	"errors"
	"testing"
	"time"

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
					w.Wait(Key(gvk, req.NamespacedName))
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
			if w.took(Key(gvk, req.NamespacedName)) {
				t.Errorf("%s\nthe instance is still marked waiting after its reconcile", tc.reason)
			}
		})
	}
}
