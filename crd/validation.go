package crd

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
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
//   - An optional attribute without a default is null to Terraform and absent to the API server:
//     comparisons with null become has(), and a test of an attribute that may be absent is guarded
//     to hold, or fail, where Terraform's null would make it (see validation_translate.go).
//   - Terraform before 1.12 evaluates both sides of || and && and errs when either errs, later
//     versions (and CEL) take a true (||) or false (&&) from either side over an error: rules
//     follow the later, more lenient reading, which is sound for both; they are called exact only
//     where both readings agree.
//   - A default that fails a rule makes the API server refuse the whole CRD, so a rule the module's
//     own default fails is left out.
//   - The API server refuses a CRD whose rules might cost too much; expensive parts are dropped
//     once a budget is spent (see Translations), unless the module's own conditions bound the
//     collections and strings they walk (see validation_bounds.go), or OpenAPI's checks of a
//     string say the same (see validation_schema.go).
//
// Every translation is a CEL rule (x-kubernetes-validations) rather than OpenAPI's enum, pattern,
// minimum or maxLength, even where those would mean the same: only a rule carries the module's
// error_message to the user, and a failed enum or maxLength stops the API server from running any
// rule at all. The exceptions are set only where a module's rules would not fit the API server's
// cost limits without them: bounds (maxItems, maxProperties, maxLength), and patterns and enums
// in place of the rules that cost too much.

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
	// Schema names the checks of the schema (pattern, enum) that check parts of the condition
	// whose rules would cost more than the API server allows.
	Schema []string
	// Dropped names the parts of the condition left to Terraform, and why.
	Dropped []string
	// Outcome sums up what the API server checks of the block.
	Outcome Outcome

	pred pred
}

// An Outcome says how much of a validation block the API server checks when an instance is
// written; Terraform checks all of it at plan time in any case.
type Outcome string

const (
	// Enforced blocks are checked at admission: the rule refuses exactly what the condition does
	// (null aside, which rules never see).
	Enforced Outcome = "Enforced"
	// Partly blocks have a rule that checks part of the condition: what it refuses, Terraform
	// would refuse, but Terraform may refuse more at plan time.
	Partly Outcome = "Partly"
	// Implied blocks hold for every value the schema admits but null: no rule is needed.
	Implied Outcome = "Implied"
	// PlanTime blocks are checked by Terraform at plan time only.
	PlanTime Outcome = "PlanTime"
)

// Summary says in one line what became of the block, for a Module's status and `modkind
// generate`: "settings (variables.tf:12): checked at admission".
func (t Translation) Summary() string {
	head := t.Variable
	if t.Pos != "" {
		head += " (" + t.Pos + ")"
	}
	if len(t.Schema) > 0 && (t.Outcome == Enforced || t.Outcome == Partly) {
		// The checks of the schema answer with the API server's message, not the module's.
		head += " (by the schema's " + t.schemaKinds() + " where a rule would cost too much)"
	}
	switch t.Outcome {
	case Enforced:
		return head + ": checked at admission"
	case Implied:
		return head + ": holds for every non-null value the schema admits"
	case Partly:
		return head + ": partly checked at admission; at plan time: " + t.reason()
	}
	return head + ": at plan time: " + t.reason()
}

// schemaKinds names the kinds of the schema's checks of the block: "pattern", "enum" or both.
func (t Translation) schemaKinds() string {
	var kinds []string
	for _, c := range t.Schema {
		k, _, _ := strings.Cut(c, " ")
		if !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	return strings.Join(kinds, " and ")
}

// reason is the first reason a part was left to Terraform, on one short line.
func (t Translation) reason() string {
	switch {
	case len(t.Dropped) > 0:
	case t.Outcome == Partly:
		return "the rule lets through some values Terraform refuses (strings outside ASCII, which Terraform normalizes; nulls in conditions Terraform before 1.12 errs on)"
	default:
		return "only null fails it, which rules never see"
	}
	r := t.Dropped[0]
	const max = 240
	if len(r) > max {
		// Keep the reason, which follows the expression.
		if i := strings.LastIndex(r, ": "); i > 0 && len(r)-i < max-20 {
			r = r[:max-(len(r)-i)-3] + "..." + r[i:]
		} else {
			r = r[:max-3] + "..."
		}
	}
	return r
}

// A ValidationReport says, for each validation block of a module, what the API server checks of it.
type ValidationReport struct {
	Blocks []Translation
}

// Validations reports what becomes of the validation blocks of m's variables in the CRD that
// Synthesize makes of it.
func Validations(m *module.Module) ValidationReport { return ValidationReport{Blocks: Translations(m)} }

// Count is how many blocks have the outcome.
func (r ValidationReport) Count(o Outcome) int {
	n := 0
	for _, b := range r.Blocks {
		if b.Outcome == o {
			n++
		}
	}
	return n
}

// Lines are the blocks' summaries, in the order of the variables.
func (r ValidationReport) Lines() []string {
	out := make([]string, len(r.Blocks))
	for i, b := range r.Blocks {
		out[i] = b.Summary()
	}
	return out
}

// translated is a condition's translation: p holds for every non-null value for which the
// condition holds, and exact says the converse holds too.
type translated struct {
	p       pred
	exact   bool
	dropped []string
	// mayErr is set when Terraform's evaluation may err for a value the API server admits: a
	// null where a value is needed, as an unset optional attribute is. Terraform before 1.12
	// evaluates both sides of || and errs when either does, so var.x.a == null || var.x.a > 3
	// fails there for an unset a; the translation, which holds for it, is then not exact.
	mayErr bool
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
	out := translated{exact: a.exact && b.exact, dropped: append(append([]string(nil), a.dropped...), b.dropped...), mayErr: a.mayErr || b.mayErr}
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
	// A side that may err makes the other side's verdict Terraform's only where it short-circuits.
	out := translated{exact: a.exact && b.exact && !a.mayErr && !b.mayErr, dropped: append(append([]string(nil), a.dropped...), b.dropped...), mayErr: a.mayErr || b.mayErr}
	switch {
	case a.p == constPred(true) || b.p == constPred(true):
		// One side holds for all values, so does the disjunction; it is exact when that side is.
		out.p = constPred(true)
		out.exact = (a.p == constPred(true) && a.exact && !b.mayErr) || (b.p == constPred(true) && b.exact && !a.mayErr)
	case a.p == constPred(false):
		out.p = b.p
	case b.p == constPred(false):
		out.p = a.p
	default:
		// x == "a" || x == "b" reads better as one membership.
		ai, aok := a.p.(inPred)
		bi, bok := b.p.(inPred)
		switch {
		case aok && bok && ai.s.expr == bi.s.expr:
			out.p = inPred{s: ai.s, lits: append(slices.Clone(ai.lits), bi.lits...)}
		default:
			var ps orPred
			for _, p := range []pred{a.p, b.p} {
				if o, ok := p.(orPred); ok {
					ps = append(ps, o...)
				} else {
					ps = append(ps, p)
				}
			}
			// The same test twice, as try() adds has() tests a condition may already make, once.
			seen := map[string]bool{}
			var dedup orPred
			for _, p := range ps {
				if !seen[p.cel()] {
					seen[p.cel()] = true
					dedup = append(dedup, p)
				}
			}
			out.p = dedup
			if len(dedup) == 1 {
				out.p = dedup[0]
			}
		}
	}
	return out
}

func conjuncts(p pred) []pred {
	if a, ok := p.(andPred); ok {
		return a
	}
	return []pred{p}
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

// message is the error_message as the API server accepts it: on one line.
func message(s string) string { return strings.Join(strings.Fields(s), " ") }

// The API server refuses a CRD when a rule's estimated cost exceeds 10^7 or the sum over the CRD
// exceeds 10^8 (StaticEstimatedCostLimit, StaticEstimatedCRDCostLimit). modkind's own estimate is
// already above the server's; it keeps a further 10% and 20% for rules added elsewhere.
type costBudget struct{ rule, total int64 }

var (
	apiServerBudget = costBudget{rule: 9_000_000, total: 80_000_000}
	unlimited       = costBudget{rule: maxCost, total: maxCost}
)

// Parts cheaper than this are always kept: a module cannot have enough of them to matter.
const cheap = 1_000

// Translations translates the validation blocks of m's variables into CEL rules, keeping the
// rules of the whole module within the API server's cost limits: every cheap part is kept, then
// the expensive parts (regular expressions, quantifiers over collections) from the cheapest up, so
// that as many as possible fit, until the budget is spent. Dropping a part of a conjunction only
// makes a rule weaker, which is safe.
func Translations(m *module.Module) []Translation { return translations(m, apiServerBudget) }

func translations(m *module.Module, budget costBudget) []Translation {
	ts, _ := translateModule(m, budget)
	return ts
}

// variableBounds are the bounds the validation blocks of v give its collections and strings, as
// far as its defaults keep them.
func variableBounds(v module.Variable) *schemaBounds {
	b := newSchemaBounds()
	for _, val := range v.Validations {
		if tr := translateValidation(v, val); tr.p != constPred(true) {
			b.collect(tr.p)
		}
	}
	for path, n := range b.maxItems {
		if !defaultsWithin(v, path, func(x any) bool {
			switch x := x.(type) {
			case []any:
				return int64(len(x)) <= n
			case map[string]any:
				return int64(len(x)) <= n
			}
			return true
		}) {
			delete(b.maxItems, path)
		}
	}
	for path, n := range b.maxLength {
		if !defaultsWithin(v, path, func(x any) bool {
			s, ok := x.(string)
			return !ok || int64(utf8.RuneCountInString(s)) <= n
		}) {
			delete(b.maxLength, path)
		}
	}
	return b
}

// translateModule translates the validation blocks of m's variables, and returns with them the
// bounds of each variable's field. Bounds replace the module's message with the API server's for
// values beyond them, so they are used only where the rules would not fit the budget without: for
// the variables with expensive rules, in a module whose rules do not all fit.
func translateModule(m *module.Module, budget costBudget) ([]Translation, map[string]*schemaBounds) {
	ts, bounds := translateModuleWith(m, budget, nil)
	for _, t := range ts {
		// Bounds keep the module's own rule and message where schema checks would not.
		if len(t.Schema) > 0 {
			return translateModuleWith(m, budget, expensive)
		}
		for _, d := range t.Dropped {
			if strings.Contains(d, overBudget) {
				return translateModuleWith(m, budget, expensive)
			}
		}
	}
	return ts, bounds
}

const overBudget = "over the API server's CEL cost limit"

// expensive reports whether bounds make an expensive rule of v affordable.
func expensive(v module.Variable) bool {
	b := variableBounds(v)
	if b.empty() {
		return false
	}
	for _, val := range v.Validations {
		unbounded, bounded := conjuncts(translateValidation(v, val).p), conjuncts(translateBounded(v, val, b).p)
		if len(unbounded) != len(bounded) {
			continue
		}
		for i := range unbounded {
			if c := bounded[i].cost(); unbounded[i].cost() >= cheap && c < unbounded[i].cost() && c <= apiServerBudget.rule {
				return true
			}
		}
	}
	return false
}

func translateModuleWith(m *module.Module, budget costBudget, bounded func(module.Variable) bool) ([]Translation, map[string]*schemaBounds) {
	type part struct {
		p    pred
		keep bool
		// schema is set for a part the schema's checks (patterns, enums) make.
		schema *schemaBounds
	}
	type block struct {
		v     module.Variable
		t     Translation
		parts []part
		exact bool
		// implied is set when the condition holds for every non-null value the schema admits.
		implied bool
	}
	var blocks []*block
	bounds := map[string]*schemaBounds{}
	for _, v := range m.Variables {
		var vb *schemaBounds
		if len(v.Validations) > 0 && !v.Sensitive && bounded != nil && bounded(v) {
			if vb = variableBounds(v); !vb.empty() {
				bounds[v.Name] = vb
			}
		}
		for _, val := range v.Validations {
			tr := translateBounded(v, val, vb)
			b := &block{v: v, t: Translation{Variable: v.Name, Pos: val.Pos, Message: message(val.ErrorMessage), Dropped: tr.dropped}, exact: tr.exact}
			switch {
			case tr.p == constPred(true):
				b.implied = tr.exact
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
	rule := make([]int64, len(blocks))
	type ref struct{ b, i int }
	var expensive []ref
	for bi, b := range blocks {
		for i := range b.parts {
			if b.parts[i].keep {
				spent += b.parts[i].p.cost()
				rule[bi] += b.parts[i].p.cost()
			} else {
				expensive = append(expensive, ref{bi, i})
			}
		}
	}
	slices.SortStableFunc(expensive, func(x, y ref) int {
		return cmp.Compare(blocks[x.b].parts[x.i].p.cost(), blocks[y.b].parts[y.i].p.cost())
	})
	for _, r := range expensive {
		b := blocks[r.b]
		c := b.parts[r.i].p.cost()
		if rule[r.b]+c <= budget.rule && spent+c <= budget.total {
			b.parts[r.i].keep = true
			rule[r.b] += c
			spent += c
		}
	}
	// What does not fit becomes checks of the schema where it can.
	for _, b := range blocks {
		if b.v.Sensitive {
			continue
		}
		// Optional attributes the rule requires are present where the checks apply.
		var present []*term
		for _, p := range b.parts {
			if ts, ok := presentTerms(p.p); ok && p.keep {
				present = append(present, ts...)
			}
		}
		for i := range b.parts {
			if b.parts[i].keep {
				continue
			}
			c, ok := schemaChecks(b.parts[i].p, present...)
			if !ok || !defaultsPassChecks(b.v, c) {
				continue
			}
			vb := bounds[b.v.Name]
			if vb == nil {
				vb = newSchemaBounds()
			}
			if !vb.addFrom(c) {
				continue
			}
			bounds[b.v.Name] = vb
			b.parts[i].schema = c
		}
	}
	out := make([]Translation, len(blocks))
	for i, b := range blocks {
		var kept, checked andPred
		for _, p := range b.parts {
			switch {
			case p.keep:
				kept = append(kept, p.p)
				checked = append(checked, p.p)
			case p.schema != nil && p.schema.inexact:
				// The checks hold for more than the part: the rest is Terraform's.
				b.exact = false
				b.t.Schema = append(b.t.Schema, p.schema.describe()...)
				b.t.Dropped = append(b.t.Dropped, fmt.Sprintf("%s: %s; the schema's pattern checks only the shape of the strings", p.p.cel(), overBudgetReason(p.p, budget)))
			case p.schema != nil:
				checked = append(checked, p.p)
				b.t.Schema = append(b.t.Schema, p.schema.describe()...)
			default:
				b.exact = false
				b.t.Dropped = append(b.t.Dropped, fmt.Sprintf("%s: %s", p.p.cel(), overBudgetReason(p.p, budget)))
			}
		}
		switch len(kept) {
		case 0:
		case 1:
			b.t.Rule = kept[0].cel()
		default:
			b.t.Rule = kept.cel()
		}
		switch len(checked) {
		case 0:
			b.exact = false
		case 1:
			b.t.pred = checked[0]
		default:
			b.t.pred = checked
		}
		b.t.Exact = b.exact
		switch {
		case len(checked) > 0 && b.exact:
			b.t.Outcome = Enforced
		case len(checked) > 0 || len(b.t.Schema) > 0:
			b.t.Outcome = Partly
		case b.implied:
			b.t.Outcome = Implied
		default:
			b.t.Outcome = PlanTime
		}
		out[i] = b.t
	}
	return out, bounds
}

// defaultsWithin reports whether every value at path within v's default, and every default of an
// optional attribute there, satisfies ok.
func defaultsWithin(v module.Variable, path string, ok func(any) bool) bool {
	if v.HasDefault && v.Default != nil {
		d, err := ToField(withoutNullAttributes(v.Default, v.Type), v.Type)
		if err != nil {
			return false
		}
		for _, x := range valuesAt(d, path) {
			if !ok(x) {
				return false
			}
		}
	}
	return typeDefaultsWithin(v.TypeDefaults, v.Type, path, ok)
}

func typeDefaultsWithin(d *typeexpr.Defaults, ty cty.Type, path string, ok func(any) bool) bool {
	if d == nil || path == "" {
		return true
	}
	if strings.HasPrefix(path, "[]") || strings.HasPrefix(path, "{}") {
		if !ty.IsCollectionType() {
			return true
		}
		return typeDefaultsWithin(d.Children[""], ty.ElementType(), path[2:], ok)
	}
	name, rest := path[1:], ""
	if end := strings.IndexAny(path[1:], ".[{"); end >= 0 {
		name, rest = path[1:end+1], path[end+1:]
	}
	if !ty.IsObjectType() {
		return true
	}
	for attr, at := range ty.AttributeTypes() {
		if FieldName(attr) != name {
			continue
		}
		if dv, has := d.DefaultValues[attr]; has && !dv.IsNull() {
			raw, err := ctyToField(dv, at)
			if err != nil {
				return false
			}
			var x any
			if err := json.Unmarshal(raw, &x); err != nil {
				return false
			}
			for _, y := range valuesAt(x, rest) {
				if !ok(y) {
					return false
				}
			}
		}
		return typeDefaultsWithin(d.Children[attr], at, rest, ok)
	}
	return true
}

// valuesAt are the values at path (see term.path) within the field value x.
func valuesAt(x any, path string) []any {
	if x == nil {
		return nil
	}
	switch {
	case path == "":
		return []any{x}
	case strings.HasPrefix(path, "[]"):
		l, _ := x.([]any)
		var out []any
		for _, e := range l {
			out = append(out, valuesAt(e, path[2:])...)
		}
		return out
	case strings.HasPrefix(path, "{}"):
		m, _ := x.(map[string]any)
		var out []any
		for _, e := range m {
			out = append(out, valuesAt(e, path[2:])...)
		}
		return out
	}
	name, rest := path[1:], ""
	if end := strings.IndexAny(path[1:], ".[{"); end >= 0 {
		name, rest = path[1:end+1], path[end+1:]
	}
	m, _ := x.(map[string]any)
	return valuesAt(m[name], rest)
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
	return accepts(p, d)
}

// ApplyValidations adds to the forProvider schema the rules translated from the validation blocks
// of m's variables, each with its block's error_message, and the bounds those blocks give the
// variables' collections and strings, and returns what became of each block. Variables without a
// field of their own in forProvider (sensitive ones) get none.
func ApplyValidations(forProvider *extv1.JSONSchemaProps, m *module.Module) []Translation {
	ts, bounds := translateModule(m, apiServerBudget)
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
		bounds[v.Name].apply(&p)
		forProvider.Properties[f] = p
	}
	return ts
}
