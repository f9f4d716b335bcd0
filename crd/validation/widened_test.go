package validation

import (
	"math/rand/v2"
	"regexp"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// TestWidenedPattern checks, over strings rich in combining marks, composed and decomposed
// letters made from each pattern, that the widened pattern matches every string whose NFC form
// the pattern matches (so a rule of it is never stricter than Terraform), and that it still
// refuses some strings outside ASCII that Terraform refuses.
func TestWidenedPattern(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 16))
	cases := map[string]struct {
		reason  string
		refused string
	}{
		`^/subscriptions/[a-f0-9-]+/resourceGroups/[a-zA-Z0-9._-]+/providers/Microsoft.Web/sites/[a-zA-Z0-9._-]+$`: {
			reason: "a `.` between letters: one character of any kind in the NFC form", refused: "/subscriptions/fe/resourceGroups/zy/providers/MicrosoftaWeb/sites/2\u0301",
		},
		`\/subscriptions\/[a-f\d]{4}(?:[a-f\d]{4}-){4}[a-f\d]{12}\/resourceGroups\/[^\/]+\/providers\/Microsoft.KeyVault\/vaults\/[^\/]+$`: {
			reason: "runs and a `.` next to K, searched unanchored", refused: "\U0001f44d\U0001f3fd",
		},
		`[a-z0-9]([-a-z0-9]*[a-z0-9])?`: {
			reason: "a search for one letter, which a combining mark after it composes away", refused: "\U0001f44d\U0001f3fd",
		},
		`^x.y$`:     {reason: "U+0344 is two characters in NFC form", refused: "x\u00e9\u00e9z"},
		`^.{1,3}$`:  {reason: "counts of any character but a newline", refused: "\u00e9\n"},
		`^[^a-z]+$`: {reason: "a class that leaves out letters, which compose into ones it holds", refused: "\u00e9q"},
		`^K.$`:      {reason: "K and its KELVIN SIGN", refused: "\u00e9\u00e9"},
		`^/providers/Microsoft.Web/[sS]erver[fF]arms/[a-z]+$`: {
			reason: "[fF] is parsed as a literal f whatever its case", refused: "/providers/Microsoft\u00e9Web/serverFarms/x\u0301",
		},
		`(?i)^k[a-z]+$`: {reason: "(?i): k is also KELVIN SIGN", refused: "\u212a/\u00e9"},
	}
	for re, c := range cases {
		wide, ok := widenedPattern(re)
		if !ok {
			t.Errorf("%s: widenedPattern(%q) failed", c.reason, re)
			continue
		}
		x, w := regexp.MustCompile(re), regexp.MustCompile(wide)
		for _, s := range append(nearMatches(r, re, 30000), "x\u0344y", "\u212a\u0301", "K\u00e9") {
			if x.MatchString(norm.NFC.String(s)) && !w.MatchString(s) {
				t.Errorf("%s: %q matches the NFC form %+q of %+q, the widened %q does not match it", c.reason, re, norm.NFC.String(s), s, wide)
				break
			}
			if isASCII(s) && x.MatchString(s) && !w.MatchString(s) {
				t.Errorf("%s: %q matches the ASCII string %q, the widened %q does not", c.reason, re, s, wide)
				break
			}
		}
		if x.MatchString(norm.NFC.String(c.refused)) || w.MatchString(c.refused) {
			t.Errorf("%s: want %q refused by %q and by its widened %q", c.reason, c.refused, re, wide)
		}
	}
	for _, re := range []string{`(?m)^a$`, `\bx`} {
		if _, ok := widenedPattern(re); ok {
			t.Errorf("widenedPattern(%q) succeeded: line anchors and word boundaries judge the characters around them", re)
		}
	}
}

// TestWidenedPieceFacts checks, over all of Unicode, what widenedPattern's proof says of the NFC
// form of a piece (an optional ASCII character or one of normalizedToASCII's forms, followed by
// characters outside ASCII): it holds no ASCII character but its first, and that one only where
// the piece starts with it (or with its form). TestNormalizationFacts checks that NFC never joins
// an ASCII character or such a form to what precedes it, so that a string's NFC form is its
// pieces'.
func TestWidenedPieceFacts(t *testing.T) {
	kForm := map[rune]bool{}
	for _, f := range normalizedToASCII {
		kForm[[]rune(f[0])[0]] = true
	}
	asciiAt := func(s string) []int {
		var at []int
		for i, r := range []rune(s) {
			if r < utf8.RuneSelf {
				at = append(at, i)
			}
		}
		return at
	}
	// Characters outside ASCII: alone, none but the forms has ASCII in its NFC form; those whose
	// decomposition starts with an ASCII letter (é) keep it composed before every mark that may
	// follow them; and no composition makes an ASCII character.
	var marks, lettered []rune
	for r := rune(utf8.RuneSelf); r <= utf8.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		p := norm.NFC.PropertiesString(string(r))
		if !p.BoundaryBefore() {
			marks = append(marks, r)
		}
		if at := asciiAt(norm.NFC.String(string(r))); len(at) > 0 && !kForm[r] {
			t.Errorf("U+%04X: its NFC form %+q holds ASCII", r, norm.NFC.String(string(r)))
		}
		if d := []rune(norm.NFD.String(string(r))); len(d) > 1 && d[0] < utf8.RuneSelf {
			lettered = append(lettered, r)
		}
	}
	for _, c := range lettered {
		for _, m := range marks {
			if at := asciiAt(norm.NFC.String(string(c) + string(m))); len(at) > 0 {
				t.Errorf("U+%04X U+%04X: NFC form %+q holds ASCII, though the piece starts outside ASCII", c, m, norm.NFC.String(string(c)+string(m)))
			}
		}
	}
	t.Logf("%d marks, %d characters that decompose to an ASCII letter and marks", len(marks), len(lettered))
	// Pieces of random characters outside ASCII, rich in marks, after an ASCII character, a form,
	// or nothing.
	r := rand.New(rand.NewPCG(43, 7))
	firsts := []string{"", "a", "e", "K", "\u212a", ";", "\u037e", "`", "\u1fef", "\u00e9", "\u0344"}
	pick := func() rune {
		switch r.IntN(3) {
		case 0:
			return marks[r.IntN(len(marks))]
		case 1:
			return lettered[r.IntN(len(lettered))]
		}
		for {
			c := utf8.RuneSelf + r.Int32N(utf8.MaxRune-utf8.RuneSelf+1)
			if utf8.ValidRune(c) && !kForm[c] {
				return c
			}
		}
	}
	for range 200000 {
		first := firsts[r.IntN(len(firsts))]
		piece := []rune(first)
		for range 1 + r.IntN(4) {
			piece = append(piece, pick())
		}
		nfc := norm.NFC.String(string(piece))
		at := asciiAt(nfc)
		switch {
		case len(at) == 0:
		case len(at) > 1 || at[0] != 0:
			t.Fatalf("%+q: NFC form %+q holds ASCII past its start", string(piece), nfc)
		case first == "" || !isASCII(first) && !kForm[[]rune(first)[0]]:
			t.Fatalf("%+q: NFC form %+q starts with ASCII, the piece does not", string(piece), nfc)
		case norm.NFC.String(first) != nfc[:1]:
			t.Fatalf("%+q: NFC form %+q starts with another ASCII character than the piece's %+q", string(piece), nfc, first)
		}
	}
}
