package validation

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/modkind/modkind/crd/internal/crdtest"
	"github.com/modkind/modkind/module"
)

// TestSetSubset checks the translation of setintersection(list, x) == x on values next to its
// edges: each value is judged by the rule and by Terraform's own functions (cty's), and both must
// say what the case wants.
func TestSetSubset(t *testing.T) {
	const kelvinKey = "Unwrap\u212aey" // KELVIN SIGN, whose normal form is K
	cases := []struct {
		reason, tyExpr, condition string
		value                     any
		wantExact                 bool
		want                      bool
	}{
		{reason: "Every element among the list's.", tyExpr: "set(string)", condition: `setintersection(["Get", "UnwrapKey"], var.x) == var.x`, value: []any{"Get", "UnwrapKey"}, wantExact: true, want: true},
		{reason: "The empty set is its own intersection with anything.", tyExpr: "set(string)", condition: `setintersection(["Get", "UnwrapKey"], var.x) == var.x`, value: []any{}, wantExact: true, want: true},
		{reason: "One element outside the list makes the intersection smaller.", tyExpr: "set(string)", condition: `setintersection(["Get", "UnwrapKey"], var.x) == var.x`, value: []any{"Get", "List"}, wantExact: true, want: false},
		{reason: "Terraform compares strings exactly, case included.", tyExpr: "set(string)", condition: `setintersection(["Get", "UnwrapKey"], var.x) == var.x`, value: []any{"get"}, wantExact: true, want: false},
		{reason: "A set's strings are in NFC: KELVIN SIGN is K, so UnwrapKey with it is in the list.", tyExpr: "set(string)", condition: `setintersection(["Get", "UnwrapKey"], var.x) == var.x`, value: []any{kelvinKey}, wantExact: true, want: true},
		{reason: "A combining mark after the last letter makes another string, in NFC too.", tyExpr: "set(string)", condition: `setintersection(["Get", "UnwrapKey"], var.x) == var.x`, value: []any{"Get\u0301"}, wantExact: true, want: false},
		{reason: "The arguments and the sides in the other order.", tyExpr: "set(string)", condition: `var.x == setintersection(var.x, ["Get", "UnwrapKey"])`, value: []any{"List"}, wantExact: true, want: false},
		{reason: "!= holds where an element is outside the list.", tyExpr: "set(string)", condition: `setintersection(["Get"], var.x) != var.x`, value: []any{"Get", "List"}, wantExact: true, want: true},
		{reason: "!= fails where every element is in the list.", tyExpr: "set(string)", condition: `setintersection(["Get"], var.x) != var.x`, value: []any{"Get"}, wantExact: true, want: false},
		{reason: "Within a for over a map of objects, an optional set with a default.", tyExpr: "map(object({ p = optional(set(string), []) }))", condition: `alltrue([for _, v in var.x : setintersection(["Get"], v.p) == v.p])`, value: map[string]any{"a": map[string]any{"p": []any{"Get"}}, "b": map[string]any{}}, wantExact: true, want: true},
		{reason: "Within a for, one object's element outside the list.", tyExpr: "map(object({ p = optional(set(string), []) }))", condition: `alltrue([for _, v in var.x : setintersection(["Get"], v.p) == v.p])`, value: map[string]any{"a": map[string]any{"p": []any{"Get"}}, "b": map[string]any{"p": []any{"Got"}}}, wantExact: true, want: false},
	}
	for _, c := range cases {
		v := module.Variable{Name: "x", Nullable: false, Validations: []module.Validation{{Condition: c.condition, Pos: "main.tf:1"}}}
		v.Type, v.TypeDefaults = crdtest.ParseType(t, c.tyExpr)
		tr := translateValidation(v, v.Validations[0])
		x, err := terraformValue(v, c.value)
		if err != nil {
			t.Fatalf("%s: %v", c.reason, err)
		}
		field, ok := newFieldMaker(t, v).field(c.value)
		if !ok {
			t.Fatalf("%s: the field's schema refuses %v", c.reason, c.value)
		}
		got := struct{ Exact, Terraform, Rule bool }{tr.exact, terraformAccepts(v, v.Validations[0], x), tr.p != nil && accepts(tr.p, field)}
		want := struct{ Exact, Terraform, Rule bool }{c.wantExact, c.want, c.want}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("\n%s\n%s with %v (-want +got):\n%s", c.reason, c.condition, c.value, diff)
		}
	}
}

// TestSetSubsetLeftOut checks what setSubset leaves to Terraform, and why.
func TestSetSubsetLeftOut(t *testing.T) {
	cases := []struct{ reason, tyExpr, condition, dropped string }{
		{reason: "Terraform's == between the set setintersection returns and a list is false, whatever they hold.", tyExpr: "list(string)", condition: `setintersection(["Get"], var.x) == var.x`, dropped: "compared with a list of string"},
		{reason: "The intersection compared with another value than its argument.", tyExpr: "object({ a = set(string), b = set(string) })", condition: `setintersection(["Get"], var.x.a) == var.x.b`, dropped: "compared with something other than one of its arguments"},
		{reason: "Two values of the variable, no constant list.", tyExpr: "object({ a = set(string), b = set(string) })", condition: `setintersection(var.x.a, var.x.b) == var.x.b`, dropped: "of two variables' values"},
	}
	for _, c := range cases {
		v := module.Variable{Name: "x", Validations: []module.Validation{{Condition: c.condition, Pos: "main.tf:1"}}}
		v.Type, v.TypeDefaults = crdtest.ParseType(t, c.tyExpr)
		tr := translateValidation(v, v.Validations[0])
		got := strings.Join(tr.dropped, "; ")
		if diff := cmp.Diff(struct{ Exact, LeftOut bool }{false, true}, struct{ Exact, LeftOut bool }{tr.exact, strings.Contains(got, c.dropped)}); diff != "" {
			t.Errorf("\n%s\n%s: want it left to Terraform because it is %q, left out: %q (-want +got):\n%s", c.reason, c.condition, c.dropped, got, diff)
		}
	}
}

// TestSetIntersectionTerraform checks with terraform itself the facts setSubset rests on: a set's
// strings are compared in NFC (KELVIN SIGN is K), and setintersection() compared with a list is
// false whatever the list holds, which is why lists are left to Terraform.
func TestSetIntersectionTerraform(t *testing.T) {
	tf := crdtest.Terraform(t)
	version := terraformVersion(t, tf)
	src := `
variable "set" {
  type     = set(string)
  nullable = false
  validation {
    condition     = setintersection(["Get", "UnwrapKey"], var.set) == var.set
    error_message = "only Get and UnwrapKey"
  }
}
variable "list" {
  type     = list(string)
  nullable = false
  validation {
    condition     = setintersection(["Get", "UnwrapKey"], var.list) == var.list
    error_message = "only Get and UnwrapKey"
  }
}
`
	decls := declarationsOf(t, []byte(src), crdtest.InspectSource(t, src))
	cases := []struct {
		reason, decl, raw string
		want              tfAnswer
	}{
		{reason: "Elements of the list pass.", decl: "set", raw: `["Get","UnwrapKey"]`, want: ""},
		{reason: "The empty set passes.", decl: "set", raw: `[]`, want: ""},
		{reason: "A duplicate is one element of the set.", decl: "set", raw: `["Get","Get"]`, want: ""},
		{reason: "KELVIN SIGN is K in NFC.", decl: "set", raw: `["Unwrap\u212aey"]`, want: ""},
		{reason: "A combining mark makes another string.", decl: "set", raw: `["Get\u0301"]`, want: "0"},
		{reason: "Another case is another string.", decl: "set", raw: `["get"]`, want: "0"},
		{reason: "A list is never equal to a set: even its elements from the list fail.", decl: "list", raw: `["Get"]`, want: "0"},
		{reason: "Nor is the empty list.", decl: "list", raw: `[]`, want: "0"},
	}
	qs := map[string]tfQuestion{}
	for _, c := range cases {
		q := tfQuestion{decl: decls[c.decl], raw: c.raw}
		qs[q.key(version)] = q
	}
	got := terraformDecides(t, tf, version, qs)
	for _, c := range cases {
		q := tfQuestion{decl: decls[c.decl], raw: c.raw}
		if diff := cmp.Diff(c.want, got[q.key(version)]); diff != "" {
			t.Errorf("\n%s\nvar.%s = %s: terraform's answer (the indexes of the blocks that refuse it) (-want +got):\n%s", c.reason, c.decl, c.raw, diff)
		}
	}
}
