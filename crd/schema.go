package crd

import (
	"encoding/json"
	"fmt"
	"github.com/modkind/modkind/module"
	"slices"
	"sort"

	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/zclconf/go-cty/cty"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"
)

// TypeSchema is the structural OpenAPI schema of values of a Terraform type. Object attributes
// become camelCase properties; optional(T, d) defaults become schema defaults. Types with no
// structural form (any, the elements of a tuple of mixed types) preserve unknown fields at
// exactly that node, so that everything around them is still checked and pruned.
func TypeSchema(ty cty.Type, defaults *typeexpr.Defaults) (extv1.JSONSchemaProps, error) {
	return typeSchema("", ty, defaults)
}

func typeSchema(path string, ty cty.Type, defaults *typeexpr.Defaults) (extv1.JSONSchemaProps, error) {
	switch {
	case ty == cty.String:
		return extv1.JSONSchemaProps{Type: "string"}, nil
	case ty == cty.Number:
		return extv1.JSONSchemaProps{Type: "number"}, nil
	case ty == cty.Bool:
		return extv1.JSONSchemaProps{Type: "boolean"}, nil
	case ty == cty.DynamicPseudoType:
		// null is a value of any type in Terraform; a typed node is nullable only where it is a
		// required attribute or a nullable variable: elsewhere null means "not set" (optional
		// attributes, defaults), which leaving it out says too.
		return extv1.JSONSchemaProps{XPreserveUnknownFields: ptr.To(true), Nullable: true}, nil
	case ty.IsListType(), ty.IsSetType():
		items, err := typeSchema(path+"[]", ty.ElementType(), childDefaults(defaults, ""))
		if err != nil {
			return extv1.JSONSchemaProps{}, err
		}
		s := extv1.JSONSchemaProps{Type: "array", Items: &extv1.JSONSchemaPropsOrArray{Schema: &items}}
		if ty.IsSetType() && ty.ElementType().IsPrimitiveType() {
			s.XListType = ptr.To("set")
		}
		return s, nil
	case ty.IsMapType():
		values, err := typeSchema(path+"{}", ty.ElementType(), childDefaults(defaults, ""))
		if err != nil {
			return extv1.JSONSchemaProps{}, err
		}
		return extv1.JSONSchemaProps{Type: "object", AdditionalProperties: &extv1.JSONSchemaPropsOrBool{Allows: true, Schema: &values}}, nil
	case ty.IsTupleType():
		// A structural schema has one schema for all items of an array: a tuple whose elements
		// share a type gets it, others accept anything in each position.
		ets := ty.TupleElementTypes()
		items := extv1.JSONSchemaProps{XPreserveUnknownFields: ptr.To(true), Nullable: true}
		if len(ets) > 0 && !slices.ContainsFunc(ets, func(et cty.Type) bool { return !et.Equals(ets[0]) }) {
			var err error
			if items, err = typeSchema(path+"[]", ets[0], nil); err != nil {
				return extv1.JSONSchemaProps{}, err
			}
		}
		n := int64(len(ets))
		return extv1.JSONSchemaProps{
			Type:     "array",
			MinItems: ptr.To(n),
			MaxItems: ptr.To(n),
			Items:    &extv1.JSONSchemaPropsOrArray{Schema: &items},
		}, nil
	case ty.IsObjectType():
		return objectSchema(path, ty, defaults)
	}
	return extv1.JSONSchemaProps{}, fmt.Errorf("%s: unsupported type %s", path, ty.FriendlyName())
}

func objectSchema(path string, ty cty.Type, defaults *typeexpr.Defaults) (extv1.JSONSchemaProps, error) {
	attrs := ty.AttributeTypes()
	names := make([]string, 0, len(attrs))
	for n := range attrs {
		names = append(names, n)
	}
	sort.Strings(names)
	fields, err := fieldNames(orRoot(path), names)
	if err != nil {
		return extv1.JSONSchemaProps{}, err
	}
	s := extv1.JSONSchemaProps{Type: "object", Properties: map[string]extv1.JSONSchemaProps{}}
	for _, n := range names {
		p, err := typeSchema(path+"."+n, attrs[n], childDefaults(defaults, n))
		if err != nil {
			return extv1.JSONSchemaProps{}, err
		}
		if !ty.AttributeOptional(n) {
			// Terraform wants a required attribute present but takes null for its value: the
			// field must be given, and may be null. Nullable keeps an explicit null, which the
			// API server would otherwise prune before it checks required fields.
			s.Required = append(s.Required, fields[n])
			p.Nullable = true
		} else if defaults != nil {
			if d, ok := defaults.DefaultValues[n]; ok && !d.IsNull() {
				raw, err := ctyToField(d, attrs[n])
				if err != nil {
					return extv1.JSONSchemaProps{}, fmt.Errorf("%s.%s: default: %w", path, n, err)
				}
				p.Default = &extv1.JSON{Raw: raw}
			}
		}
		s.Properties[fields[n]] = p
	}
	return s, nil
}

func childDefaults(d *typeexpr.Defaults, attr string) *typeexpr.Defaults {
	if d == nil {
		return nil
	}
	if attr == "" {
		// Collections keep their element defaults under the empty key.
		return d.Children[""]
	}
	return d.Children[attr]
}

func orRoot(path string) string {
	if path == "" {
		return "value"
	}
	return path
}

// ctyToField renders a Terraform value as the JSON of the field that holds it. Null optional
// attributes are left out: the API server refuses a default that holds null for a field that is
// not nullable, and an absent field gets its own default, as a null attribute does in Terraform.
// Null required attributes stay: their fields are required and nullable.
func ctyToField(v cty.Value, ty cty.Type) ([]byte, error) {
	conv, err := module.GoValue(v)
	if err != nil {
		return nil, err
	}
	field, err := ToField(withoutNullAttributes(conv, ty), ty)
	if err != nil {
		return nil, err
	}
	return json.Marshal(field)
}

// withoutNullAttributes drops the null optional attributes of the objects within v, a value of
// type ty. A null required attribute is kept: the schema requires its field, and takes null.
func withoutNullAttributes(v any, ty cty.Type) any {
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
				out[k] = withoutNullAttributes(e, ty.AttributeType(k))
			default:
				out[k] = e
			}
		}
		return out
	case ty.IsMapType():
		if in, ok := v.(map[string]any); ok {
			out := make(map[string]any, len(in))
			for k, e := range in {
				out[k] = withoutNullAttributes(e, ty.ElementType())
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
				out[i] = withoutNullAttributes(e, et)
			}
			return out
		}
	}
	return v
}
