package validation

import (
	"math/rand/v2"
	"regexp"
	"testing"

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
