package runs

import (
	"context"
	"maps"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	coordinationv1 "k8s.io/api/coordination/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
)

const (
	errClaim     = "cannot claim Run"
	errReadClaim = "cannot read the claim of Run"

	// claimPrefix starts the name of a Run's claim Lease, apart from the state Leases
	// (tfstate.…) of the same namespace.
	claimPrefix = "run-claim."
)

// A Claimant is the pod of a runner pool that takes a Run: its name and UID, so that a pod made
// again under the same name does not hold what its predecessor claimed.
type Claimant struct {
	Pod string
	UID types.UID
}

// holder is how a Claimant is written as the claim Lease's holder.
func (c Claimant) holder() string { return c.Pod + "/" + string(c.UID) }

// ClaimName is the name of run's claim Lease.
func ClaimName(run string) string { return claimPrefix + run }

// Claim takes run for the pool pod c and reports whether c holds it: the claim is a Lease named
// after the Run, created once, never updated, so the first pod to create it holds the Run for good
// and every other is refused (AlreadyExists). The Lease goes with the Run (an owner reference).
func Claim(ctx context.Context, cl client.Client, run *v1alpha1.Run, c Claimant) (bool, error) {
	holder := c.holder()
	lease := &coordinationv1.Lease{
		// The Run's labels (its instance, its pool) select the claims of a pool.
		ObjectMeta: metav1.ObjectMeta{Namespace: run.Namespace, Name: ClaimName(run.Name), Labels: maps.Clone(run.Labels),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: v1alpha1.SchemeGroupVersion.String(),
				Kind: v1alpha1.RunGroupVersionKind.Kind, Name: run.Name, UID: run.UID}}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, AcquireTime: &metav1.MicroTime{Time: metav1.Now().Time}},
	}
	err := cl.Create(ctx, lease)
	switch {
	case err == nil:
		return true, nil
	case kerrors.IsAlreadyExists(err):
		return false, nil
	}
	return false, errors.Wrapf(err, "%s %s", errClaim, run.Name)
}

// ClaimHolder returns the pool pod that claimed run, and false when none did. A Lease of the
// claim's name that the Run does not own (made before the Run, by anyone who may write Leases)
// is no claim.
func ClaimHolder(ctx context.Context, r client.Reader, run *v1alpha1.Run) (Claimant, bool, error) {
	lease := &coordinationv1.Lease{}
	err := r.Get(ctx, types.NamespacedName{Namespace: run.Namespace, Name: ClaimName(run.Name)}, lease)
	if kerrors.IsNotFound(err) {
		return Claimant{}, false, nil
	}
	if err != nil {
		return Claimant{}, false, errors.Wrapf(err, "%s %s", errReadClaim, run.Name)
	}
	return HolderOf(lease, run)
}

// HolderOf returns who holds run by lease, its claim Lease as read: false when the Lease is not
// owned by this very Run or names no pod.
func HolderOf(lease *coordinationv1.Lease, run *v1alpha1.Run) (Claimant, bool, error) {
	owned := false
	for _, o := range lease.OwnerReferences {
		owned = owned || o.UID == run.UID && o.Kind == v1alpha1.RunGroupVersionKind.Kind
	}
	if !owned || lease.Spec.HolderIdentity == nil {
		return Claimant{}, false, nil
	}
	pod, uid, ok := strings.Cut(*lease.Spec.HolderIdentity, "/")
	if !ok || pod == "" || uid == "" {
		return Claimant{}, false, nil
	}
	return Claimant{Pod: pod, UID: types.UID(uid)}, true, nil
}
