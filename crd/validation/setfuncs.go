package validation

import (
	"strconv"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// setSubset translates setintersection(list, x) == x, and its != form, with the two sides and
// the two arguments in either order, for a constant list and a set x: "x holds only the list's
// values". It reads as alltrue([for e in x : contains(list, e)]), which contains and forAll
// translate: the intersection is x exactly when each element of x is among the list's.
//
// Why only sets: setintersection returns a set, and Terraform's == is false between a set and a
// list, whatever they hold. Terraform normalizes every string of a set to NFC, as contains
// compares NFC forms, so the elements' normal forms are checked either way (stringIn).
func (t *translator) setSubset(e *hclsyntax.BinaryOpExpr, op string, neg bool) (translated, bool) {
	if op != "==" && op != "!=" {
		return translated{}, false
	}
	call, other := setIntersection(unwrap(e.LHS)), unwrap(e.RHS)
	if call == nil {
		call, other = setIntersection(unwrap(e.RHS)), unwrap(e.LHS)
	}
	if call == nil {
		return translated{}, false
	}
	list, set := call.Args[0], unwrap(call.Args[1])
	if !sameExpr(set, other, t.src) {
		list, set = call.Args[1], unwrap(call.Args[0])
	}
	if !sameExpr(set, other, t.src) {
		return t.untranslated("setintersection() compared with something other than one of its arguments", e), true
	}
	if _, ok := constant(list); !ok {
		return t.untranslated("setintersection() of two variables' values", e), true
	}
	s, why := t.term(set)
	if s == nil {
		return t.untranslated(why, e), true
	}
	if !s.ty.IsSetType() {
		return t.untranslated("setintersection() compared with a "+s.ty.FriendlyName(), e), true
	}
	name := t.freshName("element")
	each := &hclsyntax.ScopeTraversalExpr{Traversal: hcl.Traversal{hcl.TraverseRoot{Name: name, SrcRange: e.SrcRange}}, SrcRange: e.SrcRange}
	f := &hclsyntax.ForExpr{
		ValVar:   name,
		CollExpr: set,
		ValExpr: &hclsyntax.FunctionCallExpr{
			Name: "contains", Args: []hclsyntax.Expression{list, each},
			NameRange: call.NameRange, OpenParenRange: call.OpenParenRange, CloseParenRange: call.CloseParenRange,
		},
		SrcRange: e.SrcRange, OpenRange: e.SrcRange, CloseRange: e.SrcRange,
	}
	holds := (op == "==") != neg
	return t.quantifier(f, holds, !holds), true
}

// setIntersection is e when it is a call of setintersection with two arguments.
func setIntersection(e hclsyntax.Expression) *hclsyntax.FunctionCallExpr {
	call, ok := e.(*hclsyntax.FunctionCallExpr)
	if !ok || call.Name != "setintersection" || len(call.Args) != 2 || call.ExpandFinal {
		return nil
	}
	return call
}

// freshName is a name for a loop variable that nothing in scope has.
func (t *translator) freshName(base string) string {
	name := base
	for i := 2; t.scope[name] != nil || name == "var"; i++ {
		name = base + strconv.Itoa(i)
	}
	return name
}
