package validation

import (
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Patterns that are neither NFC-invariant nor of whole ASCII strings (a `.` in
// `Microsoft.Web`, a search for `[a-z0-9]`) are decided exactly for ASCII strings only. For the
// others, widenedPattern makes a pattern that every string matches whose NFC form the original
// matches, so refusing a string outside ASCII that does not match it never refuses what Terraform
// accepts.
//
// Why: split a string before each ASCII character and each of K, ; and `'s forms outside ASCII
// (KELVIN SIGN...): NFC leaves every such split alone, so the NFC form is the NFC forms of the
// pieces, each an optional ASCII character (or such a form) followed by characters outside ASCII.
// A piece's NFC form holds no ASCII character but its first, which is the piece's own first
// character unchanged (TestNormalizationFacts). A search that matches the NFC form thus walks the
// pattern's places as the pieces' NFC characters; in the string, give each piece whole to the
// place of its first character in the match, or only its ASCII character where that place is a
// class of ASCII characters (the other characters of the piece, outside ASCII, then fall to
// places that take characters outside ASCII), and nothing to the places of the piece's other
// characters. So a place that takes ASCII characters only becomes the forms of those characters,
// and a place that takes others becomes an optional first character (its ASCII characters, any
// that composes with a following mark, or any outside ASCII) followed by any run of characters
// outside ASCII: NFC may make more characters than it was given (U+0344 is two), or fewer.
func widenedPattern(re string) (string, bool) {
	parsed, err := syntax.Parse(re, syntax.Perl)
	if err != nil {
		return "", false
	}
	out, ok := widenedRegexp(parsed.Simplify())
	if !ok {
		return "", false
	}
	var b strings.Builder
	writeRegexp(&b, out)
	return b.String(), true
}

// outsideASCII is the class of every character outside ASCII.
var outsideASCII = []rune{utf8.RuneSelf, utf8.MaxRune}

func widenedRegexp(x *syntax.Regexp) (*syntax.Regexp, bool) {
	switch x.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginText, syntax.OpEndText:
		return x, true
	case syntax.OpLiteral:
		out := &syntax.Regexp{Op: syntax.OpConcat, Flags: x.Flags &^ syntax.FoldCase}
		for _, r := range x.Rune {
			// A literal with (?i), or one the parser made of a class such as [fF], matches
			// each character of its case-folding orbit (k also KELVIN SIGN).
			place := []rune{r, r}
			if x.Flags&syntax.FoldCase != 0 {
				for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
					place = append(place, f, f)
				}
				place = mergeRanges(place)
			}
			out.Sub = append(out.Sub, widenedPlace(place, out.Flags))
		}
		return out, true
	case syntax.OpCharClass:
		return widenedPlace(x.Rune, x.Flags), true
	case syntax.OpAnyCharNotNL:
		return widenedPlace([]rune{0, '\n' - 1, '\n' + 1, utf8.MaxRune}, x.Flags), true
	case syntax.OpAnyChar:
		return widenedPlace([]rune{0, utf8.MaxRune}, x.Flags), true
	case syntax.OpCapture, syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat, syntax.OpConcat, syntax.OpAlternate:
		out := *x
		out.Sub = make([]*syntax.Regexp, len(x.Sub))
		for i, s := range x.Sub {
			var ok bool
			if out.Sub[i], ok = widenedRegexp(s); !ok {
				return nil, false
			}
		}
		return &out, true
	}
	// Line anchors and word boundaries judge the characters around them as given.
	return nil, false
}

// widenedPlace is what one place of a pattern, a class given as rune ranges, becomes (see above).
func widenedPlace(ranges []rune, flags syntax.Flags) *syntax.Regexp {
	var ascii []rune
	outside := false
	for i := 0; i+1 < len(ranges); i += 2 {
		if ranges[i+1] >= utf8.RuneSelf {
			outside = true
		}
		if ranges[i] < utf8.RuneSelf {
			ascii = append(ascii, ranges[i], min(ranges[i+1], utf8.RuneSelf-1))
		}
	}
	if !outside {
		return formsOf(ascii, foldNone, flags)
	}
	first := slices.Clone(ascii)
	for r := rune(0); r < utf8.RuneSelf; r++ {
		if !inertASCII(r) {
			first = append(first, r, r)
		}
	}
	first = mergeRanges(append(first, outsideASCII...))
	return &syntax.Regexp{Op: syntax.OpConcat, Flags: flags, Sub: []*syntax.Regexp{
		{Op: syntax.OpQuest, Flags: flags, Sub: []*syntax.Regexp{{Op: syntax.OpCharClass, Flags: flags, Rune: first}}},
		{Op: syntax.OpStar, Flags: flags, Sub: []*syntax.Regexp{{Op: syntax.OpCharClass, Flags: flags, Rune: outsideASCII}}},
	}}
}
