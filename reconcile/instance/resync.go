package instance

import (
	"context"
	"reflect"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/reconcile/kinds"
)

// What reconciles a settled instance at once, rather than at its next resync (pace.go), besides
// its own changes and those of the objects its inputs come from (wiring.go): a new snapshot of its
// kind (the module, its revision or rollout, its drift interval) and a change of the
// ProviderConfig or ClusterProviderConfig it names.

const (
	errWatchConfigs = "cannot watch %s"
	errListKind     = "cannot list the instances of %s"
)

// snapshotMoved reports whether the instances of a kind served with old are to be observed again
// now that it is served with new: what they are applied with, or how often drift is checked,
// changed.
func snapshotMoved(old, new *kinds.Snapshot) bool {
	switch {
	case old == nil || new == nil:
		return old != new
	case old.Module != new.Module && (old.Module == nil || new.Module == nil || old.Module.Digest != new.Module.Digest):
		return true
	case old.Revision != new.Revision || !reflect.DeepEqual(old.Fleet, new.Fleet) || !reflect.DeepEqual(old.Retired, new.Retired) ||
		!reflect.DeepEqual(old.Public, new.Public):
		return true
	}
	return !reflect.DeepEqual(old.DriftInterval, new.DriftInterval)
}

// usesConfig reports whether an instance whose spec.providerConfigRef is ref (nil: none) uses the
// provider configuration of kind and name; a ref without a kind names a ProviderConfig.
func usesConfig(ref map[string]any, configKind, name string) bool {
	if ref == nil || ref["name"] != name {
		return false
	}
	k, _ := ref["kind"].(string)
	if k == "" {
		k = v1alpha1.ProviderConfigGroupVersionKind.Kind
	}
	return k == configKind
}

// enqueueInstances reconciles the instances of gvk in namespace (every namespace when empty) that
// match (all when nil), read from the cache without copying them.
func (w *wiring) enqueueInstances(ctx context.Context, gvk schema.GroupVersionKind, namespace string, match func(*unstructured.Unstructured) bool) error {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := w.cache.List(ctx, l, client.InNamespace(namespace), client.UnsafeDisableDeepCopy); err != nil {
		return errors.Wrapf(err, errListKind, gvk.GroupKind())
	}
	var keys []objKey
	for i := range l.Items {
		u := &l.Items[i]
		if match == nil || match(u) {
			keys = append(keys, objKey{Group: gvk.Group, Kind: gvk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()})
		}
	}
	w.enqueue(keys...)
	return nil
}

// watchConfigs has a change of a ProviderConfig or ClusterProviderConfig reconcile the instances
// that name it, of every kind. It watches their metadata only: the resolver reads them whole.
func (w *wiring) watchConfigs(ctx context.Context, informers cache.Informers) error {
	for _, gvk := range []schema.GroupVersionKind{v1alpha1.ProviderConfigGroupVersionKind, v1alpha1.ClusterProviderConfigGroupVersionKind} {
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(gvk)
		inf, err := informers.GetInformer(ctx, m)
		if err != nil {
			return errors.Wrapf(err, errWatchConfigs, gvk.Kind)
		}
		configKind := gvk.Kind
		changed := func(obj any) {
			if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if o, ok := obj.(client.Object); ok {
				w.configChanged(ctx, configKind, o.GetNamespace(), o.GetName())
			}
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    changed,
			UpdateFunc: func(_, o any) { changed(o) },
			DeleteFunc: changed,
		}); err != nil {
			return errors.Wrapf(err, errWatchConfigs, gvk.Kind)
		}
	}
	return nil
}

// configChanged reconciles the instances that name the provider configuration configKind
// namespace/name (a ClusterProviderConfig's namespace is empty: instances of every namespace).
func (w *wiring) configChanged(ctx context.Context, configKind, namespace, name string) {
	match := func(u *unstructured.Unstructured) bool {
		ref, _, _ := unstructured.NestedMap(u.Object, "spec", "providerConfigRef")
		return usesConfig(ref, configKind, name)
	}
	for _, gvk := range w.served() {
		// A kind whose instances cannot be listed now is reconciled at its next resync.
		_ = w.enqueueInstances(ctx, gvk, namespace, match)
	}
}
