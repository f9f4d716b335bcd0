package fields

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/zclconf/go-cty/cty"

	"github.com/modkind/modkind/module"
)

// SuffixFrom ends the field that names where a non-sensitive variable's value comes from instead
// of the spec: vpc_id's value is field vpcId, its reference vpcIdFrom.
const SuffixFrom = "From"

// From is the field of a non-sensitive variable that names where its value comes from.
func From(variable string) string { return Name(variable) + SuffixFrom }

// The sources a <field>From may name: exactly one of them.
const (
	// FromInstanceOutput names an output of another instance of a generated kind in the same
	// namespace: apiVersion, kind, name, output.
	FromInstanceOutput = "instanceOutput"
	// FromConfigMapKey names a key of a ConfigMap in the same namespace: name, key.
	FromConfigMapKey = "configMapKeyRef"
	// FromSecretKey names a key of a Secret in the same namespace: name, key.
	FromSecretKey = "secretKeyRef"
)

// FromSources are the sources a <field>From may name, in the order the schema lists them.
var FromSources = []string{FromInstanceOutput, FromConfigMapKey, FromSecretKey}

// ResolvedInputs is the status field that shows which sources an instance's values were last
// applied with: a digest of the resolved values and each source's resourceVersion, never a value.
const ResolvedInputs = "resolvedInputs"

// InputFields maps each variable to the field of its value (its <field>SecretRef when sensitive)
// and each non-sensitive variable to its <field>From, refusing names that would collide: a
// variable vpc_id_from is field vpcIdFrom, which is also vpc_id's reference.
func InputFields(vars []module.Variable) (value, from map[string]string, err error) {
	value, from = map[string]string{}, map[string]string{}
	byField := map[string][]string{}
	for _, v := range vars {
		f := Name(v.Name)
		if v.Sensitive {
			f = SecretRef(v.Name)
		}
		value[v.Name] = f
		byField[f] = append(byField[f], v.Name)
		if !v.Sensitive {
			from[v.Name] = From(v.Name)
			byField[from[v.Name]] = append(byField[from[v.Name]], v.Name+" (its reference)")
		}
	}
	for _, f := range slices.Sorted(maps.Keys(byField)) {
		if ns := byField[f]; len(ns) > 1 {
			slices.Sort(ns)
			return nil, nil, &CollisionError{Where: "variables", Field: f, Names: ns}
		}
	}
	return value, from, nil
}

const (
	errFmtWantString = "%s: want a string, got %s"
	errFmtWantNumber = "%s: want a number, got %s"
	errFmtWantBool   = "%s: want a bool, got %s"
	errFmtMissing    = "%s: missing required attribute %q"
	errFmtTupleLen   = "%s: want %d elements, got %d"
	errFmtWantObj    = "%s: want an object, got %s"
	errFmtWantMapOf  = "%s: want a map, got %s"
	errFmtWantListOf = "%s: want a list, got %s"
	// An object read from a Secret may have keys that are values: the one its type lacks is not
	// named.
	errFmtUndeclared = "%s: has an attribute its type does not declare"
)

// CheckType checks that v, a value in Terraform's shape (as JSON decodes it), is of type ty, as
// the kind's schema checks a value written in the spec. Errors name the path and the types, never
// the value.
func CheckType(v any, ty cty.Type) error { return checkType("", v, ty) }

func checkType(path string, v any, ty cty.Type) error {
	if v == nil || ty == cty.DynamicPseudoType {
		// null is for Terraform to accept or refuse: a variable may be nullable.
		return nil
	}
	switch {
	case ty == cty.String:
		if _, ok := v.(string); !ok {
			return errors.Errorf(errFmtWantString, Where(path), jsonKind(v))
		}
	case ty == cty.Number:
		switch v.(type) {
		case float64, float32, int, int32, int64, json.Number:
		default:
			return errors.Errorf(errFmtWantNumber, Where(path), jsonKind(v))
		}
	case ty == cty.Bool:
		if _, ok := v.(bool); !ok {
			return errors.Errorf(errFmtWantBool, Where(path), jsonKind(v))
		}
	case ty.IsObjectType():
		in, ok := v.(map[string]any)
		if !ok {
			return errors.Errorf(errFmtWantObj, Where(path), jsonKind(v))
		}
		for _, k := range slices.Sorted(maps.Keys(in)) {
			if !ty.HasAttribute(k) {
				return errors.Errorf(errFmtUndeclared, Where(path))
			}
			if err := checkType(path+"."+k, in[k], ty.AttributeType(k)); err != nil {
				return err
			}
		}
		for _, k := range slices.Sorted(maps.Keys(ty.AttributeTypes())) {
			if _, ok := in[k]; !ok && !ty.AttributeOptional(k) {
				return errors.Errorf(errFmtMissing, Where(path), k)
			}
		}
	case ty.IsMapType():
		in, ok := v.(map[string]any)
		if !ok {
			return errors.Errorf(errFmtWantMapOf, Where(path), jsonKind(v))
		}
		keys := slices.Sorted(maps.Keys(in))
		for i, k := range keys {
			if err := checkType(KeyPath(path, i, len(keys)), in[k], ty.ElementType()); err != nil {
				return err
			}
		}
	case ty.IsListType(), ty.IsSetType(), ty.IsTupleType():
		in, ok := v.([]any)
		if !ok {
			return errors.Errorf(errFmtWantListOf, Where(path), jsonKind(v))
		}
		if ty.IsTupleType() && len(in) != len(ty.TupleElementTypes()) {
			return errors.Errorf(errFmtTupleLen, Where(path), len(ty.TupleElementTypes()), len(in))
		}
		for i, e := range in {
			et := cty.DynamicPseudoType
			if ty.IsTupleType() {
				et = ty.TupleElementTypes()[i]
			} else {
				et = ty.ElementType()
			}
			if err := checkType(fmt.Sprintf("%s[%d]", path, i), e, et); err != nil {
				return err
			}
		}
	}
	return nil
}

// jsonKind names the JSON kind of v, for errors that must not quote the value.
func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a bool"
	case float64, float32, int, int32, int64, json.Number:
		return "a number"
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	}
	return "null"
}
