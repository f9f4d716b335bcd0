package crdtest

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
)

// FieldStructural checks the schema of a field, of the type expr, as the API server checks a
// CRD's schema and returns its structural form, under a root object as in a CRD.
func FieldStructural(t testing.TB, expr string, schema extv1.JSONSchemaProps) *structuralschema.Structural {
	t.Helper()
	root := extv1.JSONSchemaProps{Type: "object", Properties: map[string]extv1.JSONSchemaProps{"value": schema}}
	internal := &apiextensions.JSONSchemaProps{}
	if err := extv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(&root, internal, nil); err != nil {
		t.Fatal(err)
	}
	s, err := structuralschema.NewStructural(internal)
	if err != nil {
		t.Fatalf("TypeSchema(%s) is not structural: %v", expr, err)
	}
	path := field.NewPath("schema")
	var problems []string
	for _, err := range structuralschema.ValidateStructural(path, s) {
		problems = append(problems, err.Error())
	}
	problems = append(problems, DefaultProblems(path, s)...)
	if len(problems) > 0 {
		t.Fatalf("The API server would refuse TypeSchema(%s):\n%s", expr, strings.Join(problems, "\n"))
	}
	return s
}

// DefaultProblems checks every default in s as the API server does when it validates a CRD:
// a default must be pruned already and valid against the schema of the field it defaults.
func DefaultProblems(path *field.Path, s *structuralschema.Structural) []string {
	var problems []string
	if s.Default.Object != nil {
		pruned := runtime.DeepCopyJSONValue(s.Default.Object)
		pruning.Prune(pruned, s, false)
		if !reflect.DeepEqual(pruned, s.Default.Object) {
			problems = append(problems, fmt.Sprintf("%s.default: must not have unknown fields", path))
		}
		r := validate.NewSchemaValidator(s.ToKubeOpenAPI(), nil, "", strfmt.Default).Validate(s.Default.Object)
		for _, err := range r.Errors {
			problems = append(problems, fmt.Sprintf("%s.default: %v", path, err))
		}
	}
	for name, p := range s.Properties {
		problems = append(problems, DefaultProblems(path.Child("properties").Key(name), &p)...)
	}
	if s.Items != nil {
		problems = append(problems, DefaultProblems(path.Child("items"), s.Items)...)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil {
		problems = append(problems, DefaultProblems(path.Child("additionalProperties"), s.AdditionalProperties.Structural)...)
	}
	sort.Strings(problems)
	return problems
}

// RandomString is a string from a pool of names, and of strings Terraform normalizes.
func RandomString(r *rand.Rand) string {
	pool := []string{"", "a", "web", "snake_case", "Camel", "caf\u00e9", "cafe\u0301", "\u212a", "x.y", "a b", "\U0001F44D", "1"}
	return pool[r.IntN(len(pool))]
}

// RandomJSON is a value of Terraform's type any, as JSON has it, nested up to depth.
func RandomJSON(r *rand.Rand, depth int) any {
	n := 4
	if depth > 0 {
		n = 6
	}
	switch r.IntN(n) {
	case 0:
		return nil
	case 1:
		return RandomString(r)
	case 2:
		return float64(r.IntN(10))
	case 3:
		return true
	case 4:
		return []any{RandomJSON(r, depth-1), RandomJSON(r, depth-1)}
	default:
		return map[string]any{"snake_key": RandomJSON(r, depth-1), "Other-Key": RandomJSON(r, depth-1)}
	}
}

// PruneNulls and ApplyDefaults do what the API server's PruneNonNullableNullsWithoutDefaults and
// Default (k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting) do to an object before
// validating it. That package also holds CEL validation, which would pull CEL into this module's
// dependencies for two short functions.

func isNonNullableNull(x any, s *structuralschema.Structural) bool {
	return x == nil && s != nil && !s.Nullable
}

// PruneNulls drops the nulls within x of fields that are not nullable and have no default.
func PruneNulls(x any, s *structuralschema.Structural) {
	if s == nil {
		return
	}
	switch x := x.(type) {
	case map[string]any:
		for k, v := range x {
			var ps *structuralschema.Structural
			if p, ok := s.Properties[k]; ok {
				ps = &p
			} else if s.AdditionalProperties != nil {
				ps = s.AdditionalProperties.Structural
			}
			if ps != nil && isNonNullableNull(v, ps) && ps.Default.Object == nil {
				delete(x, k)
				continue
			}
			PruneNulls(v, ps)
		}
	case []any:
		for _, v := range x {
			PruneNulls(v, s.Items)
		}
	}
}

// ApplyDefaults fills in the defaults of the fields absent from x, or null and not nullable.
func ApplyDefaults(x any, s *structuralschema.Structural) {
	if s == nil {
		return
	}
	switch x := x.(type) {
	case map[string]any:
		for k, p := range s.Properties {
			if p.Default.Object == nil {
				continue
			}
			if v, ok := x[k]; !ok || isNonNullableNull(v, &p) {
				x[k] = runtime.DeepCopyJSONValue(p.Default.Object)
			}
		}
		for k, v := range x {
			if p, ok := s.Properties[k]; ok {
				ApplyDefaults(v, &p)
			} else if s.AdditionalProperties != nil {
				ApplyDefaults(v, s.AdditionalProperties.Structural)
			}
		}
	case []any:
		for _, v := range x {
			ApplyDefaults(v, s.Items)
		}
	}
}
