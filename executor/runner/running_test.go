package runner

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	kerrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/runs"
)

// A runner writes its Run's status as few times as its guarantees allow: a Run whose work ends
// within RunningAfter goes from Pending to its outcome in one write; one that goes on says Running
// first; and a runner that starts near the controller's start timeout says Running before any
// work, so that the controller never fails a Run whose runner started (the controller fails it
// only while it is still Pending, and a runner whose Running write conflicts does not run it).
// The work here is the runner reading its inputs Secret, which none of these Runs has: the Run
// fails, and how its status got there is what is checked.
func TestRunnerMarksRunningOnlyWhenItMatters(t *testing.T) {
	type want struct {
		// phases are the status writes the API server accepted, in order.
		phases []v1alpha1.RunPhase
		err    bool
	}
	cases := map[string]struct {
		reason       string
		created      time.Duration // how long before the runner's start the Run was made
		runningAfter time.Duration
		startTimeout time.Duration
		// workLasts makes the work go on until the Run is marked Running.
		workLasts bool
		// controllerWrote changes the Run after the runner read it (the controller failing it).
		controllerWrote bool
		// controllerSaid has the controller write, after the runner read the Run, what held the
		// runner up (a Pending Run's message).
		controllerSaid bool
		// claimed: a pool's pod took the Run, and its claim marked it Running (runs.Claim).
		claimed bool
		want    want
	}{
		"QuickRunOneWrite": {
			reason:  "A Run whose work ends within RunningAfter is written once, with its outcome.",
			created: time.Minute, runningAfter: 5 * time.Second, startTimeout: 5 * time.Minute,
			want: want{phases: []v1alpha1.RunPhase{v1alpha1.PhaseFailed}},
		},
		"LongRunSaysRunning": {
			reason:  "A Run whose work goes on past RunningAfter says Running meanwhile, then its outcome.",
			created: time.Minute, runningAfter: 10 * time.Millisecond, startTimeout: 5 * time.Minute, workLasts: true,
			want: want{phases: []v1alpha1.RunPhase{v1alpha1.PhaseRunning, v1alpha1.PhaseFailed}},
		},
		"NearStartTimeoutAtOnce": {
			reason:  "A runner that starts within the margin of the controller's start timeout says Running before any work.",
			created: 5*time.Minute - claimMargin, runningAfter: 5 * time.Second, startTimeout: 5 * time.Minute,
			want: want{phases: []v1alpha1.RunPhase{v1alpha1.PhaseRunning, v1alpha1.PhaseFailed}},
		},
		"UnknownStartTimeoutAtOnce": {
			reason:  "A runner not told the start timeout (a Job made by an older controller) says Running at once.",
			created: time.Minute, runningAfter: 5 * time.Second,
			want: want{phases: []v1alpha1.RunPhase{v1alpha1.PhaseRunning, v1alpha1.PhaseFailed}},
		},
		"HeldUpMessageMeanwhile": {
			reason:  "The controller's message of what held the runner up, written after the runner read the Run, does not keep a long Run from saying Running.",
			created: time.Minute, runningAfter: 10 * time.Millisecond, startTimeout: 5 * time.Minute, workLasts: true, controllerSaid: true,
			want: want{phases: []v1alpha1.RunPhase{v1alpha1.PhaseRunning, v1alpha1.PhaseFailed}},
		},
		"ClaimedByPoolPodNoSecondRunning": {
			reason:  "A pool pod's claim marked the Run Running: the runner writes only its outcome, even not told the start timeout.",
			created: time.Minute, runningAfter: 5 * time.Second, claimed: true,
			want: want{phases: []v1alpha1.RunPhase{v1alpha1.PhaseFailed}},
		},
		"FailedMeanwhileNotRun": {
			reason:  "A runner that starts near the timeout, as the controller fails the Run, finds a conflict and records nothing.",
			created: 5 * time.Minute, runningAfter: 5 * time.Second, startTimeout: 5 * time.Minute, controllerWrote: true,
			want: want{err: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := runtime.NewScheme()
			_ = corev1.AddToScheme(s)
			_ = v1alpha1.AddToScheme(s)
			run := &v1alpha1.Run{
				ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web-apply-x1y2z",
					Annotations: map[string]string{runs.AnnotationCreated: time.Now().Add(-tc.created).UTC().Format("2006-01-02T15:04:05.000000000Z")}},
				Spec: v1alpha1.RunSpec{Operation: v1alpha1.OperationApply, RunInputsDigest: "sha256:x"},
			}
			if tc.claimed {
				run.Status = v1alpha1.RunStatus{Phase: v1alpha1.PhaseRunning, Executor: v1alpha1.ExecutorJob,
					StartTime: &metav1.Time{Time: time.Now()}, Runner: "modkind-pool-01234567-a/uid"}
			}
			var (
				mu      sync.Mutex
				written []v1alpha1.RunPhase
			)
			wrote := false
			running := make(chan struct{})
			var once sync.Once
			c := fake.NewClientBuilder().WithScheme(s).WithObjects(run).WithStatusSubresource(&v1alpha1.Run{}).
				WithInterceptorFuncs(interceptor.Funcs{
					SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, o client.Object, opts ...client.SubResourceUpdateOption) error {
						if err := c.SubResource(sub).Update(ctx, o, opts...); err != nil {
							return err
						}
						r := o.(*v1alpha1.Run)
						mu.Lock()
						written = append(written, r.Status.Phase)
						mu.Unlock()
						if r.Status.Phase == v1alpha1.PhaseRunning {
							once.Do(func() { close(running) })
						}
						return nil
					},
					Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, o client.Object, opts ...client.GetOption) error {
						if _, ok := o.(*corev1.Secret); ok && tc.workLasts {
							// The work goes on until the Run says Running.
							select {
							case <-running:
							case <-time.After(30 * time.Second):
								t.Errorf("%s\nthe Run was never marked Running while its work went on", tc.reason)
							}
						}
						if err := c.Get(ctx, key, o, opts...); err != nil {
							return err
						}
						if r, ok := o.(*v1alpha1.Run); ok && (tc.controllerWrote || tc.controllerSaid) && !wrote {
							// The controller writes the Run as the runner first reads it.
							wrote = true
							w := r.DeepCopy()
							w.Status.Phase, w.Status.Message = v1alpha1.PhaseFailed, "the runner did not start within 5m0s"
							if tc.controllerSaid {
								w.Status.Phase, w.Status.Message = v1alpha1.PhasePending, "waiting for the runner to start: pod x: ErrImagePull"
							}
							if err := c.Status().Update(ctx, w); err != nil {
								return err
							}
						}
						return nil
					},
				}).Build()
			x := &Executor{Client: c, Dir: t.TempDir(), RunningAfter: tc.runningAfter, StartTimeout: tc.startTimeout}
			err := x.Execute(context.Background(), run.Namespace, run.Name)
			if (err != nil) != tc.want.err {
				t.Fatalf("%s\nExecute: %v", tc.reason, err)
			}
			mu.Lock()
			defer mu.Unlock()
			// The controller's own write goes around the interceptor: these are the runner's.
			if diff := cmp.Diff(tc.want.phases, written); diff != "" {
				t.Errorf("%s\nthe runner's status writes, -want +got:\n%s", tc.reason, diff)
			}
			if tc.want.err {
				return
			}
			final := &v1alpha1.Run{}
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(run), final); err != nil {
				t.Fatal(err)
			}
			if final.Status.StartTime == nil || final.Status.Executor != v1alpha1.ExecutorJob {
				t.Errorf("%s\nthe outcome says no start time or executor: %+v", tc.reason, final.Status)
			}
		})
	}
}

// A runner removes its Run's inputs Secret before it writes the outcome: the tenant's values
// outlive the work by no more than they must, and a pool's pod offered its next Run as the
// outcome shows is idle by then, not still deleting.
func TestRunnerRemovesInputsBeforeTheOutcome(t *testing.T) {
	s := runtime.NewScheme()
	_ = corev1.AddToScheme(s)
	_ = v1alpha1.AddToScheme(s)
	run := &v1alpha1.Run{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web-apply-x1y2z",
			Annotations: map[string]string{runs.AnnotationCreated: time.Now().UTC().Format("2006-01-02T15:04:05.000000000Z")}},
		Spec: v1alpha1.RunSpec{Operation: v1alpha1.OperationApply, RunInputsDigest: "sha256:x"},
	}
	inputs := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: run.Namespace, Name: run.Name},
		Data: map[string][]byte{runs.KeyInputs: []byte("{}")}}
	var outcomes []string
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(run, inputs).WithStatusSubresource(&v1alpha1.Run{}).
		WithInterceptorFuncs(interceptor.Funcs{
			SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, o client.Object, opts ...client.SubResourceUpdateOption) error {
				if r := o.(*v1alpha1.Run); runs.Finished(r.Status.Phase) {
					err := c.Get(ctx, client.ObjectKeyFromObject(inputs), &corev1.Secret{})
					outcomes = append(outcomes, fmt.Sprintf("%s, inputs Secret not found: %t", r.Status.Phase, kerrors.IsNotFound(err)))
				}
				return c.SubResource(sub).Update(ctx, o, opts...)
			},
		}).Build()
	x := &Executor{Client: c, Dir: t.TempDir(), RunningAfter: time.Minute, StartTimeout: time.Hour}
	if err := x.Execute(context.Background(), run.Namespace, run.Name); err != nil {
		t.Fatalf("Execute: %v", err)
	}
	// The Secret is no inputs this Run controls: the Run fails, and that is its outcome.
	want := []string{"Failed, inputs Secret not found: true"}
	if diff := cmp.Diff(want, outcomes); diff != "" {
		t.Errorf("the runner's outcome writes, -want +got:\n%s", diff)
	}
}
