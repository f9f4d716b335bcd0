package validation

import (
	"maps"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// A for expression over a list written out, [for v in [a, b, c] : f(v)], is f of each element:
// the rule is the conjunction (alltrue) or disjunction (anytrue) of the body translated with v
// standing for each element's term.

// listed returns the elements of a for expression's list when it is written out.
func (t *translator) listed(f *hclsyntax.ForExpr) ([]hclsyntax.Expression, bool) {
	tuple, ok := unwrap(f.CollExpr).(*hclsyntax.TupleConsExpr)
	if !ok {
		return nil, false
	}
	return tuple.Exprs, true
}

// unrolled translates a quantifier over a for expression whose list is written out.
func (t *translator) unrolled(e hcl.Expression, f *hclsyntax.ForExpr, elems []hclsyntax.Expression, all bool, body func(hclsyntax.Expression) translated) translated {
	if f.KeyVar != "" {
		return t.untranslated("a for expression that uses the index", e)
	}
	combine := and
	if !all {
		combine = or
	}
	out := translated{p: constPred(all), exact: true}
	for _, x := range elems {
		inner, why := t.binding(f.ValVar, x)
		if inner == nil {
			return t.untranslated(why, e)
		}
		saved := *t
		*t = *inner
		b := body(f.ValExpr)
		if f.CondExpr != nil {
			// [for v in l : c if f]: all of !f || c, or some f && c.
			if all {
				b = or(t.translate(f.CondExpr, true), b)
			} else {
				b = and(t.translate(f.CondExpr, false), b)
			}
		}
		*t = saved
		out = combine(out, b)
	}
	return out
}

// binding is t with the loop variable v standing for the term of x, within a quantifier.
func (t *translator) binding(v string, x hclsyntax.Expression) (*translator, string) {
	s, why := t.term(unwrap(x))
	if s == nil {
		return nil, why
	}
	inner := *t
	inner.scope = maps.Clone(t.scope)
	inner.scope[v] = s
	inner.inQuant = true
	return &inner, ""
}
