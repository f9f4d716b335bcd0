package instance

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// watchingController is the part of a controller wiring.watch uses: it starts each source it is
// given on the controller's queue, as a started controller does.
type watchingController struct {
	controller.Controller
	queue workqueue.TypedRateLimitingInterface[reconcile.Request]
}

func (c watchingController) Watch(s source.TypedSource[reconcile.Request]) error {
	return s.Start(context.Background(), c.queue)
}

// handlerSource is a source the test drives by the handler it was made with.
type handlerSource struct{}

func (handlerSource) Start(context.Context, workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	return nil
}

// A chain's next hop is reconciled by its source's status write, the one that shows the source
// Ready after its apply: at once, on the dependent's queue (Add, not AddAfter), not at a timer.
func TestSourceStatusReconcilesDependentsAtOnce(t *testing.T) {
	subnetGVK := schema.GroupVersionKind{Group: "wiring.example.org", Version: "v1alpha1", Kind: "Subnet"}
	w := newWiring(nil, nil, nil)
	netQueue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	subnetQueue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	t.Cleanup(netQueue.ShutDown)
	t.Cleanup(subnetQueue.ShutDown)
	var netEvents handler.EventHandler
	for _, k := range []struct {
		gvk schema.GroupVersionKind
		q   workqueue.TypedRateLimitingInterface[reconcile.Request]
		h   *handler.EventHandler
	}{{netGVK, netQueue, &netEvents}, {subnetGVK, subnetQueue, new(handler.EventHandler)}} {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(k.gvk)
		h := k.h
		kindSource := func(_ client.Object, eh handler.EventHandler) source.Source {
			*h = eh
			return handlerSource{}
		}
		if err := w.watch(watchingController{queue: k.q}, u, kindSource); err != nil {
			t.Fatal(err)
		}
	}
	// The subnet waits for the network: its reconcile recorded it as a source.
	w.record(instanceKey(subnetGVK, "ns", "shop"), []objKey{instanceKey(netGVK, "ns", "main")})
	before, after := &unstructured.Unstructured{}, &unstructured.Unstructured{}
	for _, u := range []*unstructured.Unstructured{before, after} {
		u.SetGroupVersionKind(netGVK)
		u.SetNamespace("ns")
		u.SetName("main")
	}
	_ = unstructured.SetNestedSlice(after.Object, []any{map[string]any{"type": "Ready", "status": "True", "reason": "Available"}}, "status", "conditions")
	netEvents.Update(context.Background(), event.UpdateEvent{ObjectOld: before, ObjectNew: after}, netQueue)
	if got := subnetQueue.Len(); got != 1 {
		t.Fatalf("the network's status write must put the subnet on its queue at once: %d queued", got)
	}
	r, _ := subnetQueue.Get()
	if diff := cmp.Diff(reconcile.Request{NamespacedName: client.ObjectKey{Namespace: "ns", Name: "shop"}}, r); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
}
