package pool

import (
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/runs"
)

// Messages of the Runs a pool fails.
const (
	// msgPodEnded fails a Run whose pod ended (killed, evicted, deleted, its node lost) before it
	// recorded the Run's end, as job mode fails the Run of a Job that died.
	msgPodEnded = "the runner pool pod %s ended before the Run ended"
	// msgNotTaken fails a Run that no pod of its pool took within the start timeout.
	msgNotTaken = "no runner pool pod took the Run within %s: %s"
	// msgPastDeadline fails a Run whose pod did not end it within its deadline and the pod's grace
	// period after it, as a Job's activeDeadlineSeconds ends a runner that does not stop: the pod
	// is deleted.
	msgPastDeadline = "the Run did not end within its deadline of %s and the %s after it; its runner pool pod %s is deleted"
	// msgNoReason ends msgNotTaken when nothing said why.
	msgNoReason = "nothing reported why (no pod of the pool is waiting with a reason)"
)

// A view is what a pool's reconcile sees: its Runs (signed, active), who holds each claimed one,
// and its pods.
type view struct {
	runs   []v1alpha1.Run
	claims map[string]runs.Claimant
	pods   []corev1.Pod
	// waitingSince is when each unclaimed Run was first seen waiting for a pod.
	waitingSince map[string]time.Time
	// createErr is why the last pod could not be made, if it could not.
	createErr string
	// unseen are the pods made lately that pods does not show yet.
	unseen int
}

// A failure is a Run to fail, and why.
type failure struct {
	run     string
	message string
	// held fails the Run although a live pod holds it (past its deadline).
	held bool
}

// A decision is what a pool's reconcile does: pods to make and to delete, Runs to fail, and when
// to look again (0: at the next change).
type decision struct {
	create int
	remove []string
	fail   []failure
	// say are the waiting Runs whose message should say what holds their pool's pods up.
	say     []failure
	requeue time.Duration
}

// bounds are a pool's settings: the pods it keeps idle, the most it may have, how long a Run may
// wait for a pod, and how long an ended pod is kept for its log.
type bounds struct {
	min, max     int
	startTimeout time.Duration
	keepEnded    time.Duration
	// deadlines bound each operation's terraform work from the Run's start, and grace is how
	// long after it a pod may take to stop terraform and record the Run.
	deadlines map[v1alpha1.RunOperation]time.Duration
	grace     time.Duration
}

// decide is what a pool does with what it sees at now. Every Run a dead pod held fails; a Run no
// pod took within the start timeout fails; the pool has a pod for every Run it executes or that
// waits, at least min and at most max; pods that ended are deleted (a failed one once kept for its
// log for keepEnded, unless it holds an active Run, whose failure names it).
func decide(v view, b bounds, now time.Time) decision {
	var d decision
	byName := map[string]*corev1.Pod{}
	for i := range v.pods {
		byName[v.pods[i].Name] = &v.pods[i]
	}
	busy, waiting := 0, 0
	later := func(after time.Duration) {
		if after > 0 && (d.requeue == 0 || after < d.requeue) {
			d.requeue = after
		}
	}
	for i := range v.runs {
		run := &v.runs[i]
		if c, ok := v.claims[run.Name]; ok {
			if holds(byName[c.Pod], c, run) {
				busy++
				deadline := b.deadlines[run.Spec.Operation]
				if deadline <= 0 || run.Status.StartTime == nil {
					continue
				}
				if left := run.Status.StartTime.Add(deadline + b.grace).Sub(now); left > 0 {
					later(left)
					continue
				}
				d.fail = append(d.fail, failure{run: run.Name, message: fmt.Sprintf(msgPastDeadline, deadline, b.grace, c.Pod), held: true})
				d.remove = append(d.remove, c.Pod)
				continue
			}
			d.fail = append(d.fail, failure{run: run.Name, message: fmt.Sprintf(msgPodEnded, c.Pod)})
			continue
		}
		if run.Status.Phase == v1alpha1.PhaseRunning {
			if age := now.Sub(runs.Created(run)); age < claimAfter {
				busy++
				later(claimAfter - age)
				continue
			}
			d.fail = append(d.fail, failure{run: run.Name, message: fmt.Sprintf(msgPodEnded, "that took it")})
			continue
		}
		waiting++
		since, ok := v.waitingSince[run.Name]
		if !ok || b.startTimeout <= 0 {
			continue
		}
		if left := b.startTimeout - now.Sub(since); left > 0 {
			later(left)
			if why := whyNotTaken(v); why != msgNoReason && run.Status.Message != why {
				d.say = append(d.say, failure{run: run.Name, message: why})
			}
			continue
		}
		d.fail = append(d.fail, failure{run: run.Name, message: fmt.Sprintf(msgNotTaken, b.startTimeout, whyNotTaken(v))})
	}
	alive := v.unseen
	for i := range v.pods {
		pod := &v.pods[i]
		if live(pod) {
			alive++
			continue
		}
		ended := endedAt(pod)
		if pod.Status.Phase == corev1.PodFailed && now.Sub(ended) < b.keepEnded {
			later(b.keepEnded - now.Sub(ended))
			continue
		}
		d.remove = append(d.remove, pod.Name)
	}
	want := max(busy+waiting, b.min)
	if b.max > 0 {
		want = min(want, b.max)
	}
	d.create = max(want-alive, 0)
	sort.Strings(d.remove)
	return d
}

// whyNotTaken says what holds the pool's pods up: why the last pod could not be made, or the
// reason a pod that has not started waits with.
func whyNotTaken(v view) string {
	if v.createErr != "" {
		return v.createErr
	}
	for i := range v.pods {
		pod := &v.pods[i]
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Message != "" {
				return fmt.Sprintf("pod %s: %s: %s", pod.Name, c.Reason, c.Message)
			}
		}
		for _, s := range pod.Status.ContainerStatuses {
			if w := s.State.Waiting; w != nil && w.Reason != "" && w.Reason != "ContainerCreating" {
				return fmt.Sprintf("pod %s: %s: %s", pod.Name, w.Reason, w.Message)
			}
		}
	}
	return msgNoReason
}

// endedAt is when pod's container ended, or when the pod was made when it does not say.
func endedAt(pod *corev1.Pod) time.Time {
	for _, s := range pod.Status.ContainerStatuses {
		if t := s.State.Terminated; t != nil && !t.FinishedAt.IsZero() {
			return t.FinishedAt.Time
		}
	}
	return pod.CreationTimestamp.Time
}
