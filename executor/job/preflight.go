package job

import (
	"context"
	"fmt"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/executor"
)

const (
	errGetServiceAccount = "cannot get the runner's service account"
	errReviewAccess      = "cannot review what the runner's service account may do"

	// runnerReadyFor is how long a runner service account found able to run is taken to stay so,
	// so that a busy namespace costs two requests a minute rather than two per Run.
	runnerReadyFor = time.Minute
)

// A RunnerNotReadyError says a runner Job would not start, or its runner could not record its
// Run: the controller makes no Run and no Job, and the instance says why.
type RunnerNotReadyError struct {
	Namespace, ServiceAccount string
	// Missing says the service account does not exist; otherwise it may not write its Runs.
	Missing bool
}

func (e *RunnerNotReadyError) Error() string {
	if e.Missing {
		return fmt.Sprintf("no runner can start in namespace %s: its service account %s does not exist. "+
			"Install the chart with %s in runner.namespaces, or create the service account and bind it to the chart's runner ClusterRole "+
			"(<release>-runner), or name another in the ProviderConfig's spec.runner.serviceAccountName", e.Namespace, e.ServiceAccount, e.Namespace)
	}
	return fmt.Sprintf("no runner can record its Run in namespace %s: service account %s may not update runs/status there. "+
		"Bind it to the chart's runner ClusterRole (<release>-runner) in %s, as runner.namespaces does", e.Namespace, e.ServiceAccount, e.Namespace)
}

// runnerServiceAccount is the service account the Work's runner pod runs as.
func runnerServiceAccount(w *executor.Work) string {
	if r := w.Workspace.Setup.Runner; r != nil && r.ServiceAccountName != "" {
		return r.ServiceAccountName
	}
	return DefaultRunnerServiceAccount
}

// runnerReady returns nil when, as far as the controller can tell before it makes a Job, a runner
// of the Work can start and record its Run: its service account exists, and may update Runs'
// status in the namespace (the one permission without which a runner can do nothing, asked with a
// SubjectAccessReview). Otherwise a *RunnerNotReadyError, rather than a Job that never starts and a
// Run that holds a run slot until it times out.
func (x *Executor) runnerReady(ctx context.Context, w *executor.Work) error {
	ns, sa := w.Instance.GetNamespace(), runnerServiceAccount(w)
	key := ns + "/" + sa
	x.mu.Lock()
	ready := time.Since(x.runnersReady[key]) < runnerReadyFor
	x.mu.Unlock()
	if ready {
		return nil
	}
	if err := x.Reader.Get(ctx, types.NamespacedName{Namespace: ns, Name: sa}, &corev1.ServiceAccount{}); err != nil {
		if kerrors.IsNotFound(err) {
			return &RunnerNotReadyError{Namespace: ns, ServiceAccount: sa, Missing: true}
		}
		return errors.Wrapf(err, "%s %s/%s", errGetServiceAccount, ns, sa)
	}
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:   "system:serviceaccount:" + ns + ":" + sa,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: ns, Verb: "update", Group: v1alpha1.Group, Resource: "runs", Subresource: "status",
		},
	}}
	if err := x.Client.Create(ctx, review); err != nil {
		return errors.Wrapf(err, "%s %s/%s", errReviewAccess, ns, sa)
	}
	if !review.Status.Allowed {
		return &RunnerNotReadyError{Namespace: ns, ServiceAccount: sa}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.runnersReady == nil {
		x.runnersReady = map[string]time.Time{}
	}
	x.runnersReady[key] = time.Now()
	return nil
}
