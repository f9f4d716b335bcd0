package job

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/slots"
)

// A Run that stops being active starts, at once, the instance of the kind that has waited longest
// for a run slot; one woken is not woken again before it is reconciled, one that finds the slot
// taken waits on in its place, and one that got its slot waits no more.
func TestSlotFreedWakesLongestWaiter(t *testing.T) {
	kind := schema.GroupVersionKind{Group: "example.org", Version: "v1alpha1", Kind: "Thing"}
	other := schema.GroupVersionKind{Group: "example.org", Version: "v1alpha1", Kind: "Other"}
	x := &Executor{Waiters: &slots.Waiters{}}
	full := map[string]bool{}
	reconcileAs := func(gvk schema.GroupVersionKind, name string) {
		nn := types.NamespacedName{Namespace: "team-a", Name: name}
		r := x.Waiters.Paced(gvk, reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
			if full[name] {
				x.Waiters.Wait(slots.Key(gvk, nn), &slots.FullError{Active: 4, Max: 4})
			}
			return reconcile.Result{}, nil
		}))
		if _, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: nn}); err != nil {
			t.Fatal(err)
		}
	}
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	h := x.SlotFreed(kind)
	run := func(p v1alpha1.RunPhase) *v1alpha1.Run { return &v1alpha1.Run{Status: v1alpha1.RunStatus{Phase: p}} }
	ended := func(from, to v1alpha1.RunPhase) []string {
		h.Update(context.Background(), event.UpdateEvent{ObjectOld: run(from), ObjectNew: run(to)}, q)
		var woken []string
		for q.Len() > 0 {
			req, _ := q.Get()
			woken = append(woken, req.Name)
			q.Done(req)
			q.Forget(req)
		}
		return woken
	}
	check := func(reason string, want, got []string) {
		t.Helper()
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s\nwoken: -want +got:\n%s", reason, diff)
		}
	}

	full["first"], full["second"], full["elsewhere"] = true, true, true
	reconcileAs(kind, "first")
	reconcileAs(other, "elsewhere")
	reconcileAs(kind, "second")

	check("A Run that keeps running frees no slot.", nil, ended(v1alpha1.PhaseRunning, v1alpha1.PhaseRunning))
	check("The instance that waited longest goes first; another kind's waiter is its own controller's.", []string{"first"}, ended(v1alpha1.PhaseRunning, v1alpha1.PhaseSucceeded))
	check("The next freed slot goes to the next waiter, not again to one woken already.", []string{"second"}, ended(v1alpha1.PhasePending, v1alpha1.PhaseFailed))
	check("With every waiter woken, nobody is woken twice.", nil, ended(v1alpha1.PhaseRunning, v1alpha1.PhaseWaitingForApproval))

	// "first" finds the slot taken (another kind's waiter got it) and waits on in its place;
	// "second" got its slot.
	reconcileAs(kind, "first")
	full["second"] = false
	reconcileAs(kind, "second")
	check("A woken instance that found no slot keeps its place.", []string{"first"}, ended(v1alpha1.PhaseRunning, v1alpha1.PhaseSucceeded))
	full["first"] = false
	reconcileAs(kind, "first")
	check("An instance that got its slot waits no more.", nil, ended(v1alpha1.PhaseRunning, v1alpha1.PhaseSucceeded))

	h.Delete(context.Background(), event.DeleteEvent{Object: run(v1alpha1.PhaseRunning)}, q)
	if q.Len() != 0 {
		t.Errorf("with no waiter left, a deleted active Run wakes nobody")
	}
}

// A Run that stops being active also wakes the longest waiter of its own namespace, whose share it
// freed: in job mode the instances of a namespace that holds its share count on that, and try
// again only now and then on their own.
func TestSlotFreedWakesItsNamespace(t *testing.T) {
	kind := schema.GroupVersionKind{Group: "example.org", Version: "v1alpha1", Kind: "Thing"}
	x := &Executor{Waiters: &slots.Waiters{WakesNamespaces: true}}
	wait := func(ns, name string, why error) {
		nn := types.NamespacedName{Namespace: ns, Name: name}
		r := x.Waiters.Paced(kind, reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
			x.Waiters.Wait(slots.Key(kind, nn), why)
			return reconcile.Result{}, nil
		}))
		if _, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: nn}); err != nil {
			t.Fatal(err)
		}
	}
	shareFull := &slots.ShareFullError{Namespace: "team-a", Active: 2, Share: 2}
	wait("team-b", "b1", &slots.FullError{Active: 4, Max: 4})
	wait("team-a", "a1", shareFull)
	wait("team-a", "a2", shareFull)

	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	h := x.SlotFreed(kind)
	ended := func(ns string) []string {
		old := &v1alpha1.Run{Status: v1alpha1.RunStatus{Phase: v1alpha1.PhaseRunning}}
		old.Namespace = ns
		now := old.DeepCopy()
		now.Status.Phase = v1alpha1.PhaseSucceeded
		h.Update(context.Background(), event.UpdateEvent{ObjectOld: old, ObjectNew: now}, q)
		var woken []string
		for q.Len() > 0 {
			req, _ := q.Get()
			woken = append(woken, req.String())
			q.Done(req)
			q.Forget(req)
		}
		return woken
	}
	if diff := cmp.Diff([]string{"team-a/a1", "team-a/a2"}, ended("team-a")); diff != "" {
		t.Errorf("A team-a Run's end wakes the waiter whose turn it is (team-a's first, round robin) and the longest of team-a's not woken yet:\n-want +got:\n%s", diff)
	}
	if diff := cmp.Diff([]string{"team-b/b1"}, ended("team-a")); diff != "" {
		t.Errorf("The next Run's end wakes the next namespace in turn; team-a has no waiter left that was not woken:\n-want +got:\n%s", diff)
	}
	if diff := cmp.Diff([]string(nil), ended("team-c")); diff != "" {
		t.Errorf("With every waiter woken, nobody is woken again:\n-want +got:\n%s", diff)
	}
}
