package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/reconcile"
)

const retireModuleV1 = `variable "name" { type = string }
resource "terraform_data" "main" { input = var.name }
`

// An admin retires a revision of a Module (spec.retiredRevisions), e.g. one a fixed revision
// replaced: a namespace editor, with a real token, can no longer keep an instance on it or pin a
// new one to it (refused at admission), and an unpinned instance a Manual rollout left on it moves to the newest.
func TestRetiredRevisions(t *testing.T) {
	g := startRBACGround(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	refused, _ := startControllerAs(ctx, t, g, func(c *reconcile.Config) { c.Namespaces = []string{rbacTenant} })
	tenant := rbacClient(t, tenantToken(ctx, t, g, rbacTenant, "edit"))
	mod := applyModule(ctx, t, g, refused, "retire", "Retire", retireModuleV1)
	v1 := newestRevision(ctx, t, g, refused, mod.Name, "")

	pinned := instance("Retire", rbacTenant, "pinned", map[string]any{"name": "p"})
	_ = unstructured.SetNestedField(pinned.Object, v1, "spec", "moduleRevisionRef", "name")
	follower := instance("Retire", rbacTenant, "follower", map[string]any{"name": "f"})
	for _, u := range []*unstructured.Unstructured{pinned, follower} {
		if err := tenant.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
		waitTenantReady(ctx, t, g, refused, u)
		waitAppliedWith(ctx, t, g, refused, u, v1)
	}

	// v2 comes with a Manual rollout: nothing moves to it until promoted, so the follower is
	// on v1 when v1 is retired.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(retireModuleV1+"# v2: the fix\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := mergePatch(ctx, g.admin, mod, `{"spec":{"rollout":{"policy":"Manual"},"source":{"path":"`+dir+`"}}}`); err != nil {
		t.Fatal(err)
	}
	v2 := newestRevision(ctx, t, g, refused, mod.Name, v1)
	rbacWaitFor(ctx, t, "the Manual rollout to "+v2+" waiting for promotion", refused, func(ctx context.Context) (bool, any) {
		got := &v1alpha1.Module{}
		if err := g.admin.Get(ctx, types.NamespacedName{Name: mod.Name}, got); err != nil {
			return false, err
		}
		ro := got.Status.Rollout
		return ro != nil && ro.To == v2 && ro.Phase == v1alpha1.RolloutWaiting, ro
	})
	if got := appliedWith(ctx, t, g, follower); got != v1 {
		t.Fatalf("before v1 is retired, a Manual rollout keeps the follower on %s: got %q", v1, got)
	}

	if err := mergePatch(ctx, g.admin, mod, `{"spec":{"retiredRevisions":["`+v1+`"]}}`); err != nil {
		t.Fatal(err)
	}

	// The pinned instance is held, saying why and what to do, with a warning event.
	waitSyncedFalse(ctx, t, g, refused, pinned, "names ModuleRevision "+v1+", which an admin retired (spec.retiredRevisions of Module retire)")
	if s := condition(ctx, t, g.admin, pinned, "Synced"); s["reason"] != string(reconcile.ReasonRevisionRetired) {
		t.Errorf("a pin to a retired revision: want Synced reason %s, got %v", reconcile.ReasonRevisionRetired, s)
	}
	waitEvent(ctx, t, g, refused, pinned, "remove spec.moduleRevisionRef to follow the Module's newest revision "+v2)
	// The unpinned instance moves to the newest revision although the rollout was not promoted.
	waitAppliedWith(ctx, t, g, refused, follower, v2)

	// A new pin to the retired revision is refused at admission (the chart's policy
	// <release>-retired-pins), on a new instance and on one that was not pinned to it; an instance
	// already pinned to it may still be changed otherwise (it stays held, above).
	late := instance("Retire", rbacTenant, "late-pin", map[string]any{"name": "l"})
	_ = unstructured.SetNestedField(late.Object, v1, "spec", "moduleRevisionRef", "name")
	wantRefusal := "spec.moduleRevisionRef: ModuleRevision " + v1 + " is retired (spec.retiredRevisions of Module retire)"
	if err := tenant.Create(ctx, late); err == nil || !strings.Contains(err.Error(), wantRefusal) {
		t.Errorf("a new instance pinned to a retired revision: want a refusal saying %q, got %v", wantRefusal, err)
	}
	if err := mergePatch(ctx, tenant, follower, `{"spec":{"moduleRevisionRef":{"name":"`+v1+`"}}}`); err == nil || !strings.Contains(err.Error(), wantRefusal) {
		t.Errorf("pinning an instance to a retired revision: want a refusal saying %q, got %v", wantRefusal, err)
	}
	if err := mergePatch(ctx, tenant, pinned, `{"metadata":{"labels":{"team":"a"}}}`); err != nil {
		t.Errorf("an instance already pinned to a retired revision may be changed otherwise: %v", err)
	}

	// Moving the pin off the retired revision lets the held instance be applied again.
	if err := mergePatch(ctx, tenant, pinned, `{"spec":{"moduleRevisionRef":{"name":"`+v2+`"}}}`); err != nil {
		t.Fatal(err)
	}
	waitAppliedWith(ctx, t, g, refused, pinned, v2)
	if r := refused.String(); r != "" {
		t.Errorf("the API server refused modkind requests it made:\n%s", r)
	}
	forget(ctx, t, g, mod, pinned, follower)
}

// newestRevision waits until Module name's newest revision is one other than not, and returns it.
func newestRevision(ctx context.Context, t *testing.T, g *rbacGround, refused *refusals, name, not string) string {
	t.Helper()
	var rev string
	rbacWaitFor(ctx, t, "Module "+name+"'s revision other than "+not, refused, func(ctx context.Context) (bool, any) {
		got := &v1alpha1.Module{}
		if err := g.admin.Get(ctx, types.NamespacedName{Name: name}, got); err != nil {
			return false, err
		}
		rev = got.Status.Revision
		return rev != "" && rev != not, got.Status
	})
	return rev
}

// appliedWith is the revision u was last applied with, as its status says.
func appliedWith(ctx context.Context, t *testing.T, g *rbacGround, u *unstructured.Unstructured) string {
	t.Helper()
	got := u.DeepCopy()
	if err := g.admin.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
		t.Fatal(err)
	}
	rev, _, _ := unstructured.NestedString(got.Object, "status", "moduleRevision")
	return rev
}

// waitAppliedWith waits until u was last applied with revision rev and is Ready.
func waitAppliedWith(ctx context.Context, t *testing.T, g *rbacGround, refused *refusals, u *unstructured.Unstructured, rev string) {
	t.Helper()
	rbacWaitFor(ctx, t, u.GetName()+" applied with "+rev, refused, func(ctx context.Context) (bool, any) {
		got := u.DeepCopy()
		if err := g.admin.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
			return false, err
		}
		cur, _, _ := unstructured.NestedString(got.Object, "status", "moduleRevision")
		s := condition(ctx, t, g.admin, u, "Ready")
		return cur == rev && s != nil && s["status"] == "True", strings.TrimSpace(cur) + " " + toString(condition(ctx, t, g.admin, u, "Synced"))
	})
}

func toString(m map[string]any) string {
	if m == nil {
		return "<none>"
	}
	msg, _ := m["message"].(string)
	reason, _ := m["reason"].(string)
	status, _ := m["status"].(string)
	return status + " " + reason + " " + msg
}
