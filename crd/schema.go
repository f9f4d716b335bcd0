package crd

import (
	"slices"
	"sort"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/zclconf/go-cty/cty"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"

	"github.com/modkind/modkind/kind/fields"
)

const (
	errFmtUnsupportedType = "%s: unsupported type %s"
	errFmtDefault         = "%s.%s: default"
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
		items, err := typeSchema(path+"[]", ty.ElementType(), fields.ChildDefaults(defaults, ""))
		if err != nil {
			return extv1.JSONSchemaProps{}, err
		}
		s := extv1.JSONSchemaProps{Type: "array", Items: &extv1.JSONSchemaPropsOrArray{Schema: &items}}
		if ty.IsSetType() && ty.ElementType().IsPrimitiveType() {
			s.XListType = ptr.To("set")
		}
		return s, nil
	case ty.IsMapType():
		values, err := typeSchema(path+"{}", ty.ElementType(), fields.ChildDefaults(defaults, ""))
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
	return extv1.JSONSchemaProps{}, errors.Errorf(errFmtUnsupportedType, path, ty.FriendlyName())
}

func objectSchema(path string, ty cty.Type, defaults *typeexpr.Defaults) (extv1.JSONSchemaProps, error) {
	attrs := ty.AttributeTypes()
	names := make([]string, 0, len(attrs))
	for n := range attrs {
		names = append(names, n)
	}
	sort.Strings(names)
	field, err := fields.Names(fields.Where(path), names)
	if err != nil {
		return extv1.JSONSchemaProps{}, err
	}
	s := extv1.JSONSchemaProps{Type: "object", Properties: map[string]extv1.JSONSchemaProps{}}
	for _, n := range names {
		p, err := typeSchema(path+"."+n, attrs[n], fields.ChildDefaults(defaults, n))
		if err != nil {
			return extv1.JSONSchemaProps{}, err
		}
		if !ty.AttributeOptional(n) {
			// Terraform wants a required attribute present but takes null for its value: the
			// field must be given, and may be null. Nullable keeps an explicit null, which the
			// API server would otherwise prune before it checks required fields.
			s.Required = append(s.Required, field[n])
			p.Nullable = true
		} else if defaults != nil {
			if d, ok := defaults.DefaultValues[n]; ok && !d.IsNull() {
				raw, err := fields.CtyJSON(d, attrs[n])
				if err != nil {
					return extv1.JSONSchemaProps{}, errors.Wrapf(err, errFmtDefault, path, n)
				}
				p.Default = &extv1.JSON{Raw: raw}
			}
		}
		s.Properties[field[n]] = p
	}
	return s, nil
}
