package main

import (
	"context"
	"testing"
	"time"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/modkind/modkind/apis/v1alpha1"
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
