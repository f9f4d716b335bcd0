package instance

import (
	"context"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Finalizer keeps an instance until terraform destroyed what it made (or its policies say to
// orphan it). It is modkind's own and domain-qualified with a path, as the API server asks of
// finalizers; crossplane-runtime's default (finalizer.managedresource.crossplane.io) draws a
// warning on every instance created.
const Finalizer = "modkind.io/terraform-destroy"

const errUpdateFinalizer = "cannot update the instance's finalizers"

// finalizer adds and removes Finalizer. An instance created by an older modkind carries
// crossplane-runtime's finalizer instead: the same update that puts Finalizer on takes that one
// off, so the instance is never without one, and removal takes off both.
type finalizer struct {
	client client.Client
}

func (f finalizer) AddFinalizer(ctx context.Context, obj resource.Object) error {
	if finalized(obj) {
		return nil
	}
	meta.AddFinalizer(obj, Finalizer)
	meta.RemoveFinalizer(obj, managed.FinalizerName)
	return errors.Wrap(f.client.Update(ctx, obj), errUpdateFinalizer)
}

func (f finalizer) RemoveFinalizer(ctx context.Context, obj resource.Object) error {
	if !meta.FinalizerExists(obj, Finalizer) && !meta.FinalizerExists(obj, managed.FinalizerName) {
		return nil
	}
	meta.RemoveFinalizer(obj, Finalizer)
	meta.RemoveFinalizer(obj, managed.FinalizerName)
	return errors.Wrap(resource.IgnoreNotFound(f.client.Update(ctx, obj)), errUpdateFinalizer)
}

// finalized reports whether o carries Finalizer alone of the two: AddFinalizer will not write it.
func finalized(o resource.Object) bool {
	return meta.FinalizerExists(o, Finalizer) && !meta.FinalizerExists(o, managed.FinalizerName)
}
