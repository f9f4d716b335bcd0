package validation

import (
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/zclconf/go-cty/cty"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/module"
)

// UseCRD hands this package's tests the functions of package crd they need (see crd), which only
// the external test package can import.
func UseCRD(
	typeSchema func(cty.Type, *typeexpr.Defaults) (extv1.JSONSchemaProps, error),
	synthesize func(string, v1alpha1.CRDNames, *module.Module) (*extv1.CustomResourceDefinition, error),
	established func(*extv1.CustomResourceDefinition) bool,
) {
	crd.typeSchema, crd.synthesize, crd.established = typeSchema, synthesize, established
}
