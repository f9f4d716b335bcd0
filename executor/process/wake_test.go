package process

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/modkind/modkind/slots"
	"github.com/modkind/modkind/terraform"
)

// watchingController keeps the source a Watch is given.
type watchingController struct {
	controller.Controller
	src source.Source
}

func (c *watchingController) Watch(src source.Source) error { c.src = src; return nil }

// A run slot freed in this process reconciles at once the instance that has waited longest for
// its namespace's share, rather than at its next try.
func TestFreedSlotWakesTheNextWaiter(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "example.org", Version: "v1alpha1", Kind: "Net"}
	waiters := &slots.Waiters{WakesNamespaces: true}
	pool := slots.NewPool(slots.Policy{Total: 1, PerNamespace: 1})
	x := &Executor{Harness: &terraform.Harness{Slots: pool}, Waiters: waiters}
	c := &watchingController{}
	if err := x.Watch(c, gvk); err != nil {
		t.Fatal(err)
	}
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := c.src.Start(ctx, q); err != nil {
		t.Fatal(err)
	}

	// An instance of team-a finds its namespace's share taken, and waits.
	waiting := types.NamespacedName{Namespace: "team-a", Name: "net-2"}
	refused := reconcile.Func(func(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
		waiters.Wait(slots.Key(gvk, req.NamespacedName), &slots.ShareFullError{Namespace: "team-a", Active: 1, Share: 1})
		return reconcile.Result{}, nil
	})
	if _, err := waiters.Paced(gvk, refused).Reconcile(ctx, reconcile.Request{NamespacedName: waiting}); err != nil {
		t.Fatal(err)
	}
	if q.Len() != 0 {
		t.Fatalf("nothing is woken before a slot is freed, queued %d", q.Len())
	}

	release, err := pool.Acquire(ctx, "team-a")
	if err != nil {
		t.Fatal(err)
	}
	release()
	got := make(chan reconcile.Request, 1)
	go func() {
		if r, shutdown := q.Get(); !shutdown {
			got <- r
		}
	}()
	select {
	case r := <-got:
		if r.NamespacedName != waiting {
			t.Errorf("the freed slot woke %s, want %s", r.NamespacedName, waiting)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the freed slot woke no waiting instance")
	}
}
