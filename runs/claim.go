package runs

import (
	"context"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
)

const errClaim = "cannot claim Run"

// A Claimant is the pod of a runner pool that takes a Run: its name and UID, so that a pod made
// again under the same name does not hold what its predecessor claimed.
type Claimant struct {
	Pod string
	UID types.UID
}

// String is how a Claimant is written in a Run's status.runner.
func (c Claimant) String() string { return c.Pod + "/" + string(c.UID) }

// Claim takes run, as read, for the pool pod c and reports whether c holds it. The claim is the
// Run's own status write that marks it Running with c as its runner: it carries the Run's
// resourceVersion, so of the pods that try, the first wins and every other gets a conflict, and
// so does a pod that read the Run before the controller last wrote it. From then on the API
// server (the chart's policy) takes the Run's status from c's token only. It is also the runner's
// Running write: a claimed Run costs no other write before its outcome.
func Claim(ctx context.Context, cl client.Client, run *v1alpha1.Run, c Claimant) (bool, error) {
	if run.Status.Phase != v1alpha1.PhasePending || run.Status.Runner != "" {
		return false, nil
	}
	if run.ResourceVersion == "" {
		// A status write without a version is not refused when another came first.
		return false, errors.Errorf("%s %s: no resourceVersion", errClaim, run.Name)
	}
	claimed := run.DeepCopy()
	now := metav1.Now()
	claimed.Status.Phase, claimed.Status.Executor, claimed.Status.StartTime = v1alpha1.PhaseRunning, v1alpha1.ExecutorJob, &now
	claimed.Status.Runner = c.String()
	// What the controller said while the Run waited for a pod is past.
	claimed.Status.Message = ""
	err := cl.Status().Update(ctx, claimed)
	switch {
	case err == nil:
		*run = *claimed
		return true, nil
	case kerrors.IsConflict(err), kerrors.IsNotFound(err):
		return false, nil
	}
	return false, errors.Wrapf(err, "%s %s", errClaim, run.Name)
}

// Holder returns the pool pod that claimed run, and false when none did.
func Holder(run *v1alpha1.Run) (Claimant, bool) {
	pod, uid, ok := strings.Cut(run.Status.Runner, "/")
	if !ok || pod == "" || uid == "" {
		return Claimant{}, false
	}
	return Claimant{Pod: pod, UID: types.UID(uid)}, true
}
