package crd

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	hcljson "github.com/hashicorp/hcl/v2/json"
	"github.com/zclconf/go-cty/cty"
	ctyconvert "github.com/zclconf/go-cty/cty/convert"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"

	"github.com/modkind/modkind/crd/internal/crdtest"
	"github.com/modkind/modkind/kind/fields"
	"github.com/modkind/modkind/module"
)

// FuzzTypeMapping checks type mapping and value conversion together, for random type
// constraints (the fuzzer's expression, or one generated from the seed when it is empty) and
// random values of them:
//
//   - the schema of the type is structural and its defaults are valid, as the API server demands;
//   - ToTerraform∘ToField is the identity on Terraform values, so what an instance holds is
//     exactly what reaches Terraform;
//   - every value, in its field form, is kept whole by the API server (pruning removes nothing
//     but the nulls Terraform reads as absent) and valid against the schema.
func FuzzTypeMapping(f *testing.F) {
	for _, expr := range []string{
		"string", "number", "bool", "any", "list(string)", "set(number)", "set(object({ a_b = string }))",
		"map(list(object({ node_count = optional(number, 1), labels = optional(map(string), {}) })))",
		"tuple([string, number, object({ display_name = string })])", "tuple([bool, bool])",
		`object({ name = string, rules = optional(list(object({ port = number, cidrs = optional(set(string), []) })), []) })`,
		"object({ extra = any, list_of_any = optional(list(any)), map_of_any = optional(map(any)) })",
		"object({})", "list(tuple([]))",
	} {
		f.Add(expr, uint64(1))
		f.Add(expr, uint64(2))
	}
	for seed := range uint64(40) {
		f.Add("", seed)
	}
	f.Fuzz(func(t *testing.T, expr string, seed uint64) {
		rnd := rand.New(rand.NewPCG(seed, seed>>32))
		if expr == "" {
			expr = randomTypeExpr(rnd, 3)
		}
		ty, defaults, err := module.ParseType(expr)
		if err != nil {
			return
		}
		schema, err := TypeSchema(ty, defaults)
		var ce *fields.CollisionError
		if errors.As(err, &ce) {
			return
		}
		if err != nil {
			t.Fatalf("TypeSchema(%s): %v", expr, err)
		}
		s := crdtest.FieldStructural(t, expr, schema)
		for range 4 {
			v := randomValue(rnd, ty, 3)
			checkValue(t, expr, ty, s, v)
		}
	})
}

func checkValue(t *testing.T, expr string, ty cty.Type, s *structuralschema.Structural, v any) {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	// Terraform reads terraform.tfvars.json with HCL's JSON parser, then converts each value to
	// its variable's type.
	e, diags := hcljson.ParseExpression(raw, "terraform.tfvars.json")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	tv, diags := e.Value(nil)
	if diags.HasErrors() {
		t.Fatalf("randomValue made %s, which Terraform cannot read: %v", raw, diags)
	}
	if _, err := ctyconvert.Convert(tv, ty); err != nil {
		t.Fatalf("randomValue made %s, which is not a value of %s: %v", raw, expr, err)
	}
	f, err := fields.FromTerraform(v, ty)
	if err != nil {
		t.Fatalf("fields.FromTerraform(%s, %s): %v", raw, expr, err)
	}
	back, err := fields.ToTerraform(runtime.DeepCopyJSONValue(f), ty)
	if err != nil {
		t.Fatalf("fields.ToTerraform(fields.FromTerraform(%s), %s): %v", raw, expr, err)
	}
	if diff := cmp.Diff(v, back); diff != "" {
		t.Errorf("ToTerraform∘ToField should be the identity on values of %s: -value, +round trip:\n%s", expr, diff)
	}

	// The API server first drops nulls of fields that are not nullable (Terraform reads a null
	// attribute as an absent one, and no other null is made here), then prunes unknown fields.
	obj := map[string]any{"value": runtime.DeepCopyJSONValue(f)}
	crdtest.PruneNulls(obj, s)
	beforePruning := runtime.DeepCopyJSONValue(obj)
	pruning.Prune(obj, s, false)
	if !reflect.DeepEqual(beforePruning, obj) {
		t.Errorf("The API server would prune parts of %s, a value of %s: -value, +pruned:\n%s", raw, expr, cmp.Diff(beforePruning, obj))
	}
	crdtest.ApplyDefaults(obj, s)
	r := validate.NewSchemaValidator(s.ToKubeOpenAPI(), nil, "", strfmt.Default).Validate(obj)
	for _, err := range r.Errors {
		t.Errorf("The API server would refuse %s, a value of %s: %v", raw, expr, err)
	}
}

// Attribute names that never collide as fields, in the shapes Terraform modules use.
var attributeNames = []string{"name", "node_count", "display-name", "a_b_c", "x", "ttlSeconds", "Tags"}

func randomTypeExpr(r *rand.Rand, depth int) string {
	scalars := []string{"string", "number", "bool"}
	n := 4
	if depth > 0 {
		n = 10
	}
	switch k := r.IntN(n); {
	case k < 3:
		return scalars[k]
	case k == 3:
		return "any"
	case k == 4:
		return "list(" + randomTypeExpr(r, depth-1) + ")"
	case k == 5:
		return "set(" + randomTypeExpr(r, depth-1) + ")"
	case k == 6:
		return "map(" + randomTypeExpr(r, depth-1) + ")"
	case k == 7:
		parts := make([]string, r.IntN(3))
		for i := range parts {
			parts[i] = randomTypeExpr(r, depth-1)
		}
		return "tuple([" + strings.Join(parts, ", ") + "])"
	default:
		var attrs []string
		for _, name := range attributeNames {
			if r.IntN(3) > 0 {
				continue
			}
			t := randomTypeExpr(r, depth-1)
			switch r.IntN(3) {
			case 0:
				attrs = append(attrs, fmt.Sprintf("%s = %s", name, t))
			case 1:
				attrs = append(attrs, fmt.Sprintf("%s = optional(%s)", name, t))
			default:
				if d := literalFor(r, t); d != "" {
					attrs = append(attrs, fmt.Sprintf("%s = optional(%s, %s)", name, t, d))
				} else {
					attrs = append(attrs, fmt.Sprintf("%s = optional(%s)", name, t))
				}
			}
		}
		return "object({ " + strings.Join(attrs, ", ") + " })"
	}
}

// literalFor is an HCL literal of type expression t for an optional attribute's default, "" when
// the type is one this generator has no literal for.
func literalFor(r *rand.Rand, t string) string {
	switch {
	case t == "string":
		return fmt.Sprintf("%q", crdtest.RandomString(r))
	case t == "number":
		return fmt.Sprint(r.IntN(100))
	case t == "bool":
		return "true"
	case strings.HasPrefix(t, "list("), strings.HasPrefix(t, "set("):
		return "[]"
	case strings.HasPrefix(t, "map("):
		return "{}"
	}
	return ""
}

// randomValue is a value of type ty as Terraform's JSON has it. Nulls appear where the API server
// can hold them too: at the top, as optional attributes and within any.
func randomValue(r *rand.Rand, ty cty.Type, depth int) any {
	switch {
	case ty == cty.String:
		return crdtest.RandomString(r)
	case ty == cty.Number:
		if r.IntN(2) == 0 {
			return float64(r.IntN(2000) - 1000)
		}
		return float64(r.IntN(1000)) / 8
	case ty == cty.Bool:
		return r.IntN(2) == 0
	case ty == cty.DynamicPseudoType:
		return crdtest.RandomJSON(r, depth)
	case ty.IsListType():
		out := []any{}
		for range elements(r, ty) {
			out = append(out, randomValue(r, ty.ElementType(), depth-1))
		}
		return out
	case ty.IsSetType():
		out, seen := []any{}, map[string]bool{}
		for range elements(r, ty) {
			e := randomValue(r, ty.ElementType(), depth-1)
			// A set's elements are distinct; and Terraform's JSON of a set of strings is sorted
			// and normalized, so it never holds two spellings of one string.
			raw, _ := json.Marshal(e)
			key := string(raw)
			if s, ok := e.(string); ok {
				key = cty.StringVal(s).AsString()
			}
			if !seen[key] {
				seen[key] = true
				out = append(out, e)
			}
		}
		return out
	case ty.IsMapType():
		out, seen := map[string]any{}, map[string]bool{}
		for range elements(r, ty) {
			// Terraform refuses keys that are equal once normalized.
			k := crdtest.RandomString(r)
			if n := cty.StringVal(k).AsString(); !seen[n] {
				seen[n] = true
				out[k] = randomValue(r, ty.ElementType(), depth-1)
			}
		}
		return out
	case ty.IsTupleType():
		out := []any{}
		for _, et := range ty.TupleElementTypes() {
			out = append(out, randomValue(r, et, depth-1))
		}
		return out
	case ty.IsObjectType():
		out := map[string]any{}
		for name, at := range ty.AttributeTypes() {
			if !ty.AttributeOptional(name) {
				out[name] = randomValue(r, at, depth-1)
				continue
			}
			switch r.IntN(3) {
			case 0:
			case 1:
				out[name] = nil
			default:
				out[name] = randomValue(r, at, depth-1)
			}
		}
		return out
	}
	panic("no value for " + ty.FriendlyName())
}

// elements is how many elements to make for collection type ty. The elements of a collection
// have one type in Terraform, so where they include any, values of any would have to agree: one
// element is made at most.
func elements(r *rand.Rand, ty cty.Type) int {
	if ty.ElementType().HasDynamicTypes() {
		return r.IntN(2)
	}
	return r.IntN(4)
}
