package fields

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/zclconf/go-cty/cty"

	"github.com/modkind/modkind/module"
)

const (
	errFmtWantObject = "%s: want an object, got %T"
	errFmtWantMap    = "%s: want a map, got %T"
	errFmtWantList   = "%s: want a list, got %T"
	// A value written in the spec names the attribute its type lacks; CheckType, which checks
	// values read from Secrets, never does (errFmtUndeclared).
	errFmtUnknownAttribute = "%s: unknown attribute %q"
)

// KeyPath is the path of the i-th (in sorted order) of n keys of the map at path, as errors name
// it: never by the key, which is a value and may have been read from a Secret.
func KeyPath(path string, i, n int) string {
	return fmt.Sprintf("%s[<key %d of %d>]", path, i+1, n)
}

// ToTerraform converts a field value of the generated kind into the value Terraform expects for
// type ty: object attributes get their Terraform names back; map keys, which are data, do not.
func ToTerraform(v any, ty cty.Type) (any, error) {
	return convert("", v, ty, toTerraform)
}

// FromTerraform converts a Terraform value of type ty into the shape of the generated kind's
// field.
func FromTerraform(v any, ty cty.Type) (any, error) {
	return convert("", v, ty, toField)
}

type direction bool

const (
	toTerraform direction = true
	toField     direction = false
)

func convert(path string, v any, ty cty.Type, dir direction) (any, error) {
	if v == nil || ty == cty.DynamicPseudoType || ty.IsPrimitiveType() {
		return v, nil
	}
	switch {
	case ty.IsObjectType():
		return convertObject(path, v, ty, dir)
	case ty.IsMapType():
		in, ok := v.(map[string]any)
		if !ok {
			return nil, errors.Errorf(errFmtWantMap, Where(path), v)
		}
		out := make(map[string]any, len(in))
		keys := slices.Sorted(maps.Keys(in))
		for i, k := range keys {
			c, err := convert(KeyPath(path, i, len(keys)), in[k], ty.ElementType(), dir)
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		return out, nil
	case ty.IsListType(), ty.IsSetType(), ty.IsTupleType():
		in, ok := v.([]any)
		if !ok {
			return nil, errors.Errorf(errFmtWantList, Where(path), v)
		}
		out := make([]any, len(in))
		for i, e := range in {
			et := cty.DynamicPseudoType
			switch {
			case ty.IsTupleType():
				if ets := ty.TupleElementTypes(); i < len(ets) {
					et = ets[i]
				}
			default:
				et = ty.ElementType()
			}
			c, err := convert(fmt.Sprintf("%s[%d]", path, i), e, et, dir)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	}
	return v, nil
}

// convertObject converts an object's attributes, renaming each between the field's name and
// the variable's attribute name in the direction dir.
func convertObject(path string, v any, ty cty.Type, dir direction) (any, error) {
	in, ok := v.(map[string]any)
	if !ok {
		return nil, errors.Errorf(errFmtWantObject, Where(path), v)
	}
	attrs := ty.AttributeTypes()
	names := make([]string, 0, len(attrs))
	for n := range attrs {
		names = append(names, n)
	}
	field, err := Names(Where(path), names)
	if err != nil {
		return nil, err
	}
	rename := map[string]string{} // key in v → key in the result
	for n, f := range field {
		if dir == toTerraform {
			rename[f] = n
		} else {
			rename[n] = f
		}
	}
	out := make(map[string]any, len(in))
	for _, k := range slices.Sorted(maps.Keys(in)) {
		to, ok := rename[k]
		if !ok {
			return nil, errors.Errorf(errFmtUnknownAttribute, Where(path), k)
		}
		tfName := to
		if dir == toField {
			tfName = k
		}
		c, err := convert(path+"."+k, in[k], attrs[tfName], dir)
		if err != nil {
			return nil, err
		}
		out[to] = c
	}
	return out, nil
}

// CtyJSON renders a Terraform value as the JSON of the field that holds it. Null optional
// attributes are left out: the API server refuses a default that holds null for a field that is
// not nullable, and an absent field gets its own default, as a null attribute does in Terraform.
// Null required attributes stay: their fields are required and nullable.
func CtyJSON(v cty.Value, ty cty.Type) ([]byte, error) {
	conv, err := module.GoValue(v)
	if err != nil {
		return nil, err
	}
	field, err := FromTerraform(WithoutNullAttributes(conv, ty), ty)
	if err != nil {
		return nil, err
	}
	return json.Marshal(field)
}

// WithoutNullAttributes drops the null optional attributes of the objects within v, a value of
// type ty. A null required attribute is kept: the schema requires its field, and takes null.
func WithoutNullAttributes(v any, ty cty.Type) any {
	switch {
	case ty.IsObjectType():
		in, ok := v.(map[string]any)
		if !ok {
			return v
		}
		out := make(map[string]any, len(in))
		for k, e := range in {
			switch {
			case e == nil && ty.HasAttribute(k) && !ty.AttributeOptional(k):
				out[k] = nil
			case e == nil:
			case ty.HasAttribute(k):
				out[k] = WithoutNullAttributes(e, ty.AttributeType(k))
			default:
				out[k] = e
			}
		}
		return out
	case ty.IsMapType():
		if in, ok := v.(map[string]any); ok {
			out := make(map[string]any, len(in))
			for k, e := range in {
				out[k] = WithoutNullAttributes(e, ty.ElementType())
			}
			return out
		}
	case ty.IsListType(), ty.IsSetType(), ty.IsTupleType():
		if in, ok := v.([]any); ok {
			out := make([]any, len(in))
			for i, e := range in {
				et := cty.DynamicPseudoType
				if ty.IsTupleType() {
					if ets := ty.TupleElementTypes(); i < len(ets) {
						et = ets[i]
					}
				} else {
					et = ty.ElementType()
				}
				out[i] = WithoutNullAttributes(e, et)
			}
			return out
		}
	}
	return v
}

// ChildDefaults are the defaults within attr of an object type with defaults d, or within the
// elements of a collection type when attr is "".
func ChildDefaults(d *typeexpr.Defaults, attr string) *typeexpr.Defaults {
	if d == nil {
		return nil
	}
	if attr == "" {
		// Collections keep their element defaults under the empty key.
		return d.Children[""]
	}
	return d.Children[attr]
}
