package validation

import (
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/text/unicode/norm"
)

// TestNormalizedToASCII checks the fact normalMatchPred and normalInPred rest on: outside ASCII,
// exactly the characters of normalizedToASCII have a canonical decomposition that is all ASCII,
// so every other character keeps a normal form outside ASCII, alone or composed with others.
func TestNormalizedToASCII(t *testing.T) {
	var got [][2]string
	for r := rune(utf8.RuneSelf); r <= utf8.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		if d := norm.NFD.String(string(r)); isASCII(d) {
			got = append(got, [2]string{string(r), d})
		}
	}
	want := slices.Clone(normalizedToASCII)
	slices.SortFunc(want, func(a, b [2]string) int { return int([]rune(a[0])[0] - []rune(b[0])[0]) })
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("\nThe characters outside ASCII whose decomposition is ASCII (-normalizedToASCII +Unicode):\n%s", diff)
	}
}

// decompositions maps each canonical decomposition (NFD of one character) to the characters that
// have it, over all of Unicode.
func decompositions() map[string][]rune {
	out := map[string][]rune{}
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if utf8.ValidRune(r) {
			d := norm.NFD.String(string(r))
			out[d] = append(out[d], r)
		}
	}
	return out
}

// TestNormalizationFacts checks, over all of Unicode, the facts nfcInvariant and foldedPattern
// rest on (see normal.go).
func TestNormalizationFacts(t *testing.T) {
	props := func(r rune) norm.Properties { return norm.NFC.PropertiesString(string(r)) }
	var combining []rune
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if utf8.ValidRune(r) && !props(r).BoundaryBefore() {
			combining = append(combining, r)
		}
	}
	// Every ASCII character starts a segment: NFC never joins it to what precedes it; an inert one
	// never composes with what follows it either, and ASCII is its own normal form.
	for a := rune(0); a < utf8.RuneSelf; a++ {
		if !props(a).BoundaryBefore() || norm.NFC.String(string(a)) != string(a) {
			t.Errorf("ASCII %q: not a segment start of its own normal form", a)
		}
		if !inertASCII(a) {
			continue
		}
		for _, m := range combining {
			if got, want := norm.NFC.String(string(a)+string(m)), string(a)+norm.NFC.String(string(m)); got != want {
				t.Errorf("inert %q composes with U+%04X: NFC is %+q", a, m, got)
			}
		}
	}
	// Outside ASCII, a decomposition holds an ASCII character only as its first one, and that
	// character composes again with the mark after it, unless the decomposition is one of the
	// three of normalizedToASCII.
	for d := rune(utf8.RuneSelf); d <= utf8.MaxRune; d++ {
		if !utf8.ValidRune(d) {
			continue
		}
		dec := []rune(norm.NFD.String(string(d)))
		for i, r := range dec {
			if i > 0 && r < utf8.RuneSelf {
				t.Errorf("U+%04X decomposes to %+q, with ASCII past its start", d, dec)
			}
		}
		if dec[0] >= utf8.RuneSelf {
			continue
		}
		if !props(d).BoundaryBefore() {
			t.Errorf("U+%04X decomposes to %+q, yet joins what precedes it", d, dec)
		}
		if len(dec) == 1 {
			if !slices.Contains(normalizedToASCII, [2]string{string(d), string(dec)}) {
				t.Errorf("U+%04X decomposes to ASCII %+q, not in normalizedToASCII", d, dec)
			}
			continue
		}
		if props(dec[1]).CCC() == 0 || utf8.RuneCountInString(norm.NFC.String(string(dec[:2]))) != 1 {
			t.Errorf("U+%04X decomposes to %+q, whose ASCII start does not compose with the mark after it", d, dec)
		}
	}
	// For each fold, the strings whose NFC form folds to one ASCII character are normalForms'.
	decs := decompositions()
	folds := map[caseFold]func(string) string{
		foldNone:  func(s string) string { return s },
		foldLower: strings.ToLower,
		foldUpper: strings.ToUpper,
	}
	for f, fold := range folds {
		forms := map[rune][]string{}
		for c := rune(0); c <= utf8.MaxRune; c++ {
			if !utf8.ValidRune(c) || norm.NFC.String(string(c)) != string(c) {
				continue
			}
			folded := norm.NFC.String(fold(string(c)))
			if !isASCII(folded) || utf8.RuneCountInString(folded) != 1 {
				// Terraform's fold of a string is the fold of each character: a string of more
				// characters than one folds to ASCII only where each of its characters does.
				if strings.IndexFunc(folded, func(r rune) bool { return r < utf8.RuneSelf }) >= 0 {
					t.Errorf("fold %d of U+%04X is %+q: ASCII beside other characters", f, c, folded)
				}
				continue
			}
			// The strings canonically equivalent to c: the characters with its decomposition,
			// and, for one of two characters, each pair of characters with those.
			a := rune(folded[0])
			dec := []rune(norm.NFD.String(string(c)))
			for _, d := range decs[string(dec)] {
				forms[a] = append(forms[a], string(d))
			}
			switch {
			case len(dec) == 2:
				for _, d1 := range decs[string(dec[0])] {
					for _, d2 := range decs[string(dec[1])] {
						forms[a] = append(forms[a], string(d1)+string(d2))
					}
				}
				if c >= utf8.RuneSelf && !props(c).BoundaryBefore() {
					t.Errorf("U+%04X folds to %q and joins what precedes it", c, a)
				}
			case len(dec) > 2:
				t.Errorf("U+%04X folds to %q and decomposes to %+q: normalForms lists no forms of three characters", c, a, dec)
			}
		}
		for a := rune(0); a < utf8.RuneSelf; a++ {
			want := normalForms(a, f)
			slices.Sort(want)
			got := slices.Compact(slices.Sorted(slices.Values(forms[a])))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("\nThe strings whose normal form folds (%d) to %q (-normalForms +Unicode):\n%s", f, a, diff)
			}
		}
	}
}

func TestNFCInvariant(t *testing.T) {
	for _, c := range []struct {
		reason, re string
		want       bool
	}{
		{"runs between inert ASCII", `^/subscriptions/[^/]+/resourceGroups/[^/]+$`, true},
		{"a run of anything but a newline, after an inert character", `^/subscriptions/[a-f0-9-]+/resourceGroups/.+$`, true},
		{"an escaped dot is one inert character", `^/subscriptions/[^/]+/providers/Microsoft\.Network/virtualNetworks/[^/]+$`, true},
		{"a prefix that ends in an inert character", `^gs:\/\/`, true},
		{"a search not anchored at its start begins with an inert character", `\/subscriptions\/[a-f\d]{4}(?:[a-f\d]{4}-){4}[a-f\d]{12}\/resourceGroups\/[^\/]+$`, true},
		{"a prefix that ends in a digit", `^Consumption_0$|^BasicV2_([1-9]|10)`, true},
		{"a suffix after anything", `[a-jA-J0-9]$`, true},
		{"K, which KELVIN SIGN normalizes to, after anything", `[a-zA-Z0-9]$`, false},
		{"inert characters anywhere", `--`, true},
		{"a run of non-white-space between inert ones", `^\S+:[0-9]+$`, true},
		{"a letter before anything", `^[a-zA-Z]`, false},
		{"a letter before a run", `^/x[^/]+$`, false},
		{"one character of any kind", `^/subscriptions/[^/]+/providers/Microsoft.Web/x$`, false},
		{"a counted run", `^.{1,64}$`, false},
		{"two runs side by side", `^[^/]+[^:]+$`, false},
		{"a run beside the search's anything", `[^/]+$`, false},
		{"K, which KELVIN SIGN normalizes to", `^K[0-9]$`, false},
		{"a run without ;, which GREEK QUESTION MARK normalizes to", `^[^;]+$`, false},
		{"case folding", `^(?i:x)$`, false},
		{"a word boundary", `^/\b`, false},
		{"a letter at the end of a search", `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, false},
		{"a class outside ASCII", `^/é$`, false},
	} {
		if got := nfcInvariant(c.re); got != c.want {
			t.Errorf("%s: nfcInvariant(%q) = %v, want %v", c.reason, c.re, got, c.want)
		}
	}
}

// nastyRunes are characters that NFC changes, or changes others next to: combining marks of
// several classes, composed and decomposed letters, characters that normalize to others (to ASCII
// too), composition exclusions, Hangul jamo, vowel signs that compose with the letter before, and
// some that NFC leaves alone.
var nastyRunes = []rune("aeiosuyzAIKS/.:-_;`<=>0 \n" +
	"\u0300\u0301\u0307\u030c\u0323\u0338\u0345\u031b\u0340\u0344\u0327" +
	"\u00e9\u01d8\u1e69\u1e0d\u0130\u0131\u017f\u00c5\u2260\u226e\u1e9b" +
	"\u212a\u037e\u1fef\u2126\u212b\u0958\u2adc\ufb1d\u0915\u093c" +
	"\u1100\u1161\u11a8\uac00\u0cc6\u0cd5\u0b47\u0b3e" +
	"\U0001f44d\U0001f3fd\u200d\u6f22\uff21\ufb01")

// genMatch makes a string the pattern x may match, its runs made of nasty characters.
func genMatch(r *rand.Rand, x *syntax.Regexp, b *strings.Builder) {
	pick := func(ranges []rune) {
		var in []rune
		for _, n := range nastyRunes {
			for i := 0; i+1 < len(ranges); i += 2 {
				if ranges[i] <= n && n <= ranges[i+1] {
					in = append(in, n)
				}
			}
		}
		if len(in) > 0 && r.IntN(4) > 0 {
			b.WriteRune(in[r.IntN(len(in))])
			return
		}
		if len(ranges) > 0 {
			i := 2 * r.IntN(len(ranges)/2)
			b.WriteRune(ranges[i] + rune(r.Int64N(int64(ranges[i+1]-ranges[i])+1)))
		}
	}
	switch x.Op {
	case syntax.OpLiteral:
		b.WriteString(string(x.Rune))
	case syntax.OpCharClass:
		pick(x.Rune)
	case syntax.OpAnyCharNotNL:
		pick([]rune{0, '\n' - 1, '\n' + 1, utf8.MaxRune})
	case syntax.OpAnyChar:
		pick([]rune{0, utf8.MaxRune})
	case syntax.OpCapture:
		genMatch(r, x.Sub[0], b)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
		n := r.IntN(4)
		if x.Op == syntax.OpPlus {
			n++
		}
		if x.Op == syntax.OpQuest {
			n = r.IntN(2)
		}
		for range n {
			genMatch(r, x.Sub[0], b)
		}
	case syntax.OpConcat:
		for _, s := range x.Sub {
			genMatch(r, s, b)
		}
	case syntax.OpAlternate:
		genMatch(r, x.Sub[r.IntN(len(x.Sub))], b)
	}
}

// nearMatches are strings made from matches of re, changed in small ways NFC may undo or
// redo: a nasty character put in, a character taken out, the whole decomposed or composed.
func nearMatches(r *rand.Rand, re string, n int) []string {
	parsed, err := syntax.Parse(re, syntax.Perl)
	if err != nil {
		panic(err)
	}
	parsed = parsed.Simplify()
	out := make([]string, 0, n)
	for range n {
		var b strings.Builder
		if r.IntN(3) == 0 {
			b.WriteRune(nastyRunes[r.IntN(len(nastyRunes))])
		}
		genMatch(r, parsed, &b)
		if r.IntN(3) == 0 {
			b.WriteRune(nastyRunes[r.IntN(len(nastyRunes))])
		}
		s := []rune(b.String())
		for range r.IntN(3) {
			i := r.IntN(len(s) + 1)
			s = slices.Insert(s, i, nastyRunes[r.IntN(len(nastyRunes))])
		}
		if len(s) > 0 && r.IntN(4) == 0 {
			i := r.IntN(len(s))
			s = slices.Delete(s, i, i+1)
		}
		str := string(s)
		switch r.IntN(4) {
		case 0:
			str = norm.NFD.String(str)
		case 1:
			str = norm.NFC.String(str)
		}
		out = append(out, str)
	}
	return out
}

// TestNFCInvariantSearch searches random strings made from matches of patterns, rich in what NFC
// changes: for each pattern nfcInvariant accepts, a search of a string finds a match exactly when
// a search of its NFC form does; for some it refuses, the same strings show why.
func TestNFCInvariantSearch(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 15))
	invariant := []string{
		`^/subscriptions/[^/]+/resourceGroups/[^/]+$`,
		`^/subscriptions/[a-f0-9-]+/resourceGroups/.+$`,
		`^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.Network/virtualNetworks/[^/]+$`,
		`^gs:\/\/`,
		`\/subscriptions\/[a-f\d]{4}\/resourceGroups\/[^\/]+\/x$`,
		`^Consumption_0$|^BasicV2_([1-9]|10)`,
		`[a-jA-J0-9]$`,
		`--`,
		`^\S+:[0-9]+$`,
		`^(?:[a-z]+/)*[^/]*$`,
		`^[a-z<=>]+(?:\.[^.]+)?$`,
		`^a/(?:x|[^/]+)/b$`,
	}
	notInvariant := []string{
		`^[a-zA-Z]`,
		`^/x[^/]+$`,
		`^x.y$`,
		`^.{1,3}$`,
		`^[^/]+[^/]+$`,
		`^K$`,
		`[a-z]([-a-z0-9]*[a-z0-9])?`,
		`^[^;]+$`,
	}
	for _, re := range invariant {
		if !nfcInvariant(re) {
			t.Errorf("nfcInvariant(%q) = false", re)
			continue
		}
		x := regexp.MustCompile(re)
		found := 0
		for _, s := range nearMatches(r, re, 20000) {
			got, want := x.MatchString(s), x.MatchString(norm.NFC.String(s))
			if got != want {
				t.Errorf("%q finds a match in %+q: %v, in its NFC form %+q: %v", re, s, got, norm.NFC.String(s), want)
				break
			}
			if got {
				found++
			}
		}
		if found == 0 {
			t.Errorf("%q matched none of the strings made from it", re)
		}
	}
	for _, re := range notInvariant {
		if nfcInvariant(re) {
			t.Errorf("nfcInvariant(%q) = true", re)
		}
		x := regexp.MustCompile(re)
		if !slices.ContainsFunc(nearMatches(r, re, 20000), func(s string) bool { return x.MatchString(s) != x.MatchString(norm.NFC.String(s)) }) {
			t.Errorf("%q: no string whose NFC form it decides otherwise", re)
		}
	}
}

// TestFoldedPattern checks foldedPattern against Terraform's decision (the pattern searched in
// the string's NFC form, folded) on strings made from matches of the patterns.
func TestFoldedPattern(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 16))
	terraform := map[caseFold]func(string) string{
		foldNone:  norm.NFC.String,
		foldLower: func(s string) string { return norm.NFC.String(strings.ToLower(norm.NFC.String(s))) },
		foldUpper: func(s string) string { return norm.NFC.String(strings.ToUpper(norm.NFC.String(s))) },
	}
	for _, c := range []struct {
		re   string
		fold caseFold
		want string
	}{
		{`^(windows|linux)$`, foldLower, `^([Ww](?:[Ii\x{130}]|I\x{307})[Nn][Dd][Oo][Ww][Ss]|[Ll](?:[Ii\x{130}]|I\x{307})[Nn][Uu][Xx])$`},
		{`^(?:snapshot|vault-standard)$`, foldLower, ``},
		{`^(?:SYSTEM_COMPONENTS|KUBELET|KCP_SSHD)$`, foldNone, ``},
		{`^[0-9a-f]{8}-([0-9a-f]{4}-){3}[0-9a-f]{12}$`, foldNone, ``},
		{`^(?:ACK|ARGOCD;x)$`, foldUpper, ``},
		{`^[A-Z][a-z]+$`, foldLower, ``},
		{`^(?:disabled|[k-s]+)$`, foldUpper, ``},
	} {
		folded, ok := foldedPattern(c.re, c.fold)
		if !ok {
			t.Errorf("foldedPattern(%q, %d) failed", c.re, c.fold)
			continue
		}
		if c.want != "" && folded != c.want {
			t.Errorf("foldedPattern(%q, %d) = %q, want %q", c.re, c.fold, folded, c.want)
		}
		x, y := regexp.MustCompile(c.re), regexp.MustCompile(folded)
		var made []string
		for _, seed := range []string{c.re, folded, strings.ToUpper(c.re)} {
			if _, err := syntax.Parse(seed, syntax.Perl); err == nil {
				made = append(made, nearMatches(r, seed, 5000)...)
			}
		}
		for _, s := range made {
			if got, want := y.MatchString(s), x.MatchString(terraform[c.fold](s)); got != want {
				t.Errorf("%q (from %q, fold %d) finds a match in %+q: %v; Terraform's finds one in %+q: %v", folded, c.re, c.fold, s, got, terraform[c.fold](s), want)
				break
			}
		}
	}
	if _, ok := foldedPattern(`^a\b`, foldNone); ok {
		t.Errorf("foldedPattern rewrote a word boundary")
	}
}
