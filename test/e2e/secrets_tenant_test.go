package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
)

// secretFedModule takes a token, instance keys and limits that its instances read from Secrets.
// Its module declares none of them sensitive; it publishes an output built from the token and
// one that un-marks it, one through a provider's computed attribute (which terraform does not
// mark), and
// its destroy-time provisioner prints the token JSON-quoted, as a module that un-marks a value
// with nonsensitive() may.
const secretFedModule = `
variable "token" {
  type = string
}
variable "keys" {
  type    = map(string)
  default = {}
}
variable "limits" {
  type    = map(number)
  default = {}
}
resource "terraform_data" "this" {
  input            = var.token
  triggers_replace = var.token
  provisioner "local-exec" {
    when    = destroy
    command = "echo '${jsonencode(nonsensitive(self.input))}' >&2; exit 1"
  }
}
resource "terraform_data" "k" {
  for_each = var.keys
  input    = each.value
}
output "conn" { value = "u:${var.token}@h" }
output "plain" { value = "hello" }
output "unmarked" { value = nonsensitive(var.token) }
output "encoded" { value = base64encode(terraform_data.this.output) }
output "limits" { value = var.limits }
`

// Issue 38, items 5 to 9: no value a tenant's instance reads from a Secret reaches what a `view`
// user of the namespace reads (instances, their status and conditions, Events, Runs), nor the
// readable plan: not as an output derived from it, an instance key, a map key in a type error, a
// value terraform prints JSON-quoted, or the value a Secret held before it was rotated. The tenant
// acts with its `edit` token against the chart's RBAC; the reader holds a `view` token.
func TestSecretsNeverShownAsTenant(t *testing.T) {
	g := startRBACGround(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	refused, _ := startControllerAs(ctx, t, g)
	tenant := rbacClient(t, tenantToken(ctx, t, g, rbacTenant, "edit"))
	viewer := rbacClient(t, tenantToken(ctx, t, g, rbacTenant, "view"))
	mod := applyModule(ctx, t, g, refused, "secretfed", "SecretFed", secretFedModule)
	// The admin says which outputs may be shown: not "encoded", which a view user could decode.
	if err := mergePatch(ctx, g.admin, mod, `{"spec":{"publicOutputs":["plain","conn","unmarked","limits"]}}`); err != nil {
		t.Fatal(err)
	}

	// Each distinctive part below is in every form of its value: raw, JSON- or HCL-quoted.
	const oldToken, newToken = `Tok"3n-alpha-1`, `Tok"3n-beta-2`
	leaks := []string{"3n-alpha", "3n-beta", "sk-live-"}
	secretOf := func(name, key, value string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: rbacTenant, Name: name}, StringData: map[string]string{key: value}}
	}
	token := secretOf("token", "token", oldToken)
	for _, s := range []*corev1.Secret{token, secretOf("keys", "keys", `{"sk-live-k1":"v"}`), secretOf("limits", "limits", `{"sk-live-quota":"lots"}`)} {
		if err := tenant.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	from := func(name, key string) map[string]any {
		return map[string]any{"secretKeyRef": map[string]any{"name": name, "key": key}}
	}
	published := instance("SecretFed", rbacTenant, "published", map[string]any{"tokenFrom": from("token", "token")})
	_ = unstructured.SetNestedField(published.Object, true, "spec", "allowDestructivePlans")
	keyed := instance("SecretFed", rbacTenant, "keyed", map[string]any{"token": "plain", "keysFrom": from("keys", "keys")})
	typed := instance("SecretFed", rbacTenant, "typed", map[string]any{"token": "plain", "limitsFrom": from("limits", "limits")})
	for _, u := range []*unstructured.Unstructured{published, keyed, typed} {
		if err := tenant.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	defer forget(context.Background(), t, g, mod, published, keyed, typed)

	// (9) An output derived from a value read from a Secret is not published in status.
	waitTenantReady(ctx, t, g, refused, published)
	got := published.DeepCopy()
	if err := viewer.Get(ctx, client.ObjectKeyFromObject(published), got); err != nil {
		t.Fatal(err)
	}
	atProvider, _, _ := unstructured.NestedMap(got.Object, "status", "atProvider")
	if atProvider["plain"] != "hello" || atProvider["conn"] != nil || atProvider["unmarked"] != nil || atProvider["encoded"] != nil {
		t.Errorf("status.atProvider must hold the public output derived from no Secret and none derived from the token (marked, un-marked, or through a provider, not public), got %v", atProvider)
	}
	// (5) A Secret's keys as instance keys: terraform refuses a sensitive for_each, and says so
	// without the keys.
	waitSyncedFalse(ctx, t, g, refused, keyed, "cannot be used as for_each arguments")
	// (8) A map read from a Secret with a value of the wrong type: the path names no key.
	waitSyncedFalse(ctx, t, g, refused, typed, "limitsFrom: the value of Secret limits is not of variable limits's type map of number: [<key 1 of 1>]: want a number, got a string")

	// (6, 7) The tenant rotates the token: the replacement runs the old object's destroy-time
	// provisioner, whose failure prints the old value JSON-quoted.
	token.StringData = map[string]string{"token": newToken}
	if err := tenant.Update(ctx, token); err != nil {
		t.Fatal(err)
	}
	waitSyncedFalse(ctx, t, g, refused, published, "local-exec provisioner error")
	waitEvent(ctx, t, g, refused, published, "local-exec provisioner error")
	// The old object's provisioner printed the value the Secret held before, JSON-quoted: the
	// check is not vacuous only if terraform printed it.
	if msg, _ := condition(ctx, t, g.admin, published, "Synced")["message"].(string); !strings.Contains(msg, `Output: "(redacted)"`) {
		t.Errorf("the provisioner's output must be there with the token's previous value redacted, got:\n%s", msg)
	}

	// What the viewer reads, and the readable plans the controller wrote beside the states.
	var read []any
	for _, gvk := range []schema.GroupVersionKind{
		{Group: rbacGroup, Version: "v1alpha1", Kind: "SecretFedList"},
		v1alpha1.SchemeGroupVersion.WithKind("RunList"),
		corev1.SchemeGroupVersion.WithKind("EventList"),
	} {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk)
		if err := viewer.List(ctx, list, client.InNamespace(rbacTenant)); err != nil {
			t.Fatalf("a view user may list %s: %v", gvk.Kind, err)
		}
		read = append(read, list.Items)
	}
	secrets := &corev1.SecretList{}
	if err := g.admin.List(ctx, secrets, client.InNamespace(rbacTenant)); err != nil {
		t.Fatal(err)
	}
	plans := 0
	for _, s := range secrets.Items {
		if strings.HasPrefix(s.Name, "tfplan.") {
			read = append(read, s.Annotations, string(s.Data["plan.txt"]))
			plans++
		}
	}
	b, err := json.Marshal(read)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	if !strings.Contains(text, "local-exec provisioner error") || !strings.Contains(text, "cannot be used as for_each arguments") {
		t.Fatalf("the viewer must read the failures (the check below would pass on nothing):\n%s", text)
	}
	for _, leak := range leaks {
		if i := strings.Index(text, leak); i >= 0 {
			t.Errorf("what a view user reads (and %d readable plans) holds %q, read from a Secret: …%s…", plans, leak, text[max(0, i-200):min(len(text), i+100)])
		}
	}
}
