package validation

import (
	"math"

	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// wholePred holds where the number s is whole: Terraform's ceil(x) == x or floor(x) == x. The API
// server gives CEL numbers as doubles, and every double of magnitude 2^53 or more is whole; below
// that, int() truncates toward zero without leaving int's range, so double(int(s)) == s exactly
// where s is whole.
type wholePred struct{ s *term }

// twoTo53 is 2^53, written out in cel().
const twoTo53 = 9007199254740992.0

func (p wholePred) cel() string {
	return "(" + p.s.expr + " >= 9007199254740992.0 || " + p.s.expr + " <= -9007199254740992.0" +
		" || double(int(" + p.s.expr + ")) == " + p.s.expr + ")"
}

func (p wholePred) cost() int64 { return 4*smallCost + 4*selectCost(p.s) }

func (p wholePred) eval(e env) tri {
	v, ok := p.s.value(e)
	if !ok {
		return triError
	}
	f, ok := number(v)
	if !ok {
		return triError
	}
	return triOf(math.Abs(f) >= twoTo53 || math.Trunc(f) == f)
}

// wholeness translates ceil(x) == x and floor(x) == x (either way round, or with !=) into
// wholePred of x; ok is false for any other comparison.
func (t *translator) wholeness(e *hclsyntax.BinaryOpExpr, op string, neg bool) (translated, bool) {
	if op != "==" && op != "!=" {
		return translated{}, false
	}
	for _, sides := range [][2]hclsyntax.Expression{{unwrap(e.LHS), unwrap(e.RHS)}, {unwrap(e.RHS), unwrap(e.LHS)}} {
		call, ok := sides[0].(*hclsyntax.FunctionCallExpr)
		if !ok || (call.Name != "ceil" && call.Name != "floor") || len(call.Args) != 1 || call.ExpandFinal {
			continue
		}
		s, _ := t.term(unwrap(call.Args[0]))
		o, _ := t.term(sides[1])
		if s == nil || o == nil || s.expr != o.expr || !s.ty.Equals(cty.Number) {
			continue
		}
		var p pred = wholePred{s}
		if (op == "!=") != neg {
			p = notPred{p}
		}
		return guarded(exactly(p), s, ""), true
	}
	return translated{}, false
}
