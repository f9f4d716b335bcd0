package crd

import (
	"fmt"
	"maps"
	"slices"

	"github.com/zclconf/go-cty/cty"
)

// ToTerraform converts a field value of the generated kind into the value Terraform expects for
// type ty: object attributes get their Terraform names back; map keys, which are data, do not.
func ToTerraform(v any, ty cty.Type) (any, error) {
	return convert("", v, ty, toTerraform)
}

// ToField converts a Terraform value of type ty into the shape of the generated kind's field.
func ToField(v any, ty cty.Type) (any, error) {
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
		in, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: want an object, got %T", orRoot(path), v)
		}
		attrs := ty.AttributeTypes()
		names := make([]string, 0, len(attrs))
		for n := range attrs {
			names = append(names, n)
		}
		fields, err := fieldNames(orRoot(path), names)
		if err != nil {
			return nil, err
		}
		rename := map[string]string{} // key in v → key in the result
		for n, f := range fields {
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
				return nil, fmt.Errorf("%s: unknown attribute %q", orRoot(path), k)
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
	case ty.IsMapType():
		in, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: want a map, got %T", orRoot(path), v)
		}
		out := make(map[string]any, len(in))
		for _, k := range slices.Sorted(maps.Keys(in)) {
			c, err := convert(path+"["+k+"]", in[k], ty.ElementType(), dir)
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		return out, nil
	case ty.IsListType(), ty.IsSetType(), ty.IsTupleType():
		in, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("%s: want a list, got %T", orRoot(path), v)
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
