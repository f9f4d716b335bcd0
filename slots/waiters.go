package slots

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Waiters are the instances waiting for a run slot, of either executor: a reconcile that found no
// slot marks its instance (Wait); a Paced reconciler tries it again in a few seconds, keeping its
// place in line; and a slot freed by a Run's end wakes the next (Next), round robin by namespace,
// and the longest waiter of the Run's own namespace (NextIn).
type Waiters struct {
	// WakesNamespaces says that the executor wakes a namespace's longest waiter whenever a run of
	// that namespace frees its slot (both executors do): the instances of a namespace that holds
	// its whole share then try again at a slower pace the more they are (shareRetry) rather than
	// each every 2–4 s. A tenant with a thousand stuck or waiting instances would otherwise cost
	// the controller over three hundred reconciles a second, which the other tenants feel. Set it
	// before the controllers start.
	WakesNamespaces bool

	// hit holds, per instance whose reconcile found no slot, whether it waits for its namespace's
	// share (true) or for any free slot (false).
	hit sync.Map

	mu    sync.Mutex
	queue map[string]*waiting
	// turn is, per kind, the namespace whose instance was woken last: the next freed slot goes to
	// the next namespace in turn (NextTurn).
	turn map[schema.GroupVersionKind]string
}

// A waiting instance has waited for a run slot since a time; woken says it was sent a freed slot
// and has not been reconciled since.
type waiting struct {
	gvk   schema.GroupVersionKind
	name  types.NamespacedName
	since time.Time
	woken bool
}

// Key names an instance among the waiters.
func Key(gvk schema.GroupVersionKind, nn types.NamespacedName) string {
	return gvk.GroupKind().String() + "/" + nn.String()
}

// Wait marks that the reconcile of the instance key found no run slot, for the reason why (an
// error IsWaiting accepts).
func (w *Waiters) Wait(key string, why error) {
	var share *ShareFullError
	w.hit.Store(key, errors.As(why, &share))
}

// took reports whether key's reconcile found no slot, and whether for its namespace's share, and
// forgets it.
func (w *Waiters) took(key string) (waits, forShare bool) {
	v, ok := w.hit.LoadAndDelete(key)
	if !ok {
		return false, false
	}
	return true, v.(bool)
}

// waiting notes that the instance still waits, keeping its place if it waited already, and
// returns how many instances of its kind wait in its namespace.
func (w *Waiters) waiting(gvk schema.GroupVersionKind, nn types.NamespacedName) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.queue == nil {
		w.queue = map[string]*waiting{}
	}
	key := Key(gvk, nn)
	if q, ok := w.queue[key]; ok {
		q.woken = false
	} else {
		w.queue[key] = &waiting{gvk: gvk, name: nn, since: time.Now()}
	}
	n := 0
	for _, q := range w.queue {
		if q.gvk == gvk && q.name.Namespace == nn.Namespace {
			n++
		}
	}
	return n
}

// done notes that the instance waits no more.
func (w *Waiters) done(gvk schema.GroupVersionKind, nn types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.queue, Key(gvk, nn))
}

// Next returns the instance of gvk to wake for a freed slot, and marks it woken: of the
// namespaces with an instance waiting that was not woken yet, the next in turn after the one woken
// last (round robin), and of its instances the one that has waited longest.
func (w *Waiters) Next(gvk schema.GroupVersionKind) (types.NamespacedName, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	oldest := map[string]*waiting{}
	var namespaces []string
	for _, q := range w.queue {
		if q.gvk != gvk || q.woken {
			continue
		}
		first, ok := oldest[q.name.Namespace]
		if !ok {
			namespaces = append(namespaces, q.name.Namespace)
		}
		if !ok || q.since.Before(first.since) {
			oldest[q.name.Namespace] = q
		}
	}
	if w.turn == nil {
		w.turn = map[schema.GroupVersionKind]string{}
	}
	ns, ok := NextTurn(w.turn[gvk], namespaces)
	if !ok {
		return types.NamespacedName{}, false
	}
	w.turn[gvk] = ns
	oldest[ns].woken = true
	return oldest[ns].name, true
}

// NextIn returns the instance of gvk in namespace to wake for a slot a Run of that namespace freed
// in its share, and marks it woken: the one that has waited longest of those not woken yet.
func (w *Waiters) NextIn(gvk schema.GroupVersionKind, namespace string) (types.NamespacedName, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var oldest *waiting
	for _, q := range w.queue {
		if q.gvk == gvk && q.name.Namespace == namespace && !q.woken && (oldest == nil || q.since.Before(oldest.since)) {
			oldest = q
		}
	}
	if oldest == nil {
		return types.NamespacedName{}, false
	}
	oldest.woken = true
	return oldest.name, true
}

// Paced wraps the reconciler of gvk's instances so that an instance waiting for a run slot is
// tried again at a steady pace. The managed reconciler treats the wait as a failed create, which
// the work queue retries with a backoff that doubles on every try, up to many minutes: instances
// that waited longest would start last, long after slots were free.
func (w *Waiters) Paced(gvk schema.GroupVersionKind, r reconcile.Reconciler) reconcile.Reconciler {
	return paced{Reconciler: r, gvk: gvk, waiters: w}
}

type paced struct {
	reconcile.Reconciler
	gvk     schema.GroupVersionKind
	waiters *Waiters
}

// retry is how soon an instance waiting for a run slot tries again: 2–4 s, spread so that
// waiters do not all come back at once.
func retry() time.Duration { return 2*time.Second + rand.N(2*time.Second) }

// maxShareRetry bounds shareRetry: a namespace's waiters never wait longer than this for a try of
// their own, whatever wakes them meanwhile.
const maxShareRetry = 60 * time.Second

// shareRetry is how soon one of n instances of a kind waiting for their namespace's share tries
// again, when a Run of the namespace that ends wakes its longest waiter: 2–4 s for a few, and for
// many a pace at which they try about twice a second together, each at least once a minute.
func shareRetry(n int) time.Duration {
	d := min(max(time.Duration(n)*time.Second/2, 2*time.Second), maxShareRetry/2)
	return d + rand.N(d)
}

func (r paced) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	res, err := r.Reconciler.Reconcile(ctx, req)
	if waits, forShare := r.waiters.took(Key(r.gvk, req.NamespacedName)); waits && err == nil {
		n := r.waiters.waiting(r.gvk, req.NamespacedName)
		if forShare && r.waiters.WakesNamespaces {
			return reconcile.Result{RequeueAfter: shareRetry(n)}, nil
		}
		return reconcile.Result{RequeueAfter: retry()}, nil
	}
	r.waiters.done(r.gvk, req.NamespacedName)
	return res, err
}
