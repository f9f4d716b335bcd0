package job

import (
	"context"
	"fmt"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/runs"
)

const (
	errGetJob = "cannot get runner Job"
	errGetRun = "cannot get the Run of runner Job"

	// msgRunnerNoResult ends a Run whose runner exited 0 without recording how the Run ended.
	msgRunnerNoResult = "runner exited without recording the Run's result"
)

// RunnerJobSelector selects runner Jobs: give it to the manager's cache for batchv1.Job, so that
// the other Jobs of the cluster are not cached.
func RunnerJobSelector() labels.Selector {
	r, err := labels.NewRequirement(LabelRun, selection.Exists, nil)
	if err != nil {
		// LabelRun is a constant, valid label key.
		panic(err)
	}
	return labels.NewSelector().Add(*r)
}

// A Watcher reflects a runner Job that ended without its runner recording the Run's result
// onto the Run: a runner that is killed (deadline, OOM, node loss) cannot write the Run itself,
// and the controller waits on the Run. It also ends the Runs whose runner never starts (no
// service account, refused by PodSecurity or a quota, unschedulable, an image that cannot be
// pulled): each would hold a run slot for good.
type Watcher struct {
	// Client reads Jobs (through the manager's cache), writes Runs' status and deletes Jobs.
	Client client.Client
	// Reader reads Runs fresh (a runner writes its Run's result just before it exits, and a
	// cached Run could still show it Running), and the pods and events that say why a runner
	// has not started, which nothing caches.
	Reader client.Reader
	// StartTimeout is how long a runner may take to start; 0: no limit (JobOptions.StartTimeout).
	StartTimeout time.Duration

	now func() time.Time
}

func (w *Watcher) clock() time.Time {
	if w.now != nil {
		return w.now()
	}
	return time.Now()
}

// SetupWithManager watches runner Jobs (labelled modkind.io/run).
func (w *Watcher) SetupWithManager(mgr ctrl.Manager) error {
	runner := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetLabels()[LabelRun] != "" })
	return ctrl.NewControllerManagedBy(mgr).
		Named("runner-job").
		For(&batchv1.Job{}, builder.WithPredicates(runner)).
		Complete(w)
}

// Reconcile marks the Run of a finished runner Job Failed when the runner did not record its end.
func (w *Watcher) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	job := &batchv1.Job{}
	if err := w.Client.Get(ctx, req.NamespacedName, job); err != nil {
		return reconcile.Result{}, errors.Wrap(client.IgnoreNotFound(err), errGetJob)
	}
	name := job.Labels[LabelRun]
	if name == "" {
		return reconcile.Result{}, nil
	}
	msg, ended := jobEnd(job)
	if !ended && (w.StartTimeout <= 0 || job.Status.Active > 0 && job.Status.Ready != nil && *job.Status.Ready > 0) {
		// Running, or nothing to time: the runner records the Run's end itself.
		return reconcile.Result{}, nil
	}
	run := &v1alpha1.Run{}
	if err := w.Reader.Get(ctx, types.NamespacedName{Namespace: job.Namespace, Name: name}, run); err != nil {
		return reconcile.Result{}, errors.Wrap(client.IgnoreNotFound(err), errGetRun)
	}
	// Only the Job the controller made for this Run speaks for it: same name, controlled by the
	// Run's UID. A Job someone else labelled, or one left from an earlier Run of the same name,
	// changes nothing.
	owner := metav1.GetControllerOf(job)
	if job.Name != run.Name || owner == nil || owner.UID != run.UID || owner.Kind != v1alpha1.RunGroupVersionKind.Kind {
		return reconcile.Result{}, nil
	}
	if !ended {
		return w.awaitStart(ctx, job, run)
	}
	switch run.Status.Phase {
	case v1alpha1.PhaseSucceeded, v1alpha1.PhaseFailed, v1alpha1.PhaseRefused:
		return reconcile.Result{}, nil
	case v1alpha1.PhaseWaitingForApproval:
		if msg == "" {
			// The runner recorded that the plan waits for approval and exited: that is its result.
			return reconcile.Result{}, nil
		}
	}
	if msg == "" {
		msg = msgRunnerNoResult
	}
	run.Status.Phase = v1alpha1.PhaseFailed
	run.Status.CompletionTime = &metav1.Time{Time: w.clock()}
	run.Status.Message = runs.BoundMessage(msg)
	if err := w.Client.Status().Update(ctx, run); err != nil {
		if kerrors.IsConflict(err) {
			// The runner or the controller wrote the Run meanwhile: look again.
			return reconcile.Result{Requeue: true}, nil
		}
		return reconcile.Result{}, errors.Wrap(err, errUpdateRun)
	}
	ctrl.LoggerFrom(ctx).Info("runner Job ended without recording its Run's result", "run", run.Name, "message", msg)
	return reconcile.Result{}, nil
}

// jobEnd reports whether the Job has ended, and if it failed, why. The Job controller's
// conditions carry reasons and counts, never values of the run.
func jobEnd(job *batchv1.Job) (failure string, ended bool) {
	for _, c := range job.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobFailed:
			return fmt.Sprintf("runner Job %s failed: %s: %s", job.Name, c.Reason, c.Message), true
		case batchv1.JobComplete:
			return "", true
		}
	}
	return "", false
}
