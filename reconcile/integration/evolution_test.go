package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
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
