package pool

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/executor/job"
	"github.com/modkind/modkind/runs"
)

var t0 = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

func poolRun(name string, phase v1alpha1.RunPhase, created time.Time) v1alpha1.Run {
	return v1alpha1.Run{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name),
		CreationTimestamp: metav1.NewTime(created), Labels: map[string]string{job.LabelPool: "k"}},
		Status: v1alpha1.RunStatus{Phase: phase}}
}

func poolPod(name string, phase corev1.PodPhase) corev1.Pod {
	return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name),
		CreationTimestamp: metav1.NewTime(t0.Add(-time.Hour)), Labels: map[string]string{job.LabelPool: "k"}},
		Status: corev1.PodStatus{Phase: phase}}
}

func claimOf(pod string) runs.Claimant { return runs.Claimant{Pod: pod, UID: types.UID("uid-" + pod)} }

func TestDecide(t *testing.T) {
	b := bounds{max: 10, startTimeout: 5 * time.Minute, keepEnded: time.Hour}
	unschedulable := poolPod("p-new", corev1.PodPending)
	unschedulable.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
		Reason: "Unschedulable", Message: "0/1 nodes are available"}}
	cases := map[string]struct {
		reason string
		v      view
		b      bounds
		want   decision
	}{
		"IdleNamespace": {
			reason: "A pool with no Run and no minimum has no pod: an idle namespace costs nothing.",
			b:      b,
			want:   decision{},
		},
		"Minimum": {
			reason: "A pool keeps its minimum of pods with no Run.",
			b:      bounds{min: 2, max: 10},
			v:      view{pods: []corev1.Pod{poolPod("p1", corev1.PodRunning)}},
			want:   decision{create: 1},
		},
		"ScaleUp": {
			reason: "Each Run waiting for a pod gets one, beside the pods that execute Runs.",
			b:      b,
			v: view{runs: []v1alpha1.Run{poolRun("a", v1alpha1.PhaseRunning, t0), poolRun("b", v1alpha1.PhasePending, t0), poolRun("c", v1alpha1.PhasePending, t0)},
				claims:       map[string]runs.Claimant{"a": claimOf("p1")},
				pods:         []corev1.Pod{poolPod("p1", corev1.PodRunning)},
				waitingSince: map[string]time.Time{"b": t0, "c": t0}},
			want: decision{create: 2, requeue: 5 * time.Minute},
		},
		"IdlePodTakesTheWaitingRun": {
			reason: "A live pod that holds no Run takes the waiting one: no pod is made, and a pod made moments ago that the cache does not show counts.",
			b:      b,
			v: view{runs: []v1alpha1.Run{poolRun("b", v1alpha1.PhasePending, t0), poolRun("c", v1alpha1.PhasePending, t0)},
				pods: []corev1.Pod{poolPod("p1", corev1.PodRunning)}, unseen: 1,
				waitingSince: map[string]time.Time{"b": t0, "c": t0}},
			want: decision{requeue: 5 * time.Minute},
		},
		"AtMost": {
			reason: "A pool has at most max pods, however many Runs wait.",
			b:      bounds{max: 2},
			v: view{runs: []v1alpha1.Run{poolRun("a", v1alpha1.PhasePending, t0), poolRun("b", v1alpha1.PhasePending, t0), poolRun("c", v1alpha1.PhasePending, t0)},
				waitingSince: map[string]time.Time{}},
			want: decision{create: 2},
		},
		"PodDied": {
			reason: "A Run whose pod ended fails saying which pod; the failed pod is kept for its log, and the Run holds no pod.",
			b:      b,
			v: func() view {
				failed := poolPod("p1", corev1.PodFailed)
				failed.Status.ContainerStatuses = []corev1.ContainerStatus{{State: corev1.ContainerState{
					Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.NewTime(t0.Add(-time.Minute))}}}}
				return view{runs: []v1alpha1.Run{poolRun("a", v1alpha1.PhaseRunning, t0)},
					claims: map[string]runs.Claimant{"a": claimOf("p1")}, pods: []corev1.Pod{failed}}
			}(),
			want: decision{fail: []failure{{run: "a", message: fmt.Sprintf(msgPodEnded, "p1")}}, requeue: 59 * time.Minute},
		},
		"PodDeleted": {
			reason: "A Run whose pod is gone fails.",
			b:      b,
			v: view{runs: []v1alpha1.Run{poolRun("a", v1alpha1.PhaseRunning, t0)},
				claims: map[string]runs.Claimant{"a": claimOf("p1")}},
			want: decision{fail: []failure{{run: "a", message: fmt.Sprintf(msgPodEnded, "p1")}}},
		},
		"PodOfTheSameName": {
			reason: "A pod made again under the name of the one that claimed the Run (another UID) does not hold it.",
			b:      b,
			v: func() view {
				p := poolPod("p1", corev1.PodRunning)
				p.UID = "other"
				return view{runs: []v1alpha1.Run{poolRun("a", v1alpha1.PhaseRunning, t0)},
					claims: map[string]runs.Claimant{"a": claimOf("p1")}, pods: []corev1.Pod{p}}
			}(),
			want: decision{fail: []failure{{run: "a", message: fmt.Sprintf(msgPodEnded, "p1")}}},
		},
		"PodOfAnotherPool": {
			reason: "A live pod of another pool does not hold the Run, even when the claim names it.",
			b:      b,
			v: func() view {
				p := poolPod("p1", corev1.PodRunning)
				p.Labels[job.LabelPool] = "other"
				return view{runs: []v1alpha1.Run{poolRun("a", v1alpha1.PhaseRunning, t0)},
					claims: map[string]runs.Claimant{"a": claimOf("p1")}, pods: []corev1.Pod{p}}
			}(),
			want: decision{create: 0, fail: []failure{{run: "a", message: fmt.Sprintf(msgPodEnded, "p1")}}},
		},
		"RunningWithoutClaim": {
			reason: "A Run shown Running with no claim is executing for a moment (the claim may not be seen yet), then fails.",
			b:      b,
			v:      view{runs: []v1alpha1.Run{poolRun("a", v1alpha1.PhaseRunning, t0.Add(-time.Minute))}},
			want:   decision{fail: []failure{{run: "a", message: fmt.Sprintf(msgPodEnded, "that took it")}}},
		},
		"RunningWithoutClaimYet": {
			reason: "A young Run shown Running with no claim counts as executing, and is looked at again once it may have one.",
			b:      b,
			v:      view{runs: []v1alpha1.Run{poolRun("a", v1alpha1.PhaseRunning, t0.Add(-4*time.Second))}},
			want:   decision{create: 1, requeue: 6 * time.Second},
		},
		"WaitingSaysWhy": {
			reason: "A Run waiting for a pod says what holds the pool's pods up, once, before it times out.",
			b:      b,
			v: func() view {
				said := poolRun("b", v1alpha1.PhasePending, t0)
				said.Status.Message = "pod p-new: Unschedulable: 0/1 nodes are available"
				return view{runs: []v1alpha1.Run{poolRun("a", v1alpha1.PhasePending, t0), said},
					pods:         []corev1.Pod{unschedulable},
					waitingSince: map[string]time.Time{"a": t0.Add(-time.Minute), "b": t0.Add(-time.Minute)}}
			}(),
			want: decision{create: 1, requeue: 4 * time.Minute,
				say: []failure{{run: "a", message: "pod p-new: Unschedulable: 0/1 nodes are available"}}},
		},
		"NotTaken": {
			reason: "A Run no pod took within the start timeout fails, saying what holds the pool's pods up.",
			b:      b,
			v: view{runs: []v1alpha1.Run{poolRun("a", v1alpha1.PhasePending, t0)},
				pods:         []corev1.Pod{unschedulable},
				waitingSince: map[string]time.Time{"a": t0.Add(-6 * time.Minute)}},
			want: decision{fail: []failure{{run: "a", message: fmt.Sprintf(msgNotTaken, 5*time.Minute, "pod p-new: Unschedulable: 0/1 nodes are available")}}},
		},
		"NotTakenCreateError": {
			reason: "A Run no pod took says why its pool's pod could not be made.",
			b:      b,
			v: view{runs: []v1alpha1.Run{poolRun("a", v1alpha1.PhasePending, t0)},
				waitingSince: map[string]time.Time{"a": t0.Add(-6 * time.Minute)}, createErr: "exceeded quota"},
			want: decision{create: 1, fail: []failure{{run: "a", message: fmt.Sprintf(msgNotTaken, 5*time.Minute, "exceeded quota")}}},
		},
		"PastDeadline": {
			reason: "A Run its pod has not ended within its deadline and the grace period after it fails, and the pod is deleted, as a Job's activeDeadlineSeconds ends it.",
			b:      bounds{max: 10, deadlines: map[v1alpha1.RunOperation]time.Duration{v1alpha1.OperationApply: time.Hour}, grace: 2 * time.Minute},
			v: func() view {
				r := poolRun("a", v1alpha1.PhaseRunning, t0.Add(-2*time.Hour))
				r.Spec.Operation = v1alpha1.OperationApply
				r.Status.StartTime = &metav1.Time{Time: t0.Add(-time.Hour - 3*time.Minute)}
				return view{runs: []v1alpha1.Run{r}, claims: map[string]runs.Claimant{"a": claimOf("p1")}, pods: []corev1.Pod{poolPod("p1", corev1.PodRunning)}}
			}(),
			want: decision{create: 0, remove: []string{"p1"},
				fail: []failure{{run: "a", message: fmt.Sprintf(msgPastDeadline, time.Hour, 2*time.Minute, "p1"), held: true}}},
		},
		"WithinDeadline": {
			reason: "A Run within its deadline and grace is looked at again when they pass.",
			b:      bounds{max: 10, deadlines: map[v1alpha1.RunOperation]time.Duration{v1alpha1.OperationApply: time.Hour}, grace: 2 * time.Minute},
			v: func() view {
				r := poolRun("a", v1alpha1.PhaseRunning, t0.Add(-2*time.Hour))
				r.Spec.Operation = v1alpha1.OperationApply
				r.Status.StartTime = &metav1.Time{Time: t0.Add(-time.Hour)}
				return view{runs: []v1alpha1.Run{r}, claims: map[string]runs.Claimant{"a": claimOf("p1")}, pods: []corev1.Pod{poolPod("p1", corev1.PodRunning)}}
			}(),
			want: decision{requeue: 2 * time.Minute},
		},
		"EndedPods": {
			reason: "A pod that stopped idle is deleted; a failed one is kept for its log until keepEnded has passed.",
			b:      b,
			v: func() view {
				failed := poolPod("p2", corev1.PodFailed)
				failed.Status.ContainerStatuses = []corev1.ContainerStatus{{State: corev1.ContainerState{
					Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.NewTime(t0.Add(-10 * time.Minute))}}}}
				return view{pods: []corev1.Pod{poolPod("p1", corev1.PodSucceeded), failed, poolPod("p3", corev1.PodFailed)}}
			}(),
			want: decision{remove: []string{"p1", "p3"}, requeue: 50 * time.Minute},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := decide(tc.v, tc.b, t0)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(decision{}, failure{})); diff != "" {
				t.Errorf("%s\ndecide(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
