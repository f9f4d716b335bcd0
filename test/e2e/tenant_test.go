package e2e

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/test/thingstest"
)

// tenantModule manages one bucket of the things test provider, whose provider block a
// ProviderConfig configures.
const tenantModule = `
terraform {
  required_providers {
    things = { source = "example.com/acme/things" }
  }
}
variable "name" { type = string }
resource "things_bucket" "b" { name = var.name }
output "arn" { value = things_bucket.b.arn }
`

// Each way the security review found for a namespace tenant to reach the controller's privileges,
// tried by the tenant's own identity (the chart's aggregated admin and edit roles, against the
// chart's RBAC, with modkind running as the chart's service account): each is refused with a
// message naming the problem, and nothing outside the tenant's own instance changes.
func testTenantAttacks(t *testing.T, g *rbacGround) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	t.Setenv("TF_CLI_CONFIG_FILE", thingstest.Install(t))
	refused, workRoot := startControllerAs(ctx, t, g)
	editor, admin := tenantClient(ctx, t, g, "edit"), tenantClient(ctx, t, g, "admin")

	// What the controller can read and a tenant must never see: a stand-in for its token.
	const controllerSecret = "controller-only-7d1f0c"
	secretFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(secretFile, []byte(controllerSecret), 0o600); err != nil {
		t.Fatal(err)
	}
	theirs := thingstest.NewCloud(t)

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(tenantModule), 0o600); err != nil {
		t.Fatal(err)
	}
	mod := &v1alpha1.Module{
		ObjectMeta: metav1.ObjectMeta{Name: "tenant-buckets"},
		Spec:       v1alpha1.ModuleSpec{Source: v1alpha1.ModuleSource{Path: dir}, CRD: v1alpha1.CRDNames{Group: rbacGroup, Kind: "Bucket"}},
	}
	if err := g.admin.Create(ctx, mod); err != nil {
		t.Fatal(err)
	}
	rbacWaitFor(ctx, t, "Module tenant-buckets Ready", refused, func(ctx context.Context) (bool, any) {
		got := &v1alpha1.Module{}
		if err := g.admin.Get(ctx, types.NamespacedName{Name: mod.Name}, got); err != nil {
			return false, err
		}
		return got.Status.GetCondition("Ready").Status == corev1.ConditionTrue, got.Status
	})

	// A ProviderConfig chooses credentials and environment for the namespace: editors get none.
	pc := func(name string, spec v1alpha1.ProviderConfigSpec) *v1alpha1.ProviderConfig {
		return &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: rbacTenant, Name: name}, Spec: spec}
	}
	if err := editor.Create(ctx, pc("by-editor", v1alpha1.ProviderConfigSpec{})); !kerrors.IsForbidden(err) {
		t.Errorf("an editor must not write a ProviderConfig: %v", err)
	}

	// Admission refuses what would become Terraform configuration, a path outside the files
	// directory, an environment that steers a tool, or another namespace's Secret.
	if err := admin.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: rbacTenant, Name: "tenant-creds"}, Data: map[string][]byte{"k": []byte("v")}}); err != nil {
		t.Fatal(err)
	}
	ref := v1alpha1.SecretKeySelector{Name: "tenant-creds", Key: "k"}
	file := func(p string) v1alpha1.ProviderConfigSpec {
		return v1alpha1.ProviderConfigSpec{Files: []v1alpha1.File{{Path: p, SecretKeyRef: ref}}}
	}
	env := func(name string) v1alpha1.ProviderConfigSpec {
		return v1alpha1.ProviderConfigSpec{Env: []v1alpha1.EnvVar{{Name: name, Value: ptr.To("x")}}}
	}
	for name, tc := range map[string]struct {
		spec v1alpha1.ProviderConfigSpec
		want string
	}{
		"evil-tf":    {file("evil.tf"), "named like a Terraform"},
		"main-json":  {file("main.tf.json"), "named like a Terraform"},
		"state":      {file("terraform.tfstate"), "named like a Terraform"},
		"cli-config": {file("conf/terraform.rc"), "named like a Terraform"},
		"dot-dir":    {file(".terraform/providers/x"), "spec.files[0].path"},
		"climb":      {file("../main.tf.json"), "spec.files[0].path"},
		"path":       {env("PATH"), "steers the tools"},
		"home":       {env("HOME"), "steers the tools"},
		"cli":        {env("TF_CLI_CONFIG_FILE"), "steer the tools"},
		"plugins":    {env("TF_PLUGIN_CACHE_DIR"), "steer the tools"},
		"loader":     {env("LD_PRELOAD"), "steer the tools"},
		"git":        {env("GIT_SSH_COMMAND"), "steer the tools"},
		"tls":        {env("SSL_CERT_FILE"), "steer the tools"},
		"proxy":      {env("https_proxy"), "steers the tools"},
		"kubeconfig": {env("KUBECONFIG"), "steers the tools"},
		"aws-config": {env("AWS_CONFIG_FILE"), "steers the tools"},
		"tf-config":  {env("TERRAFORM_CONFIG"), "steers the tools"},
		"xdg-data":   {env("XDG_DATA_HOME"), "steer the tools"},
		"other-ns":   {v1alpha1.ProviderConfigSpec{Env: []v1alpha1.EnvVar{{Name: "T", SecretKeyRef: &v1alpha1.SecretKeySelector{Name: "x", Namespace: rbacNamespace, Key: "k"}}}}, "its own namespace only"},
		"long-name":  {env(strings.Repeat("A", 129)), "spec.env[0].name"},
	} {
		err := admin.Create(ctx, pc("attack-"+name, tc.spec))
		if err == nil || !kerrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ProviderConfig %s: want an admission refusal containing %q, got %v", name, tc.want, err)
		}
	}
	list := &v1alpha1.ProviderConfigList{}
	if err := g.admin.List(ctx, list, client.InNamespace(rbacTenant)); err != nil {
		t.Fatal(err)
	}
	for _, p := range list.Items {
		if strings.HasPrefix(p.Name, "attack-") || p.Name == "by-editor" {
			t.Errorf("refused ProviderConfig %s was stored", p.Name)
		}
	}

	bucket := func(name, config string, annotations map[string]string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
			"forProvider":       map[string]any{"name": name},
			"providerConfigRef": map[string]any{"name": config},
		}}}
		u.SetGroupVersionKind(schema.GroupVersionKind{Group: rbacGroup, Version: "v1alpha1", Kind: "Bucket"})
		u.SetNamespace(rbacTenant)
		u.SetName(name)
		u.SetAnnotations(annotations)
		if err := editor.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
		return u
	}
	synced := func(u *unstructured.Unstructured) map[string]any {
		got := u.DeepCopy()
		if err := g.admin.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
			t.Fatal(err)
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == "Synced" {
				return m
			}
		}
		return nil
	}

	// A provider block is literal: a template that would read the controller's files is the
	// string it is, here a directory below the work directory. (Evaluated, it would name the
	// provider's directory after the secret.)
	providers := func(block string) v1alpha1.ProviderConfigSpec {
		return v1alpha1.ProviderConfigSpec{Providers: &runtime.RawExtension{Raw: []byte(block)}}
	}
	template := `{"things":{"directory":"cloud-${trimspace(file(\"` + secretFile + `\"))}"}}`
	if err := admin.Create(ctx, pc("template", providers(template))); err != nil {
		t.Fatal(err)
	}
	templated := bucket("templated", "template", nil)
	rbacWaitFor(ctx, t, "the templated provider block applied as a literal", refused, func(ctx context.Context) (bool, any) {
		got := templated.DeepCopy()
		if err := g.admin.Get(ctx, client.ObjectKeyFromObject(templated), got); err != nil {
			return false, err
		}
		return conditionTrue(got, "Ready"), got.Object["status"]
	})

	// A literal path outside the run's directory (another tenant's cloud, the controller's files)
	// is refused before terraform runs.
	if err := admin.Create(ctx, pc("elsewhere", providers(`{"things":{"directory":"`+theirs.Dir+`"}}`))); err != nil {
		t.Fatal(err)
	}
	elsewhere := bucket("elsewhere", "elsewhere", nil)
	// An instance may not ask for refreshing plans more often than the controller allows.
	eager := bucket("eager", "template", map[string]string{"modkind.io/drift-interval": "5s"})
	for _, want := range []struct {
		u   *unstructured.Unstructured
		msg string
	}{{elsewhere, "names a path outside the run's directory"}, {eager, "shorter than the minimum"}} {
		rbacWaitFor(ctx, t, want.u.GetName()+" refused: "+want.msg, refused, func(ctx context.Context) (bool, any) {
			s := synced(want.u)
			return s != nil && s["status"] == "False" && strings.Contains(s["message"].(string), want.msg), s
		})
	}

	// Nothing outside the tenant's own instance changed, and the secret is nowhere.
	if n := len(theirs.Objects("things_bucket")); n != 0 {
		t.Errorf("another tenant's cloud got %d buckets", n)
	}
	_ = filepath.WalkDir(workRoot, func(p string, d fs.DirEntry, _ error) error {
		if strings.Contains(p, controllerSecret) {
			t.Errorf("a template was evaluated: %s is named after the controller's secret", p)
		}
		if d != nil && !d.IsDir() && !strings.Contains(p, string(filepath.Separator)+".terraform"+string(filepath.Separator)) {
			if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), controllerSecret) {
				t.Errorf("%s holds the controller's secret", p)
			}
		}
		return nil
	})
	events := &corev1.EventList{}
	if err := g.admin.List(ctx, events, client.InNamespace(rbacTenant)); err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if strings.Contains(e.Message, controllerSecret) {
			t.Errorf("event %s shows the controller's secret", e.Name)
		}
	}
	for _, u := range []*unstructured.Unstructured{templated, elsewhere, eager} {
		got := u.DeepCopy()
		if err := g.admin.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
			t.Fatal(err)
		}
		if b, _ := got.MarshalJSON(); strings.Contains(string(b), controllerSecret) {
			t.Errorf("instance %s shows the controller's secret", u.GetName())
		}
	}
	if r := refused.String(); r != "" {
		t.Errorf("the API server refused modkind requests it made:\n%s", r)
	}
}
