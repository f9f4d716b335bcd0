package validation

import (
	"strconv"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// A number compared with a string.
//
// Terraform's order comparisons take numbers: a string operand is converted, as cty converts
// strings, with Go's big.ParseFloat in base 10, and the condition errs where that fails. What it
// parses is numberSyntax: a sign, digits with or without a point, an exponent of 10 (e) or of 2
// (p), or Inf. The rule refuses a string that is not one (exactly: terraform refuses it in every
// reading), and compares the others where CEL's double() of the string is the exact number: whole
// numbers of at most 15 digits, which a double holds exactly and which are below 2^53, so that a
// number the API server holds beyond it (an int64 CEL rounds) is still ordered right. Other
// numbers are left to Terraform. TestTerraformNumberOfString checks these facts against terraform.

// numberSyntax matches the strings big.ParseFloat parses in base 10 (an exponent beyond its range
// aside: the pattern is the lenient side).
const numberSyntax = `^[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eEpP][+-]?[0-9]+)?|[iI]nf)$`

// exactWhole matches the strings of whole numbers a double holds exactly, below 2^53.
const exactWhole = `^-?[0-9]{1,15}$`

// numStrPred is n op s, for a number n and a string s of exactWhole.
type numStrPred struct {
	n, s *term
	op   string
}

func (p numStrPred) cel() string { return p.n.expr + " " + p.op + " double(" + p.s.expr + ")" }

func (p numStrPred) cost() int64 {
	return smallCost + selectCost(p.n) + selectCost(p.s) + walkCost(p.s) + termCost(p.s)
}

func (p numStrPred) eval(e env) tri {
	nv, ok := p.n.value(e)
	if !ok {
		return triError
	}
	sv, ok := p.s.value(e)
	if !ok {
		return triError
	}
	n, nok := number(nv)
	str, sok := sv.(string)
	if !nok || !sok {
		return triError
	}
	f, err := strconv.ParseFloat(str, 64)
	if err != nil {
		return triError
	}
	return triOf(compare(n, p.op, f))
}

// numberAndString translates a op b for a number and a string (either way round) and an order
// comparison op: the string is one Terraform converts, and where it is a whole number CEL holds
// exactly, the comparison holds.
func (t *translator) numberAndString(e hcl.Expression, a *term, op string, b *term) translated {
	n, s := a, b
	if n.ty == cty.String {
		// s op n is n op' s.
		n, s, op = b, a, map[string]string{">": "<", ">=": "<=", "<": ">", "<=": ">="}[op]
	}
	if op == "" || n.ty != cty.Number || s.ty != cty.String || !n.exactTerm() || !s.exactTerm() {
		return t.untranslated("a comparison of two values that is not of two numbers", e)
	}
	// Both patterns match only ASCII characters other than K, ; and ` (which characters outside
	// ASCII normalize to): a string matches them exactly where its NFC form does.
	parses := matchPred{s, numberSyntax}
	compared := orPred{notPred{matchPred{s, exactWhole}}, numStrPred{n, s, op}}
	return guarded(guarded(and(exactly(parses), soundly(compared)), s, ""), n, "")
}
