package runs

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
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
	run := &v1alpha1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web-apply-x", UID: "run-1",
		Labels: map[string]string{"modkind.io/pool": "k"}}}
	c := fake.NewClientBuilder().WithScheme(s).Build()
	first, second := Claimant{Pod: "p1", UID: "u1"}, Claimant{Pod: "p2", UID: "u2"}

	won1, err := Claim(ctx, c, run, first)
	if err != nil {
		t.Fatal(err)
	}
	won2, err := Claim(ctx, c, run, second)
	if err != nil {
		t.Fatal(err)
	}
	holder, held, err := ClaimHolder(ctx, c, run)
	if err != nil {
		t.Fatal(err)
	}
	// The same name under another Run (made again after the first was deleted): no claim of it.
	again := run.DeepCopy()
	again.UID = "run-2"
	_, heldAgain, err := ClaimHolder(ctx, c, again)
	if err != nil {
		t.Fatal(err)
	}
	// A Lease someone made under the claim's name before the Run, naming a pod: no claim.
	other := &v1alpha1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "db-apply-y", UID: "run-3"}}
	if err := c.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: ClaimName(other.Name)},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("p2/u2")}}); err != nil {
		t.Fatal(err)
	}
	_, heldForged, err := ClaimHolder(ctx, c, other)
	if err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		Won                 []bool
		Holder              Claimant
		Held, Again, Forged bool
	}
	want := outcome{Won: []bool{true, false}, Holder: first, Held: true}
	got := outcome{Won: []bool{won1, won2}, Holder: holder, Held: held, Again: heldAgain, Forged: heldForged}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the first pod to claim a Run holds it, and only a Lease the Run owns is its claim: -want, +got:\n%s", diff)
	}
}
