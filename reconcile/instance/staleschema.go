package instance

import (
	"maps"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/modkind/modkind/reconcile/kinds"
)

// oldSchemaWindow is how long after a kind's CRD changed the API server may still serve a watch
// from the kind's previous storage. The API server decodes what it reads from etcd with the
// storage's schema and prunes what that schema lacks; on a CRD change it makes new storage and
// tears the old one down once the requests that hold it end, after at most twice its request
// timeout (one minute by default). A watch begun before the change, as the controller's is,
// meanwhile delivers each instance written without the fields the change added: a field a
// tenant set at once on a new variable would be missing from what the controller decides on, and
// from any update it writes back.
const oldSchemaWindow = 150 * time.Second

// A schemaWatch knows which of a kind's instances its informer may hold as the kind's previous
// schema decoded them: every instance, for oldSchemaWindow after the kind's fields changed, and
// afterwards each version the informer received within that window, until it receives a later
// one. Those are read from the API server instead (instanceClient.Get).
type schemaWatch struct {
	mu      sync.Mutex
	now     func() time.Time
	changed time.Time
	// oldDecoded are the resourceVersions, by instance, the informer received within the window.
	oldDecoded map[types.UID]string
}

func (w *schemaWatch) clock() time.Time {
	if w.now != nil {
		return w.now()
	}
	return time.Now()
}

// servedChanged notes that the kind's snapshot moved from old to new; it starts the window when
// the fields the kind's CRD serves changed.
func (w *schemaWatch) servedChanged(old, new *kinds.Snapshot) {
	if old == nil || new == nil || maps.Equal(old.Served, new.Served) {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.changed = w.clock()
}

// inWindow reports whether the informer may receive instances decoded by the previous schema now.
// Called with w.mu held.
func (w *schemaWatch) inWindow(now time.Time) bool {
	return !w.changed.IsZero() && now.Before(w.changed.Add(oldSchemaWindow))
}

// received notes a version of an instance the informer received (nil: deleted).
func (w *schemaWatch) received(u *unstructured.Unstructured, deleted bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case deleted:
		delete(w.oldDecoded, u.GetUID())
	case w.inWindow(w.clock()):
		if w.oldDecoded == nil {
			w.oldDecoded = map[types.UID]string{}
		}
		w.oldDecoded[u.GetUID()] = u.GetResourceVersion()
	default:
		delete(w.oldDecoded, u.GetUID())
	}
}

// stale reports whether the informer's copy of an instance, of uid at version rv, may lack
// fields the kind's schema has now.
func (w *schemaWatch) stale(uid types.UID, rv string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.inWindow(w.clock()) {
		return true
	}
	got, ok := w.oldDecoded[uid]
	return ok && got == rv
}

// handler has the informer tell w of what it receives.
func (w *schemaWatch) handler() toolscache.ResourceEventHandler {
	on := func(obj any, deleted bool) {
		if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		if u, ok := obj.(*unstructured.Unstructured); ok {
			w.received(u, deleted)
		}
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { on(obj, false) },
		UpdateFunc: func(_, obj any) { on(obj, false) },
		DeleteFunc: func(obj any) { on(obj, true) },
	}
}
