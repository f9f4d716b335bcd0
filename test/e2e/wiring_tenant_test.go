package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/reconcile"
	"github.com/modkind/modkind/reconcile/reconciletest"
)

const wiringNetworkModule = `
variable "name" { type = string }
resource "terraform_data" "n" { input = var.name }
output "id" { value = "net-${terraform_data.n.output}" }
`

const wiringSubnetModule = `
variable "network_id" { type = string }
variable "zone" {
  type    = string
  default = "a"
}
resource "terraform_data" "s" { input = "${var.network_id}/${var.zone}" }
output "id" { value = "sub-${terraform_data.s.output}" }
`

// An editor wires instances of its namespace together with a real token (issue 26): what the
// controller reads under the chart's RBAC (another instance, a ConfigMap, a Secret, their
// watches: polls are an hour apart) works,
// and a reference that would leave the namespace, or read a kind modkind does not serve, is
// refused (or, for the namespace, dropped when the client does not ask for strict validation).
func testWiringAttacks(t *testing.T, g *rbacGround) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	// Polls an hour apart: what reaches an instance within the test came through a watch.
	refused, _ := startControllerAs(ctx, t, g, func(c *reconcile.Config) { c.PollInterval = time.Hour })
	editor := tenantClient(ctx, t, g, "edit")
	netMod := applyModule(ctx, t, g, refused, "wiring-networks", "WNetwork", wiringNetworkModule)
	subMod := applyModule(ctx, t, g, refused, "wiring-subnets", "WSubnet", wiringSubnetModule)
	// The admin says the subnet's id may be shown; once it derives from a Secret (below) it is not.
	if err := mergePatch(ctx, g.admin, subMod, `{"spec":{"publicOutputs":["id"]}}`); err != nil {
		t.Fatal(err)
	}

	out := func(ns string) map[string]any {
		ref := map[string]any{"apiVersion": rbacGroup + "/v1alpha1", "kind": "WNetwork", "name": "net", "output": "id"}
		if ns != "" {
			ref["namespace"] = ns
		}
		return map[string]any{"instanceOutput": ref}
	}
	// A reference into another namespace, whichever the source: a reference has no namespace
	// field, so the API server refuses one under strict field validation (as kubectl asks) and
	// otherwise stores the reference without it, in the tenant's namespace.
	for name, tc := range map[string]struct {
		fp    map[string]any
		field string
	}{
		"instance":  {fp: map[string]any{"networkIdFrom": out(rbacNamespace)}, field: "networkIdFrom.instanceOutput"},
		"configmap": {fp: map[string]any{"networkId": "n", "zoneFrom": map[string]any{"configMapKeyRef": map[string]any{"name": "c", "key": "k", "namespace": rbacNamespace}}}, field: "zoneFrom.configMapKeyRef"},
		"secret":    {fp: map[string]any{"networkIdFrom": map[string]any{"secretKeyRef": map[string]any{"name": "modkind-state-keys", "key": "keys", "namespace": rbacNamespace}}}, field: "networkIdFrom.secretKeyRef"},
	} {
		err := editor.Create(ctx, instance("WSubnet", rbacTenant, "cross-"+name, tc.fp), client.FieldValidation("Strict"))
		if want := fmt.Sprintf("unknown field %q", "spec.forProvider."+tc.field+".namespace"); !kerrors.IsBadRequest(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: a reference into %s must be refused under strict field validation with %s, got %v", name, rbacNamespace, want, err)
		} else {
			t.Logf("%s: the API server told the tenant: %v", name, err)
		}
		lax := instance("WSubnet", rbacTenant, "cross-"+name, tc.fp)
		if err := editor.Create(ctx, lax, client.DryRunAll); err != nil {
			t.Errorf("%s: without strict validation the reference should be stored without its namespace, got %v", name, err)
			continue
		}
		path := append([]string{"spec", "forProvider"}, strings.Split(tc.field, ".")...)
		if _, found, _ := unstructured.NestedFieldNoCopy(lax.Object, append(path, "namespace")...); found {
			t.Errorf("%s: a reference's namespace must never be stored: %v", name, lax.Object["spec"])
		}
	}

	// Within the namespace, it works: a subnet made first waits, then takes the network's id
	// and a ConfigMap's zone.
	if err := editor.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: rbacTenant, Name: "zones"}, Data: map[string]string{"zone": "b"}}); err != nil {
		t.Fatal(err)
	}
	sub := instance("WSubnet", rbacTenant, "sub", map[string]any{"networkIdFrom": out(""),
		"zoneFrom": map[string]any{"configMapKeyRef": map[string]any{"name": "zones", "key": "zone"}}})
	net := instance("WNetwork", rbacTenant, "net", map[string]any{"name": "tenant"})
	// A kind modkind does not serve is never read, even in the namespace.
	pod := instance("WSubnet", rbacTenant, "pod", map[string]any{"networkIdFrom": map[string]any{"instanceOutput": map[string]any{
		"apiVersion": "v1", "kind": "Secret", "name": "zones", "output": "data"}}})
	defer forget(ctx, t, g, subMod, sub, pod)
	defer forget(ctx, t, g, netMod, net)
	for _, u := range []*unstructured.Unstructured{sub, pod} {
		if err := editor.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	waitSyncedFalse(ctx, t, g, refused, sub, "waiting for networkIdFrom: WNetwork."+rbacGroup+" net does not exist")
	waitSyncedFalse(ctx, t, g, refused, pod, "networkIdFrom: Secret is not a kind modkind serves")
	if err := editor.Create(ctx, net); err != nil {
		t.Fatal(err)
	}
	waitTenantReady(ctx, t, g, refused, net)
	waitTenantReady(ctx, t, g, refused, sub)
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(sub.GroupVersionKind())
	if err := editor.Get(ctx, client.ObjectKeyFromObject(sub), got); err != nil {
		t.Fatal(err)
	}
	if id, _, _ := unstructured.NestedString(got.Object, "status", "atProvider", "id"); id != "sub-net-tenant/b" {
		t.Errorf("subnet id: want sub-net-tenant/b (the network's id and the ConfigMap's zone), got %q", id)
	}
	// A new zone in the ConfigMap reaches the subnet through the controller's watch of
	// ConfigMaps, which the chart's RBAC allows.
	if err := mergePatch(ctx, editor, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: rbacTenant, Name: "zones"}}, `{"data":{"zone":"c"}}`); err != nil {
		t.Fatal(err)
	}
	waitID := func(want string) {
		t.Helper()
		rbacWaitFor(ctx, t, "subnet id "+want, refused, func(ctx context.Context) (bool, any) {
			if err := editor.Get(ctx, client.ObjectKeyFromObject(sub), got); err != nil {
				return false, err
			}
			id, _, _ := unstructured.NestedString(got.Object, "status", "atProvider", "id")
			return id == want, got.Object["status"]
		})
	}
	waitID("sub-net-tenant/c")
	// The same through a Secret of the namespace, whose metadata the controller watches. The id
	// then derives from a Secret's value: it is applied (the state's output says so) but no longer
	// shown in status, although the Module lists it in publicOutputs.
	waitApplied := func(want string) {
		t.Helper()
		rbacWaitFor(ctx, t, "subnet applied with id "+want+", not shown", refused, func(ctx context.Context) (bool, any) {
			var st struct {
				Outputs map[string]struct {
					Value any `json:"value"`
				} `json:"outputs"`
			}
			if err := json.Unmarshal(stateBytes(t, stateSecret(ctx, t, g.admin, sub)), &st); err != nil {
				return false, err
			}
			if err := editor.Get(ctx, client.ObjectKeyFromObject(sub), got); err != nil {
				return false, err
			}
			_, shown, _ := unstructured.NestedString(got.Object, "status", "atProvider", "id")
			return st.Outputs["id"].Value == want && !shown, got.Object["status"]
		})
	}
	if err := editor.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: rbacTenant, Name: "zone-secret"}, StringData: map[string]string{"zone": "d"}}); err != nil {
		t.Fatal(err)
	}
	if err := mergePatch(ctx, editor, sub, `{"spec":{"forProvider":{"zoneFrom":{"configMapKeyRef":null,"secretKeyRef":{"name":"zone-secret","key":"zone"}}}}}`); err != nil {
		t.Fatal(err)
	}
	waitApplied("sub-net-tenant/d")
	if err := mergePatch(ctx, editor, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: rbacTenant, Name: "zone-secret"}}, `{"stringData":{"zone":"e"}}`); err != nil {
		t.Fatal(err)
	}
	waitApplied("sub-net-tenant/e")
	testConfigWatched(ctx, t, g, refused, editor, sub)
	if s := refused.String(); s != "" {
		t.Errorf("the controller was refused: %s", s)
	}
}

// testConfigWatched changes the ProviderConfig an applied instance names, as its cluster admin
// would (a new credential, another setting), and sees the instance applied again with it through
// the controller's watch of ProviderConfigs, which the chart's RBAC allows; then edits its state
// Secret as the tenant, and sees it refused. Polls are an hour apart, and the instance, settled,
// waits longer still for its resync: both came through watches.
func testConfigWatched(ctx context.Context, t *testing.T, g *rbacGround, refused *refusals, editor client.Client, sub *unstructured.Unstructured) {
	t.Helper()
	pc := &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: rbacTenant, Name: "wiring"},
		Spec: v1alpha1.ProviderConfigSpec{Env: []v1alpha1.EnvVar{{Name: "WIRING_SETTING", Value: ptr.To("1")}}}}
	if err := g.admin.Create(ctx, pc); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = g.admin.Delete(context.Background(), pc) }()
	// The Runs of sub that applied, once none is under way.
	applied := func(ctx context.Context) (map[string]bool, bool, error) {
		runs := &v1alpha1.RunList{}
		if err := g.admin.List(ctx, runs, client.InNamespace(rbacTenant)); err != nil {
			return nil, false, err
		}
		done, settled := map[string]bool{}, true
		for _, r := range runs.Items {
			if r.Spec.InstanceRef.Kind != "WSubnet" || r.Spec.InstanceRef.Name != sub.GetName() {
				continue
			}
			switch r.Status.Phase {
			case v1alpha1.PhaseSucceeded:
				if r.Spec.Operation == v1alpha1.OperationApply {
					done[r.Name] = true
				}
			case v1alpha1.PhaseFailed, v1alpha1.PhaseRefused:
			default:
				settled = false
			}
		}
		return done, settled, nil
	}
	before := map[string]bool{}
	waitApplied := func(what string) {
		t.Helper()
		rbacWaitFor(ctx, t, what, refused, func(ctx context.Context) (bool, any) {
			done, settled, err := applied(ctx)
			if err != nil {
				return false, err
			}
			for name := range done {
				if !before[name] && settled {
					before = done
					return true, done
				}
			}
			return false, done
		})
	}
	var err error
	if before, _, err = applied(ctx); err != nil {
		t.Fatal(err)
	}
	if err := mergePatch(ctx, editor, sub, `{"spec":{"providerConfigRef":{"kind":"ProviderConfig","name":"wiring"}}}`); err != nil {
		t.Fatal(err)
	}
	waitApplied("an apply of the subnet with ProviderConfig wiring")
	if err := mergePatch(ctx, g.admin, pc, `{"spec":{"env":[{"name":"WIRING_SETTING","value":"2"}]}}`); err != nil {
		t.Fatal(err)
	}
	waitApplied("an apply of the subnet after its ProviderConfig changed")

	// The tenant asks, with crossplane-runtime's annotation, for its subnet to be polled every
	// millisecond, a loop that would keep the kind's workers from every other instance: the
	// controller polls no more often than its own interval (an hour here), so the reconciles of
	// the subnet's kind while its ProviderConfig changes once more are the few that change causes.
	subnets := schema.GroupKind{Group: rbacGroup, Kind: "WSubnet"}
	counted := reconciletest.Reconciles(t, subnets)
	if err := mergePatch(ctx, editor, sub, `{"metadata":{"annotations":{"crossplane.io/poll-interval":"1ms"}}}`); err != nil {
		t.Fatal(err)
	}
	if err := mergePatch(ctx, g.admin, pc, `{"spec":{"env":[{"name":"WIRING_SETTING","value":"3"}]}}`); err != nil {
		t.Fatal(err)
	}
	waitApplied("an apply of the subnet after its ProviderConfig changed again")
	switch n := reconciletest.Reconciles(t, subnets) - counted; {
	case n < 1:
		t.Errorf("the apply must have been counted among the reconciles of %s: %v", subnets, n)
	case n > 20:
		t.Errorf("a poll interval of 1ms asked by the tenant must not be honoured: %v reconciles of %s during one apply", n, subnets)
	default:
		t.Logf("%v reconciles of %s during the apply, with the tenant's 1ms poll interval", n, subnets)
	}

	// The tenant edits the subnet's state Secret: the controller's informer of Secret metadata
	// reconciles the subnet at once, and its state, read in full, is refused.
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(sub.GroupVersionKind())
	if err := editor.Get(ctx, client.ObjectKeyFromObject(sub), got); err != nil {
		t.Fatal(err)
	}
	name, _, _ := unstructured.NestedString(got.Object, "status", "state", "secretName")
	if name == "" {
		t.Fatalf("the subnet's status names no state Secret: %v", got.Object["status"])
	}
	if err := mergePatch(ctx, editor, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: rbacTenant, Name: name}},
		`{"metadata":{"annotations":{"modkind.io/applied-inputs":"edited-by-the-tenant"}}}`); err != nil {
		t.Fatal(err)
	}
	waitSyncedFalse(ctx, t, g, refused, sub, "is not one this controller wrote")
}
