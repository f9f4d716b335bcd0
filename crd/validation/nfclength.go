package validation

import "regexp/syntax"

// Bounds on a string from a pattern of any characters.
//
// A pattern anchored at both ends, such as ^.{1,64}$, bounds the number of code points of the NFC
// form of the strings Terraform accepts, not of the strings as given: NFC composes, so a string
// may have more code points than its normal form. Not many more: every code point of a string
// decomposes (NFD) into one or more, and the NFD of the string is that of its NFC form, in which
// each code point decomposes into at most maxDecomposition (TestMaxDecomposition checks the figure
// over all of Unicode). So a string Terraform accepts has at most maxDecomposition times the
// pattern's longest match in code points, which the API server's maxLength counts.

// maxDecomposition is the most code points a single code point's canonical decomposition has.
const maxDecomposition = 4

// maxGivenLength is the longest string, in code points as given, whose NFC form the whole-string
// pattern re may match; false when re does not bound it.
func maxGivenLength(re string) (int64, bool) {
	longest, ok := longestWholeMatch(re, maxRunes)
	return maxDecomposition * longest, ok
}

// maxRunes is the most code points a match of x has; false when it has no bound.
func maxRunes(x *syntax.Regexp) (int64, bool) {
	switch x.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginText, syntax.OpEndText, syntax.OpBeginLine, syntax.OpEndLine,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return 0, true
	case syntax.OpLiteral:
		return int64(len(x.Rune)), true
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 1, true
	case syntax.OpCapture, syntax.OpQuest:
		return maxRunes(x.Sub[0])
	case syntax.OpRepeat:
		if x.Max < 0 {
			return 0, false
		}
		n, ok := maxRunes(x.Sub[0])
		return n * int64(x.Max), ok
	case syntax.OpConcat, syntax.OpAlternate:
		var out int64
		for _, s := range x.Sub {
			n, ok := maxRunes(s)
			if !ok {
				return 0, false
			}
			if x.Op == syntax.OpConcat {
				out += n
			} else {
				out = max(out, n)
			}
		}
		return out, true
	}
	return 0, false
}

// longestWholeMatch is the largest length, as length measures it, of the alternatives of the
// pattern re, each anchored at both ends; false when re is not such a pattern or length does not
// bound one of them.
func longestWholeMatch(re string, length func(*syntax.Regexp) (int64, bool)) (int64, bool) {
	parsed, err := syntax.Parse(re, syntax.Perl)
	if err != nil {
		return 0, false
	}
	parsed = parsed.Simplify()
	alts := []*syntax.Regexp{parsed}
	if parsed.Op == syntax.OpAlternate {
		alts = parsed.Sub
	}
	var longest int64
	for _, a := range alts {
		for a.Op == syntax.OpCapture {
			a = a.Sub[0]
		}
		if a.Op != syntax.OpConcat || len(a.Sub) < 2 || a.Sub[0].Op != syntax.OpBeginText || a.Sub[len(a.Sub)-1].Op != syntax.OpEndText {
			return 0, false
		}
		n, ok := length(a)
		if !ok {
			return 0, false
		}
		longest = max(longest, n)
	}
	return longest, true
}
