package runner

import (
	"context"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/modkind/modkind/apis"
	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/runs"
)

func TestPoolTakesItsOwnPendingRuns(t *testing.T) {
	s, err := apis.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	const label, key = "modkind.io/pool", "k"
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	run := func(ns, name string, pool string, phase v1alpha1.RunPhase, age time.Duration) *v1alpha1.Run {
		return &v1alpha1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name),
			Labels: map[string]string{label: pool}, CreationTimestamp: metav1.NewTime(t0.Add(-age))},
			Status: v1alpha1.RunStatus{Phase: phase}}
	}
	offered := func(r *v1alpha1.Run, to string) *v1alpha1.Run { r.Status.OfferedTo = to; return r }
	claimed := run("team-a", "claimed", key, v1alpha1.PhasePending, 5*time.Minute)
	objs := []client.Object{
		run("team-a", "older", key, v1alpha1.PhasePending, 4*time.Minute),
		run("team-a", "newer", key, v1alpha1.PhasePending, time.Minute),
		run("team-a", "running", key, v1alpha1.PhaseRunning, 7*time.Minute),
		run("team-a", "queued", key, v1alpha1.PhaseQueued, 7*time.Minute),
		run("team-a", "other-pool", "other", v1alpha1.PhasePending, 8*time.Minute),
		run("team-b", "other-namespace", key, v1alpha1.PhasePending, 9*time.Minute),
		claimed,
		offered(run("team-a", "offered-to-me", key, v1alpha1.PhasePending, 30*time.Second), "me"),
		offered(run("team-a", "offered-to-other", key, v1alpha1.PhasePending, 10*time.Minute), "other-pod"),
	}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).WithStatusSubresource(&v1alpha1.Run{}).Build()
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(claimed), claimed); err != nil {
		t.Fatal(err)
	}
	if won, err := runs.Claim(context.Background(), c, claimed, runs.Claimant{Pod: "another", UID: "u2"}); !won || err != nil {
		t.Fatalf("claiming as another pod: %v, %v", won, err)
	}
	var took []string
	p := &Pool{Client: c, Namespace: "team-a", Label: label, Key: key, Self: runs.Claimant{Pod: "me", UID: "u1"}, Out: io.Discard,
		Execute: func(_ context.Context, run *v1alpha1.Run) error {
			if run.Status.Phase != v1alpha1.PhaseRunning {
				t.Errorf("Run %s executed %s: its claim marks it Running", run.Name, run.Status.Phase)
			}
			took = append(took, run.Name)
			return nil
		}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := p.follow(ctx); err != nil {
		t.Fatal(err)
	}
	var retry time.Duration
	for range 4 {
		var err error
		if _, retry, err = p.takeNext(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Of the pool's Runs of its own namespace, only Pending ones that no other pod claimed, the one
	// offered to this pod first; not yet the one the controller offered to another pod.
	if len(took) == 0 || took[0] != "offered-to-me" {
		t.Errorf("the Run offered to this pod should be taken first, took %v", took)
	}
	slices.Sort(took)
	if diff := cmp.Diff([]string{"newer", "offered-to-me", "older"}, took); diff != "" {
		t.Errorf("Runs taken: -want, +got:\n%s", diff)
	}
	if retry <= 0 || retry > offerGrace+wakeJitter {
		t.Errorf("with a Run offered to another pod waiting, look again within %s and this pod's part of %s; got %s", offerGrace, wakeJitter, retry)
	}
	// The other pod left it for offerGrace: this one takes it.
	p.mu.Lock()
	for uid := range p.othersSince {
		p.othersSince[uid] = time.Now().Add(-offerGrace - wakeJitter)
	}
	p.mu.Unlock()
	if ok, _, err := p.takeNext(ctx); err != nil || !ok {
		t.Fatalf("a Run offered to another pod that left it for %s: taken %v, %v", offerGrace, ok, err)
	}
	for _, name := range took {
		got := &v1alpha1.Run{}
		if err := c.Get(context.Background(), types.NamespacedName{Namespace: "team-a", Name: name}, got); err != nil {
			t.Fatal(err)
		}
		if holder, ok := runs.Holder(got); !ok || holder != p.Self {
			t.Errorf("claim of %s: %+v, %v; want held by this pod", name, holder, ok)
		}
	}
}
