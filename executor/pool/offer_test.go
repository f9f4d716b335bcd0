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

// Which pod of its pool a Run is offered to as it is marked Pending: an idle one (running, holding
// no claim, offered no Run that still waits), the one made first; none when no pod is idle. An
// offer this controller made counts before the cache shows it.
func TestOffer(t *testing.T) {
	s, err := apis.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC)
	pod := func(name, pool string, phase corev1.PodPhase, age time.Duration) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name, UID: types.UID("uid-" + name),
			Labels: map[string]string{job.LabelPool: pool}, CreationTimestamp: metav1.NewTime(t0.Add(-age))},
			Status: corev1.PodStatus{Phase: phase}}
	}
	run := func(name string, phase v1alpha1.RunPhase, runner, offeredTo string) *v1alpha1.Run {
		return &v1alpha1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name, UID: types.UID("uid-" + name),
			Labels: map[string]string{job.LabelPool: "k"}},
			Status: v1alpha1.RunStatus{Phase: phase, Runner: runner, OfferedTo: offeredTo}}
	}
	deleting := pod("deleting", "k", corev1.PodRunning, 9*time.Minute)
	deleting.DeletionTimestamp, deleting.Finalizers = &metav1.Time{Time: t0}, []string{"test"}
	pods := []client.Object{
		pod("oldest", "k", corev1.PodRunning, 5*time.Minute), pod("newer", "k", corev1.PodRunning, time.Minute),
		pod("starting", "k", corev1.PodPending, 8*time.Minute), deleting,
		pod("other-pool", "other", corev1.PodRunning, 10*time.Minute),
	}
	cases := map[string]struct {
		reason string
		runs   []client.Object
		// offers are the Runs offered one after another, without the cache showing the offers.
		offers []string
		want   []string
	}{
		"AllIdle": {reason: "Every running pod of the pool is idle: the one made first.",
			offers: []string{"new"}, want: []string{"oldest"}},
		"OneHolds": {reason: "The pod made first holds a Run: the other running pod.",
			runs:   []client.Object{run("held", v1alpha1.PhaseRunning, "oldest/uid-oldest", "")},
			offers: []string{"new"}, want: []string{"newer"}},
		"OfferedWaiting": {reason: "One pod holds a Run and the other was offered one that still waits: none is idle.",
			runs:   []client.Object{run("held", v1alpha1.PhaseRunning, "oldest/uid-oldest", ""), run("waiting", v1alpha1.PhasePending, "", "newer")},
			offers: []string{"new"}, want: []string{""}},
		"OfferedTaken": {reason: "A Run offered to a pod that it took and ended frees it again.",
			runs:   []client.Object{run("done", v1alpha1.PhaseSucceeded, "oldest/uid-oldest", "oldest")},
			offers: []string{"new"}, want: []string{"oldest"}},
		"OffersInARow": {reason: "Offers made before the cache shows them count: two Runs go to two pods, a third to none.",
			offers: []string{"a", "b", "c"}, want: []string{"oldest", "newer", ""}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(s).WithObjects(append(append([]client.Object{}, pods...), tc.runs...)...).Build()
			p := &Pool{Client: c, Reader: c, now: func() time.Time { return t0 }}
			var got []string
			for _, r := range tc.offers {
				got = append(got, p.Offer(context.Background(), run(r, v1alpha1.PhaseQueued, "", "")))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nOffer: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}
