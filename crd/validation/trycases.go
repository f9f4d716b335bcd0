package validation

import (
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// Where try(condition, true) holds.
//
// try(c, true) holds where c holds and where c errs. Within c, the values the API server may lack
// are optional attributes, which Terraform reads as null: c errs where it reads an attribute of a
// null object, and where a null is an operand of anything but == and != (a condition, an order
// comparison, a function's argument); can() catches every error of its argument. So c errs only
// where one of the optional attributes it reads that way is unset, and the rule is c's rule or the
// absence of one of those.
//
// contains() is the exception among the functions c may call: terraform 1.11's errs on a null
// value, later ones find it in no list, so a null it is given makes the rule lenient, not exact.
//
// That is exact where both readings of || and && agree on such an absence: Terraform before 1.12
// evaluates every operand, so a read that errs makes c err; later versions (and CEL) skip the
// right operand of a false && and of a true ||, so c may be false without reaching the read. The
// rule is exact only where, for every such attribute unset, c errs or holds in the later reading
// too (see errsOrHolds).

// callNeverErrs says which functions erringReads lets c call: those that never err on values of their
// parameters' types (a null is not one), and floor and ceil, which never err on a number.
func callNeverErrs(name string) bool {
	return failsafe[name] || name == "floor" || name == "ceil"
}

// tryTrue translates try(c, true), of which inner is c's translation.
func (t *translator) tryTrue(e *hclsyntax.FunctionCallExpr, inner translated) translated {
	all, why := t.erringReads(e.Args[0], false)
	if why != "" {
		return t.untranslated(why, e)
	}
	exact := true
	for _, o := range all {
		exact = exact && t.errsOrHolds(e.Args[0], o)
	}
	if exact && !inner.exact && len(all) > 0 {
		// inner may be inexact only where an attribute of all is unset, where c errs and the
		// rule holds: c's translation where all are set says.
		inner.exact = t.exactWhereSet(e.Args[0], all)
	}
	exact = exact && !t.nullSought(e.Args[0])
	inner.exact = inner.exact && exact
	// Keep the innermost of nested optional terms: has() of the inner tests the outer too.
	for _, o := range all {
		if !slices.ContainsFunc(all, func(p *term) bool { return p != o && strings.HasPrefix(p.expr, o.expr+".") }) {
			inner = or(translated{p: absent(o), exact: exact}, inner)
		}
	}
	return inner
}

// exactWhereSet reports whether c's translation is exact for the values where the optional terms
// set are set: translated with them taken as required attributes.
func (t *translator) exactWhereSet(c hclsyntax.Expression, set []*term) bool {
	u := *t
	u.assumed = map[string]bool{}
	for _, o := range set {
		u.assumed[o.expr] = true
	}
	u.celVars = maps.Clone(t.celVars)
	return u.translate(c, false).exact
}

// erringReads lists the optional terms whose absence makes e err where e is evaluated, sorted by
// their CEL; nullSafe says e's value is an operand of == or !=, where null is no error.
func (t *translator) erringReads(e hclsyntax.Expression, nullSafe bool) ([]*term, string) {
	var out []*term
	add := func(ts []*term) {
		for _, o := range ts {
			if !slices.ContainsFunc(out, func(p *term) bool { return p.expr == o.expr }) {
				out = append(out, o)
			}
		}
	}
	var sub func(x hclsyntax.Expression, nullSafe bool) string
	sub = func(x hclsyntax.Expression, nullSafe bool) string {
		ts, why := t.erringReads(x, nullSafe)
		add(ts)
		return why
	}
	var why string
	switch x := e.(type) {
	case *hclsyntax.ParenthesesExpr:
		why = sub(x.Expression, nullSafe)
	case *hclsyntax.LiteralValueExpr:
	case *hclsyntax.TemplateExpr:
		for _, part := range x.Parts {
			why = orReason(why, sub(part, false))
		}
	case *hclsyntax.TemplateWrapExpr:
		why = sub(x.Wrapped, false)
	case *hclsyntax.UnaryOpExpr:
		why = sub(x.Val, false)
	case *hclsyntax.BinaryOpExpr:
		safe := x.Op == hclsyntax.OpEqual || x.Op == hclsyntax.OpNotEqual
		why = orReason(sub(x.LHS, safe), sub(x.RHS, safe))
	case *hclsyntax.ConditionalExpr:
		// HCL reports the errors of the branch the condition picks only: where it tests x for
		// null, the other branch never reads x as null.
		why = sub(x.Condition, false)
		if subject, isNull, ok := t.nullTest(x.Condition); ok {
			nonNull := x.FalseResult
			if !isNull {
				nonNull = x.TrueResult
			}
			for _, branch := range []hclsyntax.Expression{x.TrueResult, x.FalseResult} {
				ts, w := t.erringReads(branch, nullSafe)
				if branch == nonNull {
					ts = slices.DeleteFunc(ts, func(o *term) bool { return o.expr == subject.expr })
				}
				add(ts)
				why = orReason(why, w)
			}
		} else {
			why = orReason(why, orReason(sub(x.TrueResult, nullSafe), sub(x.FalseResult, nullSafe)))
		}
	case *hclsyntax.TupleConsExpr:
		for _, item := range x.Exprs {
			why = orReason(why, sub(item, false))
		}
	case *hclsyntax.FunctionCallExpr:
		switch {
		case x.Name == "can" && len(x.Args) == 1:
			// can() is false where its argument errs.
		case !callNeverErrs(x.Name):
			why = "a call of " + x.Name + ", which may err"
		default:
			for _, a := range x.Args {
				why = orReason(why, sub(a, false))
			}
		}
	case *hclsyntax.ScopeTraversalExpr, *hclsyntax.RelativeTraversalExpr:
		s, w := t.term(x)
		if s == nil {
			return nil, w
		}
		for _, o := range s.optional {
			// Reading an attribute of an unset object errs; an unset attribute is null, which
			// errs unless it is compared.
			if o.expr != s.expr || !nullSafe {
				add([]*term{o})
			}
		}
	case *hclsyntax.ForExpr:
		elems, ok := t.listed(x)
		if !ok || x.KeyVar != "" {
			why = "a for expression in try() over other than a list written out"
			break
		}
		for _, item := range elems {
			// An element may be null; what holds it may not.
			why = orReason(why, sub(item, true))
			inner, w := t.binding(x.ValVar, item)
			if inner == nil {
				why = orReason(why, w)
				continue
			}
			for _, part := range []hclsyntax.Expression{x.ValExpr, x.CondExpr} {
				if part != nil {
					ts, w := inner.erringReads(part, false)
					add(ts)
					why = orReason(why, w)
				}
			}
		}
	default:
		why = otherForm
	}
	if why != "" {
		return nil, why
	}
	slices.SortFunc(out, func(a, b *term) int { return strings.Compare(a.expr, b.expr) })
	return out, ""
}

// errsOrHolds reports whether e, where o is unset, errs or holds in the reading that skips the
// right operand of a false && and of a true ||.
func (t *translator) errsOrHolds(e hclsyntax.Expression, o *term) bool {
	switch x := unwrap(e).(type) {
	case *hclsyntax.BinaryOpExpr:
		if s, isNull, ok := t.nullTest(x); ok && isNull && s.expr == o.expr {
			// o == null holds where o is unset.
			return true
		}
		switch x.Op {
		case hclsyntax.OpLogicalOr:
			// A left side that errs or holds decides; else the right side does.
			return t.errsOrHolds(x.LHS, o) || t.errsOrHolds(x.RHS, o)
		case hclsyntax.OpLogicalAnd:
			// A left side that holds hands over to the right; one that is false does not.
			return t.errs(x.LHS, o) || t.errsOrHolds(x.LHS, o) && t.errsOrHolds(x.RHS, o)
		}
	}
	return t.errs(e, o)
}

// nullTest returns the term x of x == null (isNull) or x != null.
func (t *translator) nullTest(e hclsyntax.Expression) (subject *term, equal, ok bool) {
	cmp, isCmp := unwrap(e).(*hclsyntax.BinaryOpExpr)
	if !isCmp || cmp.Op != hclsyntax.OpEqual && cmp.Op != hclsyntax.OpNotEqual {
		return nil, false, false
	}
	x := unwrap(cmp.LHS)
	if isNull(x) {
		x = unwrap(cmp.RHS)
	} else if !isNull(cmp.RHS) {
		return nil, false, false
	}
	s, _ := t.term(x)
	return s, cmp.Op == hclsyntax.OpEqual, s != nil
}

// errs reports whether e surely errs where o is unset, in either reading of || and &&: its first
// operand, which both evaluate, errs.
func (t *translator) errs(e hclsyntax.Expression, o *term) bool {
	switch x := unwrap(e).(type) {
	case *hclsyntax.BinaryOpExpr:
		if x.Op == hclsyntax.OpLogicalOr || x.Op == hclsyntax.OpLogicalAnd {
			return t.errs(x.LHS, o)
		}
	case *hclsyntax.UnaryOpExpr:
		return t.errs(x.Val, o)
	}
	if shortCircuits(e) {
		// Within, the readings may differ on what is evaluated.
		return false
	}
	reads, why := t.erringReads(unwrap(e), false)
	return why == "" && slices.ContainsFunc(reads, func(p *term) bool { return p.expr == o.expr })
}

// shortCircuits reports whether e holds an && , || or conditional, whose operands Terraform's
// readings may evaluate differently.
func shortCircuits(e hclsyntax.Expression) bool {
	found := false
	hclsyntax.VisitAll(e, func(n hclsyntax.Node) hcl.Diagnostics {
		switch n := n.(type) {
		case *hclsyntax.BinaryOpExpr:
			found = found || n.Op == hclsyntax.OpLogicalAnd || n.Op == hclsyntax.OpLogicalOr
		case *hclsyntax.ConditionalExpr:
			found = true
		}
		return nil
	})
	return found
}

// nullSought reports whether c asks contains() whether a list holds an attribute that may be
// null: terraform 1.11's contains errs on null (try() holds), later ones say false (it fails).
func (t *translator) nullSought(c hclsyntax.Expression) bool {
	found := false
	hclsyntax.VisitAll(c, func(n hclsyntax.Node) hcl.Diagnostics {
		call, ok := n.(*hclsyntax.FunctionCallExpr)
		if !ok || call.Name != "contains" || len(call.Args) != 2 {
			return nil
		}
		if s, _ := t.term(unwrap(call.Args[1])); s == nil || len(s.optional) > 0 && s.optional[len(s.optional)-1].expr == s.expr {
			found = true
		}
		return nil
	})
	return found
}
