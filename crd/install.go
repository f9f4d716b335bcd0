package crd

import (
	"context"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	// FieldOwner is modkind's server-side apply field manager.
	FieldOwner = "modkind"

	errApply       = "cannot apply CustomResourceDefinition"
	errEstablished = "CustomResourceDefinition did not become established"
)

// Apply creates or updates c with server-side apply. On return c holds what the server stored.
func Apply(ctx context.Context, cl client.Client, c *extv1.CustomResourceDefinition) error {
	c.SetManagedFields(nil)
	c.SetResourceVersion("")
	//nolint:staticcheck // Server-side apply of a typed object is what we want here.
	return errors.Wrap(cl.Patch(ctx, c, client.Apply, client.FieldOwner(FieldOwner), client.ForceOwnership), errApply)
}

// Established reports whether the API server serves c under its names, with the schema of c's
// generation. "Established" alone does not mean the newest schema is served: an instance
// reconciled in between could be checked, or have fields pruned, by the old schema. API servers
// that track CRD generations (1.35+ with CRDObservedGenerationTracking, on by default in 1.36)
// say which generation their conditions describe; older ones do not, and Established is all
// there is.
func Established(c *extv1.CustomResourceDefinition) bool {
	var est, names bool
	for _, cond := range c.Status.Conditions {
		current := cond.ObservedGeneration == 0 || cond.ObservedGeneration >= c.Generation
		switch cond.Type {
		case extv1.Established:
			est = cond.Status == extv1.ConditionTrue && current
		case extv1.NamesAccepted:
			names = cond.Status == extv1.ConditionTrue && current
		}
	}
	served := c.Status.ObservedGeneration == 0 || c.Status.ObservedGeneration >= c.Generation
	return est && names && served
}

// Install applies each CRD and waits until all are established, for modkind's own CRDs at start.
func Install(ctx context.Context, cl client.Client, crds ...*extv1.CustomResourceDefinition) error {
	for _, c := range crds {
		if err := Apply(ctx, cl, c); err != nil {
			return errors.Wrap(err, c.Name)
		}
	}
	for _, c := range crds {
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			got := &extv1.CustomResourceDefinition{}
			if err := cl.Get(ctx, types.NamespacedName{Name: c.Name}, got); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			return Established(got), nil
		})
		if err != nil {
			return errors.Wrapf(err, "%s: %s", errEstablished, c.Name)
		}
	}
	return nil
}
