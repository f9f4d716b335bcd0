package job

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/executor"
	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/runs"
	"github.com/modkind/modkind/slots"
	"github.com/modkind/modkind/state"
)

// Runs count against --max-concurrent-runs, in the cluster and in their namespace, from the
// moment a slot is reserved for them, before the cache shows them started, and stop counting once they ended: by
// their phase, or by their Job's end whatever their status says. A Run the controller did not
// create (no valid signature) counts for nothing.
func TestActiveRuns(t *testing.T) {
	s := testScheme()
	keys := state.StaticKeys{KeyRing: testKeyRing(t)}
	old := metav1.NewTime(time.Now().Add(-time.Hour))
	mk := func(ns, name string, p v1alpha1.RunPhase, signed bool) *v1alpha1.Run {
		r := &v1alpha1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(name + "-uid"), CreationTimestamp: old},
			Status: v1alpha1.RunStatus{Phase: p}}
		if signed {
			if err := runs.Sign(context.Background(), keys, r); err != nil {
				t.Fatal(err)
			}
		}
		return r
	}
	job := func(run *v1alpha1.Run, ended bool) *batchv1.Job {
		j := RunnerJob(run, nil, JobOptions{Image: "modkind:test"})
		if ended {
			j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "DeadlineExceeded"}}
		}
		return j
	}
	running, runningB := mk("team-a", "running", v1alpha1.PhaseRunning, true), mk("team-b", "running-b", v1alpha1.PhaseRunning, true)
	rewritten := mk("team-a", "rewritten", v1alpha1.PhaseRunning, true)
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(
		mk("team-a", "pending", v1alpha1.PhasePending, true), running, runningB, mk("team-a", "done", v1alpha1.PhaseSucceeded, true),
		mk("team-b", "queued", v1alpha1.PhaseQueued, true), mk("team-b", "forged-queued", v1alpha1.PhaseQueued, false),
		mk("team-a", "waiting", v1alpha1.PhaseWaitingForApproval, true),
		// Its status says Running; its Job ended: a runner (or a tenant as one) rewrote it.
		rewritten, job(rewritten, true),
		// Running, and its Job long gone.
		mk("team-a", "jobless", v1alpha1.PhaseRunning, true),
		// Made by someone else: however active it says it is, it holds nothing.
		mk("team-a", "forged", v1alpha1.PhaseRunning, false), mk("team-b", "forged-pending", v1alpha1.PhasePending, false),
		job(running, false), job(runningB, false)).Build()
	x := &Executor{Client: c, Keys: keys, reserved: map[types.NamespacedName]time.Time{
		{Namespace: "team-a", Name: "running"}:   time.Now(), // seen started: counted once
		{Namespace: "team-a", Name: "just-made"}: time.Now(), // not yet seen: counted
		{Namespace: "team-b", Name: "queued"}:    time.Now(), // being started from the queue, seen Queued: counted
		{Namespace: "team-a", Name: "long-gone"}: time.Now().Add(-time.Hour),
	}}
	n, byNamespace, queued, err := x.activeRuns(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{"team-a": 3, "team-b": 2}, byNamespace); diff != "" || n != 5 {
		t.Errorf("active Runs: want 5 (team-a: pending, running, just made; team-b: running, queued with a slot reserved), got %d: -want +got\n%s", n, diff)
	}
	if diff := cmp.Diff(map[string]int{"team-b": 1}, queued); diff != "" {
		t.Errorf("Queued Runs (the signed one only): -want +got\n%s", diff)
	}
	if _, ok := x.reserved[types.NamespacedName{Namespace: "team-a", Name: "long-gone"}]; ok {
		t.Errorf("a slot reserved long ago for a Run the cache never showed started is still counted")
	}
	if _, ok := x.reserved[types.NamespacedName{Namespace: "team-a", Name: "running"}]; ok {
		t.Errorf("a slot reserved for a Run the cache shows started is still reserved: it is counted by its phase")
	}
}

// A Run of a namespace that holds its share waits while another namespace's Run is Queued for
// the slot, and so does one when every slot is taken; another namespace's Run starts while the
// first waits. A namespace alone borrows idle slots beyond its share.
func TestSlotFree(t *testing.T) {
	s := testScheme()
	inst := func(ns string) *executor.Work {
		i := &kind.Instance{}
		i.SetGroupVersionKind(schema.GroupVersionKind{Group: "example.org", Version: "v1alpha1", Kind: "Thing"})
		i.SetNamespace(ns)
		i.SetName("web")
		return &executor.Work{Instance: i}
	}
	run := func(ns, name string, phase v1alpha1.RunPhase) *v1alpha1.Run {
		return &v1alpha1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: metav1.Now()},
			Status: v1alpha1.RunStatus{Phase: phase}}
	}
	pending := func(ns, name string) *v1alpha1.Run { return run(ns, name, v1alpha1.PhasePending) }
	busy := fake.NewClientBuilder().WithScheme(s).WithObjects(pending("team-a", "a1"), pending("team-a", "a2"), pending("team-b", "b1"),
		run("team-c", "c1", v1alpha1.PhaseQueued)).Build()
	alone := fake.NewClientBuilder().WithScheme(s).WithObjects(pending("team-a", "a1"), pending("team-a", "a2"), pending("team-a", "a3")).Build()
	cases := []struct {
		reason string
		alone  bool
		policy slots.Policy
		ns     string
		want   string
	}{
		{"team-a holds its share of 2 of 4 slots, and team-c's Run is Queued for the last: team-a's next Run waits.",
			false, slots.Policy{Total: 4}, "team-a", "namespace team-a hold 2 of the 2"},
		{"team-c holds none: its Run starts.", false, slots.Policy{Total: 4}, "team-c", ""},
		{"Every slot is taken: team-c waits too.", false, slots.Policy{Total: 3}, "team-c", "3 runs hold all 3"},
		{"No limit at all.", false, slots.Policy{}, "team-a", ""},
		{"team-a alone holds 3 of 4 slots, beyond its share of 2: the idle fourth is lent to it.", true, slots.Policy{Total: 4}, "team-a", ""},
		{"team-a alone holds every slot: it waits, beyond its share.", true, slots.Policy{Total: 3}, "team-a", "more than the 2 runs"},
	}
	for _, tc := range cases {
		c := busy
		if tc.alone {
			c = alone
		}
		x := &Executor{Client: c, Slots: tc.policy}
		err := x.slotFree(context.Background(), inst(tc.ns))
		got := ""
		if err != nil {
			got = err.Error()
			if !slots.IsWaiting(err) {
				t.Errorf("%s\nwant a wait, got %v", tc.reason, err)
			}
		}
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%s\nwant %q, got %q", tc.reason, tc.want, got)
		}
	}
}

// testScheme knows the objects the job executor reads and writes.
func testScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = batchv1.AddToScheme(s)
	_ = corev1.AddToScheme(s)
	_ = v1alpha1.AddToScheme(s)
	return s
}

// testKeyRing is a key ring for tests of what the controller signs.
func testKeyRing(t *testing.T) *state.KeyRing {
	t.Helper()
	k, err := state.ParseKeyRing(map[string][]byte{"k1": []byte("0123456789abcdef0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	return k
}
