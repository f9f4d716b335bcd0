package pool

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/modkind/modkind/apis"
	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/executor/job"
)

// Which pod of its pool a Run is handed to as it starts: an idle one (running under the pool's
// service account, holding no active Run, not about to stop for want of work), the one made first;
// none when no pod is idle or when other Runs of the pool wait for a pod. A hand this controller
// made counts before the cache shows it.
func TestHand(t *testing.T) {
	s, err := apis.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC)
	const account = "modkind-runner"
	pod := func(name, pool string, phase corev1.PodPhase, age time.Duration) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name, UID: types.UID("uid-" + name),
			Labels: map[string]string{job.LabelPool: pool}, CreationTimestamp: metav1.NewTime(t0.Add(-age))},
			Spec:   corev1.PodSpec{ServiceAccountName: account},
			Status: corev1.PodStatus{Phase: phase, StartTime: &metav1.Time{Time: t0.Add(-age)}}}
	}
	run := func(name string, phase v1alpha1.RunPhase, runner string) *v1alpha1.Run {
		return &v1alpha1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name, UID: types.UID("uid-" + name),
			Labels: map[string]string{job.LabelPool: "k"}},
			Status: v1alpha1.RunStatus{Phase: phase, Runner: runner}}
	}
	ended := func(name, runner string, ago time.Duration) *v1alpha1.Run {
		r := run(name, v1alpha1.PhaseSucceeded, runner)
		r.Status.CompletionTime = &metav1.Time{Time: t0.Add(-ago)}
		return r
	}
	deleting := pod("deleting", "k", corev1.PodRunning, 9*time.Minute)
	deleting.DeletionTimestamp, deleting.Finalizers = &metav1.Time{Time: t0}, []string{"test"}
	foreign := pod("foreign", "k", corev1.PodRunning, 20*time.Minute)
	foreign.Spec.ServiceAccountName = "default"
	pods := []client.Object{
		pod("oldest", "k", corev1.PodRunning, 5*time.Minute), pod("newer", "k", corev1.PodRunning, time.Minute),
		pod("starting", "k", corev1.PodPending, 8*time.Minute), deleting, foreign,
		pod("other-pool", "other", corev1.PodRunning, 10*time.Minute),
	}
	cases := map[string]struct {
		reason string
		runs   []client.Object
		// idle is how long the pool's pods wait for a Run before they stop; 0: never.
		idle time.Duration
		// template says whether the controller knows the pool's pod.
		noTemplate bool
		// hands are the Runs handed one after another, without the cache showing the hands.
		hands []string
		want  []string
	}{
		"AllIdle": {reason: "Every running pod of the pool's account is idle: the one made first.",
			hands: []string{"new"}, want: []string{"oldest"}},
		"OneHolds": {reason: "The pod made first holds a Run: the other running pod.",
			runs:  []client.Object{run("held", v1alpha1.PhaseRunning, "oldest/uid-oldest")},
			hands: []string{"new"}, want: []string{"newer"}},
		"BothHold": {reason: "Both pods hold a Run (one claimed, one handed): none is idle.",
			runs:  []client.Object{run("held", v1alpha1.PhaseRunning, "oldest/uid-oldest"), run("handed", v1alpha1.PhaseRunning, "newer/uid-newer")},
			hands: []string{"new"}, want: []string{""}},
		"EndedFrees": {reason: "A Run a pod held that ended frees it again.",
			runs:  []client.Object{ended("done", "oldest/uid-oldest", time.Second)},
			hands: []string{"new"}, want: []string{"oldest"}},
		"OthersWait": {reason: "A Run of the pool waits Pending for any pod: the new Run waits behind it, as the pods take the oldest first.",
			runs:  []client.Object{run("waiting", v1alpha1.PhasePending, "")},
			hands: []string{"new"}, want: []string{""}},
		"QueuedDoNotCount": {reason: "A Run Queued for a slot does not wait for a pod.",
			runs:  []client.Object{run("queued", v1alpha1.PhaseQueued, "")},
			hands: []string{"new"}, want: []string{"oldest"}},
		"HandsInARow": {reason: "Hands made before the cache shows them count: two Runs go to two pods, a third to none.",
			hands: []string{"a", "b", "c"}, want: []string{"oldest", "newer", ""}},
		"StopsSoon": {reason: "A pod that has waited for work nearly as long as it waits before it stops is not handed a Run.",
			idle:  5*time.Minute + 10*time.Second,
			hands: []string{"new"}, want: []string{"newer"}},
		"BusyLately": {reason: "A pod's wait for work counts from the end of its last Run.",
			idle:  5*time.Minute + 10*time.Second,
			runs:  []client.Object{ended("done", "oldest/uid-oldest", time.Minute)},
			hands: []string{"new"}, want: []string{"oldest"}},
		"NoTemplate": {reason: "The controller does not know the pool's pod (and so its account) yet: the pods take the Run.",
			noTemplate: true, hands: []string{"new"}, want: []string{""}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(s).WithObjects(append(append([]client.Object{}, pods...), tc.runs...)...).Build()
			p := &Pool{Client: c, Reader: c, Idle: tc.idle, now: func() time.Time { return t0 }}
			if !tc.noTemplate {
				p.templates = map[types.NamespacedName]*corev1.Pod{{Namespace: "team-a", Name: "k"}: {Spec: corev1.PodSpec{ServiceAccountName: account}}}
			}
			var got []string
			for _, r := range tc.hands {
				pod, ok := p.Hand(context.Background(), run(r, v1alpha1.PhaseQueued, ""))
				if ok != (pod.Pod != "") || ok && pod.UID != types.UID("uid-"+pod.Pod) {
					t.Errorf("Hand: %+v, %v: want a pod by name and UID, or none", pod, ok)
				}
				got = append(got, pod.Pod)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nHand: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}
