package validation

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// A string split in two by substr():
//
//	length(x) >= n && f(substr(x, 0, n)) == "L" && can(regex("R", substr(x, n, -1)))
//
// for a literal L of n ASCII characters without CR, f nothing, lower() or upper(), and R a pattern
// of whole ASCII strings without letters (as postgres_ and a version: "^\\d+(?:_?\\d)*$"). substr
// counts grapheme clusters of the NFC form N of x, and Terraform's lower() and upper() map each
// code point to one: where f of the first n clusters is L, each is one code point that f makes
// ASCII (ASCII itself, or one of the few outside ASCII foldsOutsideASCII lists, none of which joins
// a cluster with an ASCII one), and the rest of N is the rest of x's clusters, which R matches
// only where it is ASCII without letters, which f leaves alone. So the conjunction holds exactly
// where f(N) matches ^L(?:R)$, and lengths of at most n add nothing to it: the search of a pattern
// of whole ASCII strings in f(x), which matches decides exactly (see foldedPattern).

// prefixed translates such a conjunction; ok is false for any other.
func (t *translator) prefixed(e *hclsyntax.BinaryOpExpr) (translated, bool) {
	parts := conjunctsOf(e)
	var head, tail *hclsyntax.FunctionCallExpr
	var lit string
	var x hclsyntax.Expression
	var n int64
	var rest []hclsyntax.Expression
	for _, p := range parts {
		if h, l, ok := headTest(p); ok && head == nil {
			head, lit = h, l
			continue
		}
		rest = append(rest, p)
	}
	if head == nil {
		return translated{}, false
	}
	x, n = unwrap(head.Args[0]), int64(utf8.RuneCountInString(lit))
	var others []hclsyntax.Expression
	var re string
	for _, p := range rest {
		if r, ok := tailTest(p, x, n, t.src); ok && tail == nil {
			tail, re = p.(*hclsyntax.FunctionCallExpr), r
			continue
		}
		if k, ok := lengthAtLeast(p, x, t.src); ok && k <= n {
			// Implied by the first n clusters.
			continue
		}
		others = append(others, p)
	}
	body, ok := unanchored(re)
	if tail == nil || !ok || !isASCII(lit) || strings.Contains(lit, "\r") {
		return translated{}, false
	}
	// The term f(x): x itself, or lower(x) or upper(x).
	var subject hclsyntax.Expression = x
	if head.Name != "substr" {
		subject = head
	}
	s, _ := t.term(subject)
	if s == nil || s.ty != cty.String || s.tryNull || s.lenient {
		// Left to the translation of each part.
		return translated{}, false
	}
	out := guarded(t.matches(e, s, "^"+regexp.QuoteMeta(lit)+"(?:"+body+")$", false), s, "")
	for _, o := range others {
		out = and(out, t.translate(o, false))
	}
	return out, true
}

// conjunctsOf flattens a chain of && (in parentheses or not).
func conjunctsOf(e hclsyntax.Expression) []hclsyntax.Expression {
	if b, ok := unwrap(e).(*hclsyntax.BinaryOpExpr); ok && b.Op == hclsyntax.OpLogicalAnd {
		return append(conjunctsOf(b.LHS), conjunctsOf(b.RHS)...)
	}
	return []hclsyntax.Expression{unwrap(e)}
}

// headTest matches f(substr(x, 0, n)) == "L" (either way round) where L has n code points; head is
// f's call (substr itself when there is no f), with substr's call as its argument rewritten to x.
func headTest(e hclsyntax.Expression) (head *hclsyntax.FunctionCallExpr, lit string, ok bool) {
	cmp, isCmp := e.(*hclsyntax.BinaryOpExpr)
	if !isCmp || cmp.Op != hclsyntax.OpEqual {
		return nil, "", false
	}
	for _, sides := range [][2]hclsyntax.Expression{{cmp.LHS, cmp.RHS}, {cmp.RHS, cmp.LHS}} {
		c, isConst := constant(sides[1])
		call, isCall := unwrap(sides[0]).(*hclsyntax.FunctionCallExpr)
		if !isConst || !isCall || c.IsNull() || c.Type() != cty.String || call.ExpandFinal || len(call.Args) != 1 && call.Name != "substr" {
			continue
		}
		name, sub := "substr", call
		if call.Name == "lower" || call.Name == "upper" {
			inner, isSub := unwrap(call.Args[0]).(*hclsyntax.FunctionCallExpr)
			if !isSub {
				continue
			}
			name, sub = call.Name, inner
		}
		if sub.Name != "substr" || len(sub.Args) != 3 || sub.ExpandFinal || !isInt(sub.Args[1], 0) || !isInt(sub.Args[2], int64(utf8.RuneCountInString(c.AsString()))) {
			continue
		}
		return &hclsyntax.FunctionCallExpr{Name: name, Args: []hclsyntax.Expression{sub.Args[0]}, NameRange: call.NameRange, OpenParenRange: call.OpenParenRange, CloseParenRange: call.CloseParenRange}, c.AsString(), true
	}
	return nil, "", false
}

// tailTest matches can(regex("R", substr(x, n, -1))) and returns R.
func tailTest(e hclsyntax.Expression, x hclsyntax.Expression, n int64, src string) (string, bool) {
	can, ok := e.(*hclsyntax.FunctionCallExpr)
	if !ok || can.Name != "can" || len(can.Args) != 1 {
		return "", false
	}
	re, ok := unwrap(can.Args[0]).(*hclsyntax.FunctionCallExpr)
	if !ok || re.Name != "regex" || len(re.Args) != 2 || re.ExpandFinal {
		return "", false
	}
	p, ok := constant(re.Args[0])
	sub, isSub := unwrap(re.Args[1]).(*hclsyntax.FunctionCallExpr)
	if !ok || !isSub || p.IsNull() || p.Type() != cty.String || sub.Name != "substr" || len(sub.Args) != 3 || sub.ExpandFinal {
		return "", false
	}
	if !sameExpr(unwrap(sub.Args[0]), x, src) || !isInt(sub.Args[1], n) || !isInt(sub.Args[2], -1) {
		return "", false
	}
	return p.AsString(), true
}

// lengthAtLeast matches length(x) >= k and length(x) > k-1, and returns k.
func lengthAtLeast(e hclsyntax.Expression, x hclsyntax.Expression, src string) (int64, bool) {
	cmp, ok := e.(*hclsyntax.BinaryOpExpr)
	if !ok || cmp.Op != hclsyntax.OpGreaterThanOrEqual && cmp.Op != hclsyntax.OpGreaterThan {
		return 0, false
	}
	call, ok := unwrap(cmp.LHS).(*hclsyntax.FunctionCallExpr)
	if !ok || call.Name != "length" || len(call.Args) != 1 || !sameExpr(unwrap(call.Args[0]), x, src) {
		return 0, false
	}
	for k := int64(0); k <= 64; k++ {
		if isInt(cmp.RHS, k) {
			if cmp.Op == hclsyntax.OpGreaterThan {
				return k + 1, true
			}
			return k, true
		}
	}
	return 0, false
}

// isInt reports whether e is the constant whole number n.
func isInt(e hclsyntax.Expression, n int64) bool {
	c, ok := constant(e)
	return ok && !c.IsNull() && c.Type() == cty.Number && c.RawEquals(cty.NumberIntVal(n))
}

// unanchored is a pattern of whole ASCII strings without letters (asciiOnly) with the anchors of
// its alternatives taken out, to follow a prefix; false for any other.
func unanchored(re string) (string, bool) {
	if !asciiOnly(re) || hasLetters(re) {
		return "", false
	}
	parsed, err := syntax.Parse(re, syntax.Perl)
	if err != nil {
		return "", false
	}
	parsed = parsed.Simplify()
	alts := []*syntax.Regexp{parsed}
	if parsed.Op == syntax.OpAlternate {
		alts = parsed.Sub
	}
	var out []string
	for _, a := range alts {
		for a.Op == syntax.OpCapture {
			a = a.Sub[0]
		}
		inner := &syntax.Regexp{Op: syntax.OpConcat, Sub: a.Sub[1 : len(a.Sub)-1], Flags: a.Flags}
		out = append(out, inner.String())
	}
	return strings.Join(out, "|"), true
}

// hasLetters reports whether re may match an ASCII letter.
func hasLetters(re string) bool {
	parsed, err := syntax.Parse(re, syntax.Perl)
	if err != nil {
		return true
	}
	letters := false
	var walk func(x *syntax.Regexp)
	walk = func(x *syntax.Regexp) {
		switch x.Op {
		case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
			letters = true
		case syntax.OpLiteral, syntax.OpCharClass:
			ranges := x.Rune
			if x.Op == syntax.OpLiteral {
				ranges = nil
				for _, r := range x.Rune {
					ranges = append(ranges, r, r)
				}
			}
			for i := 0; i+1 < len(ranges); i += 2 {
				lo, hi := ranges[i], ranges[i+1]
				if lo <= 'Z' && hi >= 'A' || lo <= 'z' && hi >= 'a' || x.Flags&syntax.FoldCase != 0 {
					letters = true
				}
			}
		}
		for _, s := range x.Sub {
			walk(s)
		}
	}
	walk(parsed)
	return letters
}
