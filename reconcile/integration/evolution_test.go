package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
)

func forProviderOf(t *testing.T, name string) extv1.JSONSchemaProps {
	t.Helper()
	c := &extv1.CustomResourceDefinition{}
	if err := ground.client.Get(context.Background(), types.NamespacedName{Name: name}, c); err != nil {
		t.Fatal(err)
	}
	return c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["forProvider"]
}

// A compatible module change updates the kind; a breaking one is refused and listed until the
// Module allows it.
func TestSchemaEvolution(t *testing.T) {
	ctx := context.Background()
	dir := moduleDir(t, "trace")
	createModule(t, "evolving", dir, "evolving.example.org", "Trace")
	waitModuleReady(t, "evolving")
	crdName := "traces.evolving.example.org"

	// Compatible: a new optional variable appears in the schema.
	if err := os.WriteFile(filepath.Join(dir, "extra.tf"), []byte("variable \"colour\" {\n  type    = string\n  default = \"blue\"\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the new optional field", func(ctx context.Context) (bool, error) {
		_, ok := forProviderOf(t, crdName).Properties["colour"]
		return ok, nil
	})

	// Breaking: a new required variable is refused, and the schema stays as it was.
	if err := os.WriteFile(filepath.Join(dir, "extra.tf"), []byte("variable \"colour\" {\n  type    = string\n  default = \"blue\"\n}\nvariable \"region\" {\n  type = string\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	msg := waitModuleFailed(t, "evolving")
	if !strings.Contains(msg, "spec.forProvider.region: newly required") || !strings.Contains(msg, "allowBreakingChanges") {
		t.Errorf("the refusal must list the break and the way out, got %q", msg)
	}
	if _, ok := forProviderOf(t, crdName).Properties["region"]; ok {
		t.Errorf("a refused change must not reach the CRD")
	}

	// Allowed: the Module says breaking changes are fine.
	m := &v1alpha1.Module{}
	if err := ground.client.Get(ctx, types.NamespacedName{Name: "evolving"}, m); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(m.DeepCopy())
	m.Spec.AllowBreakingChanges = true
	if err := ground.client.Patch(ctx, m, patch); err != nil {
		t.Fatal(err)
	}
	waitModuleReady(t, "evolving")
	// Required by a rule: its value or its reference.
	if fp := forProviderOf(t, crdName); !contains(ruleStrings(fp.XValidations), "has(self.region) || has(self.regionFrom)") {
		t.Errorf("once allowed, the new required field is in the CRD; rules = %v", ruleStrings(fp.XValidations))
	}
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// A variable removed by a new module revision: the refusal names the instances that set it to a
// value other than its default; allowed, the field goes from every instance (the API server drops
// what its schema lacks), also from an instance pinned to the revision that has the variable, which
// is applied with the variable's default from then on, and a FieldDropped event on the Module
// names them.
func TestRemovedVariableNamesItsSetters(t *testing.T) {
	ctx := context.Background()
	repo := taggedRepo(t, map[string]string{
		"v1": "variable \"name\" { type = string }\nvariable \"colour\" {\n  type    = string\n  default = \"blue\"\n}\n" +
			"resource \"terraform_data\" \"t\" { input = \"${var.name} ${var.colour}\" }\noutput \"message\" { value = terraform_data.t.output }\n",
		"v2": "variable \"name\" { type = string }\nresource \"terraform_data\" \"t\" { input = var.name }\n" +
			"output \"message\" { value = \"v2: ${terraform_data.t.output}\" }\n",
	}, "v1", "v2")
	const name = "dropped-fields"
	rev1 := createGitModule(t, name, repo, v1alpha1.CRDNames{Group: "dropped.example.org", Kind: "Paint"}, nil)
	gvk := schema.GroupVersionKind{Group: "dropped.example.org", Version: "v1alpha1", Kind: "Paint"}
	ns := newNamespace(t)
	pinned := newInstance(gvk, ns, "pinned", map[string]any{"forProvider": map[string]any{"name": "p", "colour": "red"},
		"moduleRevisionRef": map[string]any{"name": rev1.Name}})
	// Its colour is the default the API server fills in: it never asked for one.
	plain := newInstance(gvk, ns, "plain", map[string]any{"forProvider": map[string]any{"name": "q"}})
	for _, u := range []*unstructured.Unstructured{pinned, plain} {
		if err := ground.client.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	waitOnRevision(t, pinned, rev1.Name, "p red")
	waitOnRevision(t, plain, rev1.Name, "q blue")

	// v2 has no colour: refused, naming the instance whose value would go.
	setModuleRef(t, name, repo, "v2", nil)
	msg := waitModuleFailed(t, name)
	setter := "spec.forProvider.colour: field removed; instance " + ns + "/pinned sets it (not to its default), and would lose the value"
	if !strings.Contains(msg, setter) || strings.Contains(msg, ns+"/plain") {
		t.Errorf("the refusal must name the instance that set colour, and only it: got %q", msg)
	}

	// Allowed: the field goes, also from the pinned instance, an event says whose value went, and
	// the other instance moves to v2.
	patchModule(t, name, func(m *v1alpha1.Module) { m.Spec.AllowBreakingChanges = true })
	waitModuleReady(t, name)
	got := &v1alpha1.Module{}
	if err := ground.client.Get(ctx, types.NamespacedName{Name: name}, got); err != nil {
		t.Fatal(err)
	}
	asObject := &unstructured.Unstructured{}
	asObject.SetUID(got.UID)
	assertInstanceEvent(t, asObject, corev1.EventTypeWarning, "spec.forProvider.colour is not in the new module and is dropped from every instance: instance "+ns+"/pinned sets it")
	if _, ok := forProviderOf(t, "paints.dropped.example.org").Properties["colour"]; ok {
		t.Errorf("the allowed change must drop colour from the CRD")
	}
	eventually(t, "the pinned instance served without colour", func(ctx context.Context) (bool, error) {
		u := pinned.DeepCopy()
		if err := ground.client.Get(ctx, client.ObjectKeyFromObject(pinned), u); err != nil {
			return false, err
		}
		_, set, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "forProvider", "colour")
		return !set, nil
	})
	// The controller's cached copies still held colour: each is applied as the API server serves
	// it, the pinned one with v1's default.
	waitOnRevision(t, pinned, rev1.Name, "p blue")
	rev2 := waitRevision(t, name, git(t, repo, "rev-list", "-n", "1", "v2"))
	waitOnRevision(t, plain, rev2.Name, "v2: q")
}
