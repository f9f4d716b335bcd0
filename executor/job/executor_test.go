package job

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/artifact"
	"github.com/modkind/modkind/executor"
	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/module"
	"github.com/modkind/modkind/runs"
	"github.com/modkind/modkind/terraform"
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
			x := &Executor{Client: c, Reader: c, Runs: &runs.Recorder{}}
			r := tc.run.DeepCopy()
			active, err := x.adopt(t.Context(), &executor.Work{Instance: &kind.Instance{}}, r)
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

// Observe reads an instance's Runs from the cache on every poll; a Run the cache does not show
// yet (created moments ago, by this controller or another) is never followed by a second one, and
// a Run the cache shows as pending but that has ended is not completed again.
func TestObserveJobReadsTheCache(t *testing.T) {
	s := runtime.NewScheme()
	_ = batchv1.AddToScheme(s)
	_ = corev1.AddToScheme(s)
	_ = v1alpha1.AddToScheme(s)
	run := func(name string, phase v1alpha1.RunPhase, created time.Time, message string) *v1alpha1.Run {
		return &v1alpha1.Run{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name, UID: types.UID("uid-" + name), ResourceVersion: "7",
				CreationTimestamp: metav1.NewTime(created), Labels: map[string]string{v1alpha1.LabelInstanceUID: "web-uid"}},
			Spec: v1alpha1.RunSpec{Operation: v1alpha1.OperationApply, ModuleDigest: "module-1", InputsDigest: "inputs-1",
				InstanceRef: v1alpha1.InstanceReference{UID: "web-uid"}},
			Status: v1alpha1.RunStatus{Phase: phase, Executor: v1alpha1.ExecutorJob, Message: message},
		}
	}
	old := time.Now().Add(-time.Hour)
	ended := run("web-apply-1", v1alpha1.PhaseSucceeded, old, "")
	refused := run("web-apply-1", v1alpha1.PhaseRefused, old, "refused: the plan destroys 1 object")
	started := run("web-apply-2", v1alpha1.PhasePending, time.Now(), "")
	finishedFast := run("web-apply-2", v1alpha1.PhaseSucceeded, time.Now(), "")
	orphan := run("web-apply-3", v1alpha1.PhasePending, old, "")
	orphanEnded := run("web-apply-3", v1alpha1.PhaseSucceeded, old, "")

	type want struct {
		// busy is what the poll decided from the cache; pending and startErr what the Apply
		// after it did.
		busy     bool
		pending  bool
		startErr string
		// apiLists is how many lists of Runs reached the API server.
		apiLists int
		// runs are the names and phases of the Runs the API server holds afterwards.
		runs map[string]v1alpha1.RunPhase
		// jobs is how many Jobs were made.
		jobs int
	}
	cases := map[string]struct {
		reason     string
		cache, api []*v1alpha1.Run
		// start has the instance need an Apply after Observe.
		start bool
		want  want
	}{
		"ActiveRunInTheCache": {
			reason: "A poll that finds the active Run in the cache leaves the instance alone without asking the API server.",
			cache:  []*v1alpha1.Run{ended, started}, api: []*v1alpha1.Run{ended, started},
			want: want{busy: true, runs: map[string]v1alpha1.RunPhase{"web-apply-1": v1alpha1.PhaseSucceeded, "web-apply-2": v1alpha1.PhasePending}},
		},
		"IdleInstance": {
			reason: "A poll of an instance that needs no Run reads only the cache.",
			cache:  []*v1alpha1.Run{ended}, api: []*v1alpha1.Run{ended},
			want: want{runs: map[string]v1alpha1.RunPhase{"web-apply-1": v1alpha1.PhaseSucceeded}},
		},
		"RunNotInTheCacheYet": {
			reason: "A Run the cache does not show yet is found by the fresh read before a Run is started: no second one.",
			cache:  []*v1alpha1.Run{ended}, api: []*v1alpha1.Run{ended, started}, start: true,
			want: want{pending: true, apiLists: 1, runs: map[string]v1alpha1.RunPhase{"web-apply-1": v1alpha1.PhaseSucceeded, "web-apply-2": v1alpha1.PhasePending}},
		},
		"RunEndedBeforeTheCacheShowedIt": {
			reason: "A Run that ended before the cache showed it is not followed by another now: its event reconciles the instance again.",
			cache:  []*v1alpha1.Run{ended}, api: []*v1alpha1.Run{ended, finishedFast}, start: true,
			want: want{pending: true, apiLists: 1, runs: map[string]v1alpha1.RunPhase{"web-apply-1": v1alpha1.PhaseSucceeded, "web-apply-2": v1alpha1.PhaseSucceeded}},
		},
		"CacheCurrent": {
			reason: "When the fresh read agrees with the cache, the Apply goes on from the newest Run: here a refusal of the same inputs.",
			cache:  []*v1alpha1.Run{refused}, api: []*v1alpha1.Run{refused}, start: true,
			want: want{startErr: refused.Status.Message, apiLists: 1, runs: map[string]v1alpha1.RunPhase{"web-apply-1": v1alpha1.PhaseRefused}},
		},
		"PendingInTheCacheEndedSince": {
			reason: "A Run the cache shows pending without a Job, but that ended since, gets no Job and is not failed.",
			cache:  []*v1alpha1.Run{orphan}, api: []*v1alpha1.Run{orphanEnded},
			want: want{runs: map[string]v1alpha1.RunPhase{"web-apply-3": v1alpha1.PhaseSucceeded}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			build := func(runs []*v1alpha1.Run, f interceptor.Funcs) client.WithWatch {
				b := fake.NewClientBuilder().WithScheme(s).WithInterceptorFuncs(f)
				for _, r := range runs {
					b = b.WithObjects(r.DeepCopy()).WithStatusSubresource(r.DeepCopy())
				}
				return b.Build()
			}
			cache := build(tc.cache, interceptor.Funcs{})
			lists := 0
			api := build(tc.api, interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, l client.ObjectList, opts ...client.ListOption) error {
				lists++
				return c.List(ctx, l, opts...)
			}})
			inst := &kind.Instance{}
			inst.SetNamespace("team-a")
			inst.SetName("web")
			inst.SetUID("web-uid")
			x := &Executor{Client: cache, Reader: api, Runs: &runs.Recorder{}}
			for _, r := range append(tc.cache, tc.api...) {
				// This controller started them: it holds their inputs (see TestTakeOver).
				x.inputs.hold(r, artifact.HeldInputs{Raw: []byte("{}"), ServiceAccount: DefaultRunnerServiceAccount})
			}
			w := &executor.Work{Op: v1alpha1.OperationApply, Instance: inst, Module: &module.Module{Digest: "module-1"},
				Workspace: &terraform.Workspace{Inputs: "inputs-1", Setup: &terraform.ProviderSetup{}}}
			busy, err := x.Busy(t.Context(), w)
			if err != nil {
				t.Fatalf("%s\nBusy: %v", tc.reason, err)
			}
			got := want{busy: busy}
			if tc.start {
				res := x.Execute(t.Context(), w)
				got.pending = res.Pending
				if res.Err != nil {
					got.startErr = res.Err.Error()
				}
			}
			l := &v1alpha1.RunList{}
			if err := api.List(t.Context(), l); err != nil {
				t.Fatal(err)
			}
			got.apiLists = lists - 1 // the list just above
			got.runs = map[string]v1alpha1.RunPhase{}
			for _, r := range l.Items {
				got.runs[r.Name] = r.Status.Phase
			}
			jobs := &batchv1.JobList{}
			if err := cache.List(t.Context(), jobs); err != nil {
				t.Fatal(err)
			}
			got.jobs = len(jobs.Items)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\n-want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// A Run started prunes its instance's history as the cache shows it: no list of the namespace's
// Runs reaches the API server, and a cache behind keeps more Runs, never fewer.
func TestPruneReadsTheCache(t *testing.T) {
	s := runtime.NewScheme()
	_ = v1alpha1.AddToScheme(s)
	base := time.Now().Add(-time.Hour)
	run := func(i int, phase v1alpha1.RunPhase) *v1alpha1.Run {
		name := "web-apply-" + string(rune('a'+i))
		return &v1alpha1.Run{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name, UID: types.UID("uid-" + name),
				CreationTimestamp: metav1.NewTime(base.Add(time.Duration(i) * time.Minute)),
				Labels:            map[string]string{v1alpha1.LabelInstanceUID: "web-uid"}},
			Spec:   v1alpha1.RunSpec{Operation: v1alpha1.OperationApply, InstanceRef: v1alpha1.InstanceReference{UID: "web-uid"}},
			Status: v1alpha1.RunStatus{Phase: phase},
		}
	}
	// Four finished Runs, then the one being started; a history of 2.
	all := []*v1alpha1.Run{run(0, v1alpha1.PhaseSucceeded), run(1, v1alpha1.PhaseFailed), run(2, v1alpha1.PhaseSucceeded),
		run(3, v1alpha1.PhaseSucceeded), run(4, v1alpha1.PhasePending)}
	cases := map[string]struct {
		reason string
		cached int // how many of all, oldest first, the cache shows
		want   []string
	}{
		"CacheCurrent": {
			reason: "The two newest finished Runs and the active one are kept; the older are deleted.",
			cached: 5,
			want:   []string{"web-apply-c", "web-apply-d", "web-apply-e"},
		},
		"CacheBehind": {
			reason: "A cache that does not show the newest Runs yet has fewer to keep, so it deletes fewer: here only the oldest.",
			cached: 3,
			want:   []string{"web-apply-b", "web-apply-c", "web-apply-d", "web-apply-e"},
		},
		"CacheEmpty": {
			reason: "A cache that shows none of the instance's Runs deletes none.",
			cached: 0,
			want:   []string{"web-apply-a", "web-apply-b", "web-apply-c", "web-apply-d", "web-apply-e"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cb := fake.NewClientBuilder().WithScheme(s)
			for _, r := range all[:tc.cached] {
				cb = cb.WithObjects(r.DeepCopy())
			}
			cache := cb.Build()
			ab := fake.NewClientBuilder().WithScheme(s)
			for _, r := range all {
				ab = ab.WithObjects(r.DeepCopy())
			}
			lists := 0
			api := ab.WithInterceptorFuncs(interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, l client.ObjectList, opts ...client.ListOption) error {
				lists++
				return c.List(ctx, l, opts...)
			}}).Build()
			// Deletes reach the API server (the cache here is a copy); reads go to the cache.
			x := &Executor{Client: cache, Reader: api, Runs: &runs.Recorder{Client: api, Reader: api, History: 2}}
			inst := &kind.Instance{}
			inst.SetNamespace("team-a")
			inst.SetName("web")
			inst.SetUID("web-uid")
			if err := x.prune(t.Context(), &executor.Work{Instance: inst}); err != nil {
				t.Fatalf("%s\nprune: %v", tc.reason, err)
			}
			if lists != 0 {
				t.Errorf("%s\nprune listed Runs from the API server %d times, want 0", tc.reason, lists)
			}
			l := &v1alpha1.RunList{}
			if err := api.List(t.Context(), l); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range l.Items {
				got = append(got, r.Name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nRuns left: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}
