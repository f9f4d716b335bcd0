package instance

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/kind/fields"
	"github.com/modkind/modkind/reconcile/kinds"
)

const (
	errListUsers = "cannot list the instances that may use this one"
	errWatchKeys = "cannot watch %ss for the instances that take values from them"
)

// wiring knows which instances take values from which objects, so that a change of a source (an
// instance's status, a ConfigMap, a Secret) reconciles its dependents at once rather than at
// their next poll, and the deletion of a dependent reconciles the sources whose deletion waits
// for it. It is filled as instances are reconciled: every instance is reconciled when its
// controller starts.
type wiring struct {
	// snapshot gives the module of a kind modkind serves, nil for any other kind.
	snapshot func(schema.GroupKind) *kinds.Snapshot
	// served lists the kinds modkind serves.
	served func() []schema.GroupVersionKind
	// cache reads instances of served kinds from their informers.
	cache client.Reader
	// known, when set, says a Secret at a version is one the controller wrote or verified itself
	// (statesMemory.Knows): its event reconciles nothing.
	known func(types.NamespacedName, string) bool

	mu         sync.Mutex
	dependents map[objKey]map[objKey]bool
	sources    map[objKey][]objKey
	queues     map[schema.GroupKind]workqueue.TypedRateLimitingInterface[reconcile.Request]
}

func newWiring(cache client.Reader, snapshot func(schema.GroupKind) *kinds.Snapshot, served func() []schema.GroupVersionKind) *wiring {
	return &wiring{cache: cache, snapshot: snapshot, served: served,
		dependents: map[objKey]map[objKey]bool{}, sources: map[objKey][]objKey{},
		queues: map[schema.GroupKind]workqueue.TypedRateLimitingInterface[reconcile.Request]{}}
}

// record notes that dep takes values from srcs now. A source it no longer names is reconciled:
// its deletion may wait for dep.
func (w *wiring) record(dep objKey, srcs []objKey) {
	w.mu.Lock()
	old := w.sources[dep]
	for _, s := range old {
		delete(w.dependents[s], dep)
		if len(w.dependents[s]) == 0 {
			delete(w.dependents, s)
		}
	}
	if len(srcs) == 0 {
		delete(w.sources, dep)
	} else {
		w.sources[dep] = srcs
	}
	for _, s := range srcs {
		if w.dependents[s] == nil {
			w.dependents[s] = map[objKey]bool{}
		}
		w.dependents[s][dep] = true
	}
	var dropped []objKey
	for _, s := range old {
		if !slices.Contains(srcs, s) {
			dropped = append(dropped, s)
		}
	}
	w.mu.Unlock()
	w.enqueue(dropped...)
}

// forget drops dep, deleted, and reconciles the sources it named.
func (w *wiring) forget(dep objKey) { w.record(dep, nil) }

// changed reconciles the dependents of src.
func (w *wiring) changed(src objKey) {
	w.mu.Lock()
	deps := make([]objKey, 0, len(w.dependents[src]))
	for d := range w.dependents[src] {
		deps = append(deps, d)
	}
	w.mu.Unlock()
	w.enqueue(deps...)
}

// enqueue reconciles the instances keys names, through their kinds' controllers.
func (w *wiring) enqueue(keys ...objKey) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range keys {
		if q, ok := w.queues[schema.GroupKind{Group: k.Group, Kind: k.Kind}]; ok {
			q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: k.Namespace, Name: k.Name}})
		}
	}
}

// watch has controller c of gvk take part: its queue receives the dependents of gvk, and the
// events of gvk's instances reconcile the instances that use them.
func (w *wiring) watch(c controller.Controller, u *unstructured.Unstructured, kindSource func(client.Object, handler.EventHandler) source.Source) error {
	gk := u.GroupVersionKind().GroupKind()
	if err := c.Watch(source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.queues[gk] = q
		return nil
	})); err != nil {
		return err
	}
	key := func(o client.Object, k schema.GroupKind) objKey {
		return objKey{Group: k.Group, Kind: k.Kind, Namespace: o.GetNamespace(), Name: o.GetName()}
	}
	instances := handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			w.changed(key(e.Object, gk))
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			w.changed(key(e.ObjectNew, gk))
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			w.changed(key(e.Object, gk))
			w.forget(key(e.Object, gk))
		},
	}
	return c.Watch(kindSource(u, instances))
}

// refsOf reads the references of instance k from the cache; none when it is gone or of a kind
// modkind does not serve.
func (w *wiring) refsOf(ctx context.Context, gvk schema.GroupVersionKind, k objKey) []inputRef {
	snap := w.snapshot(gvk.GroupKind())
	if snap == nil || snap.Module == nil {
		return nil
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := w.cache.Get(ctx, types.NamespacedName{Namespace: k.Namespace, Name: k.Name}, u); err != nil {
		return nil
	}
	refs, _ := parseRefs(snap.Module, k.Namespace, (&kind.Instance{Unstructured: *u}).ForProvider())
	return refs
}

// cycle returns the reference cycle through instance self, nil when there is none.
func (w *wiring) cycle(ctx context.Context, self objKey, refs []inputRef) []objKey {
	versions := map[schema.GroupKind]string{}
	for _, gvk := range w.served() {
		versions[gvk.GroupKind()] = gvk.Version
	}
	next := func(k objKey) []objKey {
		rs := refs
		if k != self {
			gk := schema.GroupKind{Group: k.Group, Kind: k.Kind}
			v, ok := versions[gk]
			if !ok {
				return nil
			}
			rs = w.refsOf(ctx, gk.WithVersion(v), k)
		}
		var out []objKey
		for _, r := range rs {
			if r.APIVersion != "" {
				out = append(out, r.Source)
			}
		}
		return out
	}
	return findCycle(self, next)
}

// usersOf lists the instances of self's namespace that take values from self: from its outputs,
// or from its connection Secret.
func (w *wiring) usersOf(ctx context.Context, self objKey, connectionSecret string) ([]objKey, error) {
	var users []objKey
	for _, gvk := range w.served() {
		snap := w.snapshot(gvk.GroupKind())
		if snap == nil || snap.Module == nil {
			continue
		}
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := w.cache.List(ctx, l, client.InNamespace(self.Namespace)); err != nil {
			return nil, errors.Wrap(err, errListUsers)
		}
		for i := range l.Items {
			k := instanceKey(gvk, l.Items[i].GetNamespace(), l.Items[i].GetName())
			if k == self {
				continue
			}
			if !needsSources(&l.Items[i]) {
				continue
			}
			refs, _ := parseRefs(snap.Module, k.Namespace, (&kind.Instance{Unstructured: l.Items[i]}).ForProvider())
			if uses(refs, self, connectionSecret) {
				users = append(users, k)
			}
		}
	}
	slices.SortFunc(users, func(a, b objKey) int { return strings.Compare(a.String(), b.String()) })
	return users, nil
}

// needsSources says whether instance u may still need the values of its sources: unless it is
// being deleted and never applied anything (its status shows no state), when it destroys nothing.
func needsSources(u *unstructured.Unstructured) bool {
	if u.GetDeletionTimestamp() == nil {
		return true
	}
	_, applied, _ := unstructured.NestedMap(u.Object, "status", fields.State)
	return applied
}

// watchKeys has a change of any ConfigMap or Secret reconcile the instances that use it. It
// watches their metadata only, never caching a value, once for all kinds: a handler added to a
// shared informer stays until the informer goes.
func (w *wiring) watchKeys(ctx context.Context, informers cache.Informers) error {
	for _, k := range []string{kindConfigMap, kindSecret} {
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: k})
		inf, err := informers.GetInformer(ctx, m)
		if err != nil {
			return errors.Wrapf(err, errWatchKeys, k)
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { w.event(k, o, false) },
			UpdateFunc: func(_, o any) { w.event(k, o, false) },
			DeleteFunc: func(o any) { w.event(k, o, true) },
		}); err != nil {
			return errors.Wrapf(err, errWatchKeys, k)
		}
	}
	return nil
}

// event reconciles the dependents of obj, a ConfigMap or Secret (k) an informer reports written
// (added or updated) or deleted. A state Secret written at the version the controller's own run
// wrote, or its last read verified, tells its instance nothing new; its deletion always does.
func (w *wiring) event(k string, obj any, deleted bool) {
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	o, ok := obj.(client.Object)
	if !ok {
		return
	}
	name := types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}
	if !deleted && k == kindSecret && w.known != nil && w.known(name, o.GetResourceVersion()) {
		return
	}
	w.changed(objKey{Kind: k, Namespace: name.Namespace, Name: name.Name})
}
