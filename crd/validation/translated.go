package validation

import (
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

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

// message is the error_message as the API server accepts it: on one line.
func message(s string) string { return strings.Join(strings.Fields(s), " ") }
