package job

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/runs"
)

const (
	errListPods   = "cannot list the pods of runner Job"
	errListEvents = "cannot list the events of runner Job"
	errDeleteJob  = "cannot delete runner Job"

	// msgNotStarted begins the message of a Run whose runner did not start in time.
	msgNotStarted = "the runner did not start within %s"
	// msgWaitingForRunner begins the message of a pending Run whose runner is held up.
	msgWaitingForRunner = "waiting for the runner to start: "
	// msgNoReason ends msgNotStarted when neither the Job nor its pod said why.
	msgNoReason = "nothing reported why (the Job's and pod's events name no failure)"

	// startCheckEvery is how often a pending Run's message is brought up to date with what holds
	// its runner up: pods and events are not watched.
	startCheckEvery = 10 * time.Second
	// maxReason bounds what a Run's message quotes of Kubernetes' own messages.
	maxReason = 400
)

// awaitStart ends run, whose Job has not ended, when its runner has not started StartTimeout
// after the Job was made, saying why from the Job's and its pod's own events; until then it keeps
// the Run's message saying what holds the runner up, so that `kubectl get runs -o wide` shows it.
// The runner marks its Run Running as it starts when it starts within 30 s of the timeout
// (otherwise within 2 s of its start, well before the timeout): a Run still Pending at the
// timeout has not started.
func (w *Watcher) awaitStart(ctx context.Context, job *batchv1.Job, run *v1alpha1.Run) (reconcile.Result, error) {
	if run.Status.Phase != v1alpha1.PhasePending {
		return reconcile.Result{}, nil
	}
	why, err := w.whyNotStarted(ctx, job)
	if err != nil {
		// What the events say only explains; the timeout holds without it.
		ctrl.LoggerFrom(ctx).Info("cannot read why a runner has not started", "run", run.Name, "error", err.Error())
	}
	waited := w.clock().Sub(job.CreationTimestamp.Time)
	if waited >= w.StartTimeout {
		return w.endNotStarted(ctx, job, run, why)
	}
	if why != "" && run.Status.Message != runs.BoundMessage(msgWaitingForRunner+why) {
		run.Status.Message = runs.BoundMessage(msgWaitingForRunner + why)
		if err := w.Client.Status().Update(ctx, run); err != nil {
			if kerrors.IsConflict(err) {
				// The runner started meanwhile, or the Run ended: look again.
				return reconcile.Result{Requeue: true}, nil
			}
			return reconcile.Result{}, errors.Wrapf(err, "%s %s", errUpdateRun, run.Name)
		}
	}
	return reconcile.Result{RequeueAfter: min(startCheckEvery, w.StartTimeout-waited)}, nil
}

// endNotStarted fails run, then deletes its Job. In that order: a runner that starts as the Run
// is failed finds its status written meanwhile (a conflict) and never runs, and a Run the runner
// started first is left to it.
func (w *Watcher) endNotStarted(ctx context.Context, job *batchv1.Job, run *v1alpha1.Run, why string) (reconcile.Result, error) {
	if why == "" {
		why = msgNoReason
	}
	run.Status.Phase = v1alpha1.PhaseFailed
	run.Status.Message = runs.BoundMessage(fmt.Sprintf(msgNotStarted, w.StartTimeout) + ": " + why)
	run.Status.CompletionTime = &metav1.Time{Time: w.clock()}
	if err := w.Client.Status().Update(ctx, run); err != nil {
		if kerrors.IsConflict(err) {
			return reconcile.Result{Requeue: true}, nil
		}
		return reconcile.Result{}, errors.Wrapf(err, "%s %s", errUpdateRun, run.Name)
	}
	ctrl.LoggerFrom(ctx).Info("failed a Run whose runner did not start in time", "run", run.Name, "message", run.Status.Message)
	err := w.Client.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground))
	return reconcile.Result{}, errors.Wrapf(client.IgnoreNotFound(err), "%s %s", errDeleteJob, job.Name)
}

// whyNotStarted says what holds up job's runner, from its pod (unschedulable, an image that
// cannot be pulled, a volume that cannot be mounted) or, with no pod, from the Job's events (a
// pod the API server refused: unknown service account, PodSecurity, a quota). Empty: nothing
// says, yet. These are Kubernetes' own words about the pod, never a value of the Run.
func (w *Watcher) whyNotStarted(ctx context.Context, job *batchv1.Job) (string, error) {
	pods := &corev1.PodList{}
	if err := w.Reader.List(ctx, pods, client.InNamespace(job.Namespace), client.MatchingLabels{batchv1.JobNameLabel: job.Name}); err != nil {
		return "", errors.Wrapf(err, "%s %s", errListPods, job.Name)
	}
	for i := range pods.Items {
		if why := podHoldup(&pods.Items[i]); why != "" {
			return clip(why), nil
		}
	}
	objects := []string{job.Name}
	for _, p := range pods.Items {
		objects = append(objects, p.Name)
	}
	for _, name := range objects {
		why, err := w.lastWarning(ctx, job.Namespace, name)
		if why != "" || err != nil {
			return clip(why), err
		}
	}
	return "", nil
}

// podHoldup says why pod's runner is not running, from the pod's own status.
func podHoldup(pod *corev1.Pod) string {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason != "" {
			return fmt.Sprintf("pod %s: %s: %s", pod.Name, c.Reason, c.Message)
		}
	}
	for _, cs := range append(pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses...) {
		w := cs.State.Waiting
		if w == nil || w.Reason == "" || w.Reason == "ContainerCreating" || w.Reason == "PodInitializing" {
			continue
		}
		return fmt.Sprintf("pod %s: %s: %s", pod.Name, w.Reason, w.Message)
	}
	return ""
}

// lastWarning is the newest warning event about the object named name in namespace, as
// "<reason>: <message>", or empty.
func (w *Watcher) lastWarning(ctx context.Context, namespace, name string) (string, error) {
	events := &corev1.EventList{}
	sel := fields.SelectorFromSet(fields.Set{"involvedObject.name": name, "type": corev1.EventTypeWarning})
	if err := w.Reader.List(ctx, events, client.InNamespace(namespace), client.MatchingFieldsSelector{Selector: sel}); err != nil {
		return "", errors.Wrapf(err, "%s %s", errListEvents, name)
	}
	if len(events.Items) == 0 {
		return "", nil
	}
	sort.Slice(events.Items, func(i, j int) bool { return eventTime(&events.Items[i]).After(eventTime(&events.Items[j])) })
	e := events.Items[0]
	return e.Reason + ": " + e.Message, nil
}

// eventTime is when an event was last seen.
func eventTime(e *corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

// clip bounds what a Run's message quotes.
func clip(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > maxReason {
		return s[:maxReason] + "…"
	}
	return s
}
