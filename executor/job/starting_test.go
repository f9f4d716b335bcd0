package job

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/modkind/modkind/apis/v1alpha1"
)

// Every Run ends: one whose runner has not started within the start timeout fails, saying why
// from the Job's and pod's own events, and its Job goes; until then, the Run's message says what
// holds the runner up. A runner that started, or a Watcher without a timeout, is left alone.
func TestAwaitStart(t *testing.T) {
	s := testScheme()
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	run := func(p v1alpha1.RunPhase) *v1alpha1.Run {
		return &v1alpha1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web-apply-1", UID: "run-uid"},
			Status: v1alpha1.RunStatus{Phase: p, Executor: v1alpha1.ExecutorJob}}
	}
	job := func(age time.Duration) *batchv1.Job {
		j := RunnerJob(run(v1alpha1.PhasePending), nil, JobOptions{})
		j.CreationTimestamp = metav1.NewTime(now.Add(-age))
		return j
	}
	pod := func(mutate func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web-apply-1-x7k2p",
			Labels: map[string]string{batchv1.JobNameLabel: "web-apply-1"}}}
		mutate(p)
		return p
	}
	warning := func(object, reason, message string, at time.Time) *corev1.Event {
		return &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: object + "." + reason},
			InvolvedObject: corev1.ObjectReference{Name: object}, Type: corev1.EventTypeWarning, Reason: reason,
			Message: message, LastTimestamp: metav1.NewTime(at)}
	}
	noSA := warning("web-apply-1", "FailedCreate", `Error creating: pods "web-apply-1-" is forbidden: error looking up service account team-a/modkind-runner: serviceaccount "modkind-runner" not found`, now.Add(-time.Minute))
	unschedulable := pod(func(p *corev1.Pod) {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
			Message: "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector."}}
	})
	pullFails := pod(func(p *corev1.Pod) {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: RunnerContainer, State: corev1.ContainerState{
			Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: `Back-off pulling image "modkind:typo"`}}}}
	})

	type want struct {
		phase   v1alpha1.RunPhase
		message string
		jobGone bool
		// requeue says the Watcher looks again before the timeout.
		requeue bool
	}
	cases := map[string]struct {
		reason  string
		run     *v1alpha1.Run
		job     *batchv1.Job
		objects []client.Object
		timeout time.Duration
		want    want
	}{
		"NoServiceAccountYet": {
			reason: "The Job controller cannot make the pod: the Run stays Pending for now, its message quoting why.",
			run:    run(v1alpha1.PhasePending), job: job(time.Minute), objects: []client.Object{noSA}, timeout: 5 * time.Minute,
			want: want{phase: v1alpha1.PhasePending, requeue: true,
				message: msgWaitingForRunner + `FailedCreate: Error creating: pods "web-apply-1-" is forbidden: error looking up service account team-a/modkind-runner`},
		},
		"Unschedulable": {
			reason: "The pod exists but no node takes it: its PodScheduled condition says why.",
			run:    run(v1alpha1.PhasePending), job: job(time.Minute), objects: []client.Object{unschedulable}, timeout: 5 * time.Minute,
			want: want{phase: v1alpha1.PhasePending, requeue: true,
				message: msgWaitingForRunner + "pod web-apply-1-x7k2p: Unschedulable: 0/3 nodes are available"},
		},
		"ImagePull": {
			reason: "The runner's image cannot be pulled: the container's waiting reason says so.",
			run:    run(v1alpha1.PhasePending), job: job(time.Minute), objects: []client.Object{pullFails}, timeout: 5 * time.Minute,
			want: want{phase: v1alpha1.PhasePending, requeue: true,
				message: msgWaitingForRunner + `pod web-apply-1-x7k2p: ImagePullBackOff: Back-off pulling image "modkind:typo"`},
		},
		"TimedOut": {
			reason: "Past the start timeout the Run fails, saying why, and its Job is deleted: its slot is free.",
			run:    run(v1alpha1.PhasePending), job: job(6 * time.Minute), objects: []client.Object{unschedulable}, timeout: 5 * time.Minute,
			want: want{phase: v1alpha1.PhaseFailed, jobGone: true,
				message: "the runner did not start within 5m0s: pod web-apply-1-x7k2p: Unschedulable"},
		},
		"TimedOutSilently": {
			reason: "Nothing says why, and the Run still fails in time, saying that nothing said.",
			run:    run(v1alpha1.PhasePending), job: job(6 * time.Minute), timeout: 5 * time.Minute,
			want: want{phase: v1alpha1.PhaseFailed, jobGone: true, message: "the runner did not start within 5m0s: " + msgNoReason},
		},
		"Started": {
			reason: "The runner started (its Run is Running): its end is its own to record, however long ago the Job was made.",
			run:    run(v1alpha1.PhaseRunning), job: job(time.Hour), objects: []client.Object{unschedulable}, timeout: 5 * time.Minute,
			want: want{phase: v1alpha1.PhaseRunning},
		},
		"NoTimeout": {
			reason: "Without a start timeout, nothing is timed.",
			run:    run(v1alpha1.PhasePending), job: job(time.Hour), objects: []client.Object{unschedulable},
			want: want{phase: v1alpha1.PhasePending},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(s).
				WithObjects(append(tc.objects, tc.run, tc.job)...).WithStatusSubresource(&v1alpha1.Run{}).
				WithIndex(&corev1.Event{}, "involvedObject.name", func(o client.Object) []string { return []string{o.(*corev1.Event).InvolvedObject.Name} }).
				WithIndex(&corev1.Event{}, "type", func(o client.Object) []string { return []string{o.(*corev1.Event).Type} }).
				Build()
			w := &Watcher{Client: c, Reader: c, StartTimeout: tc.timeout, now: func() time.Time { return now }}
			res, err := w.Reconcile(t.Context(), reconcile.Request{NamespacedName: client.ObjectKeyFromObject(tc.job)})
			if err != nil {
				t.Fatalf("%s\nReconcile: %v", tc.reason, err)
			}
			stored := &v1alpha1.Run{}
			if err := c.Get(t.Context(), types.NamespacedName{Namespace: "team-a", Name: "web-apply-1"}, stored); err != nil {
				t.Fatal(err)
			}
			got := want{phase: stored.Status.Phase, message: stored.Status.Message,
				jobGone: kerrors.IsNotFound(c.Get(t.Context(), client.ObjectKeyFromObject(tc.job), &batchv1.Job{})),
				requeue: res.RequeueAfter > 0 && res.RequeueAfter <= startCheckEvery}
			if tc.want.message != "" && strings.HasPrefix(got.message, tc.want.message) {
				got.message = tc.want.message
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nReconcile: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}
