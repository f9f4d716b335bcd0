package validation

import (
	"fmt"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Patterns decided as Terraform decides them beyond ASCII.
//
// Terraform hands a condition the NFC form of every string, and lower() and upper() work on it;
// the API server's CEL and OpenAPI patterns see the string as given. Two kinds of pattern are
// decided exactly all the same, and the facts each rests on are checked over all of Unicode by
// TestNormalizationFacts (normal_test.go), the rules themselves by TestNFCInvariantSearch, which
// searches random strings rich in combining marks, composed and decomposed letters.
//
// NFC-invariant searches (nfcInvariant). Go's regexp finds a match of such a pattern in a string
// exactly where it finds one in the string's NFC form. A pattern is one when every character it
// matches is one of two kinds:
//
//   - a single ASCII character other than K, ; and ` (which KELVIN SIGN, GREEK QUESTION MARK and
//     GREEK VARIA normalize to), from a literal or class of such characters, or
//   - a run, x* or x+, of a class x that holds every character outside ASCII and every ASCII
//     letter, <, = and >, so that it leaves out only ASCII characters that never compose with
//     anything (inert: like /, :, . or a digit, but not ; or `),
//
// and the pattern never puts a run next to a run (searching is a run of anything before and after
// the pattern, unless it is anchored with ^ or $), nor an ASCII letter, <, = or > (which compose
// with a combining mark after them) before a run or before the end of a search not anchored by $.
// Why that suffices: NFC leaves a string unchanged across a split before any ASCII character (none
// composes with what precedes it) and after an inert one; a run's piece of the string has an NFC
// form of the same kind (non-empty where it is, with no inert ASCII character it lacked: the only
// ASCII characters a decomposition holds are the first of a letter, <, = or > composed with
// marks, which composes again, and K, ; or `); and conversely each ASCII character of the NFC form
// is the same character in the string, alone where a letter is followed by ASCII or the end.
// So `^/subscriptions/[^/]+/resourceGroups/.+$` and `^gs://` are NFC-invariant; `^[a-z]`
// (a combining accent after the letter makes another letter), `Microsoft.Web` (one character of
// any kind, whose count NFC changes: "e" + U+0301 is one character é) and `[^/]+[^/]+` are not.
//
// Patterns of whole ASCII strings (asciiOnly) of a string's NFC form, or of its lower() or
// upper() (foldedPattern): the NFC form of a string is such an ASCII string, or lowers or uppers
// to one, only where the string is a sequence of the few forms each of its characters may take
// (normalForms): the character itself, its case partner, and a handful of others outside ASCII
// (KELVIN SIGN for K, "I" + COMBINING DOT ABOVE and İ for lower()'s i, LONG S for upper()'s S...).
// The pattern rewritten to match those forms wherever it matches the character decides, on the
// string as given, what the original decides on the string Terraform makes of it.

// nfcInvariant reports whether a search for re finds a match in a string exactly where it finds
// one in the string's NFC form (see above).
func nfcInvariant(re string) bool {
	parsed, err := syntax.Parse(re, syntax.Perl)
	if err != nil {
		return false
	}
	var c nfcCheck
	sh := c.shape(parsed.Simplify())
	if c.bad || sh.nullable {
		// A pattern that matches the empty string is found everywhere, but is not worth a rule.
		return false
	}
	// An unanchored search is a run of anything before and after the pattern.
	anything := []nfcPos{nfcRun}
	c.follow(anything, sh.first)
	c.follow(sh.last, anything)
	return !c.bad
}

// nfcPos is the kind of a place in a pattern that matches a character, or an anchor.
type nfcPos int8

const (
	// nfcInert is one ASCII character, never one that composes with a following one.
	nfcInert nfcPos = iota
	// nfcOpen is one ASCII character, maybe a letter, <, = or >, which compose with a following
	// combining mark.
	nfcOpen
	// nfcRun is a run of a class that holds every character but some inert ASCII ones.
	nfcRun
	// nfcAnchor is ^ or $: the text begins or ends there, no character follows or precedes.
	nfcAnchor
)

// nfcShape is what the follow check needs of a part of a pattern: whether it matches the empty
// string, and the kinds of its first and last places.
type nfcShape struct {
	nullable    bool
	first, last []nfcPos
}

type nfcCheck struct{ bad bool }

// follow checks that no place of kind a is followed by one of kind b that NFC could join to it.
func (c *nfcCheck) follow(a, b []nfcPos) {
	for _, x := range a {
		for _, y := range b {
			if y == nfcRun && (x == nfcOpen || x == nfcRun) {
				c.bad = true
			}
		}
	}
}

func (c *nfcCheck) shape(x *syntax.Regexp) nfcShape {
	switch x.Op {
	case syntax.OpEmptyMatch:
		return nfcShape{nullable: true}
	case syntax.OpBeginText, syntax.OpEndText:
		return nfcShape{first: []nfcPos{nfcAnchor}, last: []nfcPos{nfcAnchor}}
	case syntax.OpLiteral:
		if x.Flags&syntax.FoldCase != 0 {
			// Case folding matches k with KELVIN SIGN.
			c.bad = true
			return nfcShape{}
		}
		var out nfcShape
		for i, r := range x.Rune {
			k, ok := asciiKind([]rune{r, r})
			if !ok {
				c.bad = true
				return nfcShape{}
			}
			if i == 0 {
				out.first = []nfcPos{k}
			}
			out.last = []nfcPos{k}
		}
		return out
	case syntax.OpCharClass:
		k, ok := asciiKind(x.Rune)
		if !ok {
			// A run's class, outside a run, is one character of a kind whose count NFC changes.
			c.bad = true
			return nfcShape{}
		}
		return nfcShape{first: []nfcPos{k}, last: []nfcPos{k}}
	case syntax.OpCapture:
		return c.shape(x.Sub[0])
	case syntax.OpStar, syntax.OpPlus:
		if runClass(x.Sub[0]) {
			return nfcShape{nullable: x.Op == syntax.OpStar, first: []nfcPos{nfcRun}, last: []nfcPos{nfcRun}}
		}
		sh := c.shape(x.Sub[0])
		c.follow(sh.last, sh.first)
		sh.nullable = sh.nullable || x.Op == syntax.OpStar
		return sh
	case syntax.OpQuest:
		sh := c.shape(x.Sub[0])
		sh.nullable = true
		return sh
	case syntax.OpAlternate:
		var out nfcShape
		for _, s := range x.Sub {
			sh := c.shape(s)
			out.nullable = out.nullable || sh.nullable
			out.first = append(out.first, sh.first...)
			out.last = append(out.last, sh.last...)
		}
		return out
	case syntax.OpConcat:
		out := nfcShape{nullable: true}
		for _, s := range x.Sub {
			sh := c.shape(s)
			c.follow(out.last, sh.first)
			if out.nullable {
				out.first = append(out.first, sh.first...)
			}
			if sh.nullable {
				out.last = append(out.last, sh.last...)
			} else {
				out.last = slices.Clone(sh.last)
			}
			out.nullable = out.nullable && sh.nullable
		}
		return out
	}
	// Any character alone, repeats Simplify leaves (none), line anchors and word boundaries, which
	// judge the characters around them.
	c.bad = true
	return nfcShape{}
}

// asciiKind is the kind of a class given as rune ranges, when it holds ASCII characters only and
// none of K, ; and `.
func asciiKind(ranges []rune) (nfcPos, bool) {
	k := nfcInert
	for i := 0; i+1 < len(ranges); i += 2 {
		for r := ranges[i]; r <= ranges[i+1]; r++ {
			if r >= utf8.RuneSelf || strings.ContainsRune(normalTargets, r) {
				return 0, false
			}
			if !inertASCII(r) {
				k = nfcOpen
			}
		}
	}
	return k, len(ranges) > 0
}

// runClass reports whether x is a class that holds every character but some inert ASCII ones.
func runClass(x *syntax.Regexp) bool {
	for x.Op == syntax.OpCapture {
		x = x.Sub[0]
	}
	var ranges []rune
	switch x.Op {
	case syntax.OpAnyChar:
		return true
	case syntax.OpAnyCharNotNL:
		ranges = []rune{0, '\n' - 1, '\n' + 1, utf8.MaxRune}
	case syntax.OpCharClass:
		ranges = x.Rune
	default:
		return false
	}
	// Walk the gaps between the class's ranges: each must be inert ASCII characters.
	next := rune(0)
	for i := 0; i+1 < len(ranges); i += 2 {
		for r := next; r < ranges[i]; r++ {
			if r >= utf8.RuneSelf || !inertASCII(r) || strings.ContainsRune(normalTargets, r) {
				return false
			}
		}
		next = ranges[i+1] + 1
	}
	return next > utf8.MaxRune
}

// inertASCII reports whether the ASCII character r never composes with a following character.
func inertASCII(r rune) bool { return norm.NFC.PropertiesString(string(r)).BoundaryAfter() }

// normalTargets are the ASCII characters that characters outside ASCII normalize to (see
// normalizedToASCII).
const normalTargets = "K;`"

// A caseFold is what Terraform does to a string's NFC form before a pattern sees it: nothing,
// lower() or upper().
type caseFold int8

const (
	foldNone caseFold = iota
	foldLower
	foldUpper
)

// foldsOutsideASCII are, for lower() and upper(), the characters outside ASCII that Terraform's
// case mapping (Go's) turns into an ASCII letter, with the forms that normalize to each (see
// TestNormalizationFacts, which finds them over all of Unicode).
var foldsOutsideASCII = map[caseFold][][2]string{
	foldLower: {{"\u0130", "i"}, {"I\u0307", "i"}},
	foldUpper: {{"\u0131", "I"}, {"\u017f", "S"}},
}

// normalForms are the strings whose NFC form, folded by f, is the ASCII character a: a itself,
// its case partner under f, and the forms outside ASCII.
func normalForms(a rune, f caseFold) []string {
	out := []string{string(a)}
	fold := func(r rune) rune { return r }
	switch f {
	case foldLower:
		fold = func(r rune) rune { return rune(lowerASCII(string(r))[0]) }
	case foldUpper:
		fold = func(r rune) rune { return rune(upperASCII(string(r))[0]) }
	}
	if fold(a) != a {
		// A letter of the other case is never what the fold makes.
		return nil
	}
	for r := rune(0); r < utf8.RuneSelf; r++ {
		if r != a && fold(r) == a {
			out = append(out, string(r))
		}
	}
	for _, n := range normalizedToASCII {
		if fold(rune(n[1][0])) == a {
			out = append(out, n[0])
		}
	}
	for _, n := range foldsOutsideASCII[f] {
		if rune(n[1][0]) == a {
			out = append(out, n[0])
		}
	}
	return out
}

// foldedPattern rewrites re, a pattern that matches whole ASCII strings only (asciiOnly), into one
// that matches a string exactly where re matches its NFC form folded by f (see above): re itself
// where that is so, without a fold and without K, ; and `. It fails for word boundaries, which
// judge the characters around them as given.
func foldedPattern(re string, f caseFold) (string, bool) {
	parsed, err := syntax.Parse(re, syntax.Perl)
	if err != nil || !asciiOnly(re) {
		return "", false
	}
	out, ok := foldedRegexp(parsed, f)
	if !ok {
		return "", false
	}
	if f == foldNone && !matchesTargets(parsed) {
		return re, true
	}
	var b strings.Builder
	writeRegexp(&b, out)
	return b.String(), true
}

// writeRegexp writes x, one that foldedRegexp makes, in the syntax Go's regexp reads by default
// (so ^ and $ are the text's ends), plainly: Go's own String() spells out flags and anchors.
func writeRegexp(b *strings.Builder, x *syntax.Regexp) {
	// sub writes a part, grouped where an operator after it, or a concatenation around it,
	// would bind only to its last piece.
	sub := func(s *syntax.Regexp, single bool) {
		grouped := s.Op == syntax.OpAlternate || single && (s.Op == syntax.OpConcat || s.Op == syntax.OpLiteral && len(s.Rune) > 1 ||
			s.Op == syntax.OpStar || s.Op == syntax.OpPlus || s.Op == syntax.OpQuest || s.Op == syntax.OpRepeat)
		if grouped {
			b.WriteString("(?:")
		}
		writeRegexp(b, s)
		if grouped {
			b.WriteString(")")
		}
	}
	switch x.Op {
	case syntax.OpEmptyMatch:
		b.WriteString("(?:)")
	case syntax.OpBeginText:
		b.WriteString("^")
	case syntax.OpEndText:
		b.WriteString("$")
	case syntax.OpLiteral:
		for _, r := range x.Rune {
			writeRune(b, r, false)
		}
	case syntax.OpCharClass:
		if len(x.Rune) == 2 && x.Rune[0] == x.Rune[1] {
			writeRune(b, x.Rune[0], false)
			return
		}
		b.WriteString("[")
		if len(x.Rune) == 0 {
			// A class of nothing: every character but all of them.
			b.WriteString(`^\x00-\x{10FFFF}`)
		}
		for i := 0; i+1 < len(x.Rune); i += 2 {
			writeRune(b, x.Rune[i], true)
			if x.Rune[i+1] > x.Rune[i]+1 {
				b.WriteString("-")
			}
			if x.Rune[i+1] != x.Rune[i] {
				writeRune(b, x.Rune[i+1], true)
			}
		}
		b.WriteString("]")
	case syntax.OpCapture:
		b.WriteString("(")
		if x.Name != "" {
			b.WriteString("?P<" + x.Name + ">")
		}
		writeRegexp(b, x.Sub[0])
		b.WriteString(")")
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		sub(x.Sub[0], true)
		switch x.Op {
		case syntax.OpStar:
			b.WriteString("*")
		case syntax.OpPlus:
			b.WriteString("+")
		case syntax.OpQuest:
			b.WriteString("?")
		default:
			b.WriteString("{" + strconv.Itoa(x.Min))
			if x.Max != x.Min {
				b.WriteString(",")
				if x.Max >= 0 {
					b.WriteString(strconv.Itoa(x.Max))
				}
			}
			b.WriteString("}")
		}
		if x.Flags&syntax.NonGreedy != 0 {
			b.WriteString("?")
		}
	case syntax.OpConcat:
		for _, s := range x.Sub {
			sub(s, false)
		}
	case syntax.OpAlternate:
		for i, s := range x.Sub {
			if i > 0 {
				b.WriteString("|")
			}
			writeRegexp(b, s)
		}
	}
}

// writeRune writes a character of a pattern: printable ASCII as itself, escaped where it means
// something in a pattern (or, in a class, where it means something there), others as \x{...}.
func writeRune(b *strings.Builder, r rune, inClass bool) {
	switch {
	case r < 0x20 || r >= 0x7f:
		fmt.Fprintf(b, `\x{%x}`, r)
	case inClass && strings.ContainsRune(`\-]^[`, r):
		b.WriteString(`\` + string(r))
	case !inClass && strings.ContainsRune(`\.+*?()|[]{}^$`, r):
		b.WriteString(`\` + string(r))
	default:
		b.WriteRune(r)
	}
}

// matchesTargets reports whether a literal or class of x matches K, ; or `.
func matchesTargets(x *syntax.Regexp) bool {
	switch x.Op {
	case syntax.OpLiteral:
		return strings.ContainsAny(string(x.Rune), normalTargets)
	case syntax.OpCharClass:
		for i := 0; i+1 < len(x.Rune); i += 2 {
			for _, t := range normalTargets {
				if x.Rune[i] <= t && t <= x.Rune[i+1] {
					return true
				}
			}
		}
	}
	return slices.ContainsFunc(x.Sub, matchesTargets)
}

func foldedRegexp(x *syntax.Regexp, f caseFold) (*syntax.Regexp, bool) {
	switch x.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginText, syntax.OpEndText:
		return x, true
	case syntax.OpLiteral:
		if x.Flags&syntax.FoldCase != 0 {
			return nil, false
		}
		out := &syntax.Regexp{Op: syntax.OpConcat, Flags: x.Flags}
		for _, r := range x.Rune {
			out.Sub = append(out.Sub, formsOf([]rune{r, r}, f, x.Flags))
		}
		return out, true
	case syntax.OpCharClass:
		return formsOf(x.Rune, f, x.Flags), true
	case syntax.OpCapture, syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat, syntax.OpConcat, syntax.OpAlternate:
		out := *x
		out.Sub = make([]*syntax.Regexp, len(x.Sub))
		for i, s := range x.Sub {
			var ok bool
			if out.Sub[i], ok = foldedRegexp(s, f); !ok {
				return nil, false
			}
		}
		return &out, true
	}
	return nil, false
}

// formsOf is the pattern of the normal forms of the characters of a class of ASCII characters: a
// class of the single characters, in an alternation with the longer forms.
func formsOf(ranges []rune, f caseFold, flags syntax.Flags) *syntax.Regexp {
	class := &syntax.Regexp{Op: syntax.OpCharClass, Flags: flags}
	var longer []string
	for i := 0; i+1 < len(ranges); i += 2 {
		for a := ranges[i]; a <= ranges[i+1]; a++ {
			for _, form := range normalForms(a, f) {
				if r := []rune(form); len(r) == 1 {
					class.Rune = append(class.Rune, r[0], r[0])
				} else {
					longer = append(longer, form)
				}
			}
		}
	}
	class.Rune = mergeRanges(class.Rune)
	if len(longer) == 0 {
		return class
	}
	alt := &syntax.Regexp{Op: syntax.OpAlternate, Flags: flags}
	if len(class.Rune) > 0 {
		alt.Sub = append(alt.Sub, class)
	}
	for _, l := range longer {
		alt.Sub = append(alt.Sub, &syntax.Regexp{Op: syntax.OpLiteral, Flags: flags, Rune: []rune(l)})
	}
	return alt
}

// mergeRanges sorts rune ranges and joins those that touch, as syntax.Regexp's classes need.
func mergeRanges(rs []rune) []rune {
	type span struct{ lo, hi rune }
	spans := make([]span, 0, len(rs)/2)
	for i := 0; i+1 < len(rs); i += 2 {
		spans = append(spans, span{rs[i], rs[i+1]})
	}
	slices.SortFunc(spans, func(a, b span) int { return int(a.lo - b.lo) })
	var out []rune
	for _, s := range spans {
		if n := len(out); n > 0 && s.lo <= out[n-1]+1 {
			out[n-1] = max(out[n-1], s.hi)
			continue
		}
		out = append(out, s.lo, s.hi)
	}
	return out
}

// foldedMatch is the search for re, a pattern of whole ASCII strings, in s, when s is lower(x) or
// upper(x): a search in x of the pattern rewritten to match what Terraform's lower() or upper()
// of x's normal form would match (foldedPattern), and true. Otherwise it is the search in s as
// CEL makes s, which is Terraform's for ASCII strings only, and false.
func foldedMatch(s *term, re string) (pred, bool) {
	f := foldNone
	switch {
	case s.ascii == nil:
	case strings.HasSuffix(s.expr, asciiFuncs["lower"].method):
		f = foldLower
	case strings.HasSuffix(s.expr, asciiFuncs["upper"].method):
		f = foldUpper
	}
	if f != foldNone {
		if folded, ok := foldedPattern(re, f); ok {
			return matchPred{s.ascii, folded}, true
		}
	}
	return matchPred{s, re}, false
}
