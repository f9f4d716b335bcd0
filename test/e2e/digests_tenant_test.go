package e2e

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/reconcile"
)

// guessedModule stores a password its instances read from a Secret.
const guessedModule = `
variable "password" {
  type = string
}
resource "terraform_data" "this" {
  input = var.password
}
`

// Issue 38: the digests a `view` user reads (a Run's spec.inputsDigest, an instance's
// status.lastPlan.id) cover values read from Secrets. Unkeyed, they are an oracle: a user who may
// view team-a and edit team-c guesses team-a's password, makes in team-c an instance with the
// same spec and a Secret holding the guess, and compares what they read in both namespaces: the
// same digests, and the guess is right. Keyed per instance, a right guess reads nothing alike.
func TestDigestsAreNoOracleAsTenant(t *testing.T) {
	g := startRBACGround(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	refused, _ := startControllerAs(ctx, t, g, func(c *reconcile.Config) { c.Namespaces = []string{rbacTenant, rbacThird} })
	victim := rbacClient(t, tenantToken(ctx, t, g, rbacTenant, "edit"))
	viewer := rbacClient(t, tenantToken(ctx, t, g, rbacTenant, "view"))
	guesser := rbacClient(t, tenantToken(ctx, t, g, rbacThird, "edit"))
	mod := applyModule(ctx, t, g, refused, "guessed", "Guessed", guessedModule)

	const password = "hunter2"
	made := func(c client.Client, ns string) *unstructured.Unstructured {
		t.Helper()
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"}, StringData: map[string]string{"password": password}}
		if err := c.Create(ctx, sec); err != nil {
			t.Fatal(err)
		}
		u := instance("Guessed", ns, "db", map[string]any{"passwordFrom": map[string]any{"secretKeyRef": map[string]any{"name": "db", "key": "password"}}})
		// A plan that waits for approval is shown and identified by every value it changes.
		_ = unstructured.SetNestedField(u.Object, "Manual", "spec", "approval", "mode")
		if err := c.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
		return u
	}
	mine, guess := made(victim, rbacTenant), made(guesser, rbacThird)
	defer forget(context.Background(), t, g, mod, mine, guess)

	// read is what reader reads of u once its plan waits: its plan's id and its Runs' digests.
	read := func(reader client.Client, u *unstructured.Unstructured) []string {
		t.Helper()
		var seen []string
		rbacWaitFor(ctx, t, u.GetNamespace()+"/"+u.GetName()+"'s plan waiting for approval", refused, func(ctx context.Context) (bool, any) {
			got := u.DeepCopy()
			if err := reader.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
				return false, err
			}
			id, _, _ := unstructured.NestedString(got.Object, "status", "lastPlan", "id")
			runs := &v1alpha1.RunList{}
			if err := reader.List(ctx, runs, client.InNamespace(u.GetNamespace())); err != nil {
				return false, err
			}
			seen = []string{"plan " + id}
			for _, r := range runs.Items {
				if r.Spec.InputsDigest != "" {
					seen = append(seen, "inputs "+r.Spec.InputsDigest)
				}
			}
			return id != "" && len(seen) > 1, got.Object["status"]
		})
		return seen
	}
	theirs, ours := read(viewer, mine), read(guesser, guess)
	for _, a := range theirs {
		for _, b := range ours {
			if a == b {
				t.Errorf("a right guess of team-a's password reads in team-c what a view user reads in team-a: %s", a)
			}
		}
	}
}
