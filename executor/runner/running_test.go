package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

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
// The work here is the runner fetching its inputs, which the artifact server refuses: the Run
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
			inputs := func(context.Context, *v1alpha1.Run) ([]byte, error) {
				if tc.workLasts {
					// The work goes on until the Run says Running.
					select {
					case <-running:
					case <-time.After(30 * time.Second):
						t.Errorf("%s\nthe Run was never marked Running while its work went on", tc.reason)
					}
				}
				return nil, errors.New("artifact server refused the inputs of Run web-apply-x1y2z: 403 Forbidden")
			}
			x := &Executor{Client: c, Dir: t.TempDir(), RunningAfter: tc.runningAfter, StartTimeout: tc.startTimeout, Inputs: inputs}
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

// A runner runs only the inputs its signed Run names: inputs that reach it changed (a relay, a
// tampered answer) fail the Run, and the runner writes nothing else on their account.
func TestRunnerRefusesInputsTheRunDoesNotName(t *testing.T) {
	s := runtime.NewScheme()
	_ = corev1.AddToScheme(s)
	_ = v1alpha1.AddToScheme(s)
	made, _ := json.Marshal(runs.Inputs{Main: []byte("{}"), Vars: []byte("{}"), Digest: "inputs-1"})
	forged, _ := json.Marshal(runs.Inputs{Main: []byte(`{"resource":{"terraform_data":{"x":{"provisioner":{"local-exec":{"command":"steal"}}}}}}`),
		Vars: []byte("{}"), Digest: "inputs-1"})
	run := &v1alpha1.Run{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web-apply-x1y2z",
			Annotations: map[string]string{runs.AnnotationCreated: time.Now().UTC().Format("2006-01-02T15:04:05.000000000Z")}},
		Spec: v1alpha1.RunSpec{Operation: v1alpha1.OperationApply, InputsDigest: "inputs-1", RunInputsDigest: runs.InputsDigest(made)},
	}
	var writes []string
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(run).WithStatusSubresource(&v1alpha1.Run{}).
		WithInterceptorFuncs(interceptor.Funcs{
			Create: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.CreateOption) error {
				writes = append(writes, fmt.Sprintf("create %T", o))
				return c.Create(ctx, o, opts...)
			},
			SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, o client.Object, opts ...client.SubResourceUpdateOption) error {
				writes = append(writes, "status "+string(o.(*v1alpha1.Run).Status.Phase))
				return c.SubResource(sub).Update(ctx, o, opts...)
			},
		}).Build()
	var asked []string
	x := &Executor{Client: c, Dir: t.TempDir(), RunningAfter: time.Minute, StartTimeout: time.Hour,
		Inputs: func(_ context.Context, r *v1alpha1.Run) ([]byte, error) {
			asked = append(asked, r.Namespace+"/"+r.Name)
			return forged, nil
		}}
	if err := x.Execute(context.Background(), run.Namespace, run.Name); err != nil {
		t.Fatalf("Execute: %v", err)
	}
	if diff := cmp.Diff([]string{"team-a/web-apply-x1y2z"}, asked); diff != "" {
		t.Errorf("the inputs asked for, -want +got:\n%s", diff)
	}
	if diff := cmp.Diff([]string{"status Failed"}, writes); diff != "" {
		t.Errorf("the runner's writes, -want +got:\n%s", diff)
	}
	got := &v1alpha1.Run{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(run), got); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got.Status.Message, "not the inputs the controller made for the Run") || strings.Contains(got.Status.Message, "steal") {
		t.Errorf("the failed Run says %q; want it to name the refused inputs, and quote none of them", got.Status.Message)
	}
}
