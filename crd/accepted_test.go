package crd

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/crd/internal/crdtest"
	"github.com/modkind/modkind/module"
)

// structural converts a generated CRD's schema the way the API server does before it accepts it.
func structural(t *testing.T, c *extv1.CustomResourceDefinition) *structuralschema.Structural {
	t.Helper()
	internal := &apiextensions.JSONSchemaProps{}
	if err := extv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(c.Spec.Versions[0].Schema.OpenAPIV3Schema, internal, nil); err != nil {
		t.Fatal(err)
	}
	s, err := structuralschema.NewStructural(internal)
	if err != nil {
		t.Fatalf("schema is not structural: %v", err)
	}
	return s
}

func TestSynthesizeAcceptedByAPIServer(t *testing.T) {
	cases := map[string]struct {
		reason string
	}{
		"scalars":     {reason: "Defaults of scalar variables should be valid values of their fields."},
		"nested":      {reason: "optional(object, {}) defaults must not hold nulls for fields that are not nullable."},
		"collections": {reason: "Collection defaults, map keys included, should be valid and pruned."},
		"outputs":     {reason: "A module with outputs only of unknown type should have a structural schema."},
		"defaults":    {reason: "An explicit null attribute in a variable's default must not reach the CRD."},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m, err := module.Inspect(filepath.Join("testdata", "modules", name))
			if err != nil {
				t.Fatalf("Inspect: %v", err)
			}
			c, err := Synthesize("mod", v1alpha1.CRDNames{Group: "example.org", Kind: "Thing"}, m)
			if err != nil {
				t.Fatalf("Synthesize: %v", err)
			}
			s := structural(t, c)
			root := field.NewPath("spec", "validation", "openAPIV3Schema")
			var problems []string
			for _, err := range structuralschema.ValidateStructural(root, s) {
				problems = append(problems, err.Error())
			}
			problems = append(problems, crdtest.DefaultProblems(root, s)...)
			if diff := cmp.Diff([]string(nil), problems); diff != "" {
				t.Errorf("\n%s\nThe API server would refuse the CRD of module %s: -want, +got:\n%s", tc.reason, name, diff)
			}
		})
	}
}

// TestProviderConfigRefKindsAPIServer checks the kinds an instance may reference for its provider
// configuration, as the API server enforces them.
func TestProviderConfigRefKindsAPIServer(t *testing.T) {
	cl := crdtest.APIServer(t)
	ctx := context.Background()
	m := &module.Module{Digest: crdtest.Digest}
	c, err := Synthesize("pcref", v1alpha1.CRDNames{Group: "pcref.example.org", Kind: "Thing"}, m)
	if err != nil {
		t.Fatal(err)
	}
	if err := installCRD(ctx, cl, c); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		reason string
		ref    map[string]any
		// want is the stored kind, "" when the instance is refused.
		want string
	}{
		"Default":    {reason: "An instance that names no kind references a ProviderConfig.", ref: map[string]any{"name": "p"}, want: "ProviderConfig"},
		"Namespaced": {reason: "A ProviderConfig in the instance's namespace.", ref: map[string]any{"name": "p", "kind": "ProviderConfig"}, want: "ProviderConfig"},
		"Cluster":    {reason: "A cluster-scoped ClusterProviderConfig.", ref: map[string]any{"name": "p", "kind": "ClusterProviderConfig"}, want: "ClusterProviderConfig"},
		"Other":      {reason: "No other kind can be referenced.", ref: map[string]any{"name": "p", "kind": "Secret"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": c.Spec.Group + "/" + c.Spec.Versions[0].Name,
				"kind":       c.Spec.Names.Kind,
				"metadata":   map[string]any{"name": "i", "namespace": "default"},
				"spec":       map[string]any{"providerConfigRef": tc.ref},
			}}
			err := cl.Create(ctx, u, client.DryRunAll)
			if tc.want == "" {
				if !apierrors.IsInvalid(err) {
					t.Errorf("\n%s\nCreate: want invalid, got %v", tc.reason, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("\n%s\nCreate: %v", tc.reason, err)
			}
			got, _, _ := unstructured.NestedString(u.Object, "spec", "providerConfigRef", "kind")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("\n%s\nspec.providerConfigRef.kind: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
