package validation

import (
	"encoding/json"
	"regexp/syntax"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"

	"github.com/modkind/modkind/crd/internal/crdtest"
)

// TestTerraformNumberOfString checks against terraform which strings it converts to a number to
// compare it (numberSyntax), and that the rule decides as terraform does wherever it claims to: it
// refuses what does not convert, and compares whole numbers of up to 15 digits.
func TestTerraformNumberOfString(t *testing.T) {
	tf := crdtest.Terraform(t)
	version := terraformVersion(t, tf)
	src := `
variable "backup" {
  type    = object({ kept = optional(number, 8), days = optional(string, "7") })
  default = {}
  validation {
    condition     = var.backup.kept > var.backup.days
    error_message = "kept above days"
  }
}
`
	own := crdtest.InspectSource(t, src)
	decls := declarationsOf(t, []byte(src), own)
	tr := translateValidation(own.Variables[0], own.Variables[0].Validations[0])
	cases := []struct {
		reason string
		raw    string
		// accepted is terraform's decision; lenient marks the values the rule admits where
		// terraform refuses them, as it leaves numbers other than short whole ones to Terraform.
		accepted, lenient bool
	}{
		{reason: "7 below 8.", raw: `{"kept":8,"days":"7"}`, accepted: true},
		{reason: "8 is not above 8.", raw: `{"kept":8,"days":"8"}`, accepted: false},
		{reason: "Leading zeros and a minus sign parse.", raw: `{"kept":8,"days":"-007"}`, accepted: true},
		{reason: "A plus sign parses; the rule leaves it to Terraform.", raw: `{"kept":8,"days":"+9"}`, accepted: false, lenient: true},
		{reason: "A point with no digits after parses.", raw: `{"kept":8,"days":"1."}`, accepted: true},
		{reason: "A fraction with no digits before parses.", raw: `{"kept":8,"days":".5"}`, accepted: true},
		{reason: "A binary exponent parses: 1p3 is 8.", raw: `{"kept":8,"days":"1p3"}`, accepted: false, lenient: true},
		{reason: "A decimal exponent parses.", raw: `{"kept":8,"days":"1E+5"}`, accepted: false, lenient: true},
		{reason: "Inf parses, and nothing is above it.", raw: `{"kept":8,"days":"inf"}`, accepted: false, lenient: true},
		{reason: "-Inf parses.", raw: `{"kept":8,"days":"-Inf"}`, accepted: true},
		{reason: "INF does not parse.", raw: `{"kept":8,"days":"INF"}`, accepted: false},
		{reason: "Hexadecimal does not parse in base 10.", raw: `{"kept":8,"days":"0x1"}`, accepted: false},
		{reason: "Underscores do not parse in base 10.", raw: `{"kept":8000,"days":"1_000"}`, accepted: false},
		{reason: "Spaces do not parse.", raw: `{"kept":8,"days":" 1"}`, accepted: false},
		{reason: "The empty string does not parse.", raw: `{"kept":8,"days":""}`, accepted: false},
		{reason: "Digits outside ASCII do not parse.", raw: `{"kept":8,"days":"\u0661"}`, accepted: false},
		{reason: "Fifteen digits are compared exactly.", raw: `{"kept":999999999999999,"days":"999999999999998"}`, accepted: true},
		{reason: "A number beyond 2^53 is above every 15-digit string, though CEL rounds it.", raw: `{"kept":9007199254740993,"days":"999999999999999"}`, accepted: true},
		{reason: "A fraction is compared exactly by terraform: 7.5 is not above 7.5.", raw: `{"kept":7.5,"days":"7.5"}`, accepted: false, lenient: true},
	}
	qs := map[string]tfQuestion{}
	for _, c := range cases {
		q := tfQuestion{decl: decls["backup"], raw: c.raw}
		qs[q.key(version)] = q
	}
	got := terraformDecides(t, tf, version, qs)
	for _, c := range cases {
		want := tfAnswer("0")
		if c.accepted {
			want = ""
		}
		if diff := cmp.Diff(want, got[tfQuestion{decl: decls["backup"], raw: c.raw}.key(version)]); diff != "" {
			t.Errorf("\n%s\nbackup = %s: terraform's answer (-want +got):\n%s", c.reason, c.raw, diff)
		}
		var x any
		if err := json.Unmarshal([]byte(c.raw), &x); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(c.accepted || c.lenient, accepts(tr.p, x)); diff != "" {
			t.Errorf("\n%s\nThe rule %s on %s (-want +got):\n%s", c.reason, tr.p.cel(), c.raw, diff)
		}
	}
}

// TestNumberPatternsASCII checks what numberAndString relies on to search the string as given:
// numberSyntax and exactWhole match ASCII characters only, and none of K, ; and `, which
// characters outside ASCII normalize to.
func TestNumberPatternsASCII(t *testing.T) {
	for _, re := range []string{numberSyntax, exactWhole} {
		parsed, err := syntax.Parse(re, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		var bad []string
		var walk func(x *syntax.Regexp)
		walk = func(x *syntax.Regexp) {
			switch x.Op {
			case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
				bad = append(bad, "any character")
			case syntax.OpLiteral:
				for _, r := range x.Rune {
					// A literal that folds case matches every rune of its orbit.
					for f := r; ; {
						if f > 0x7f || strings.ContainsRune(normalTargets, f) {
							bad = append(bad, string(f))
						}
						if f = unicode.SimpleFold(f); f == r || x.Flags&syntax.FoldCase == 0 {
							break
						}
					}
				}
			case syntax.OpCharClass:
				for i := 0; i < len(x.Rune); i += 2 {
					for r := x.Rune[i]; r <= x.Rune[i+1]; r++ {
						if r > 0x7f || strings.ContainsRune(normalTargets, r) {
							bad = append(bad, string(r))
							break
						}
					}
				}
			}
			for _, s := range x.Sub {
				walk(s)
			}
		}
		walk(parsed)
		if diff := cmp.Diff([]string(nil), bad); diff != "" {
			t.Errorf("\n%s should match only ASCII characters other than K, ; and ` (-want +got):\n%s", re, diff)
		}
	}
}
