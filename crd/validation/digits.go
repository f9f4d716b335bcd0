package validation

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// A number read from a string by a pattern:
//
//	tonumber(replace(regex("^\\d{4}-\\d{2}-\\d{2}", split("@", x)[1]), "-", "")) >= 20250801
//
// split(sep, x)[i] is the part of x between its i-th and i+1-th sep (an error where there are not
// i of them); regex() of a pattern anchored at the start and made of digits and a separator c, with
// no capture group, is the match at the start (an error where there is none); replace(m, c, "")
// leaves its digits, which tonumber() reads as a whole number. So the comparison holds exactly
// where x matches ^([^sep]*sep){i} followed by digits and c as the pattern lays them out whose
// number compares so with the bound: a pattern over the digits, one alternative per first digit
// that differs from the bound's (see digitsCompared). Where Terraform errs (a missing sep, no
// match), the comparison fails, and so does its negation, which is the pattern of the other
// numbers. The pattern is searched as other patterns are (see matches).

// digitsCompared translates tonumber(...) op c for such a call; other calls are left to
// Terraform.
func (t *translator) digitsCompared(e hcl.Expression, call *hclsyntax.FunctionCallExpr, op string, c cty.Value) translated {
	const notDigits = "tonumber() of something other than the digits a pattern finds in a part of a string"
	n, ok := integer(c)
	if !ok || len(call.Args) != 1 || call.ExpandFinal {
		return t.untranslated(notDigits, e)
	}
	rep, ok := unwrap(call.Args[0]).(*hclsyntax.FunctionCallExpr)
	if !ok || rep.Name != "replace" || len(rep.Args) != 3 || rep.ExpandFinal {
		return t.untranslated(notDigits, e)
	}
	old, ok1 := constant(rep.Args[1])
	empty, ok2 := constant(rep.Args[2])
	if !ok1 || !ok2 || old.IsNull() || empty.IsNull() || old.Type() != cty.String || empty.Type() != cty.String || empty.AsString() != "" {
		return t.untranslated(notDigits, e)
	}
	re, ok := unwrap(rep.Args[0]).(*hclsyntax.FunctionCallExpr)
	if !ok || re.Name != "regex" || len(re.Args) != 2 || re.ExpandFinal {
		return t.untranslated(notDigits, e)
	}
	pattern, ok := constant(re.Args[0])
	if !ok || pattern.IsNull() || pattern.Type() != cty.String {
		return t.untranslated(notDigits, e)
	}
	collection, index, ok := indexed(unwrap(re.Args[1]))
	if !ok {
		return t.untranslated(notDigits, e)
	}
	split, ok := unwrap(collection).(*hclsyntax.FunctionCallExpr)
	if !ok || split.Name != "split" || len(split.Args) != 2 || split.ExpandFinal {
		return t.untranslated(notDigits, e)
	}
	sep, ok1 := constant(split.Args[0])
	if !ok1 || sep.IsNull() || sep.Type() != cty.String || index.IsNull() || index.Type() != cty.Number {
		return t.untranslated(notDigits, e)
	}
	i, ok := integer(index)
	s, why := t.term(unwrap(split.Args[1]))
	if s == nil {
		return t.untranslated(why, e)
	}
	sepStr, oldStr := sep.AsString(), old.AsString()
	layout, ok3 := digitLayout(pattern.AsString(), oldStr, sepStr)
	if !ok || i < 0 || i > 16 || !ok3 || !plainSeparator(sepStr) || !plainSeparator(oldStr) || s.ty != cty.String || !s.exactTerm() || s.ascii != nil {
		return t.untranslated(notDigits, e)
	}
	alts := digitsAlternatives(strings.Count(layout, "d"), op, n)
	if len(alts) == 0 {
		return guarded(exactly(constPred(false)), s, "")
	}
	q := regexp.QuoteMeta(sepStr)
	var rendered []string
	for _, a := range alts {
		var b strings.Builder
		k := 0
		for _, l := range layout {
			if l == 'd' {
				b.WriteString(a[k])
				k++
			} else {
				b.WriteString(regexp.QuoteMeta(oldStr))
			}
		}
		rendered = append(rendered, b.String())
	}
	full := "^" + strings.Repeat("[^"+q+"]*"+q, int(i)) + "(?:" + strings.Join(rendered, "|") + ")"
	return guarded(t.matches(e, s, full, false), s, "")
}

// plainSeparator reports whether s is one ASCII character other than a digit, a letter and those
// that characters outside ASCII normalize to.
func plainSeparator(s string) bool {
	return len(s) == 1 && isASCII(s) && !strings.ContainsAny(s, "0123456789"+normalTargets) &&
		!(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z')
}

// digitLayout reads a pattern anchored at the start into its layout: "d" for a digit, "c" for the
// separator c, which the pattern holds no other characters than; false for any other pattern, or
// one that may match sep.
func digitLayout(re, c, sep string) (string, bool) {
	parsed, err := syntax.Parse(re, syntax.Perl)
	if err != nil {
		return "", false
	}
	parsed = parsed.Simplify()
	if parsed.Op != syntax.OpConcat || len(parsed.Sub) < 2 || parsed.Sub[0].Op != syntax.OpBeginText {
		return "", false
	}
	var b strings.Builder
	var walk func(x *syntax.Regexp) bool
	walk = func(x *syntax.Regexp) bool {
		switch x.Op {
		case syntax.OpCharClass:
			if len(x.Rune) != 2 || x.Rune[0] != '0' || x.Rune[1] != '9' {
				return false
			}
			b.WriteByte('d')
		case syntax.OpLiteral:
			if x.Flags&syntax.FoldCase != 0 {
				return false
			}
			for _, r := range x.Rune {
				if string(r) != c || string(r) == sep {
					return false
				}
				b.WriteByte('c')
			}
		case syntax.OpRepeat:
			if x.Min != x.Max {
				return false
			}
			for range x.Min {
				if !walk(x.Sub[0]) {
					return false
				}
			}
		case syntax.OpConcat:
			for _, s := range x.Sub {
				if !walk(s) {
					return false
				}
			}
		default:
			return false
		}
		return true
	}
	for _, s := range parsed.Sub[1:] {
		if !walk(s) {
			return "", false
		}
	}
	layout := b.String()
	return layout, strings.Contains(layout, "d") && strings.Count(layout, "d") <= 18
}

// digitsAlternatives are the strings of w digits whose number is op n, as alternatives of a slot
// per digit: the bound's first digits, then one above (or below) it, then any digits.
func digitsAlternatives(w int, op string, n int64) [][]string {
	limit := int64(1)
	for range w {
		limit *= 10
	}
	switch op {
	case ">":
		return digitsAlternatives(w, ">=", n+1)
	case "<":
		return digitsAlternatives(w, "<=", n-1)
	case "==":
		if n < 0 || n >= limit {
			return nil
		}
		return [][]string{slots(fmt.Sprintf("%0*d", w, n), w, w)}
	case "!=":
		return append(digitsAlternatives(w, "<", n), digitsAlternatives(w, ">", n)...)
	case ">=":
		if n >= limit {
			return nil
		}
		n = max(n, 0)
	case "<=":
		if n < 0 {
			return nil
		}
		n = min(n, limit-1)
	default:
		return nil
	}
	bound := fmt.Sprintf("%0*d", w, n)
	out := [][]string{slots(bound, w, w)}
	for p := range w {
		d := bound[p]
		var class string
		switch {
		case op == ">=" && d < '9':
			class = fmt.Sprintf("[%c-9]", d+1)
		case op == "<=" && d > '0':
			class = fmt.Sprintf("[0-%c]", d-1)
		default:
			continue
		}
		a := slots(bound, p, w)
		a[p] = class
		out = append(out, a)
	}
	return out
}

// slots are the first k digits of bound, then a class of any digit up to w.
func slots(bound string, k, w int) []string {
	out := make([]string, w)
	for p := range w {
		if p < k {
			out[p] = bound[p : p+1]
		} else {
			out[p] = "[0-9]"
		}
	}
	return out
}

// indexed reads l[i] for a constant i, as HCL parses it: an index expression, or a traversal of
// one index step.
func indexed(e hclsyntax.Expression) (hclsyntax.Expression, cty.Value, bool) {
	switch x := e.(type) {
	case *hclsyntax.IndexExpr:
		c, ok := constant(x.Key)
		return x.Collection, c, ok
	case *hclsyntax.RelativeTraversalExpr:
		if len(x.Traversal) != 1 {
			break
		}
		if step, ok := x.Traversal[0].(hcl.TraverseIndex); ok {
			return x.Source, step.Key, true
		}
	}
	return nil, cty.NilVal, false
}
