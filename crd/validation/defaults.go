package validation

import (
	"encoding/json"
	"strings"

	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/zclconf/go-cty/cty"

	"github.com/modkind/modkind/kind/fields"
	"github.com/modkind/modkind/module"
)

// The module's defaults against what the schema would check.
//
// The API server refuses a whole CRD whose defaults fail its rules or checks, and fills defaults
// in where an instance leaves fields out: a rule, bound or check is used only where the variable's
// default, and the defaults of its optional attributes, pass it.

// defaultsWithin reports whether every value at path within v's default, and every default of an
// optional attribute there, satisfies ok.
func defaultsWithin(v module.Variable, path string, ok func(any) bool) bool {
	if v.HasDefault && v.Default != nil {
		d, err := fields.FromTerraform(fields.WithoutNullAttributes(v.Default, v.Type), v.Type)
		if err != nil {
			return false
		}
		for _, x := range valuesAt(d, path) {
			if !ok(x) {
				return false
			}
		}
	}
	return typeDefaultsWithin(v.TypeDefaults, v.Type, path, ok)
}

func typeDefaultsWithin(d *typeexpr.Defaults, ty cty.Type, path string, ok func(any) bool) bool {
	if d == nil || path == "" {
		return true
	}
	if strings.HasPrefix(path, "[]") || strings.HasPrefix(path, "{}") {
		if !ty.IsCollectionType() {
			return true
		}
		return typeDefaultsWithin(d.Children[""], ty.ElementType(), path[2:], ok)
	}
	name, rest := path[1:], ""
	if end := strings.IndexAny(path[1:], ".[{"); end >= 0 {
		name, rest = path[1:end+1], path[end+1:]
	}
	if !ty.IsObjectType() {
		return true
	}
	for attr, at := range ty.AttributeTypes() {
		if fields.Name(attr) != name {
			continue
		}
		if dv, has := d.DefaultValues[attr]; has && !dv.IsNull() {
			raw, err := fields.CtyJSON(dv, at)
			if err != nil {
				return false
			}
			var x any
			if err := json.Unmarshal(raw, &x); err != nil {
				return false
			}
			for _, y := range valuesAt(x, rest) {
				if !ok(y) {
					return false
				}
			}
		}
		return typeDefaultsWithin(d.Children[attr], at, rest, ok)
	}
	return true
}

// valuesAt are the values at path (see term.path) within the field value x.
func valuesAt(x any, path string) []any {
	if x == nil {
		return nil
	}
	switch {
	case path == "":
		return []any{x}
	case strings.HasPrefix(path, "[]"):
		l, _ := x.([]any)
		var out []any
		for _, e := range l {
			out = append(out, valuesAt(e, path[2:])...)
		}
		return out
	case strings.HasPrefix(path, "{}"):
		m, _ := x.(map[string]any)
		var out []any
		for _, e := range m {
			out = append(out, valuesAt(e, path[2:])...)
		}
		return out
	}
	name, rest := path[1:], ""
	if end := strings.IndexAny(path[1:], ".[{"); end >= 0 {
		name, rest = path[1:end+1], path[end+1:]
	}
	m, _ := x.(map[string]any)
	return valuesAt(m[name], rest)
}

// defaultPasses reports whether the variable's default, as the API server holds it, satisfies p.
func defaultPasses(v module.Variable, p pred) bool {
	if !v.HasDefault || v.Default == nil {
		return true
	}
	d, err := fields.FromTerraform(fields.WithoutNullAttributes(v.Default, v.Type), v.Type)
	if err != nil {
		return false
	}
	return accepts(p, d)
}
