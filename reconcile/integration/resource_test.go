package integration

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/test/thingstest"
)

const annotationExternalName = "crossplane.io/external-name"

// resourceKind creates a Module for one resource type of the test provider and waits for it.
func resourceKind(t *testing.T, name, typ, group, kind string) (*v1alpha1.Module, schema.GroupVersionKind) {
	t.Helper()
	m := &v1alpha1.Module{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.ModuleSpec{
			Source: v1alpha1.ModuleSource{Resource: &v1alpha1.ResourceSource{Provider: thingstest.Source, Version: thingstest.DefaultVersion, Type: typ}},
			CRD:    v1alpha1.CRDNames{Group: group, Kind: kind},
		},
	}
	if err := ground.client.Create(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	return waitModuleReady(t, name), schema.GroupVersionKind{Group: group, Version: "v1alpha1", Kind: kind}
}

// cloudNamespace creates a namespace with a test cloud and a ProviderConfig "default" that
// points the test provider at it. (Its environment does: a namespaced ProviderConfig's provider
// block may not name a path outside the run.)
func cloudNamespace(t *testing.T) (string, *thingstest.Cloud) {
	t.Helper()
	ns, cloud := newNamespace(t), thingstest.NewCloud(t)
	env, value, _ := strings.Cut(cloud.Env(), "=")
	pc := &v1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"},
		Spec:       v1alpha1.ProviderConfigSpec{Env: []v1alpha1.EnvVar{{Name: env, Value: &value}}},
	}
	if err := ground.client.Create(context.Background(), pc); err != nil {
		t.Fatal(err)
	}
	return ns, cloud
}

// The generated kind of a resource has the resource's arguments, typed and described, in
// spec.forProvider, and its non-sensitive attributes in status.atProvider.
func TestResourceKindSchema(t *testing.T) {
	m, _ := resourceKind(t, "r-buckets-schema", "things_bucket", "schema.things.example.org", "Bucket")
	if m.Status.Source == nil || m.Status.Source.Provider != thingstest.DefaultVersion {
		t.Errorf("status.source: want provider version %s, got %+v", thingstest.DefaultVersion, m.Status.Source)
	}
	c := &extv1.CustomResourceDefinition{}
	if err := ground.client.Get(context.Background(), types.NamespacedName{Name: m.Status.CRDName}, c); err != nil {
		t.Fatal(err)
	}
	props := c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties
	fp := props["spec"].Properties["forProvider"]
	// A required argument needs its value or its reference (nameFrom): a rule, not the required list.
	if rules := ruleStrings(fp.XValidations); !slices.Contains(rules, "has(self.name) || has(self.nameFrom)") || len(fp.Required) != 0 {
		t.Errorf("forProvider: want name or nameFrom required by a rule, got required %v, rules %v", fp.Required, rules)
	}
	for field, typ := range map[string]string{"name": "string", "region": "string", "tags": "object", "createSeconds": "number",
		"rule": "array", "versioning": "object", "owner": "object"} {
		p, ok := fp.Properties[field]
		if !ok {
			t.Errorf("forProvider.%s: missing", field)
			continue
		}
		if p.Type != typ {
			t.Errorf("forProvider.%s: want type %s, got %s", field, typ, p.Type)
		}
		if p.Description == "" {
			t.Errorf("forProvider.%s: no description", field)
		}
	}
	for _, computed := range []string{"arn", "createdAt", "id", "accessKey"} {
		if _, ok := fp.Properties[computed]; ok {
			t.Errorf("forProvider.%s: a computed attribute is no argument", computed)
		}
	}
	rule := fp.Properties["rule"].Items.Schema
	if rule.Properties["prefix"].Description == "" || strings.Join(rule.Required, ",") != "prefix" {
		t.Errorf("forProvider.rule items: want a described, required prefix, got %+v", rule)
	}
	if owner := fp.Properties["owner"]; strings.Join(owner.Required, ",") != "name" {
		t.Errorf("forProvider.owner: want name required, got %v", owner.Required)
	}
	at := props["status"].Properties["atProvider"]
	for _, field := range []string{"arn", "createdAt", "id", "region", "name"} {
		if _, ok := at.Properties[field]; !ok {
			t.Errorf("atProvider.%s: missing", field)
		}
	}
	if _, ok := at.Properties["accessKey"]; ok {
		t.Errorf("atProvider.accessKey: a sensitive attribute must stay out of status")
	}
}

// A resource kind's whole life: create (once, with its external name, late-initialized arguments
// and its sensitive attribute only in the connection Secret), update in place, a replacement
// refused by the guard, and delete.
func TestResourceKindLifecycle(t *testing.T) {
	ctx := context.Background()
	ns, cloud := cloudNamespace(t)
	_, gvk := resourceKind(t, "r-buckets", "things_bucket", "things.example.org", "Bucket")

	inst := newInstance(gvk, ns, "logs", map[string]any{
		"forProvider": map[string]any{
			"name":       "logs-bucket",
			"rule":       []any{map[string]any{"prefix": "logs/", "days": 7}},
			"versioning": map[string]any{"enabled": true},
		},
		"writeConnectionSecretToRef": map[string]any{"name": "logs-conn"},
		"providerConfigRef":          map[string]any{"name": "default"},
	})
	if err := ground.client.Create(ctx, inst); err != nil {
		t.Fatal(err)
	}
	got := waitInstance(t, inst, 1)

	objects := cloud.Objects("things_bucket")
	obj, ok := objects["logs-bucket"]
	if len(objects) != 1 || !ok {
		t.Fatalf("cloud: want exactly the bucket logs-bucket, got %v", objects)
	}
	if n := cloud.Count("things_bucket", "created"); n != 1 {
		t.Errorf("cloud: want one creation, got %d", n)
	}
	if rules, _ := obj["rule"].([]any); len(rules) != 1 || rules[0].(map[string]any)["prefix"] != "logs/" {
		t.Errorf("cloud: the bucket's rules are %v", obj["rule"])
	}
	if got.GetAnnotations()[annotationExternalName] != "logs-bucket" {
		t.Errorf("external name: want the bucket's id logs-bucket, got %q", got.GetAnnotations()[annotationExternalName])
	}
	// The provider chose the region; late initialization writes it into the spec.
	eventually(t, "spec.forProvider.region late-initialized", func(ctx context.Context) (bool, error) {
		if err := ground.client.Get(ctx, client.ObjectKeyFromObject(inst), got); err != nil {
			return false, err
		}
		region, _, _ := unstructured.NestedString(got.Object, "spec", "forProvider", "region")
		return region == "eu-west-1", nil
	})
	if arn, _, _ := unstructured.NestedString(got.Object, "status", "atProvider", "arn"); arn != obj["arn"] {
		t.Errorf("status.atProvider.arn: want %v, got %q", obj["arn"], arn)
	}
	accessKey, _ := obj["access_key"].(string)
	conn := &corev1.Secret{}
	if err := ground.client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "logs-conn"}, conn); err != nil {
		t.Fatal(err)
	}
	if accessKey == "" || string(conn.Data["access_key"]) != accessKey {
		t.Errorf("connection Secret: want the bucket's access_key, got %q", conn.Data["access_key"])
	}
	status, _ := json.Marshal(got.Object["status"])
	if strings.Contains(string(status), accessKey) {
		t.Errorf("status shows the sensitive access key")
	}

	// In place: tags change, the object is updated, nothing is created.
	patchSpec(t, inst, `{"forProvider":{"tags":{"team":"a"}}}`)
	waitInstance(t, inst, got.GetGeneration()+1)
	eventually(t, "tags updated in the cloud", func(context.Context) (bool, error) {
		tags, _ := cloud.Object("things_bucket", "logs-bucket")["tags"].(map[string]any)
		return tags["team"] == "a", nil
	})
	if n := cloud.Count("things_bucket", "created"); n != 1 || cloud.Count("things_bucket", "updated") == 0 {
		t.Errorf("cloud: want the bucket updated in place, log %v", cloud.Log("things_bucket"))
	}

	// A new name forces replacement: refused, and nothing changes.
	patchSpec(t, inst, `{"forProvider":{"name":"renamed-bucket"}}`)
	eventually(t, "replacement refused", func(ctx context.Context) (bool, error) {
		if err := ground.client.Get(ctx, client.ObjectKeyFromObject(inst), got); err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		synced := condition(conds, "Synced")
		msg, _ := synced["message"].(string)
		return synced["status"] == "False" && strings.Contains(msg, "things_bucket.this") && strings.Contains(msg, "name"), nil
	})
	assertInstanceEvent(t, inst, corev1.EventTypeWarning, "things_bucket.this")
	if objects := cloud.Objects("things_bucket"); len(objects) != 1 || objects["logs-bucket"] == nil {
		t.Errorf("cloud: a refused replacement changed the buckets: %v", objects)
	}
	patchSpec(t, inst, `{"forProvider":{"name":"logs-bucket"}}`)
	waitInstance(t, inst, got.GetGeneration()+1)

	if err := ground.client.Delete(ctx, inst); err != nil {
		t.Fatal(err)
	}
	waitGone(t, inst)
	if objects := cloud.Objects("things_bucket"); len(objects) != 0 {
		t.Errorf("cloud: deleting the instance must destroy the bucket, left %v", objects)
	}
	err := ground.client.Get(ctx, kind.StateRef(gvk.GroupKind().String(), ns, "logs").NamespacedName, &corev1.Secret{})
	if !kerrors.IsNotFound(err) {
		t.Errorf("state Secret after destroy: want it deleted, got %v", err)
	}
}

// An instance created with the external name of an existing object adopts it by terraform import
// instead of creating a second one.
func TestResourceKindImport(t *testing.T) {
	ctx := context.Background()
	ns, cloud := cloudNamespace(t)
	_, gvk := resourceKind(t, "r-buckets-import", "things_bucket", "import.things.example.org", "Bucket")
	cloud.Put("things_bucket", "existing", map[string]any{"name": "existing", "region": "us-east-1",
		"arn": "arn:things:::existing", "tags": map[string]any{"owner": "ops"}})

	inst := newInstance(gvk, ns, "adopted", map[string]any{
		"forProvider":       map[string]any{"name": "existing", "region": "us-east-1", "tags": map[string]any{"owner": "ops"}},
		"providerConfigRef": map[string]any{"name": "default"},
	})
	inst.SetAnnotations(map[string]string{annotationExternalName: "existing"})
	if err := ground.client.Create(ctx, inst); err != nil {
		t.Fatal(err)
	}
	got := waitInstance(t, inst, 1)
	if n := cloud.Count("things_bucket", "created"); n != 0 {
		t.Errorf("cloud: importing must create nothing, log %v", cloud.Log("things_bucket"))
	}
	if objects := cloud.Objects("things_bucket"); len(objects) != 1 {
		t.Errorf("cloud: want the one existing bucket, got %v", objects)
	}
	if arn, _, _ := unstructured.NestedString(got.Object, "status", "atProvider", "arn"); arn != "arn:things:::existing" {
		t.Errorf("status.atProvider.arn: want the imported bucket's, got %q", arn)
	}
	st := &corev1.Secret{}
	if err := ground.client.Get(ctx, kind.StateRef(gvk.GroupKind().String(), ns, "adopted").NamespacedName, st); err != nil {
		t.Fatalf("the imported object must be in a state: %v", err)
	}
}

// A password's sensitive argument comes from a Secret and its sensitive result goes only to the
// connection Secret; an argument the provider fills in is late-initialized only when the
// management policies include LateInitialize.
func TestResourceKindSensitive(t *testing.T) {
	ctx := context.Background()
	ns, cloud := cloudNamespace(t)
	_, gvk := resourceKind(t, "r-passwords", "things_password", "things.example.org", "Password")
	seed := "seed-from-secret-7f3a"
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "seed"}, Data: map[string][]byte{"seed": []byte(seed)}}
	if err := ground.client.Create(ctx, sec); err != nil {
		t.Fatal(err)
	}
	inst := newInstance(gvk, ns, "db", map[string]any{
		"forProvider":                map[string]any{"length": 24, "seedSecretRef": map[string]any{"name": "seed", "key": "seed"}},
		"writeConnectionSecretToRef": map[string]any{"name": "db-conn"},
		"providerConfigRef":          map[string]any{"name": "default"},
		// Everything but LateInitialize.
		"managementPolicies": []any{"Observe", "Create", "Update", "Delete"},
	})
	if err := ground.client.Create(ctx, inst); err != nil {
		t.Fatal(err)
	}
	got := waitInstance(t, inst, 1)
	objects := cloud.Objects("things_password")
	if len(objects) != 1 {
		t.Fatalf("cloud: want one password, got %d", len(objects))
	}
	var result string
	for _, o := range objects {
		result, _ = o["result"].(string)
	}
	conn := &corev1.Secret{}
	if err := ground.client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "db-conn"}, conn); err != nil {
		t.Fatal(err)
	}
	if len(result) != 24 || string(conn.Data["result"]) != result {
		t.Errorf("connection Secret: want the 24-character result, got %q", conn.Data["result"])
	}
	everything, _ := json.Marshal(got.Object)
	for _, secret := range []string{result, seed} {
		if strings.Contains(string(everything), secret) || strings.Contains(ground.logs.String(), secret) {
			t.Errorf("a sensitive value shows in the instance or the logs")
		}
	}
	if _, set, _ := unstructured.NestedFieldNoCopy(got.Object, "spec", "forProvider", "special"); set {
		t.Errorf("spec.forProvider.special: without LateInitialize the spec must stay as written")
	}
}
