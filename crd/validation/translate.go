package validation

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/modkind/modkind/module"
	"github.com/zclconf/go-cty/cty"
)

// How a condition is translated.
//
// The translator walks the condition with the negations pushed down to its leaves (De Morgan's
// laws hold for CEL's and Terraform's three-valued && and ||, and !alltrue is anytrue of the
// negations), so that every part of the rule only has to hold wherever the part of the condition
// it stands for does: each leaf is translated for the polarity it appears in, and a leaf that
// cannot be translated becomes true, which keeps the rule sound. A conditional c ? a : b is read as
// (c && a) || (!c && b), which Terraform's and CEL's three-valued logic agree on. What the leaves
// test are terms (see term.go).

// translateValidation translates one validation block of v.
func translateValidation(v module.Variable, val module.Validation) translated {
	return translateBounded(v, val, nil)
}

// translateBounded translates one validation block of v, whose collections and strings have the
// bounds b.
func translateBounded(v module.Variable, val module.Validation, b *schemaBounds) translated {
	e, diags := hclsyntax.ParseExpression([]byte(val.Condition), "condition", hcl.InitialPos)
	if diags.HasErrors() {
		return translated{p: constPred(true), dropped: []string{"the condition does not parse: " + diags.Error()}}
	}
	switch {
	case v.Sensitive:
		// A sensitive value never reaches the API server inline, so there is nothing to check.
		return untranslated("the variable is sensitive", e, val.Condition)
	case v.Type == cty.DynamicPseudoType:
		return untranslated("the variable's type is any", e, val.Condition)
	case !hasCELType(v.Type):
		return untranslated("the variable's type holds values of type any where CEL needs one type", e, val.Condition)
	}
	for _, ref := range e.Variables() {
		if ref.RootName() != "var" {
			return untranslated("it refers to something other than the variable", e, val.Condition)
		}
		if a, ok := ref[1].(hcl.TraverseAttr); !ok || a.Name != v.Name {
			return untranslated("it refers to another variable", e, val.Condition)
		}
	}
	tr := newTranslator(v.Name, v.Type, v.TypeDefaults, val.Condition, b).translate(e, false)
	tr.p = simplify(tr.p, map[string]bool{})
	return tr
}

// translator translates the conditions of one variable.
type translator struct {
	name string // the variable's name
	src  string // the condition's source
	self *term
	// scope maps the loop variables of the quantifiers around the expression to their terms.
	scope map[string]*term
	// inQuant is set within the body of a quantifier.
	inQuant bool
	// celVars are the CEL names of the loop variables in use.
	celVars map[string]bool
	// assumed are the optional terms taken as set (see exactWhereSet).
	assumed map[string]bool
}

func newTranslator(name string, ty cty.Type, defaults *typeexpr.Defaults, src string, b *schemaBounds) *translator {
	self := &term{expr: "self", ty: ty, get: func(e env) (any, bool) { return e.self, e.self != nil }, bounds: b}
	self.defaults = defaults
	sizeTerm(self)
	return &translator{name: name, src: src, self: self, scope: map[string]*term{}, celVars: map[string]bool{}}
}

func (t *translator) untranslated(why string, e hcl.Expression) translated {
	return untranslated(why, e, t.src)
}

func exactly(p pred) translated { return translated{p: p, exact: true} }

func soundly(p pred) translated { return translated{p: p} }

func (t *translator) translate(e hclsyntax.Expression, neg bool) translated {
	switch e := e.(type) {
	case *hclsyntax.ParenthesesExpr:
		return t.translate(e.Expression, neg)
	case *hclsyntax.TemplateWrapExpr:
		return t.translate(e.Wrapped, neg)
	case *hclsyntax.LiteralValueExpr:
		if e.Val.Type() == cty.Bool && !e.Val.IsNull() {
			return exactly(constPred(e.Val.True() != neg))
		}
	case *hclsyntax.UnaryOpExpr:
		if e.Op == hclsyntax.OpLogicalNot {
			return t.translate(e.Val, !neg)
		}
	case *hclsyntax.BinaryOpExpr:
		switch e.Op {
		case hclsyntax.OpLogicalAnd:
			if neg {
				return or(t.translate(e.LHS, true), t.translate(e.RHS, true))
			}
			if tr, ok := t.prefixed(e); ok {
				return tr
			}
			return and(t.translate(e.LHS, false), t.translate(e.RHS, false))
		case hclsyntax.OpLogicalOr:
			if neg {
				return and(t.translate(e.LHS, true), t.translate(e.RHS, true))
			}
			return or(t.translate(e.LHS, false), t.translate(e.RHS, false))
		case hclsyntax.OpEqual, hclsyntax.OpNotEqual, hclsyntax.OpGreaterThan, hclsyntax.OpGreaterThanOrEqual,
			hclsyntax.OpLessThan, hclsyntax.OpLessThanOrEqual:
			return t.comparison(e, neg)
		}
	case *hclsyntax.ConditionalExpr:
		return t.conditional(e, neg)
	case *hclsyntax.FunctionCallExpr:
		if e.ExpandFinal {
			break
		}
		switch e.Name {
		case "contains":
			return t.contains(e, neg)
		case "can":
			return t.can(e, neg)
		case "try":
			return t.try(e, neg)
		case "alltrue", "anytrue":
			if len(e.Args) == 1 {
				return t.quantifier(e.Args[0], e.Name == "alltrue" != neg, neg)
			}
		case "startswith", "endswith", "strcontains":
			return t.affix(e, neg)
		}
	case *hclsyntax.ScopeTraversalExpr, *hclsyntax.RelativeTraversalExpr:
		// A boolean attribute or variable used as the condition.
		s, why := t.term(e)
		if s == nil {
			return t.untranslated(why, e)
		}
		if s.ty != cty.Bool {
			return t.untranslated("not a condition", e)
		}
		p := pred(boolPred{s})
		if neg {
			p = notPred{p}
		}
		if len(s.optional) > 0 && t.inQuant {
			// Terraform's alltrue() takes null for false and anytrue() skips it, where CEL errs:
			// an unset boolean is false. Elsewhere (a filter, an operand) Terraform errs on null,
			// so that whatever the leaf says is safe, but not exact.
			if neg {
				return translated{p: or(translated{p: absent(s)}, translated{p: p}).p, mayErr: true}
			}
			return translated{p: and(translated{p: present(s)}, translated{p: p}).p, mayErr: true}
		}
		return translated{p: p, exact: true, mayErr: len(s.optional) > 0 || s.lenient}
	}
	return t.untranslated(otherForm, e)
}

// conditional translates c ? a : b as (c && a) || (!c && b), or as a CEL conditional when c can
// never err.
func (t *translator) conditional(e *hclsyntax.ConditionalExpr, neg bool) translated {
	c, nc := t.translate(e.Condition, false), t.translate(e.Condition, true)
	a, b := t.translate(e.TrueResult, neg), t.translate(e.FalseResult, neg)
	if c.exact && nc.exact && total(c.p) && c.p != constPred(true) && c.p != constPred(false) {
		// A presence test never errs: c ? a : b says it best.
		out := translated{p: condPred{c.p, a.p, b.p}, exact: a.exact && b.exact && !c.mayErr, dropped: append(append([]string(nil), a.dropped...), b.dropped...),
			mayErr: c.mayErr || a.mayErr || b.mayErr}
		if a.p == constPred(true) && b.p == constPred(true) {
			out.p = constPred(true)
		}
		return out
	}
	// Terraform evaluates only the branch the condition picks.
	out := or(and(c, a), and(nc, b))
	out.exact = c.exact && nc.exact && a.exact && b.exact && !c.mayErr
	out.mayErr = c.mayErr || a.mayErr || b.mayErr
	return out
}

var operators = map[*hclsyntax.Operation]string{
	hclsyntax.OpEqual: "==", hclsyntax.OpNotEqual: "!=",
	hclsyntax.OpGreaterThan: ">", hclsyntax.OpGreaterThanOrEqual: ">=",
	hclsyntax.OpLessThan: "<", hclsyntax.OpLessThanOrEqual: "<=",
}

// flipped is the operator that says the same with its operands swapped: 3 < x is x > 3.
var flipped = map[string]string{"==": "==", "!=": "!=", ">": "<", ">=": "<=", "<": ">", "<=": ">="}

// negated is the operator of the negation: !(x < 3) is x >= 3, for the values (non-null numbers)
// for which Terraform compares at all.
var negated = map[string]string{"==": "!=", "!=": "==", ">": "<=", ">=": "<", "<": ">=", "<=": ">"}

func isNull(e hclsyntax.Expression) bool {
	c, ok := constant(e)
	return ok && c.IsNull()
}

// comparison translates a comparison of a term, its length, or the number of matches of a pattern
// in it, with a constant or null; or of two numbers; or of a string with its lower- or upper-case
// form.
func (t *translator) comparison(e *hclsyntax.BinaryOpExpr, neg bool) translated {
	op := operators[e.Op]
	subject, other := unwrap(e.LHS), unwrap(e.RHS)
	if isNull(subject) {
		subject, other = other, subject
	}
	if isNull(other) {
		return t.nullCheck(e, subject, op, neg)
	}
	if tr, ok := t.wholeness(e, op, neg); ok {
		return tr
	}
	if tr, ok := t.setSubset(e, op, neg); ok {
		return tr
	}
	c, ok := constant(other)
	if !ok {
		subject, other, op = other, subject, flipped[op]
		if c, ok = constant(other); !ok {
			return t.compareTerms(e, e.LHS, operators[e.Op], e.RHS, neg)
		}
	}
	if s, _ := t.term(subject); s == nil && c.Type() == cty.Bool && !c.IsNull() && (op == "==" || op == "!=") {
		// cond == true is cond, cond == false its negation.
		return t.translate(subject, neg != (c.True() != (op == "==")))
	}
	if neg {
		op = negated[op]
	}
	if s, _ := t.term(subject); s != nil {
		return t.compareTerm(e, s, op, c)
	}
	call, ok := subject.(*hclsyntax.FunctionCallExpr)
	if ok && call.Name == "tonumber" {
		return t.digitsCompared(e, call, op, c)
	}
	if !ok || call.Name != "length" || len(call.Args) != 1 || call.ExpandFinal {
		_, why := t.term(subject)
		return t.untranslated(why, e)
	}
	n, ok := integer(c)
	if !ok {
		return t.untranslated("a length is compared with something other than a whole number", e)
	}
	arg := unwrap(call.Args[0])
	if f, ok := arg.(*hclsyntax.ForExpr); ok && f.KeyExpr == nil && f.CondExpr != nil {
		// The number of elements for which cond holds: none is all !cond, some is exists cond.
		cond := &hclsyntax.FunctionCallExpr{Name: "alltrue", Args: []hclsyntax.Expression{&hclsyntax.ForExpr{
			KeyVar: f.KeyVar, ValVar: f.ValVar, CollExpr: f.CollExpr, ValExpr: f.CondExpr, SrcRange: f.SrcRange, OpenRange: f.OpenRange, CloseRange: f.CloseRange,
		}}, NameRange: call.NameRange, OpenParenRange: call.OpenParenRange, CloseParenRange: call.CloseParenRange}
		switch {
		case (op == "==" && n == 0) || (op == "<" && n == 1) || (op == "<=" && n == 0):
			return t.quantifier(cond.Args[0], true, true)
		case (op == ">" && n == 0) || (op == ">=" && n == 1) || (op == "!=" && n == 0):
			return t.quantifier(cond.Args[0], false, false)
		}
		return t.untranslated("a count compared with a number other than 0", e)
	}
	if c, ok := arg.(*hclsyntax.FunctionCallExpr); ok && c.Name == "coalesce" && len(c.Args) == 2 && isEmptyCollection(c.Args[1]) && !c.ExpandFinal {
		// length(coalesce(x, [])): an unset x has length 0.
		s, why := t.term(unwrap(c.Args[0]))
		if s == nil {
			return t.untranslated(why, e)
		}
		if !(s.ty.IsListType() || s.ty.IsSetType() || s.ty.IsMapType()) {
			return t.untranslated("coalesce() of something other than a collection", e)
		}
		set := and(exactly(present(s)), t.length(e, s, op, n))
		if !compare(0, op, float64(n)) {
			return set
		}
		return or(exactly(absent(s)), set)
	}
	if s, why := t.lengthOf(arg); s != nil {
		return guarded(t.length(e, s, op, n), s, op)
	} else if why != "" {
		return t.untranslated(why, e)
	}
	if re, s, ok := t.regexCall(arg, "regexall"); ok {
		// length(regexall(p, x)) > 0 is can(regex(p, x)): some part of x matches.
		switch {
		case (op == ">" && n == 0) || (op == ">=" && n == 1) || (op == "!=" && n == 0):
			return guarded(t.matches(e, s, re, false), s, "")
		case (op == "==" && n == 0) || (op == "<" && n == 1) || (op == "<=" && n == 0):
			return guarded(t.matches(e, s, re, true), s, "")
		}
	}
	return t.untranslated("not a comparison of the variable or its length with a constant", e)
}

// guarded is the translation of a leaf about s, which Terraform reads as null, and CEL finds
// absent, where an optional attribute on its way is unset: for null Terraform finds == false and
// != true, and errs on everything else; CEL errs on all. The leaf is made to hold or fail as
// Terraform's does, or to hold where Terraform errs, which is safe.
func guarded(tr translated, s *term, op string) translated {
	if s.lenient {
		// Terraform errs where the term's value is made up.
		tr.exact, tr.mayErr = false, true
	}
	if len(s.optional) == 0 || tr.p == constPred(true) {
		return tr
	}
	// Terraform reads s as null where only s itself may be unset, and compares null with ==
	// and != without error; it errs on everything else.
	onlyLast := len(s.optional) == 1 && s.optional[0].expr == s.expr
	if op == "!=" {
		// null != c holds, as !has() does.
		out := or(translated{p: absent(s), exact: tr.exact && onlyLast}, tr)
		out.mayErr = tr.mayErr || !onlyLast
		return out
	}
	out := and(translated{p: present(s), exact: true}, tr)
	out.mayErr = tr.mayErr || !(op == "==" && onlyLast)
	return out
}

// nullCheck translates x == null and x != null.
func (t *translator) nullCheck(e hcl.Expression, subject hclsyntax.Expression, op string, neg bool) translated {
	if op != "==" && op != "!=" {
		return t.untranslated("an order comparison with null", e)
	}
	s, why := t.term(subject)
	if s == nil {
		return t.untranslated(why, e)
	}
	isNull := (op == "==") != neg
	if s == t.self || len(s.optional) == 0 {
		// The rule never sees null, nor a required attribute unset: x == null is false.
		return exactly(constPred(!isNull))
	}
	// Terraform's x.a.b == null is true when b is null, and errs when a is: has() of both is
	// false in either case, so the check may hold where Terraform errs.
	exact := s.tryNull || (len(s.optional) == 1 && s.optional[0].expr == s.expr)
	if isNull {
		return translated{p: absent(s), exact: exact, mayErr: !exact}
	}
	return translated{p: present(s), exact: true, mayErr: !exact}
}

// compareTerm translates s op c for a term s and a constant c.
func (t *translator) compareTerm(e hcl.Expression, s *term, op string, c cty.Value) translated {
	switch {
	case s.ty == cty.Number && c.Type() == cty.Number:
		f, ok := exactBound(c)
		if !ok {
			return t.untranslated("the bound is not a number both Terraform and CEL compare exactly", e)
		}
		var p pred
		switch op {
		case "==":
			p = inPred{s, []any{f}}
		case "!=":
			p = notPred{inPred{s, []any{f}}}
		default:
			p = cmpPred{s, op, f}
		}
		return guarded(exactly(p), s, op)
	case s.ty == cty.String && c.Type() == cty.String && (op == "==" || op == "!="):
		return guarded(stringIn(s, []string{c.AsString()}, op == "!="), s, op)
	case s.ty == cty.Bool && c.Type() == cty.Bool && (op == "==" || op == "!="):
		return guarded(exactly(inPred{s, []any{c.True() == (op == "==")}}), s, op)
	case s.ty.IsPrimitiveType() && c.Type().IsPrimitiveType() && (op == "==" || op == "!="):
		// Terraform's == compares without converting: a number is never equal to a string.
		return exactly(constPred(op == "!="))
	}
	return t.untranslated(fmt.Sprintf("a %s compared with a %s", s.ty.FriendlyName(), c.Type().FriendlyName()), e)
}

// compareTerms translates a comparison of two terms: numbers, or a string and its lower- or
// upper-case form.
func (t *translator) compareTerms(e hcl.Expression, l hclsyntax.Expression, op string, r hclsyntax.Expression, neg bool) translated {
	if neg {
		op = negated[op]
	}
	a, why := t.term(unwrap(l))
	if a == nil {
		return t.untranslated(why, e)
	}
	b, why := t.term(unwrap(r))
	if b == nil {
		return t.untranslated(why, e)
	}
	switch {
	case a.ty == cty.Number && b.ty == cty.Number && a.exactTerm() && b.exactTerm():
		if (op == "==" || op == "!=") && (len(a.optional) > 0 || len(b.optional) > 0) {
			return t.untranslated("an equality of two values that may both be null", e)
		}
		tr := exactly(cmp2Pred{a, b, op})
		if op == "<" || op == ">" || op == "!=" {
			// Equal doubles of 2^53 and more may be different numbers to Terraform.
			tr.exact = false
		}
		return guarded(guarded(tr, b, ""), a, "")
	case a.ty == cty.String && b.ty == cty.String && (op == "==" || op == "!="):
		s, x := a, b
		if s.ascii != nil {
			s, x = b, a
		}
		if x.ascii == nil || x.ascii.expr != s.expr || !s.exactTerm() {
			return t.untranslated("a comparison of two strings", e)
		}
		// lower(x) == x: Terraform lower-cases the normal form, CEL ASCII letters only. A string
		// without ASCII capitals may still hold others (É): the rule judges ASCII strings.
		cp := casePred{s: s, upper: strings.HasPrefix(x.expr[len(s.expr):], ".upper")}
		if op == "==" {
			return guarded(soundly(orPred{cp, notPred{asciiPred{s}}}), s, "")
		}
		return guarded(soundly(orPred{notPred{cp}, notPred{asciiPred{s}}}), s, "")
	}
	return t.numberAndString(e, a, op, b)
}

// lengthOf resolves the argument of length(): a string, list, set or map term, or the keys or
// values of a map. It returns a nil term and no reason when the argument is something else.
func (t *translator) lengthOf(arg hclsyntax.Expression) (*term, string) {
	if call, ok := arg.(*hclsyntax.FunctionCallExpr); ok && (call.Name == "keys" || call.Name == "values") && len(call.Args) == 1 && !call.ExpandFinal {
		s, why := t.term(unwrap(call.Args[0]))
		if s == nil || !s.ty.IsMapType() {
			return nil, why
		}
		return s, ""
	}
	if _, ok := arg.(*hclsyntax.FunctionCallExpr); ok {
		if call := arg.(*hclsyntax.FunctionCallExpr); call.Name != "lower" && call.Name != "upper" && call.Name != "trimspace" && call.Name != "try" && call.Name != "nonsensitive" && call.Name != "coalesce" {
			return nil, ""
		}
	}
	s, why := t.term(arg)
	if s == nil {
		return nil, why
	}
	return s, ""
}

// length translates length(s) op n for the collections and strings whose length the API server
// counts as Terraform does, or at least never above it.
func (t *translator) length(e hcl.Expression, s *term, op string, n int64) translated {
	if op == "!=" {
		switch {
		case s.ty.IsListType(), s.ty.IsTupleType(), s.ty.IsMapType():
			return exactly(sizePred{s, "!=", n})
		case (s.ty.IsSetType() || s.ty == cty.String && s.exactTerm()) && n == 0:
			// Empty is empty however Terraform counts.
			return exactly(sizePred{s, "!=", 0})
		}
		return t.untranslated("a length compared with !=", e)
	}
	lower, upper := bounds(op, n)
	var out translated
	out.p, out.exact = constPred(true), true
	add := func(p pred) { out = and(out, translated{p: p, exact: true}) }
	switch {
	case s.ty.IsListType(), s.ty.IsTupleType(), s.ty.IsMapType():
		// Terraform refuses a map whose keys are equal once normalized, so it counts what the
		// API server counts.
		switch {
		case lower != nil && upper != nil && *lower == *upper:
			add(sizePred{s, "==", *lower})
		case lower != nil:
			add(sizePred{s, ">=", *lower})
		}
		if upper != nil && (lower == nil || *lower != *upper) {
			add(sizePred{s, "<=", *upper})
		}
	case s.ty.IsSetType():
		// Terraform drops duplicates (equal once normalized), so a set has at most as many
		// elements as the list given for it: only a lower bound holds for the list.
		if lower != nil && (upper == nil || *upper != 0) {
			add(sizePred{s, ">=", *lower})
		}
		if upper != nil && *upper == 0 {
			// Empty is empty however many duplicates a list has.
			add(sizePred{s, "==", 0})
		} else if upper != nil {
			out.exact = false
			out.dropped = append(out.dropped, fmt.Sprintf("%s: an upper bound on a set, whose duplicates Terraform drops", exprText(e, t.src)))
		}
	case s.ty == cty.String:
		// A string has at least as many code points as Terraform counts grapheme clusters in
		// its normal form, so a lower bound holds as is. An upper bound holds for ASCII strings
		// without CR, where both counts agree. A string made by trimspace() is Terraform's for
		// ASCII strings only.
		if lower != nil {
			if s.exactTerm() {
				add(sizePred{s, ">=", *lower})
			} else {
				add(orPred{sizePred{s, ">=", *lower}, notPred{asciiPred{asciiBase(s)}}})
			}
		}
		if upper != nil {
			add(orPred{sizePred{s, "<=", *upper}, notPred{asciiPred{asciiBase(s)}}, containsPred{s, "\r"}})
		}
		out.exact = false
	default:
		return t.untranslated("the length of a "+s.ty.FriendlyName(), e)
	}
	if out.p == constPred(true) {
		out.exact = false
	}
	return out
}

// bounds turns length op n into inclusive bounds; nil means unbounded.
func bounds(op string, n int64) (lower, upper *int64) {
	switch op {
	case ">=":
		return &n, nil
	case ">":
		m := n + 1
		return &m, nil
	case "<=":
		return nil, &n
	case "<":
		m := n - 1
		return nil, &m
	case "==":
		return &n, &n
	}
	return nil, nil
}

// contains translates contains([literals], x), membership of a term in constant values, and
// contains(list, literal) and contains(keys(map), literal), membership of a constant in a term.
func (t *translator) contains(e *hclsyntax.FunctionCallExpr, neg bool) translated {
	if len(e.Args) != 2 {
		return t.untranslated("not contains(list, value)", e)
	}
	list, ok := constant(e.Args[0])
	if !ok {
		return t.containsConstant(e, neg)
	}
	s, why := t.term(unwrap(e.Args[1]))
	if s == nil {
		return t.untranslated(why, e)
	}
	if !(list.Type().IsTupleType() || list.Type().IsListType() || list.Type().IsSetType()) || list.IsNull() || list.LengthInt() == 0 {
		return t.untranslated("the list is not a constant list", e)
	}
	var strs []string
	var in []any
	for it := list.ElementIterator(); it.Next(); {
		_, el := it.Element()
		switch {
		case el.IsNull() || el.Type() != s.ty:
			// Terraform never finds a value among elements of another type.
			return t.untranslated("the list holds values of another type than the variable's", e)
		case s.ty == cty.String:
			strs = append(strs, el.AsString())
		case s.ty == cty.Number:
			f, ok := exactBound(el)
			if !ok {
				return t.untranslated("the list holds a number that Terraform and CEL may compare differently", e)
			}
			in = append(in, f)
		case s.ty == cty.Bool:
			in = append(in, el.True())
		default:
			return t.untranslated("membership of a "+s.ty.FriendlyName(), e)
		}
	}
	// Terraform errs on contains(list, null): the translation may fail or hold there.
	if s.ty == cty.String {
		return guarded(stringIn(s, strs, neg), s, "")
	}
	var p pred = inPred{s, in}
	if neg {
		p = notPred{p}
	}
	return guarded(exactly(p), s, "")
}

// containsConstant translates contains(list, literal) and contains(keys(map), literal).
func (t *translator) containsConstant(e *hclsyntax.FunctionCallExpr, neg bool) translated {
	c, ok := constant(e.Args[1])
	if !ok || c.IsNull() {
		return t.untranslated("neither the list nor the value is a constant", e)
	}
	arg := unwrap(e.Args[0])
	if c.Type() == cty.Bool {
		// contains([for ... : cond], true) is anytrue; with false, anytrue of the negations.
		if _, ok := arg.(*hclsyntax.ForExpr); ok {
			if c.True() {
				return t.quantifier(arg, neg, neg)
			}
			return t.quantifier(arg, neg, !neg)
		}
	}
	keys := false
	if call, ok := arg.(*hclsyntax.FunctionCallExpr); ok && call.Name == "keys" && len(call.Args) == 1 && !call.ExpandFinal {
		arg, keys = unwrap(call.Args[0]), true
	}
	s, why := t.term(arg)
	if s == nil {
		return t.untranslated(why, e)
	}
	var el cty.Type
	switch {
	case keys && s.ty.IsMapType():
		el = cty.String
	case !keys && (s.ty.IsListType() || s.ty.IsSetType()):
		el = s.ty.ElementType()
	default:
		return t.untranslated("membership in a "+s.ty.FriendlyName(), e)
	}
	if c.Type() != el {
		return t.untranslated("the value is not of the list's element type", e)
	}
	var lit any
	switch el {
	case cty.String:
		// Terraform compares normal forms; for plain literals that is comparing as given.
		if !plainLiteral(c.AsString()) {
			return t.untranslated("a literal whose normal form other strings share", e)
		}
		lit = c.AsString()
	case cty.Number:
		f, ok := exactBound(c)
		if !ok {
			return t.untranslated("a number that Terraform and CEL may compare differently", e)
		}
		lit = f
	case cty.Bool:
		lit = c.True()
	default:
		return t.untranslated("membership of a "+el.FriendlyName(), e)
	}
	var p pred = memberPred{s, lit}
	if neg {
		p = notPred{p}
	}
	return guarded(exactly(p), s, "")
}

// plainLiteral reports whether a literal is a string of ASCII without the three characters whose
// normal form some non-ASCII character has (K, ; and `, see TestNormalFormsThatAreASCII): a string
// whose normal form is such a literal is the literal itself.
func plainLiteral(l string) bool { return isASCII(l) && !strings.ContainsAny(l, "K;`") }

// stringIn is membership of a string term in lits (or its negation). Terraform compares normal
// forms: x is among the literals when its NFC form is. For plain literals the API server's plain
// comparison is the same; ASCII literals, of the string or of its lower() or upper(), are the
// search of their pattern (see normalInPred and foldedMatch); for others it judges ASCII strings
// only.
func stringIn(s *term, lits []string, neg bool) translated {
	in := inPred{s: s, lits: make([]any, len(lits))}
	plain := s.exactTerm()
	for i, l := range lits {
		in.lits[i] = l
		plain = plain && plainLiteral(l)
	}
	var p pred = in
	if neg {
		p = notPred{in}
	}
	if plain {
		return exactly(p)
	}
	if slices.IndexFunc(lits, func(l string) bool { return !isASCII(l) }) < 0 {
		// ASCII literals, some with K, ; or `, which three other characters normalize to; or
		// lower(x) or upper(x) among ASCII literals, a search in x (see foldedMatch).
		var q pred = normalInPred{s: s, lits: lits}
		exact := s.ascii == nil && s.exactTerm()
		if !exact {
			q, exact = foldedMatch(s, normalInPred{s: s, lits: lits}.match().re)
		}
		if exact {
			if neg {
				q = notPred{q}
			}
			return exactly(q)
		}
	}
	return soundly(orPred{p, notPred{asciiPred{asciiBase(s)}}})
}

// asciiBase is the string whose being ASCII makes s's value Terraform's.
func asciiBase(s *term) *term {
	if s.ascii != nil {
		return s.ascii
	}
	return s
}

// affix translates startswith, endswith and strcontains with a literal.
func (t *translator) affix(e *hclsyntax.FunctionCallExpr, neg bool) translated {
	if len(e.Args) != 2 {
		return t.untranslated("not "+e.Name+"(string, literal)", e)
	}
	s, why := t.term(unwrap(e.Args[0]))
	if s == nil {
		return t.untranslated(why, e)
	}
	c, ok := constant(e.Args[1])
	if !ok || c.Type() != cty.String || c.IsNull() || s.ty != cty.String {
		return t.untranslated("not "+e.Name+"(string, literal)", e)
	}
	lit := c.AsString()
	var p pred
	switch e.Name {
	case "startswith":
		p = affixPred{s: s, affix: lit}
	case "endswith":
		p = affixPred{s: s, suffix: true, affix: lit}
	default:
		p = containsPred{s, lit}
	}
	// Terraform searches the normal form. For a plain literal, the normal form holds it only
	// where the string as given does (each ASCII character of a normal form is one of the string,
	// or one of the three that plainLiteral leaves out), so the positive test is sound as is; its
	// negation, and literals that are not plain, judge ASCII strings only.
	if !neg && plainLiteral(lit) && s.exactTerm() {
		return guarded(soundly(p), s, "")
	}
	if neg {
		p = notPred{p}
	}
	return guarded(soundly(orPred{p, notPred{asciiPred{asciiBase(s)}}}), s, "")
}

// can translates can(regex("pattern", x)), can(cidrhost(x, 0)) and can([for v in l : regex(...)]).
func (t *translator) can(e *hclsyntax.FunctionCallExpr, neg bool) translated {
	// can() never errs: it is false where its argument errs.
	out := t.canOf(e, neg)
	out.mayErr = false
	return out
}

func (t *translator) canOf(e *hclsyntax.FunctionCallExpr, neg bool) translated {
	if len(e.Args) != 1 {
		return t.untranslated("not can(...)", e)
	}
	arg := unwrap(e.Args[0])
	if re, s, ok := t.regexCall(arg, "regex"); ok {
		return guarded(t.matches(e, s, re, neg), s, "")
	}
	if call, ok := arg.(*hclsyntax.FunctionCallExpr); ok && call.Name == "regex" && len(call.Args) == 2 {
		if s, _ := t.term(unwrap(call.Args[1])); s != nil && s.ty != cty.String {
			// Terraform searches a number's decimal form; the API server has a number.
			return t.untranslated("a pattern searched in a "+s.ty.FriendlyName(), e)
		}
	}
	if call, ok := arg.(*hclsyntax.FunctionCallExpr); ok && call.Name == "index" && len(call.Args) == 2 && !call.ExpandFinal {
		// index(list, x) errs where x is not in the list.
		if _, ok := constant(call.Args[0]); ok {
			return t.contains(&hclsyntax.FunctionCallExpr{Name: "contains", Args: call.Args, NameRange: call.NameRange, OpenParenRange: call.OpenParenRange, CloseParenRange: call.CloseParenRange}, neg)
		}
	}
	if call, ok := arg.(*hclsyntax.FunctionCallExpr); ok && call.Name == "base64decode" && len(call.Args) == 1 && !call.ExpandFinal {
		return t.base64Decodes(e, call, neg)
	}
	if call, ok := arg.(*hclsyntax.FunctionCallExpr); ok && call.Name == "cidrnetmask" && len(call.Args) == 1 && !call.ExpandFinal {
		// cidrnetmask errs for prefixes that are not IPv4 ones.
		if neg {
			return t.untranslated("the negation of a check of an IP prefix", e)
		}
		s, why := t.term(unwrap(call.Args[0]))
		if s == nil {
			return t.untranslated(why, e)
		}
		if s.ty != cty.String || !s.exactTerm() {
			return t.untranslated("not cidrnetmask(string)", e)
		}
		re, exact := cidrPattern(true)
		return guarded(translated{p: matchPred{s, re}, exact: exact}, s, "")
	}
	if call, ok := arg.(*hclsyntax.FunctionCallExpr); ok && call.Name == "cidrhost" && len(call.Args) == 2 && !call.ExpandFinal {
		if neg {
			return t.untranslated("the negation of a check of an IP prefix", e)
		}
		s, why := t.term(unwrap(call.Args[0]))
		if s == nil {
			return t.untranslated(why, e)
		}
		if n, ok := constant(call.Args[1]); !ok || n.Type() != cty.Number || n.IsNull() || !n.RawEquals(cty.Zero) || s.ty != cty.String || !s.exactTerm() {
			return t.untranslated("not cidrhost(string, 0)", e)
		}
		re, exact := cidrPattern(false)
		return guarded(translated{p: matchPred{s, re}, exact: exact}, s, "")
	}
	if f, ok := arg.(*hclsyntax.ForExpr); ok && !neg {
		// can([for v in l : regex(p, v)]): every element's call succeeds.
		if f.KeyExpr != nil || f.CondExpr != nil {
			return t.untranslated("not can([for ... : regex(...)])", e)
		}
		return t.forAll(e, f, true, false, func(body hclsyntax.Expression) translated {
			return t.can(&hclsyntax.FunctionCallExpr{Name: "can", Args: []hclsyntax.Expression{body}, NameRange: e.NameRange, OpenParenRange: e.OpenParenRange, CloseParenRange: e.CloseParenRange}, false)
		})
	}
	return t.untranslated("not can(regex(...)), can(cidrhost(..., 0)) or can(cidrnetmask(...))", e)
}

// try translates try(condition, true), which holds where the condition errs, and try(condition,
// false), which holds only where it holds.
func (t *translator) try(e *hclsyntax.FunctionCallExpr, neg bool) translated {
	if len(e.Args) != 2 || neg {
		return t.untranslated("not try(condition, true) or try(condition, false)", e)
	}
	fallback, ok := constant(e.Args[1])
	if !ok || fallback.Type() != cty.Bool || fallback.IsNull() {
		return t.untranslated("not try(condition, true) or try(condition, false)", e)
	}
	inner := t.translate(e.Args[0], false)
	inner.mayErr = false
	if fallback.False() {
		// Where try(c, false) holds, c holds without error.
		return inner
	}
	// Where c errs, the rule must hold (see tryTrue).
	return t.tryTrue(e, inner)
}

// failsafe are the functions that never err on values of their parameters' types.
var failsafe = map[string]bool{
	"contains": true, "length": true, "keys": true, "values": true, "lower": true, "upper": true,
	"startswith": true, "endswith": true, "strcontains": true, "alltrue": true, "anytrue": true,
	"can": true, "try": true, "nonsensitive": true, "flatten": true, "concat": true, "tolist": true, "toset": true,
}

// regexCall returns the pattern and subject of fn("pattern", x) when the pattern is a constant
// that Go's regexp compiles; Terraform uses Go's regexp, and so do CEL's matches() and the API
// server.
func (t *translator) regexCall(e hclsyntax.Expression, fn string) (string, *term, bool) {
	call, ok := e.(*hclsyntax.FunctionCallExpr)
	if !ok || call.Name != fn || len(call.Args) != 2 || call.ExpandFinal {
		return "", nil, false
	}
	p, ok := constant(call.Args[0])
	if !ok || p.Type() != cty.String || p.IsNull() {
		return "", nil, false
	}
	if _, err := regexp.Compile(p.AsString()); err != nil {
		return "", nil, false
	}
	s, _ := t.term(unwrap(call.Args[1]))
	if s == nil || s.ty != cty.String {
		return "", nil, false
	}
	return p.AsString(), s, true
}

// matches is a pattern search (or its negation). Terraform searches the normal form of a string,
// the API server the string as given: the rule judges ASCII strings only, which NFC leaves alone.
// (OpenAPI's pattern, which the API server also checks with Go's regexp and as a search, could
// not say "ASCII only" nor carry the message.)
//
// A pattern that matches whole ASCII strings only is searched exactly, rewritten to match the
// characters outside ASCII whose normal form is ASCII (see normalMatchPred).
//
// A search that NFC cannot change is searched exactly in the string as given, and one of whole
// ASCII strings in lower(x) or upper(x) exactly in x, rewritten (see nfcInvariant and
// foldedPattern in normal.go).
func (t *translator) matches(e hcl.Expression, s *term, re string, neg bool) translated {
	var p pred
	exact := true
	switch {
	case s.ascii == nil && s.exactTerm() && asciiOnly(re):
		p = normalMatchPred{s, re}
	case s.exactTerm() && nfcInvariant(re):
		p = matchPred{s, re}
	default:
		p, exact = foldedMatch(s, re)
	}
	if neg {
		p = notPred{p}
	}
	if exact {
		return exactly(p)
	}
	out := soundly(orPred{p, notPred{asciiPred{asciiBase(s)}}})
	if wide, ok := widenedPattern(re); ok && !neg && s.ascii == nil && s.exactTerm() {
		// Outside ASCII, a pattern every string matches whose NFC form re matches (widened.go).
		out.p = andPred{out.p, matchPred{s, wide}}
		if wide == re {
			out.p = matchPred{s, re}
		}
	}
	return out
}

// quantifier translates alltrue(list) (all) or anytrue(list): of a for expression, of the
// flattened list of nested ones, of concatenated lists, or of a list of conditions. Within, the
// conditions are translated with polarity neg: !alltrue(l) is anytrue of the negations.
func (t *translator) quantifier(list hclsyntax.Expression, all, neg bool) translated {
	list = unwrap(list)
	combine := and
	if !all {
		combine = or
	}
	switch l := list.(type) {
	case *hclsyntax.TupleConsExpr:
		out := exactly(constPred(all))
		for _, c := range l.Exprs {
			out = combine(out, t.translate(c, neg))
		}
		return out
	case *hclsyntax.ForExpr:
		if l.KeyExpr != nil {
			return t.untranslated("a for expression that makes an object", l)
		}
		return t.forAll(l, l, all, neg, func(body hclsyntax.Expression) translated {
			return t.translate(body, neg)
		})
	case *hclsyntax.FunctionCallExpr:
		switch {
		case l.Name == "concat" && !l.ExpandFinal:
			out := exactly(constPred(all))
			for _, a := range l.Args {
				out = combine(out, t.quantifier(a, all, neg))
			}
			return out
		case l.Name == "flatten" && len(l.Args) == 1 && !l.ExpandFinal:
			// flatten([for a in x : [for b in y : c]]): the inner lists' conditions.
			return t.flattened(unwrap(l.Args[0]), all, neg)
		}
	}
	return t.untranslated("not a quantifier over a for expression", list)
}

func (t *translator) flattened(list hclsyntax.Expression, all, neg bool) translated {
	switch l := list.(type) {
	case *hclsyntax.ForExpr:
		if l.KeyExpr != nil {
			return t.untranslated("a for expression that makes an object", l)
		}
		return t.forAll(l, l, all, neg, func(body hclsyntax.Expression) translated {
			return t.flattened(unwrap(body), all, neg)
		})
	case *hclsyntax.TupleConsExpr:
		combine := and
		if !all {
			combine = or
		}
		out := exactly(constPred(all))
		for _, c := range l.Exprs {
			out = combine(out, t.flattened(unwrap(c), all, neg))
		}
		return out
	}
	// An element that is not a list stays as it is.
	return t.translate(list, neg)
}

// forAll translates a quantifier (all or exists) over the for expression f, whose value for each
// element body translates.
func (t *translator) forAll(e hcl.Expression, f *hclsyntax.ForExpr, all, neg bool, body func(hclsyntax.Expression) translated) translated {
	if elems, ok := t.listed(f); ok {
		return t.unrolled(e, f, elems, all, body)
	}
	coll, why := t.collection(unwrap(f.CollExpr))
	if coll == nil {
		return t.untranslated(why, e)
	}
	over := coll.over
	inner := &translator{name: t.name, src: t.src, self: t.self, scope: map[string]*term{}, inQuant: true, celVars: map[string]bool{}, assumed: t.assumed}
	for k, v := range t.scope {
		inner.scope[k] = v
	}
	for k := range t.celVars {
		inner.celVars[k] = true
	}
	uses := func(name string) bool {
		if name == "" {
			return false
		}
		for _, x := range []hclsyntax.Expression{f.ValExpr, f.CondExpr} {
			if x == nil {
				continue
			}
			for _, tr := range x.Variables() {
				if tr.RootName() == name {
					return true
				}
			}
		}
		return false
	}
	var cv string
	switch coll.kind {
	case iterList:
		if uses(f.KeyVar) {
			return t.untranslated("a for expression that uses the index", e)
		}
		cv = inner.celVar(f.ValVar)
		inner.scope[f.ValVar] = elementTerm(over, cv)
	case iterKeys:
		if uses(f.KeyVar) {
			return t.untranslated("a for expression that uses the index", e)
		}
		cv = inner.celVar(f.ValVar)
		inner.scope[f.ValVar] = keyTerm(cv)
	case iterMap:
		cv = inner.celVar(f.KeyVar)
		if f.KeyVar != "" {
			inner.scope[f.KeyVar] = keyTerm(cv)
		}
		inner.scope[f.ValVar] = mapValueTerm(over, cv)
	}
	var b translated
	if f.ValExpr != nil {
		saved := *t
		*t = *inner
		b = body(f.ValExpr)
		if f.CondExpr != nil {
			// [for v in l : c if f]: all of !f || c, or some f && c.
			if all {
				b = or(t.translate(f.CondExpr, true), b)
			} else {
				b = and(t.translate(f.CondExpr, false), b)
			}
		}
		*t = saved
	}
	// Terraform evaluates the condition for every element, and errs if it errs for one: some
	// element's condition holding is Terraform's verdict only where none errs.
	out := translated{exact: b.exact && (all || !b.mayErr), dropped: b.dropped, mayErr: b.mayErr || len(over.optional) > 0 && !coll.orEmpty}
	switch {
	case all && b.p == constPred(true):
		return translated{p: constPred(true), exact: b.exact, dropped: b.dropped}
	case !all && b.p == constPred(false):
		return translated{p: constPred(false), exact: b.exact, dropped: b.dropped}
	}
	out.p = quantPred{over: over, v: cv, exists: !all, body: b.p}
	if coll.orEmpty && len(over.optional) > 0 {
		// coalesce(x, []) and x == null ? [] : x: an unset x is empty.
		if all {
			return or(exactly(absent(over)), out)
		}
		return and(exactly(present(over)), out)
	}
	return out
}

type iteration int

const (
	iterList iteration = iota // the elements of a list or set
	iterKeys                  // the keys of a map, as a list
	iterMap                   // the keys and values of a map
)

type collection struct {
	over    *term
	kind    iteration
	orEmpty bool
}

// collection resolves what a for expression iterates over.
func (t *translator) collection(e hclsyntax.Expression) (*collection, string) {
	switch x := e.(type) {
	case *hclsyntax.FunctionCallExpr:
		switch {
		case x.ExpandFinal:
		case (x.Name == "nonsensitive" || x.Name == "tolist" || x.Name == "toset") && len(x.Args) == 1:
			return t.collection(unwrap(x.Args[0]))
		case (x.Name == "keys" || x.Name == "values") && len(x.Args) == 1:
			c, why := t.collection(unwrap(x.Args[0]))
			if c == nil || c.kind != iterMap {
				return nil, orReason(why, "keys() or values() of something other than a map")
			}
			if x.Name == "keys" {
				c.kind = iterKeys
			}
			return c, ""
		case x.Name == "coalesce" && len(x.Args) == 2 && isEmptyCollection(x.Args[1]):
			c, why := t.collection(unwrap(x.Args[0]))
			if c == nil {
				return nil, why
			}
			c.orEmpty = true
			return c, ""
		}
		return nil, "iteration over the result of " + x.Name + "()"
	case *hclsyntax.ConditionalExpr:
		// x == null ? [] : x, x != null ? x : []
		cmp, ok := unwrap(x.Condition).(*hclsyntax.BinaryOpExpr)
		if !ok || (cmp.Op != hclsyntax.OpEqual && cmp.Op != hclsyntax.OpNotEqual) {
			break
		}
		subject := unwrap(cmp.LHS)
		if isNull(subject) {
			subject = unwrap(cmp.RHS)
		} else if !isNull(cmp.RHS) {
			break
		}
		value, empty := x.FalseResult, x.TrueResult
		if cmp.Op == hclsyntax.OpNotEqual {
			value, empty = x.TrueResult, x.FalseResult
		}
		if !isEmptyCollection(empty) || !sameExpr(subject, unwrap(value), t.src) {
			break
		}
		c, why := t.collection(unwrap(value))
		if c == nil {
			return nil, why
		}
		c.orEmpty = true
		return c, ""
	}
	s, why := t.term(e)
	if s == nil {
		return nil, why
	}
	switch {
	case s.ty.IsListType(), s.ty.IsSetType():
		return &collection{over: s, kind: iterList}, ""
	case s.ty.IsMapType():
		return &collection{over: s, kind: iterMap}, ""
	}
	return nil, "iteration over a " + s.ty.FriendlyName()
}

func orReason(why, otherwise string) string {
	if why != "" {
		return why
	}
	return otherwise
}

func isEmptyCollection(e hclsyntax.Expression) bool {
	switch x := unwrap(e).(type) {
	case *hclsyntax.TupleConsExpr:
		return len(x.Exprs) == 0
	case *hclsyntax.ObjectConsExpr:
		return len(x.Items) == 0
	}
	return false
}

func sameExpr(a, b hclsyntax.Expression, src string) bool {
	return exprText(a, src) == exprText(b, src)
}

// celVar picks the CEL name of a loop variable: its name in the module where CEL allows it and
// nothing else has it, else a new one.
func (t *translator) celVar(name string) string {
	ok := regexp.MustCompile(`^[a-z][a-zA-Z0-9]{0,15}$`).MatchString(name) && !celReserved[name] && !t.celVars[name]
	if !ok {
		for i := 0; ; i++ {
			name = fmt.Sprintf("x%d", i)
			if !t.celVars[name] {
				break
			}
		}
	}
	t.celVars[name] = true
	return name
}

// celReserved are CEL's reserved words, its macros and functions that a loop variable must not
// shadow, and self.
var celReserved = map[string]bool{
	"true": true, "false": true, "null": true, "in": true, "as": true, "break": true, "const": true,
	"continue": true, "else": true, "for": true, "function": true, "if": true, "import": true, "let": true,
	"loop": true, "package": true, "namespace": true, "return": true, "var": true, "void": true, "while": true,
	"self": true, "oldSelf": true, "has": true, "all": true, "exists": true, "size": true, "matches": true,
	"int": true, "uint": true, "double": true, "string": true, "bytes": true, "bool": true, "list": true,
	"map": true, "type": true, "dyn": true, "duration": true, "timestamp": true, "optional": true,
	"ip": true, "cidr": true, "isIP": true, "isCIDR": true, "url": true, "quantity": true,
}
