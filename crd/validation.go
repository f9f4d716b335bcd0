package crd

import (
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/modkind/modkind/module"
)

// Translating validation blocks.
//
// A module's validation block is checked by Terraform at plan time, long after `kubectl apply`
// said yes. modkind puts into the CRD the part of each condition it can prove means, for every
// value the API server would hand Terraform, what Terraform would decide, or at least never
// refuses what Terraform would accept: a translation may be weaker than the condition (Terraform
// still enforces all of it), never stronger. What that takes, beyond reading the expression:
//
//   - Terraform normalizes every string to Unicode NFC and counts a string's length in grapheme
//     clusters; the API server and CEL do neither. For strings of ASCII characters the two agree
//     (NFC leaves ASCII alone, and each ASCII character is a cluster of its own except CR LF), so
//     rules on strings only judge ASCII strings unless the rule is insensitive to both.
//   - Terraform compares numbers exactly; CEL compares doubles. Bounds are used only when they are
//     doubles whose shortest decimal form is exact and below 2^53, where both orders agree.
//   - A set in Terraform holds no duplicates, and it removes them itself: a longer list given for a
//     set may still have few enough elements for Terraform.
//   - CEL rules never run on null, and Terraform fails a condition that errors: `var.x == null ||
//     c` needs only c, and a null that Terraform refuses is left to Terraform.
//   - A default that fails a rule makes the API server refuse the whole CRD, so a rule the module's
//     own default fails is left out.
//   - The API server refuses a CRD whose rules might cost too much; expensive parts are dropped
//     once a budget is spent (see Translations).
//
// Every translation is a CEL rule (x-kubernetes-validations) rather than OpenAPI's enum, pattern,
// minimum or maxLength, even where those would mean the same: only a rule carries the module's
// error_message to the user, and a failed enum or maxLength stops the API server from running any
// rule at all.

// Translation says what became of one validation block.
type Translation struct {
	Variable string
	// Pos is the block's file and line.
	Pos string
	// Rule is the CEL rule the API server checks, "" when nothing could be translated.
	Rule string
	// Message is the block's error_message, on one line as the API server wants it.
	Message string
	// Exact is true when the rule accepts exactly what the condition accepts.
	Exact bool
	// Dropped names the parts of the condition left to Terraform, and why.
	Dropped []string
}

// translated is a condition's translation: p holds for every non-null value for which the
// condition holds, and exact says the converse holds too.
type translated struct {
	p       pred
	exact   bool
	dropped []string
}

func untranslated(why string, e hcl.Expression, src string) translated {
	return translated{p: constPred(true), dropped: []string{fmt.Sprintf("%s: %s", exprText(e, src), why)}}
}

func exprText(e hcl.Expression, src string) string {
	r := e.Range()
	if r.End.Byte <= len(src) && r.Start.Byte <= r.End.Byte {
		return strings.Join(strings.Fields(src[r.Start.Byte:r.End.Byte]), " ")
	}
	return "?"
}

func and(a, b translated) translated {
	out := translated{exact: a.exact && b.exact, dropped: append(append([]string(nil), a.dropped...), b.dropped...)}
	switch {
	case a.p == constPred(false) && a.exact, b.p == constPred(false) && b.exact:
		out.p, out.exact = constPred(false), true
	case a.p == constPred(true):
		out.p = b.p
	case b.p == constPred(true):
		out.p = a.p
	default:
		out.p = andPred(append(conjuncts(a.p), conjuncts(b.p)...))
	}
	return out
}

func or(a, b translated) translated {
	out := translated{exact: a.exact && b.exact, dropped: append(append([]string(nil), a.dropped...), b.dropped...)}
	switch {
	case a.p == constPred(true) || b.p == constPred(true):
		// One side holds for all values, so does the disjunction; it is exact when that side is.
		out.p = constPred(true)
		out.exact = (a.p == constPred(true) && a.exact) || (b.p == constPred(true) && b.exact)
	case a.p == constPred(false):
		out.p = b.p
	case b.p == constPred(false):
		out.p = a.p
	default:
		// x == "a" || x == "b" reads better as one membership.
		ai, aok := a.p.(inPred)
		bi, bok := b.p.(inPred)
		if aok && bok {
			out.p = append(append(inPred(nil), ai...), bi...)
		} else {
			out.p = orPred{a.p, b.p}
		}
	}
	return out
}

func not(a translated, e hcl.Expression, src string) translated {
	if !a.exact {
		// The negation of a weaker rule would be a stronger one.
		return untranslated("the negation of a condition modkind cannot translate exactly", e, src)
	}
	switch a.p {
	case constPred(true):
		return translated{p: constPred(false), exact: true}
	case constPred(false):
		return translated{p: constPred(true), exact: true}
	}
	return translated{p: notPred{a.p}, exact: true}
}

func conjuncts(p pred) []pred {
	if a, ok := p.(andPred); ok {
		return a
	}
	return []pred{p}
}

// translator translates the conditions of one variable.
type translator struct {
	name string   // the variable's name
	ty   cty.Type // the variable's type
	src  string   // the condition's source
}

func (t translator) translate(e hclsyntax.Expression) translated {
	switch e := e.(type) {
	case *hclsyntax.ParenthesesExpr:
		return t.translate(e.Expression)
	case *hclsyntax.BinaryOpExpr:
		switch e.Op {
		case hclsyntax.OpLogicalAnd:
			return and(t.translate(e.LHS), t.translate(e.RHS))
		case hclsyntax.OpLogicalOr:
			return or(t.translate(e.LHS), t.translate(e.RHS))
		case hclsyntax.OpEqual, hclsyntax.OpNotEqual, hclsyntax.OpGreaterThan, hclsyntax.OpGreaterThanOrEqual,
			hclsyntax.OpLessThan, hclsyntax.OpLessThanOrEqual:
			return t.comparison(e)
		}
	case *hclsyntax.UnaryOpExpr:
		if e.Op == hclsyntax.OpLogicalNot {
			return not(t.translate(e.Val), e, t.src)
		}
	case *hclsyntax.FunctionCallExpr:
		switch e.Name {
		case "contains":
			return t.contains(e)
		case "can":
			return t.can(e)
		}
	}
	return untranslated("not a form modkind translates", e, t.src)
}

var operators = map[*hclsyntax.Operation]string{
	hclsyntax.OpEqual: "==", hclsyntax.OpNotEqual: "!=",
	hclsyntax.OpGreaterThan: ">", hclsyntax.OpGreaterThanOrEqual: ">=",
	hclsyntax.OpLessThan: "<", hclsyntax.OpLessThanOrEqual: "<=",
}

// flipped is the operator that says the same with its operands swapped: 3 < x is x > 3.
var flipped = map[string]string{"==": "==", "!=": "!=", ">": "<", ">=": "<=", "<": ">", "<=": ">="}

// comparison translates a comparison of the variable, its length, or the number of matches of a
// pattern in it, with a constant.
func (t translator) comparison(e *hclsyntax.BinaryOpExpr) translated {
	op := operators[e.Op]
	subject, other := e.LHS, e.RHS
	c, ok := constant(other)
	if !ok {
		subject, other, op = e.RHS, e.LHS, flipped[op]
		if c, ok = constant(other); !ok {
			return untranslated("neither side is a constant", e, t.src)
		}
	}
	subject = unwrap(subject)
	if t.isSelf(subject) {
		return t.compareSelf(e, op, c)
	}
	call, ok := subject.(*hclsyntax.FunctionCallExpr)
	if !ok || call.Name != "length" || len(call.Args) != 1 || call.ExpandFinal {
		return untranslated("not a comparison of the variable or its length with a constant", e, t.src)
	}
	n, ok := integer(c)
	if !ok {
		return untranslated("a length is compared with something other than a whole number", e, t.src)
	}
	arg := unwrap(call.Args[0])
	if t.isSelf(arg) {
		return t.length(e, op, n)
	}
	if re, ok := t.regexCall(arg, "regexall"); ok {
		// length(regexall(p, x)) > 0 is can(regex(p, x)): some part of x matches.
		if (op == ">" && n == 0) || (op == ">=" && n == 1) || (op == "!=" && n == 0) {
			return t.matches(e, re)
		}
	}
	return untranslated("not a comparison of the variable or its length with a constant", e, t.src)
}

func (t translator) compareSelf(e hcl.Expression, op string, c cty.Value) translated {
	if c.IsNull() {
		// The rule never sees null: for every other value x == null is false.
		switch op {
		case "==":
			return translated{p: constPred(false), exact: true}
		case "!=":
			return translated{p: constPred(true), exact: true}
		}
		return untranslated("an order comparison with null", e, t.src)
	}
	switch {
	case t.ty == cty.Number && c.Type() == cty.Number:
		f, ok := exactBound(c)
		if !ok {
			return untranslated("the bound is not a number both Terraform and CEL compare exactly", e, t.src)
		}
		switch op {
		case "==":
			return translated{p: inPred{f}, exact: true}
		case "!=":
			return translated{p: notPred{inPred{f}}, exact: true}
		}
		return translated{p: cmpPred{op: op, bound: f}, exact: true}
	case t.ty == cty.String && c.Type() == cty.String && (op == "==" || op == "!="):
		in := stringIn([]string{c.AsString()})
		if op == "!=" {
			return not(in, e, t.src)
		}
		return in
	case t.ty == cty.Bool && c.Type() == cty.Bool && (op == "==" || op == "!="):
		return translated{p: inPred{c.True() == (op == "==")}, exact: true}
	}
	return untranslated(fmt.Sprintf("a %s compared with a %s", t.ty.FriendlyName(), c.Type().FriendlyName()), e, t.src)
}

// length translates length(var.x) op n for the collections and strings whose length the API
// server counts as Terraform does, or at least never above it.
func (t translator) length(e hcl.Expression, op string, n int64) translated {
	lower, upper := bounds(op, n)
	if lower == nil && upper == nil {
		return untranslated("a length compared with !=", e, t.src)
	}
	var out translated
	out.p, out.exact = constPred(true), true
	add := func(p pred) { out = and(out, translated{p: p, exact: true}) }
	switch {
	case t.ty.IsListType(), t.ty.IsTupleType(), t.ty.IsMapType():
		// Terraform refuses a map whose keys are equal once normalized, so it counts what the
		// API server counts.
		if lower != nil {
			add(sizePred{">=", *lower})
		}
		if upper != nil {
			add(sizePred{"<=", *upper})
		}
	case t.ty.IsSetType():
		// Terraform drops duplicates (equal once normalized), so a set has at most as many
		// elements as the list given for it: only a lower bound holds for the list.
		if lower != nil {
			add(sizePred{">=", *lower})
		}
		if upper != nil {
			out.exact = false
			out.dropped = append(out.dropped, fmt.Sprintf("%s: an upper bound on a set, whose duplicates Terraform drops", exprText(e, t.src)))
		}
	case t.ty == cty.String:
		// A string has at least as many code points as Terraform counts grapheme clusters in
		// its normal form, so a lower bound holds as is. An upper bound holds for ASCII strings
		// without CR, where both counts agree.
		if lower != nil {
			add(sizePred{">=", *lower})
		}
		if upper != nil {
			add(orPred{sizePred{"<=", *upper}, notPred{asciiPred{}}, containsPred{"\r"}})
		}
		out.exact = false
	default:
		return untranslated("the length of a "+t.ty.FriendlyName(), e, t.src)
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

// contains translates contains([literals], var.x) into membership.
func (t translator) contains(e *hclsyntax.FunctionCallExpr) translated {
	if len(e.Args) != 2 || e.ExpandFinal || !t.isSelf(unwrap(e.Args[1])) {
		return untranslated("not contains([...], var."+t.name+")", e, t.src)
	}
	list, ok := constant(e.Args[0])
	if !ok || !(list.Type().IsTupleType() || list.Type().IsListType() || list.Type().IsSetType()) || list.LengthInt() == 0 {
		return untranslated("the list is not a constant list", e, t.src)
	}
	var strs []string
	var in inPred
	for it := list.ElementIterator(); it.Next(); {
		_, el := it.Element()
		switch {
		case el.IsNull() || el.Type() != t.ty:
			// Terraform never finds a value among elements of another type.
			return untranslated("the list holds values of another type than the variable's", e, t.src)
		case t.ty == cty.String:
			strs = append(strs, el.AsString())
		case t.ty == cty.Number:
			f, ok := exactBound(el)
			if !ok {
				return untranslated("the list holds a number that Terraform and CEL may compare differently", e, t.src)
			}
			in = append(in, f)
		case t.ty == cty.Bool:
			in = append(in, el.True())
		default:
			return untranslated("membership of a "+t.ty.FriendlyName(), e, t.src)
		}
	}
	if t.ty == cty.String {
		return stringIn(strs)
	}
	return translated{p: in, exact: true}
}

// stringIn is membership of a string in lits. Terraform compares normal forms: x is among the
// literals when its NFC form is. The only characters outside ASCII whose normal form is ASCII are
// KELVIN SIGN, GREEK QUESTION MARK and GREEK VARIA (K, ; and `, see TestNormalFormsThatAreASCII),
// so for literals of ASCII without those three the API server's plain comparison is the same;
// for others it judges ASCII strings only.
func stringIn(lits []string) translated {
	in := make(inPred, len(lits))
	plain := true
	for i, l := range lits {
		in[i] = l
		plain = plain && isASCII(l) && !strings.ContainsAny(l, "K;`")
	}
	if plain {
		return translated{p: in, exact: true}
	}
	return translated{p: orPred{in, notPred{asciiPred{}}}}
}

// can translates can(regex("pattern", var.x)).
func (t translator) can(e *hclsyntax.FunctionCallExpr) translated {
	if len(e.Args) != 1 || e.ExpandFinal {
		return untranslated("not can(regex(...))", e, t.src)
	}
	re, ok := t.regexCall(unwrap(e.Args[0]), "regex")
	if !ok {
		return untranslated("not can(regex(\"...\", var."+t.name+"))", e, t.src)
	}
	return t.matches(e, re)
}

// regexCall returns the pattern of fn("pattern", var.x) when it is a constant that Go's regexp
// compiles; Terraform uses Go's regexp, and so do CEL's matches() and the API server.
func (t translator) regexCall(e hclsyntax.Expression, fn string) (string, bool) {
	call, ok := e.(*hclsyntax.FunctionCallExpr)
	if !ok || call.Name != fn || len(call.Args) != 2 || call.ExpandFinal || !t.isSelf(unwrap(call.Args[1])) {
		return "", false
	}
	p, ok := constant(call.Args[0])
	if !ok || p.Type() != cty.String || p.IsNull() {
		return "", false
	}
	if _, err := regexp.Compile(p.AsString()); err != nil {
		return "", false
	}
	return p.AsString(), true
}

// matches is a pattern search. Terraform searches the normal form of a string, the API server
// the string as given: the rule judges ASCII strings only, which NFC leaves alone. (OpenAPI's
// pattern, which the API server also checks with Go's regexp and as a search, could not say
// "ASCII only" nor carry the message.)
func (t translator) matches(e hcl.Expression, re string) translated {
	if t.ty != cty.String {
		return untranslated("a pattern searched in a "+t.ty.FriendlyName(), e, t.src)
	}
	return translated{p: orPred{matchPred{re}, notPred{asciiPred{}}}}
}

// isSelf reports whether e is var.<the variable>.
func (t translator) isSelf(e hclsyntax.Expression) bool {
	s, ok := e.(*hclsyntax.ScopeTraversalExpr)
	if !ok || len(s.Traversal) != 2 || s.Traversal.RootName() != "var" {
		return false
	}
	a, ok := s.Traversal[1].(hcl.TraverseAttr)
	return ok && a.Name == t.name
}

func unwrap(e hclsyntax.Expression) hclsyntax.Expression {
	for {
		switch x := e.(type) {
		case *hclsyntax.ParenthesesExpr:
			e = x.Expression
		case *hclsyntax.TemplateWrapExpr:
			e = x.Wrapped
		default:
			return e
		}
	}
}

// constant is the value of an expression that refers to nothing and calls no function.
func constant(e hclsyntax.Expression) (cty.Value, bool) {
	if len(e.Variables()) > 0 {
		return cty.NilVal, false
	}
	v, diags := e.Value(nil)
	if diags.HasErrors() || !v.IsWhollyKnown() {
		return cty.NilVal, false
	}
	return v, true
}

// exactBound returns n as a double when comparing doubles with it orders numbers as Terraform's
// exact arithmetic does: n is a double, below 2^53 in magnitude, and its shortest decimal form
// (what the API server writes and Terraform reads back) is exactly n. 0.5 and 3 are; 0.1 is not.
func exactBound(n cty.Value) (float64, bool) {
	if n.Type() != cty.Number || n.IsNull() || !n.IsKnown() {
		return 0, false
	}
	f, acc := n.AsBigFloat().Float64()
	if acc != big.Exact || f >= maxExactInt || f <= -maxExactInt {
		return 0, false
	}
	exact, ok := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
	if !ok || exact.Cmp(new(big.Rat).SetFloat64(f)) != 0 {
		return 0, false
	}
	return f, true
}

// integer returns n when it is a whole number a length can be compared with.
func integer(n cty.Value) (int64, bool) {
	if n.Type() != cty.Number || n.IsNull() {
		return 0, false
	}
	i, acc := n.AsBigFloat().Int64()
	if acc != big.Exact || i >= maxExactInt || i <= -maxExactInt {
		return 0, false
	}
	return i, true
}

// translateValidation translates one validation block of v.
func translateValidation(v module.Variable, val module.Validation) translated {
	e, diags := hclsyntax.ParseExpression([]byte(val.Condition), "condition", hcl.InitialPos)
	if diags.HasErrors() {
		return translated{p: constPred(true), dropped: []string{"the condition does not parse: " + diags.Error()}}
	}
	tr := translator{name: v.Name, ty: v.Type, src: val.Condition}
	switch {
	case v.Sensitive:
		// A sensitive value never reaches the API server inline, so there is nothing to check.
		return untranslated("the variable is sensitive", e, tr.src)
	case v.Type == cty.DynamicPseudoType:
		return untranslated("the variable's type is any", e, tr.src)
	}
	for _, ref := range e.Variables() {
		if ref.RootName() != "var" {
			return untranslated("it refers to something other than the variable", e, tr.src)
		}
		if a, ok := ref[1].(hcl.TraverseAttr); !ok || a.Name != v.Name {
			return untranslated("it refers to another variable", e, tr.src)
		}
	}
	return tr.translate(e)
}

// message is the error_message as the API server accepts it: on one line.
func message(s string) string { return strings.Join(strings.Fields(s), " ") }

// The API server refuses a CRD when a rule's estimated cost exceeds 10^7 or the sum over the CRD
// exceeds 10^8 (StaticEstimatedCostLimit, StaticEstimatedCRDCostLimit). modkind's own estimate is
// already above the server's; it keeps a further 10% and 20% for rules added elsewhere.
const (
	ruleBudget  = 9_000_000
	totalBudget = 80_000_000
	// Parts cheaper than this are always kept: a module cannot have enough of them to matter.
	cheap = 1_000
)

// Translations translates the validation blocks of m's variables into CEL rules, keeping the
// rules of the whole module within the API server's cost limits: every cheap part is kept, then
// expensive parts (regular expressions, ASCII checks) in the order of the variables until the
// budget is spent. Dropping a part of a conjunction only makes a rule weaker, which is safe.
func Translations(m *module.Module) []Translation {
	type part struct {
		p    pred
		keep bool
	}
	type block struct {
		t     Translation
		parts []part
		exact bool
	}
	var blocks []*block
	for _, v := range m.Variables {
		for _, val := range v.Validations {
			tr := translateValidation(v, val)
			b := &block{t: Translation{Variable: v.Name, Pos: val.Pos, Message: message(val.ErrorMessage), Dropped: tr.dropped}, exact: tr.exact}
			switch {
			case tr.p == constPred(true):
			case tr.p == constPred(false):
				// Only null would pass: not worth a rule that reads as a mistake.
				b.t.Dropped = append(b.t.Dropped, "the condition refuses every value but null")
				b.exact = false
			case !defaultPasses(v, tr.p):
				b.t.Dropped = append(b.t.Dropped, "the module's own default fails the condition, and the API server refuses a CRD whose default fails a rule")
				b.exact = false
			default:
				for _, c := range conjuncts(tr.p) {
					b.parts = append(b.parts, part{p: c, keep: c.cost() < cheap})
				}
			}
			blocks = append(blocks, b)
		}
	}
	spent := int64(0)
	for _, b := range blocks {
		for i := range b.parts {
			if !b.parts[i].keep {
				continue
			}
			spent += b.parts[i].p.cost()
		}
	}
	for _, b := range blocks {
		rule := int64(0)
		for i := range b.parts {
			if b.parts[i].keep {
				rule += b.parts[i].p.cost()
			}
		}
		for i := range b.parts {
			c := b.parts[i].p.cost()
			if b.parts[i].keep {
				continue
			}
			if rule+c <= ruleBudget && spent+c <= totalBudget {
				b.parts[i].keep = true
				rule += c
				spent += c
				continue
			}
			b.exact = false
			b.t.Dropped = append(b.t.Dropped, fmt.Sprintf("%s: over the API server's CEL cost budget", b.parts[i].p.cel()))
		}
	}
	out := make([]Translation, len(blocks))
	for i, b := range blocks {
		var kept andPred
		for _, p := range b.parts {
			if p.keep {
				kept = append(kept, p.p)
			}
		}
		switch len(kept) {
		case 0:
			b.exact = false
		case 1:
			b.t.Rule = kept[0].cel()
		default:
			b.t.Rule = kept.cel()
		}
		b.t.Exact = b.exact
		out[i] = b.t
	}
	return out
}

// defaultPasses reports whether the variable's default, as the API server holds it, satisfies p.
func defaultPasses(v module.Variable, p pred) bool {
	if !v.HasDefault || v.Default == nil {
		return true
	}
	d, err := ToField(withoutNullAttributes(v.Default, v.Type), v.Type)
	if err != nil {
		return false
	}
	return p.eval(d)
}

// ApplyValidations adds to the forProvider schema the rules translated from the validation blocks
// of m's variables, each with its block's error_message, and returns what became of each block.
// Variables without a field of their own in forProvider (sensitive ones) get none.
func ApplyValidations(forProvider *extv1.JSONSchemaProps, m *module.Module) []Translation {
	ts := Translations(m)
	rules := map[string]extv1.ValidationRules{}
	for _, t := range ts {
		if t.Rule != "" {
			rules[t.Variable] = append(rules[t.Variable], extv1.ValidationRule{Rule: t.Rule, Message: t.Message})
		}
	}
	for _, v := range m.Variables {
		f := FieldName(v.Name)
		p, ok := forProvider.Properties[f]
		if !ok || v.Sensitive {
			continue
		}
		// Replacing rather than appending keeps this idempotent.
		p.XValidations = rules[v.Name]
		forProvider.Properties[f] = p
	}
	return ts
}
