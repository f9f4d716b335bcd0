package validation

import (
	"slices"

	"github.com/zclconf/go-cty/cty"
)

// hasCELType reports whether the API server gives values of type ty a CEL type: not for any, nor
// for what holds values of type any where a schema needs one type.
func hasCELType(ty cty.Type) bool {
	switch {
	case ty.IsPrimitiveType():
		return true
	case ty.IsListType(), ty.IsSetType(), ty.IsMapType():
		return hasCELType(ty.ElementType())
	case ty.IsTupleType():
		ets := ty.TupleElementTypes()
		return len(ets) > 0 && !slices.ContainsFunc(ets, func(et cty.Type) bool { return !et.Equals(ets[0]) }) && hasCELType(ets[0])
	case ty.IsObjectType():
		return true
	}
	return false
}
