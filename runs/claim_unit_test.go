package runs

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/modkind/modkind/apis"
	"github.com/modkind/modkind/apis/v1alpha1"
)

func TestClaim(t *testing.T) {
	s, err := apis.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	pending := &v1alpha1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web-apply-x", UID: "run-1",
		Labels: map[string]string{"modkind.io/pool": "k"}}, Status: v1alpha1.RunStatus{Phase: v1alpha1.PhasePending, Message: "waiting for a pod"}}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(pending).WithStatusSubresource(pending).Build()
	first, second := Claimant{Pod: "p1", UID: "u1"}, Claimant{Pod: "p2", UID: "u2"}

	// Both pods read the Run before either claims it.
	read := func() *v1alpha1.Run {
		r := &v1alpha1.Run{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(pending), r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	byFirst, bySecond := read(), read()
	won1, err := Claim(ctx, c, byFirst, first)
	if err != nil {
		t.Fatal(err)
	}
	won2, err := Claim(ctx, c, bySecond, second)
	if err != nil {
		t.Fatal(err)
	}
	// Read again after the claim: claimed, so no pod may claim it.
	won3, err := Claim(ctx, c, read(), second)
	if err != nil {
		t.Fatal(err)
	}
	got := read()
	holder, held := Holder(got)
	_, heldUnclaimed := Holder(&v1alpha1.Run{})
	type outcome struct {
		Won                 []bool
		Holder              Claimant
		Held, HeldUnclaimed bool
		Phase               v1alpha1.RunPhase
		Executor, Message   string
		Started             bool
	}
	want := outcome{Won: []bool{true, false, false}, Holder: first, Held: true, Phase: v1alpha1.PhaseRunning, Executor: v1alpha1.ExecutorJob, Started: true}
	if diff := cmp.Diff(want, outcome{Won: []bool{won1, won2, won3}, Holder: holder, Held: held, HeldUnclaimed: heldUnclaimed,
		Phase: got.Status.Phase, Executor: got.Status.Executor, Message: got.Status.Message, Started: got.Status.StartTime != nil}); diff != "" {
		t.Errorf("the first pod to claim a Run holds it, and its claim marks the Run Running: -want, +got:\n%s", diff)
	}
}
