package reconcile

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/modkind/modkind/apis/v1alpha1"
)

// adoptJob ends a Running Run whose Job is gone, since nothing would ever record its end, and
// leaves alone a Run whose Job exists, one run by the controller itself, and one too young to
// have its Job in the cache yet.
func TestAdoptJobLeavesOrEnds(t *testing.T) {
	s := runtime.NewScheme()
	_ = batchv1.AddToScheme(s)
	_ = v1alpha1.AddToScheme(s)
	old := metav1.NewTime(time.Now().Add(-time.Minute))
	run := func(phase v1alpha1.RunPhase, executor string, created metav1.Time) *v1alpha1.Run {
		return &v1alpha1.Run{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web-apply-1", CreationTimestamp: created},
			Spec:       v1alpha1.RunSpec{Operation: v1alpha1.OperationApply},
			Status:     v1alpha1.RunStatus{Phase: phase, Executor: executor},
		}
	}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web-apply-1"}}
	type want struct {
		active  bool
		phase   v1alpha1.RunPhase
		message string
	}
	cases := map[string]struct {
		reason string
		run    *v1alpha1.Run
		job    bool
		want   want
	}{
		"JobGone": {
			reason: "a Running Run whose Job was deleted ends Failed, saying so",
			run:    run(v1alpha1.PhaseRunning, v1alpha1.ExecutorJob, old),
			want:   want{active: false, phase: v1alpha1.PhaseFailed, message: msgJobGone},
		},
		"JobThere": {
			reason: "a Running Run with its Job is the runner's to end",
			run:    run(v1alpha1.PhaseRunning, v1alpha1.ExecutorJob, old),
			job:    true,
			want:   want{active: true, phase: v1alpha1.PhaseRunning},
		},
		"Process": {
			reason: "a Run the controller executes itself has no Job to miss",
			run:    run(v1alpha1.PhaseRunning, v1alpha1.ExecutorProcess, old),
			want:   want{active: true, phase: v1alpha1.PhaseRunning},
		},
		"Young": {
			reason: "a Run made moments ago may not have its Job in the cache yet",
			run:    run(v1alpha1.PhaseRunning, v1alpha1.ExecutorJob, metav1.Now()),
			want:   want{active: true, phase: v1alpha1.PhaseRunning},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := fake.NewClientBuilder().WithScheme(s).WithObjects(tc.run).WithStatusSubresource(tc.run)
			if tc.job {
				b = b.WithObjects(job.DeepCopy())
			}
			c := b.Build()
			e := &external{connector: &connector{jobs: &JobExecutor{Client: c}}}
			r := tc.run.DeepCopy()
			active, err := e.adoptJob(t.Context(), r)
			if err != nil {
				t.Fatalf("%s\nadoptJob: %v", tc.reason, err)
			}
			stored := &v1alpha1.Run{}
			if err := c.Get(t.Context(), types.NamespacedName{Namespace: "team-a", Name: "web-apply-1"}, stored); err != nil {
				t.Fatal(err)
			}
			got := want{active: active, phase: stored.Status.Phase, message: stored.Status.Message}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nadoptJob: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}
