package integration

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	lua "github.com/yuin/gopher-lua"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/state"
)

// reviewModule is a module whose plan shows a value from a Secret in plain text unless modkind
// redacts it: it un-marks its sensitive variable with nonsensitive(), as any module may.
const reviewModule = `
variable "names" {
  type = set(string)
}

variable "password" {
  type      = string
  sensitive = true
  default   = "unset"
}

resource "terraform_data" "item" {
  for_each = var.names
  input    = each.key
}

output "leak" {
  value = nonsensitive(var.password)
}
`

// argoHealthMessage runs examples/argocd/health.lua on u and returns its status and message.
func argoHealthMessage(t testing.TB, u *unstructured.Unstructured) (string, string) {
	t.Helper()
	script, err := os.ReadFile(filepath.Join("..", "..", "examples", "argocd", "health.lua"))
	if err != nil {
		t.Fatal(err)
	}
	L := lua.NewState()
	defer L.Close()
	L.SetGlobal("obj", toLua(L, u.Object))
	if err := L.DoString(string(script)); err != nil {
		t.Fatalf("health.lua: %v", err)
	}
	hs, ok := L.Get(-1).(*lua.LTable)
	if !ok {
		t.Fatalf("health.lua must return a table, got %v", L.Get(-1))
	}
	return hs.RawGetString("status").String(), hs.RawGetString("message").String()
}

func get(t testing.TB, u *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	got := u.DeepCopy()
	if err := ground.client.Get(context.Background(), client.ObjectKeyFromObject(u), got); err != nil {
		t.Fatal(err)
	}
	return got
}

// waitPlanView waits until the instance's readable plan is the plan with the given id.
func waitPlanView(t testing.TB, gvk schema.GroupVersionKind, ns, name, id string) *kind.PlanView {
	t.Helper()
	var view *kind.PlanView
	eventually(t, "the readable plan "+id, func(ctx context.Context) (bool, error) {
		var err error
		view, err = kind.ReadPlanView(ctx, ground.client, gvk.GroupKind().String(), ns, name)
		return err == nil && view.ID == id, err
	})
	return view
}

// assertNotApproved checks that Approve refused with the given reason and wrote nothing.
func assertNotApproved(t *testing.T, u *unstructured.Unstructured, want, reason string) {
	t.Helper()
	before := get(t, u)
	_, err := kind.Approve(context.Background(), ground.client, u.GroupVersionKind(), client.ObjectKeyFromObject(u), want)
	refused := &kind.ApprovalRefusedError{}
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), reason) {
		t.Errorf("Approve(%q): want a refusal saying %q, got %v", want, reason, err)
	}
	// The controller may write the status meanwhile; an approval writes the spec.
	if after := get(t, u); after.GetGeneration() != before.GetGeneration() || !equality.Semantic.DeepEqual(after.Object["spec"], before.Object["spec"]) {
		t.Errorf("a refused approval must change nothing; the spec went from %v (generation %d) to %v (generation %d)",
			before.Object["spec"], before.GetGeneration(), after.Object["spec"], after.GetGeneration())
	}
}

// Every saved plan can be read as terraform shows it, from a Secret beside the state that holds
// no value of a Secret; approving it applies exactly that plan, and it goes with the state.
func TestPlanViewApproval(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(reviewModule), 0o644); err != nil {
		t.Fatal(err)
	}
	gvk := schema.GroupVersionKind{Group: "planview.example.org", Version: "v1alpha1", Kind: "Review"}
	createModule(t, "review-planview", dir, gvk.Group, gvk.Kind)
	waitModuleReady(t, "review-planview")
	ns := newNamespace(t)
	password := "pa55-from-a-secret-never-shown"
	if err := ground.client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "creds"},
		Data: map[string][]byte{"password": []byte(password)}}); err != nil {
		t.Fatal(err)
	}

	inst := newInstance(gvk, ns, "careful", map[string]any{
		"forProvider": map[string]any{"names": []any{"a"}, "passwordSecretRef": map[string]any{"name": "creds", "key": "password"}},
		"approval":    map[string]any{"mode": "Manual"},
	})
	// A GitOps tool's tracking label: it must never reach the plan Secret, or the tool prunes it.
	inst.SetLabels(map[string]string{"app.kubernetes.io/instance": "gitops-app"})
	if err := ground.client.Create(ctx, inst); err != nil {
		t.Fatal(err)
	}
	first := waitForApproval(t, inst)
	view := waitPlanView(t, gvk, ns, "careful", first)
	work := workDir(ns, "review."+gvk.Group, "careful")
	plans := count(terraformRuns(t, work), "plan")
	for _, want := range []string{`terraform_data.item["a"] will be created`, "Plan: 1 to add, 0 to change, 0 to destroy.",
		// The module un-marks the Secret's value; the root module, which takes a value from a
		// Secret, declares every output sensitive, so terraform hides it again.
		`+ leak = (sensitive value)`} {
		if !strings.Contains(view.Text, want) {
			t.Errorf("the readable plan lacks %q:\n%s", want, view.Text)
		}
	}
	if strings.Contains(view.Text, password) {
		t.Errorf("the readable plan shows the value of a Secret:\n%s", view.Text)
	}
	if view.Summary != "+1 ~0 -0" {
		t.Errorf("plan summary: want +1 ~0 -0, got %q", view.Summary)
	}
	sec := &corev1.Secret{}
	if err := ground.client.Get(ctx, kind.PlanRef(gvk.GroupKind().String(), ns, "careful").NamespacedName, sec); err != nil {
		t.Fatal(err)
	}
	stateRef := kind.StateRef(gvk.GroupKind().String(), ns, "careful")
	if diff := cmp.Diff(stateRef.Labels, sec.Labels); diff != "" {
		t.Errorf("the plan Secret carries modkind's labels, as the state Secret does, and none of the instance's: -want +got:\n%s", diff)
	}
	if len(sec.OwnerReferences) != 0 || sec.Type != state.PlanSecretType {
		t.Errorf("the plan Secret: want type %s and no owner, got type %s, owners %v", state.PlanSecretType, sec.Type, sec.OwnerReferences)
	}
	status, msg := argoHealthMessage(t, get(t, inst))
	if want := "plan " + first + " waits for approval: +1 ~0 -0"; status != "Suspended" || msg != want {
		t.Errorf("Argo CD health: want Suspended %q, got %s %q", want, status, msg)
	}

	// Approving anything but the plan shown is refused, and writes nothing.
	assertNotApproved(t, inst, "0123456789ab", "plan 0123456789ab was asked for, but plan "+first+" waits")
	// Each poll makes the waiting plan again; status keeps showing when it was first made, as
	// the plan Secret does, and is not rewritten. Times have seconds: a poll is awaited in a
	// later second than the plan was made.
	made, err := time.Parse(time.RFC3339, view.Time)
	if err != nil {
		t.Fatalf("the plan's time %q: %v", view.Time, err)
	}
	time.Sleep(time.Until(made.Add(time.Second)))
	waitPolls(t, gvk, 1)
	if shown, _, _ := unstructured.NestedString(get(t, inst).Object, "status", "lastPlan", "time"); shown != view.Time {
		t.Errorf("status.lastPlan.time of the waiting plan: want %s, when it was made, got %s", view.Time, shown)
	}
	// Nothing the plan was made from changed: it is not made again while it waits.
	if n := count(terraformRuns(t, work), "plan"); n != plans {
		t.Errorf("terraform planned %d more times while the plan waited and nothing changed", n-plans)
	}
	if _, err := kind.Approve(ctx, ground.client, gvk, client.ObjectKeyFromObject(inst), first); err != nil {
		t.Fatalf("approving the plan shown: %v", err)
	}
	waitInstance(t, inst, 2)
	assertNotApproved(t, inst, "", "has no plan waiting for approval")

	// A new plan replaces the text.
	patchSpec(t, inst, `{"forProvider":{"names":["a","b"]}}`)
	second := waitForApproval(t, inst)
	view = waitPlanView(t, gvk, ns, "careful", second)
	if !strings.Contains(view.Text, `terraform_data.item["b"] will be created`) || strings.Contains(view.Text, `item["a"] will be created`) {
		t.Errorf("the readable plan must be the new plan's:\n%s", view.Text)
	}
	assertNotApproved(t, inst, first, "plan "+first+" was asked for, but plan "+second+" waits")

	// An instance that is not in approval mode has its plans shown too, and nothing to approve.
	auto := newInstance(gvk, ns, "auto", map[string]any{"forProvider": map[string]any{"names": []any{"x"}}})
	if err := ground.client.Create(ctx, auto); err != nil {
		t.Fatal(err)
	}
	applied := waitInstance(t, auto, 1)
	id, _, _ := unstructured.NestedString(applied.Object, "status", "lastPlan", "id")
	if view := waitPlanView(t, gvk, ns, "auto", id); !strings.Contains(view.Text, `terraform_data.item["x"] will be created`) {
		t.Errorf("the applied plan's text:\n%s", view.Text)
	}
	assertNotApproved(t, auto, "", "is not in approval mode")

	// The plan goes with the state, after destroy.
	for _, u := range []*unstructured.Unstructured{inst, auto} {
		if err := ground.client.Delete(ctx, u); err != nil {
			t.Fatal(err)
		}
		waitGone(t, u)
		for what, key := range map[string]types.NamespacedName{
			"plan":  kind.PlanRef(gvk.GroupKind().String(), ns, u.GetName()).NamespacedName,
			"state": stateSecret(gvk, ns, u.GetName()),
		} {
			if err := ground.client.Get(ctx, key, &corev1.Secret{}); !kerrors.IsNotFound(err) {
				t.Errorf("the %s Secret of %s must be deleted after destroy, get says %v", what, u.GetName(), err)
			}
		}
	}
}

// A Secret that a tenant put where modkind keeps an instance's plan is never overwritten: the
// instance says why it cannot go on, applies nothing, and goes on once the Secret is gone.
func TestPlanViewForeignSecret(t *testing.T) {
	ctx := context.Background()
	gvk := policyModule(t, "planforeign")
	ns := newNamespace(t)
	traces := t.TempDir()
	key := kind.PlanRef(gvk.GroupKind().String(), ns, "squatted").NamespacedName
	foreign := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
		Data: map[string][]byte{"mine": []byte("keep")}}
	if err := ground.client.Create(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	inst := newInstance(gvk, ns, "squatted", map[string]any{"forProvider": map[string]any{"dir": traces, "files": []any{"a"}}})
	if err := ground.client.Create(ctx, inst); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the squatted plan Secret to be reported", func(ctx context.Context) (bool, error) {
		s := synced(t, inst)
		if s == nil {
			return false, nil
		}
		msg, _ := s["message"].(string)
		return s["status"] == "False" && strings.Contains(msg, key.Name) && strings.Contains(msg, "was not written by modkind"), errors.New(msg)
	})
	got := &corev1.Secret{}
	if err := ground.client.Get(ctx, key, got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(foreign.Data, got.Data); diff != "" || got.Type != corev1.SecretTypeOpaque {
		t.Errorf("the tenant's Secret must stay as it was: type %s, data -want +got:\n%s", got.Type, diff)
	}
	dir := workDir(ns, "trace."+gvk.Group, "squatted")
	if n := count(terraformRuns(t, dir), "apply"); n != 0 {
		t.Errorf("nothing may be applied while the plan cannot be shown; applies: %d", n)
	}
	if _, err := os.Stat(filepath.Join(traces, "a")); !os.IsNotExist(err) {
		t.Errorf("trace file a must not exist yet; stat says %v", err)
	}

	if err := ground.client.Delete(ctx, got); err != nil {
		t.Fatal(err)
	}
	waitInstance(t, inst, 1)
	if got := readFile(t, filepath.Join(traces, "a")); got != "hello" {
		t.Errorf("trace file a: want hello, got %q", got)
	}
	if _, err := kind.ReadPlanView(ctx, ground.client, gvk.GroupKind().String(), ns, "squatted"); err != nil {
		t.Errorf("the plan is shown once the name is free: %v", err)
	}
}
