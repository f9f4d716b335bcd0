package validation

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/modkind/modkind/crd/internal/crdtest"
)

// TestDigitsAlternatives checks the pattern of the numbers compared with a bound against every
// string of up to three digits, for every bound around them and every comparison.
func TestDigitsAlternatives(t *testing.T) {
	for w := 1; w <= 3; w++ {
		limit := 1
		for range w {
			limit *= 10
		}
		for _, op := range []string{">=", ">", "<=", "<", "==", "!="} {
			for n := int64(-2); n <= int64(limit)+1; n++ {
				var alts []string
				for _, a := range digitsAlternatives(w, op, n) {
					alts = append(alts, strings.Join(a, ""))
				}
				re := regexp.MustCompile("^(?:" + strings.Join(alts, "|") + ")$")
				if len(alts) == 0 {
					re = regexp.MustCompile("^$x")
				}
				for v := range limit {
					s := fmt.Sprintf("%0*d", w, v)
					if diff := cmp.Diff(compare(float64(v), op, float64(n)), re.MatchString(s)); diff != "" {
						t.Fatalf("\nThe pattern of %d digits %s %d should match %s exactly where its number compares so (-want +got):\n%s", w, op, n, s, diff)
					}
				}
			}
		}
	}
}

// TestTerraformDigitsOfPart checks digitsCompared's reading against terraform, and that the rule
// decides every value as terraform does.
func TestTerraformDigitsOfPart(t *testing.T) {
	tf := crdtest.Terraform(t)
	version := terraformVersion(t, tf)
	src := `
variable "kind" {
  type = string
  validation {
    condition     = try(tonumber(replace(regex("^\\d{4}-\\d{2}-\\d{2}", split("@", var.kind)[1]), "-", "")) >= 20250801, false)
    error_message = "2025-08-01 or later"
  }
}
`
	own := crdtest.InspectSource(t, src)
	decls := declarationsOf(t, []byte(src), own)
	tr := translateValidation(own.Variables[0], own.Variables[0].Validations[0])
	if !tr.exact {
		t.Errorf("\nThe digits of a part of a string compared with a bound should be translated exactly: %s", tr.p.cel())
	}
	cases := []struct {
		reason   string
		value    string
		accepted bool
	}{
		{reason: "The date itself.", value: "Microsoft.Storage/storageAccounts/blobServices@2025-08-01", accepted: true},
		{reason: "The day before.", value: "x@2025-07-31", accepted: false},
		{reason: "A later year.", value: "x@2026-01-01", accepted: true},
		{reason: "What follows the date, and a further @, do not matter.", value: "x@2025-08-02T00@y", accepted: true},
		{reason: "The pattern does not check dates.", value: "x@9999-99-99", accepted: true},
		{reason: "No dashes, no match: regex() errs.", value: "x@20250801", accepted: false},
		{reason: "No @: the index errs.", value: "2025-08-01", accepted: false},
		{reason: "The part after the first @ only.", value: "a@b@2026-01-01", accepted: false},
		{reason: "Characters outside ASCII before the @ are anything.", value: "caf\u00e9@2025-09-01", accepted: true},
		{reason: "A combining accent after the year's last digit makes no digit.", value: "x@2025\u0301-09-01", accepted: false},
		{reason: "Digits outside ASCII are not \\d.", value: "x@\u0662\u0660\u0662\u0665-09-01", accepted: false},
		{reason: "The empty string has no @.", value: "", accepted: false},
	}
	qs := map[string]tfQuestion{}
	for _, c := range cases {
		raw, _ := json.Marshal(c.value)
		q := tfQuestion{decl: decls["kind"], raw: string(raw)}
		qs[q.key(version)] = q
	}
	got := terraformDecides(t, tf, version, qs)
	for _, c := range cases {
		raw, _ := json.Marshal(c.value)
		want := tfAnswer("0")
		if c.accepted {
			want = ""
		}
		if diff := cmp.Diff(want, got[tfQuestion{decl: decls["kind"], raw: string(raw)}.key(version)]); diff != "" {
			t.Errorf("\n%s\nkind = %s: terraform's answer (-want +got):\n%s", c.reason, raw, diff)
		}
		if diff := cmp.Diff(c.accepted, accepts(tr.p, c.value)); diff != "" {
			t.Errorf("\n%s\nThe rule %s on %s (-want +got):\n%s", c.reason, tr.p.cel(), raw, diff)
		}
	}
}
