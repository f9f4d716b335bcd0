package e2e

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	jobexec "github.com/modkind/modkind/executor/job"
	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/reconcile"
)

const pinModule = `variable "name" { type = string }
resource "terraform_data" "pin" { input = var.name }
`

// A namespace editor, with a real token, pins an instance to a revision of another Module: the
// instance is refused by name and nothing of the other module runs; it cannot forge, change or
// delete a ModuleRevision either.
func testRevisionPins(t *testing.T, g *rbacGround) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	refused, _ := startControllerAs(ctx, t, g, func(c *reconcile.Config) { c.Namespaces = []string{rbacTenant} })
	tenant := rbacClient(t, tenantToken(ctx, t, g, rbacTenant, "edit"))
	own := applyModule(ctx, t, g, refused, "pins-own", "PinOwn", pinModule)
	other := applyModule(ctx, t, g, refused, "pins-other", "PinOther", pinModule+"\n# another snapshot\n")
	var otherRev string
	rbacWaitFor(ctx, t, "Module pins-other's revision", refused, func(ctx context.Context) (bool, any) {
		got := &v1alpha1.Module{}
		if err := g.admin.Get(ctx, types.NamespacedName{Name: other.Name}, got); err != nil {
			return false, err
		}
		otherRev = got.Status.Revision
		return otherRev != "", got.Status
	})

	stolen := instance("PinOwn", rbacTenant, "stolen-pin", map[string]any{"name": "x"})
	_ = unstructured.SetNestedField(stolen.Object, otherRev, "spec", "moduleRevisionRef", "name")
	if err := tenant.Create(ctx, stolen); err != nil {
		t.Fatal(err)
	}
	waitSyncedFalse(ctx, t, g, refused, stolen, "belongs to Module pins-other, not to Module pins-own")
	if s := condition(ctx, t, g.admin, stolen, "Ready"); s != nil && s["status"] == "True" {
		t.Errorf("an instance pinned to another Module's revision must not be applied: %v", s)
	}

	forged := &v1alpha1.ModuleRevision{ObjectMeta: metav1.ObjectMeta{Name: "pins-own-forged"},
		Spec: v1alpha1.ModuleRevisionSpec{ModuleName: own.Name, Revision: 99, Digest: "0123456789abcdef0123456789abcdef", Dir: "/"}}
	if err := tenant.Create(ctx, forged); !kerrors.IsForbidden(err) {
		t.Errorf("a tenant creating a ModuleRevision: want Forbidden, got %v", err)
	}
	if err := tenant.Delete(ctx, &v1alpha1.ModuleRevision{ObjectMeta: metav1.ObjectMeta{Name: otherRev}}); !kerrors.IsForbidden(err) {
		t.Errorf("a tenant deleting a ModuleRevision: want Forbidden, got %v", err)
	}
	if r := refused.String(); r != "" {
		t.Errorf("the API server refused modkind requests it made:\n%s", r)
	}
	forget(ctx, t, g, own, stolen)
	_ = g.admin.Delete(ctx, other)
}

const previewModuleV1 = `variable "name" { type = string }
resource "terraform_data" "main" {
  input            = var.name
  triggers_replace = "v1"
}
`

// A namespace editor, with a real token, tries to turn the preview of a Manual rollout into
// something more: it cannot write its instance's preview (nor another namespace's), make a
// plan-only Run look like anything else, or make a Run of its own count; the previews stay what
// the controller planned, nothing moves to the new revision and no state changes.
func testRevisionPreview(t *testing.T, g *rbacGround) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	refused, _ := startControllerAs(ctx, t, g, func(c *reconcile.Config) { c.Namespaces = []string{rbacTenant, rbacThird} })
	tenantCfg := tenantToken(ctx, t, g, rbacTenant, "edit")
	tenant := rbacClient(t, tenantCfg)
	asRunner := rbacClient(t, impersonate(tenantCfg, "system:serviceaccount:"+rbacTenant+":"+jobexec.DefaultRunnerServiceAccount))
	mod := applyModule(ctx, t, g, refused, "preview-tenant", "PreviewTenant", previewModuleV1)
	if err := mergePatch(ctx, g.admin, mod, `{"spec":{"rollout":{"policy":"Manual"}}}`); err != nil {
		t.Fatal(err)
	}
	own := instance("PreviewTenant", rbacTenant, "own", map[string]any{"name": "own"})
	other := instance("PreviewTenant", rbacThird, "other", map[string]any{"name": "other"})
	if err := tenant.Create(ctx, own); err != nil {
		t.Fatal(err)
	}
	if err := g.admin.Create(ctx, other); err != nil {
		t.Fatal(err)
	}
	revision := func(u *unstructured.Unstructured) (string, map[string]any) {
		got := u.DeepCopy()
		if err := g.admin.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
			return "", nil
		}
		cur, _, _ := unstructured.NestedString(got.Object, "status", "moduleRevision")
		p, _, _ := unstructured.NestedMap(got.Object, "status", "revisionPreview")
		return cur, p
	}
	var rev1 string
	for _, u := range []*unstructured.Unstructured{own, other} {
		rbacWaitFor(ctx, t, u.GetName()+" applied", refused, func(ctx context.Context) (bool, any) {
			cur, _ := revision(u)
			rev1 = cur
			return cur != "", cur
		})
	}
	stateVersion := func(u *unstructured.Unstructured) string {
		ref := kind.StateRef(u.GroupVersionKind().GroupKind().String(), u.GetNamespace(), u.GetName())
		sec := &corev1.Secret{}
		if err := g.admin.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, sec); err != nil {
			t.Fatal(err)
		}
		return sec.ResourceVersion
	}
	before := map[string]string{own.GetName(): stateVersion(own), other.GetName(): stateVersion(other)}

	// v2 replaces the object: the preview says so, and that the guard would refuse it.
	if err := os.WriteFile(filepath.Join(mod.Spec.Source.Path, "main.tf"), []byte(strings.Replace(previewModuleV1, `"v1"`, `"v2"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	previews := map[string]map[string]any{}
	for _, u := range []*unstructured.Unstructured{own, other} {
		rbacWaitFor(ctx, t, u.GetName()+" previewed", refused, func(ctx context.Context) (bool, any) {
			_, p := revision(u)
			previews[u.GetName()] = p
			return p != nil && p["outcome"] == "Replace" && p["guardRefuses"] == true, p
		})
	}
	// The Run's status is written once the preview is shown in the instance's: wait for it.
	var plan *v1alpha1.Run
	rbacWaitFor(ctx, t, "the preview recorded as a Succeeded Plan Run replacing 1 object", refused, func(ctx context.Context) (bool, any) {
		runs := &v1alpha1.RunList{}
		if err := g.admin.List(ctx, runs, client.InNamespace(rbacTenant)); err != nil {
			return false, err
		}
		plan = nil
		for i := range runs.Items {
			r := &runs.Items[i]
			if r.Spec.Operation == v1alpha1.OperationPlan && r.Spec.InstanceRef.Name == own.GetName() &&
				r.Status.Phase == v1alpha1.PhaseSucceeded && r.Status.Plan != nil && r.Status.Plan.Replace == 1 {
				plan = r
			}
		}
		return plan != nil, len(runs.Items)
	})
	statusPatch := func(c client.Client, obj client.Object, patch string) error {
		return c.Status().Patch(ctx, obj.DeepCopyObject().(client.Object), client.RawPatch(types.MergePatchType, []byte(patch)))
	}
	// A pod of the Run's name under the runner account, as only the Job controller makes them.
	planPod := podClient(ctx, t, g, g.admin, rbacTenant, jobexec.DefaultRunnerServiceAccount, plan.Name+"-f0rg3")
	noChanges := `{"status":{"revisionPreview":{"revision":"x","outcome":"NoChanges","add":0,"change":0,"destroy":0,"replace":0,"guardRefuses":false}}}`
	cases := []struct {
		name   string
		reason string
		op     func() error
		want   outcome
	}{
		{"OwnPreview", "An instance's preview is what the controller planned: its tenant cannot write it.",
			func() error { return statusPatch(tenant, own, noChanges) }, deniedByStatusPolicy},
		{"OtherNamespacePreview", "Nor another namespace's.",
			func() error { return statusPatch(tenant, other, noChanges) }, forbidden},
		{"PlanRunAsRunner", "The runner's account impersonated writes no Plan Run's result.",
			func() error { return statusPatch(asRunner, plan, `{"status":{"phase":"Succeeded","stateSerial":99}}`) }, deniedByStatusPolicy},
		{"PlanRunFromPod", "A pod named as the Run's pods rewrites no Plan Run the controller ran.",
			func() error {
				return statusPatch(planPod, plan, `{"status":{"plan":{"add":0,"change":0,"destroy":0}}}`)
			}, deniedByStatusPolicy},
		{"PlanRunSpec", "A Plan Run never becomes an Apply.",
			func() error { return mergePatch(ctx, tenant, plan.DeepCopy(), `{"spec":{"operation":"Apply"}}`) }, forbidden},
		{"ForgedPlanRun", "A tenant makes no Run, of a plan or anything else.",
			func() error {
				return tenant.Create(ctx, &v1alpha1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: rbacTenant, Name: "forged-plan"},
					Spec: v1alpha1.RunSpec{Operation: v1alpha1.OperationPlan, InstanceRef: plan.Spec.InstanceRef}})
			}, forbidden},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := outcomeOf(tc.op()); got != tc.want {
				t.Errorf("%s\nwant %s, got %s", tc.reason, tc.want, got)
			}
		})
	}
	// The previews are the controller's, nothing moved, and no state changed.
	for _, u := range []*unstructured.Unstructured{own, other} {
		cur, p := revision(u)
		if cur != rev1 || p["outcome"] != "Replace" || p["revision"] != previews[u.GetName()]["revision"] {
			t.Errorf("%s: want it on %s previewing a Replace of %v, got on %s previewing %v", u.GetName(), rev1, previews[u.GetName()]["revision"], cur, p)
		}
		if v := stateVersion(u); v != before[u.GetName()] {
			t.Errorf("%s: the state Secret changed during the preview (resourceVersion %s, was %s)", u.GetName(), v, before[u.GetName()])
		}
	}
	if r := refused.String(); r != "" {
		t.Errorf("the API server refused modkind requests it made:\n%s", r)
	}
	forget(ctx, t, g, mod, own, other)
}

// Rollouts no tenant can hold or steer, each checked as a namespace editor with a real token.
func TestRolloutTenants(t *testing.T) {
	g := startRBACGround(t)
	t.Run("BlockedInstanceHoldsNoOne", func(t *testing.T) { testRolloutBlocked(t, g) })
	t.Run("NamesDoNotSteerSteps", func(t *testing.T) { testRolloutNames(t, g) })
}

// moduleRevision is the revision u was last applied with, as an admin reads it.
func moduleRevision(ctx context.Context, g *rbacGround, u *unstructured.Unstructured) string {
	got := u.DeepCopy()
	if err := g.admin.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
		return ""
	}
	cur, _, _ := unstructured.NestedString(got.Object, "status", "moduleRevision")
	return cur
}

// newRevision changes the Module's source and waits for the rollout to the revision it makes.
func newRevision(ctx context.Context, t *testing.T, g *rbacGround, refused *refusals, mod *v1alpha1.Module, source string) *v1alpha1.RolloutStatus {
	t.Helper()
	if err := os.WriteFile(filepath.Join(mod.Spec.Source.Path, "main.tf"), []byte(source), 0o600); err != nil {
		t.Fatal(err)
	}
	var ro *v1alpha1.RolloutStatus
	rbacWaitFor(ctx, t, "a rollout of Module "+mod.Name, refused, func(ctx context.Context) (bool, any) {
		got := &v1alpha1.Module{}
		if err := g.admin.Get(ctx, types.NamespacedName{Name: mod.Name}, got); err != nil {
			return false, err
		}
		ro = got.Status.Rollout
		return ro != nil && ro.To == got.Status.Revision, got.Status
	})
	return ro
}

// rolloutOf waits until the Module's rollout satisfies cond and returns it.
func rolloutOf(ctx context.Context, t *testing.T, g *rbacGround, refused *refusals, name, what string, cond func(*v1alpha1.RolloutStatus) bool) *v1alpha1.RolloutStatus {
	t.Helper()
	var ro *v1alpha1.RolloutStatus
	rbacWaitFor(ctx, t, what, refused, func(ctx context.Context) (bool, any) {
		got := &v1alpha1.Module{}
		if err := g.admin.Get(ctx, types.NamespacedName{Name: name}, got); err != nil {
			return false, err
		}
		ro = got.Status.Rollout
		return ro != nil && cond(ro), ro
	})
	return ro
}

// A tenant labels its instance as the canary a Staged rollout's first step selects, and pauses
// it: the step no longer waits for it for ever. Past the progress deadline the step completes
// with the instance counted blocked and named, in the status and in a Warning event, and the
// other namespace's instance moves to the new revision; the paused one stays where it was.
func testRolloutBlocked(t *testing.T, g *rbacGround) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	refused, _ := startControllerAs(ctx, t, g, func(c *reconcile.Config) { c.Namespaces = []string{rbacTenant, rbacThird} })
	tenant := rbacClient(t, tenantToken(ctx, t, g, rbacTenant, "edit"))
	mod := applyModule(ctx, t, g, refused, "rollout-blocked", "RolloutBlocked", pinModule)
	if err := mergePatch(ctx, g.admin, mod, `{"spec":{"rollout":{"policy":"Staged","progressDeadline":"15s",`+
		`"steps":[{"selector":{"matchLabels":{"canary":"true"}}}]}}}`); err != nil {
		t.Fatal(err)
	}
	own := instance("RolloutBlocked", rbacTenant, "hold", map[string]any{"name": "hold"})
	own.SetLabels(map[string]string{"canary": "true"})
	other := instance("RolloutBlocked", rbacThird, "other", map[string]any{"name": "other"})
	if err := tenant.Create(ctx, own); err != nil {
		t.Fatal(err)
	}
	if err := g.admin.Create(ctx, other); err != nil {
		t.Fatal(err)
	}
	var rev1 string
	for _, u := range []*unstructured.Unstructured{own, other} {
		rbacWaitFor(ctx, t, u.GetName()+" applied", refused, func(ctx context.Context) (bool, any) {
			rev1 = moduleRevision(ctx, g, u)
			return rev1 != "", rev1
		})
	}
	// The tenant pauses its own instance: nothing of it is applied any more.
	if err := mergePatch(ctx, tenant, own.DeepCopy(), `{"metadata":{"annotations":{"crossplane.io/paused":"true"}}}`); err != nil {
		t.Fatal(err)
	}
	rbacWaitFor(ctx, t, "hold seen paused", refused, func(ctx context.Context) (bool, any) {
		s := condition(ctx, t, g.admin, own, "Synced")
		return s != nil && s["reason"] == "ReconcilePaused", s
	})

	ro := newRevision(ctx, t, g, refused, mod, pinModule+"\n# v2\n")
	rev2 := ro.To
	// Within the deadline and then some: before the fix, the step waited for the paused canary
	// for ever.
	moveCtx, moveCancel := context.WithTimeout(ctx, 2*time.Minute)
	defer moveCancel()
	rbacWaitFor(moveCtx, t, "the other namespace's instance on the new revision", refused, func(ctx context.Context) (bool, any) {
		cur := moduleRevision(ctx, g, other)
		return cur == rev2, cur
	})
	key := rbacTenant + "/" + own.GetName()
	ro = rolloutOf(ctx, t, g, refused, mod.Name, "the rollout complete", func(ro *v1alpha1.RolloutStatus) bool { return ro.Phase == v1alpha1.RolloutComplete })
	if ro.Counts.Blocked != 1 || len(ro.Blocked) != 1 || ro.Blocked[0] != key || ro.Counts.Applied != 1 {
		t.Errorf("the complete rollout: want %s counted blocked and named, and the other instance applied, got %+v", key, ro)
	}
	if cur := moduleRevision(ctx, g, own); cur != rev1 {
		t.Errorf("the paused instance: want it left on %s, got %s", rev1, cur)
	}
	// Events on a cluster-scoped Module are written to the default namespace.
	rbacWaitFor(ctx, t, "a Warning event naming the blocked instance", refused, func(ctx context.Context) (bool, any) {
		list := &corev1.EventList{}
		if err := g.admin.List(ctx, list, client.InNamespace("default")); err != nil {
			return false, err
		}
		for _, e := range list.Items {
			if e.InvolvedObject.Name == mod.Name && e.Type == corev1.EventTypeWarning && e.Reason == "RolloutBlocked" && strings.Contains(e.Message, key) {
				return true, e.Message
			}
		}
		return false, len(list.Items)
	})
	forget(ctx, t, g, mod, own, other)
}

// A tenant names its instances so that their plain hash sorts first (as a step's choice once
// did): a Staged rollout's 10% step still takes instances by a keyed hash of their UIDs, not
// those names, so the tenant's three do not make up the step.
func testRolloutNames(t *testing.T, g *rbacGround) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	refused, _ := startControllerAs(ctx, t, g, func(c *reconcile.Config) { c.Namespaces = []string{rbacTenant, rbacThird} })
	tenant := rbacClient(t, tenantToken(ctx, t, g, rbacTenant, "edit"))
	mod := applyModule(ctx, t, g, refused, "rollout-names", "RolloutNames", pinModule)
	if err := mergePatch(ctx, g.admin, mod, `{"spec":{"rollout":{"policy":"Staged","steps":[{"percent":10,"pause":{"untilPromoted":true}}]}}}`); err != nil {
		t.Fatal(err)
	}
	// Names whose SHA-256 of namespace/name begins with two zero bytes: first in any plain hash
	// order, ahead of the other namespace's twenty.
	var mine, all []*unstructured.Unstructured
	for i := 0; len(mine) < 3; i++ {
		name := fmt.Sprintf("first-%d", i)
		if sum := sha256.Sum256([]byte(rbacTenant + "/" + name)); sum[0] == 0 && sum[1] == 0 {
			u := instance("RolloutNames", rbacTenant, name, map[string]any{"name": name})
			if err := tenant.Create(ctx, u); err != nil {
				t.Fatal(err)
			}
			mine = append(mine, u)
		}
	}
	all = append(all, mine...)
	for i := 0; i < 20; i++ {
		u := instance("RolloutNames", rbacThird, fmt.Sprintf("c-%02d", i), map[string]any{"name": fmt.Sprintf("c-%02d", i)})
		if err := g.admin.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
		all = append(all, u)
	}
	for _, u := range all {
		rbacWaitFor(ctx, t, u.GetName()+" applied", refused, func(ctx context.Context) (bool, any) {
			cur := moduleRevision(ctx, g, u)
			return cur != "", cur
		})
	}

	ro := newRevision(ctx, t, g, refused, mod, pinModule+"\n# v2\n")
	rev2 := ro.To
	ro = rolloutOf(ctx, t, g, refused, mod.Name, "the 10% step complete", func(ro *v1alpha1.RolloutStatus) bool { return ro.Phase == v1alpha1.RolloutWaiting })
	moved, ofMine := 0, 0
	for _, u := range all {
		if moduleRevision(ctx, g, u) == rev2 {
			moved++
			if u.GetNamespace() == rbacTenant {
				ofMine++
			}
		}
	}
	if moved != 3 || ro.Counts.Moved != 3 {
		t.Errorf("10%% of 23 instances, rounded up: want 3 moved, got %d on %s (status counts %+v)", moved, rev2, ro.Counts)
	}
	if ofMine == len(mine) {
		t.Errorf("the first step took all %d of the instances the tenant named to sort first", ofMine)
	}
	objs := make([]client.Object, 0, len(all))
	for _, u := range all {
		objs = append(objs, u)
	}
	forget(ctx, t, g, mod, objs...)
}
