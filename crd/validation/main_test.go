package validation

import (
	"context"
	"testing"

	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/zclconf/go-cty/cty"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/crd/internal/crdtest"
	"github.com/modkind/modkind/module"
)

// The API server these tests need is started by the first that asks for it (crdtest.APIServer),
// and stopped when all have run.
func TestMain(m *testing.M) { crdtest.Main(m) }

// crd is what these tests need of package crd: rules are judged within the schema it makes of a
// variable's type, and in the CRD it makes of a module. Package crd imports this package, so its
// own tests cannot import crd; the external test package can, and hands it over before any test
// runs (crd_test.go, through UseCRD).
var crd struct {
	typeSchema  func(cty.Type, *typeexpr.Defaults) (extv1.JSONSchemaProps, error)
	synthesize  func(string, v1alpha1.CRDNames, *module.Module) (*extv1.CustomResourceDefinition, error)
	established func(*extv1.CustomResourceDefinition) bool
}

// installCRD creates c and waits until the API server serves it (see crdtest.InstallCRD).
func installCRD(ctx context.Context, cl client.Client, c *extv1.CustomResourceDefinition) error {
	return crdtest.InstallCRD(ctx, cl, c, crd.established)
}
