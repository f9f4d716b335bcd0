package validation

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/modkind/modkind/kind/fields"
	"github.com/modkind/modkind/module"
)

// Translations translates the validation blocks of m's variables into CEL rules, keeping the
// rules of the whole module within the API server's cost limits: every cheap part is kept, then
// the expensive parts (regular expressions, quantifiers over collections) from the cheapest up, so
// that as many as possible fit, until the budget is spent. Dropping a part of a conjunction only
// makes a rule weaker, which is safe.
func Translations(m *module.Module) []Translation { return translations(m, apiServerBudget) }

// NewReport reports what becomes of the validation blocks of m's variables in the CRD that package
// crd synthesizes from m.
func NewReport(m *module.Module) Report { return Report{Blocks: Translations(m)} }

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
			if a, _ := affordable(bounded[i]); unbounded[i].cost() >= cheap && a.cost() < unbounded[i].cost() && a.cost() <= apiServerBudget.rule {
				return true
			}
		}
	}
	return false
}

// translateModuleWith translates the validation blocks of m's variables within the budget, the
// fields of the variables bounded picks (none when it is nil) bounded as their conditions say.
func translateModuleWith(m *module.Module, budget costBudget, bounded func(module.Variable) bool) ([]Translation, map[string]*schemaBounds) {
	blocks, bounds := translateBlocks(m, bounded)
	keepWithin(blocks, budget)
	checkBySchema(blocks, bounds)
	out := make([]Translation, len(blocks))
	for i, b := range blocks {
		out[i] = b.translation(budget)
		out[i].Measured = measuredOf(b.v, out[i].Pos, out[i].Rule)
	}
	return out, bounds
}

// A block is a validation block on its way to its Translation: the parts of its condition's
// translation, and which of them the API server checks.
type block struct {
	v     module.Variable
	t     Translation
	parts []part
	exact bool
	// implied is set when the condition holds for every non-null value the schema admits.
	implied bool
}

// A part is a conjunct of the translation of a block's condition.
type part struct {
	p    pred
	keep bool
	// schema is set for a part the schema's checks (patterns, enums) make.
	schema *schemaBounds
	// item is set for a part a rule on each element of a collection checks (see itemrules.go).
	item *itemRule
}

// translateBlocks translates each validation block of m's variables into parts, and returns the
// blocks with the bounds of the fields of the variables bounded picks.
func translateBlocks(m *module.Module, bounded func(module.Variable) bool) ([]*block, map[string]*schemaBounds) {
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
			blocks = append(blocks, newBlock(v, val, vb))
		}
	}
	return blocks, bounds
}

// affordable is p, or where p costs more than a rule may and judging only ASCII strings costs
// less, that (see asciiJudged).
func affordable(p pred) (pred, bool) {
	if p.cost() <= apiServerBudget.rule {
		return p, false
	}
	// One that still costs too much is left for the schema's checks, which p makes exact ones.
	if a := asciiJudged(p); a.cost() < p.cost() && a.cost() <= apiServerBudget.rule {
		return a, true
	}
	return p, false
}

// newBlock translates the validation block val of v, whose field has the bounds vb. Its parts are
// the conjuncts of the translation, the cheap ones kept; a condition that holds for every value
// but null, or for none, or that the module's own default fails, has none.
func newBlock(v module.Variable, val module.Validation, vb *schemaBounds) *block {
	tr := translateBounded(v, val, vb)
	b := &block{v: v, t: Translation{Variable: v.Name, Pos: val.Pos, Message: message(val.ErrorMessage), Dropped: tr.dropped}, exact: tr.exact}
	switch {
	case tr.p == constPred(true):
		b.implied = tr.exact
	case tr.p == constPred(false) && !tr.exact:
		// Only null would pass as far as the translation knows, which is too little to refuse on.
		b.t.Dropped = append(b.t.Dropped, "the condition refuses every value but null")
		b.exact = false
	case tr.p == constPred(false) && defaultPasses(v, tr.p):
		// Only null passes: a variable kept declared so that setting it fails (a removed input).
		// A rule never runs on an absent field, so `false` refuses exactly the values set, as
		// Terraform does; the message is the module's own, which names what to use instead.
		b.parts = append(b.parts, part{p: tr.p, keep: true})
	case !defaultPasses(v, tr.p):
		b.t.Dropped = append(b.t.Dropped, "the module's own default fails the condition, and the API server refuses a CRD whose default fails a rule")
		b.exact = false
	default:
		for _, c := range conjuncts(tr.p) {
			if a, judged := affordable(c); judged {
				c, b.exact = a, false
			}
			b.parts = append(b.parts, part{p: c, keep: c.cost() < cheap})
		}
	}
	return b
}

// keepWithin keeps, besides the cheap parts of the blocks, the expensive ones from the cheapest up,
// each that still fits the budget of its rule and of the module, once the tests of every element
// that no rule could afford are split into their conjuncts (see split.go); it makes rules on each
// element of the others where those fit (see itemrules.go).
func keepWithin(blocks []*block, budget costBudget) {
	for _, b := range blocks {
		var parts []part
		for _, p := range b.parts {
			if p.keep {
				parts = append(parts, p)
				continue
			}
			for _, c := range splitOverBudget(p.p, budget) {
				parts = append(parts, part{p: c, keep: c.cost() < cheap})
			}
		}
		b.parts = parts
	}
	spent := int64(0)
	rule := make([]int64, len(blocks))
	type ref struct{ b, i int }
	var costly []ref
	for bi, b := range blocks {
		for i := range b.parts {
			if b.parts[i].keep {
				spent += b.parts[i].p.cost()
				rule[bi] += b.parts[i].p.cost()
			} else {
				costly = append(costly, ref{bi, i})
			}
		}
	}
	slices.SortStableFunc(costly, func(x, y ref) int {
		return cmp.Compare(blocks[x.b].parts[x.i].p.cost(), blocks[y.b].parts[y.i].p.cost())
	})
	for _, r := range costly {
		b := blocks[r.b]
		c := b.parts[r.i].p.cost()
		if rule[r.b]+c <= budget.rule && spent+c <= budget.total {
			b.parts[r.i].keep = true
			rule[r.b] += c
			spent += c
		}
	}
	keepAsItemRules(blocks, budget, spent)
}

// checkBySchema makes the parts that do not fit the budget checks of the schema where it can, and
// adds those to the bounds of their variable's field.
func checkBySchema(blocks []*block, bounds map[string]*schemaBounds) {
	for _, b := range blocks {
		if b.v.Sensitive {
			continue
		}
		// Optional attributes the rule requires are present where the checks apply.
		var present []*term
		for _, p := range b.parts {
			if ts, ok := requiredPresent(p.p); ok && (p.keep || p.item != nil) {
				present = append(present, ts...)
			}
		}
		for i := range b.parts {
			if b.parts[i].keep || b.parts[i].item != nil {
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
}

// translation is what became of the block: the rule of the parts kept, the schema's checks of
// others, what was left to Terraform and why, and the outcome.
func (b *block) translation(budget costBudget) Translation {
	var kept, checked andPred
	for _, p := range b.parts {
		switch {
		case p.keep:
			kept = append(kept, p.p)
			checked = append(checked, p.p)
		case p.item != nil:
			checked = append(checked, p.p)
			b.exact = b.exact && !p.item.looser
			b.t.ItemRules = append(b.t.ItemRules, p.item.describe())
			b.t.items = append(b.t.items, *p.item)
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
	b.t.Outcome = b.outcome(len(checked) > 0)
	return b.t
}

// outcome sums up what the API server checks of the block, which checks some of its condition by
// rules or the schema's checks when checks is set.
func (b *block) outcome(checks bool) Outcome {
	switch {
	case checks && b.exact:
		return Enforced
	case checks || len(b.t.Schema) > 0:
		return Partly
	case b.implied:
		return Implied
	}
	return PlanTime
}

// Apply adds to the forProvider schema the rules translated from the validation blocks of m's
// variables, each with its block's error_message, and the bounds those blocks give the variables'
// collections and strings, and returns what became of each block. Variables without a field of
// their own in forProvider (sensitive ones) get none.
func Apply(forProvider *extv1.JSONSchemaProps, m *module.Module) []Translation {
	ts, bounds := translateModule(m, apiServerBudget)
	rules := map[string]extv1.ValidationRules{}
	for _, t := range ts {
		if t.Rule != "" {
			rules[t.Variable] = append(rules[t.Variable], extv1.ValidationRule{Rule: t.Rule, Message: t.Message})
		}
	}
	for _, v := range m.Variables {
		f := fields.Name(v.Name)
		p, ok := forProvider.Properties[f]
		if !ok || v.Sensitive {
			continue
		}
		// Replacing rather than appending keeps this idempotent.
		p.XValidations = rules[v.Name]
		bounds[v.Name].apply(&p)
		applyItemRules(&p, v.Name, ts)
		forProvider.Properties[f] = p
	}
	return ts
}

// keepAsItemRules makes the parts of the blocks the budget has no room for as rules on the field
// rules on each element, where they fit the budget of a rule and what is left of the module's;
// spent is what the module's rules cost so far.
func keepAsItemRules(blocks []*block, budget costBudget, spent int64) {
	for _, b := range blocks {
		if b.v.Sensitive {
			continue
		}
		for i := range b.parts {
			p := &b.parts[i]
			if p.keep {
				continue
			}
			r, ok := itemRuleOf(b.v, p.p)
			if !ok || r.cost > budget.rule || spent+r.cost > budget.total {
				continue
			}
			p.item, spent = &r, spent+r.cost
		}
	}
}

// applyItemRules adds to the schema s of the field of variable name the rules on each element of
// the translations of its blocks, each once.
func applyItemRules(s *extv1.JSONSchemaProps, name string, ts []Translation) {
	for _, t := range ts {
		if t.Variable != name {
			continue
		}
		for _, r := range t.items {
			rule := extv1.ValidationRule{Rule: r.rule, Message: t.Message}
			editAt(s, r.path, func(node *extv1.JSONSchemaProps) {
				if !slices.Contains(node.XValidations, rule) {
					node.XValidations = append(node.XValidations, rule)
				}
			})
		}
	}
}
