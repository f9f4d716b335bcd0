package runs

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/terraform"
)

// A new Run says Queued only once it has waited for RunningAfter, and Running only once its
// terraform has run for RunningAfter: one that waits and ends sooner goes from no phase to its
// outcome in a single status write, its start time with it. A Run that says Queued says Running
// as soon as its terraform starts.
func TestRunningIsWrittenOnlyForALongRun(t *testing.T) {
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	type seen struct {
		// phases are the phases the status writes said, in order.
		phases []v1alpha1.RunPhase
		// startTime says the outcome's write carried a start time.
		startTime bool
	}
	cases := map[string]struct {
		reason       string
		runningAfter time.Duration
		queued       bool
		// waitQueued makes the run wait in line until the Run says Queued; long makes it go on
		// until the Run says Running.
		waitQueued, long bool
		want             seen
	}{
		"ShortRun": {
			reason:       "A run that ends before RunningAfter writes its outcome alone.",
			runningAfter: time.Hour,
			want:         seen{phases: []v1alpha1.RunPhase{v1alpha1.PhaseSucceeded}, startTime: true},
		},
		"LongRun": {
			reason:       "A run still going after RunningAfter says Running, then its outcome.",
			runningAfter: 10 * time.Millisecond,
			long:         true,
			want:         seen{phases: []v1alpha1.RunPhase{v1alpha1.PhaseRunning, v1alpha1.PhaseSucceeded}, startTime: true},
		},
		"QueuedBriefly": {
			reason:       "A run that waits in line and runs for less than RunningAfter writes its outcome alone.",
			runningAfter: time.Hour,
			queued:       true,
			want:         seen{phases: []v1alpha1.RunPhase{v1alpha1.PhaseSucceeded}, startTime: true},
		},
		"QueuedLong": {
			reason:       "A Run that waited long enough to say Queued says Running at once when its slot comes.",
			runningAfter: 10 * time.Millisecond,
			queued:       true,
			waitQueued:   true,
			want:         seen{phases: []v1alpha1.RunPhase{v1alpha1.PhaseQueued, v1alpha1.PhaseRunning, v1alpha1.PhaseSucceeded}, startTime: true},
		},
		"AtOnce": {
			reason:       "RunningAfter < 0 says Running at once, as before.",
			runningAfter: -1,
			want:         seen{phases: []v1alpha1.RunPhase{v1alpha1.PhaseRunning, v1alpha1.PhaseSucceeded}, startTime: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got seen
			queued, running := written(), written()
			c := fake.NewClientBuilder().WithScheme(s).WithStatusSubresource(&v1alpha1.Run{}).
				WithInterceptorFuncs(interceptor.Funcs{SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
					run := obj.(*v1alpha1.Run)
					got.phases = append(got.phases, run.Status.Phase)
					got.startTime = run.Status.StartTime != nil
					switch run.Status.Phase {
					case v1alpha1.PhaseQueued:
						queued.done()
					case v1alpha1.PhaseRunning:
						running.done()
					}
					return c.SubResource(sub).Update(ctx, obj, opts...)
				}}).Build()
			inst := testInstance()
			r := &Recorder{Client: c, Reader: c, RunningAfter: tc.runningAfter}
			ctx := context.Background()
			rec := r.Begin(ctx, v1alpha1.OperationApply, Subject{Instance: inst, ModuleDigest: "d", Workspace: &terraform.Workspace{Inputs: "i"}})
			if tc.queued {
				rec.Queued(ctx, errWaiting)
			}
			if tc.waitQueued {
				queued.wait(t)
			}
			rec.Started(ctx)
			if tc.long {
				running.wait(t)
			}
			rec.Finish(ctx, Outcome{})
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(seen{})); diff != "" {
				t.Errorf("%s\nstatus writes: -want +got\n%s", tc.reason, diff)
			}
			runs := &v1alpha1.RunList{}
			if err := c.List(ctx, runs); err != nil || len(runs.Items) != 1 {
				t.Fatalf("want the one Run, got %d, %v", len(runs.Items), err)
			}
			st := runs.Items[0].Status
			if st.Phase != v1alpha1.PhaseSucceeded || st.StartTime == nil || st.CompletionTime == nil || st.Executor != v1alpha1.ExecutorProcess {
				t.Errorf("%s\nthe Run as stored: %+v", tc.reason, st)
			}
		})
	}
}

// A phaseWrite is closed once a status write of its phase was made.
type phaseWrite struct {
	ch   chan struct{}
	once *sync.Once
}

func written() phaseWrite { return phaseWrite{ch: make(chan struct{}), once: &sync.Once{}} }

func (w phaseWrite) done() { w.once.Do(func() { close(w.ch) }) }

// wait waits for the late write, at most 10 s.
func (w phaseWrite) wait(t *testing.T) {
	t.Helper()
	select {
	case <-w.ch:
	case <-time.After(10 * time.Second):
		t.Fatal("the late status write was never made")
	}
}

var errWaiting = &testError{"waiting for a free run slot: 1 runs hold all 1 (--max-concurrent-runs)"}

type testError struct{ msg string }

func (e *testError) Error() string { return e.msg }
