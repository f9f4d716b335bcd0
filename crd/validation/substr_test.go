package validation

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/modkind/modkind/crd/internal/crdtest"
)

// TestTerraformSubstrPrefix checks prefixed's reading against terraform: substr counts grapheme
// clusters of the normal form, upper() maps LONG S to S, and the rule decides every value as
// terraform does.
func TestTerraformSubstrPrefix(t *testing.T) {
	tf := crdtest.Terraform(t)
	version := terraformVersion(t, tf)
	src := `
variable "dbver" {
  type = string
  validation {
    condition     = (length(var.dbver) >= 9 && ((upper(substr(var.dbver, 0, 9)) == "POSTGRES_") && can(regex("^\\d+(?:_?\\d)*$", substr(var.dbver, 9, -1))))) || can(regex("^\\d+(?:_?\\d)*$", var.dbver))
    error_message = "version"
  }
}
`
	own := crdtest.InspectSource(t, src)
	decls := declarationsOf(t, []byte(src), own)
	tr := translateValidation(own.Variables[0], own.Variables[0].Validations[0])
	if !tr.exact {
		t.Errorf("\nThe split of a string by substr() should be translated exactly: %s", tr.p.cel())
	}
	cases := []struct {
		reason   string
		value    string
		accepted bool
	}{
		{reason: "The prefix in capitals and a version.", value: "POSTGRES_14", accepted: true},
		{reason: "upper() makes the prefix of any case.", value: "postgres_9_6", accepted: true},
		{reason: "upper() makes S of LONG S.", value: "po\u017ftgre\u017f_15", accepted: true},
		{reason: "A version alone.", value: "17", accepted: true},
		{reason: "The prefix alone has no version.", value: "POSTGRES_", accepted: false},
		{reason: "A combining accent after the prefix joins its last cluster.", value: "POSTGRES_\u030114", accepted: false},
		{reason: "A combining accent on a letter of the prefix makes another letter.", value: "POSTGRE\u0301S_14", accepted: false},
		{reason: "A combining accent at the end joins the version's last cluster.", value: "POSTGRES_14\u0301", accepted: false},
		{reason: "Two underscores in a row are not a version.", value: "POSTGRES_1__4", accepted: false},
		{reason: "Dotless i is not an S.", value: "POSTGRE\u0131_14", accepted: false},
		{reason: "A longer prefix is not the prefix.", value: "POSTGRESQL_14", accepted: false},
	}
	qs := map[string]tfQuestion{}
	for _, c := range cases {
		raw, _ := json.Marshal(c.value)
		q := tfQuestion{decl: decls["dbver"], raw: string(raw)}
		qs[q.key(version)] = q
	}
	got := terraformDecides(t, tf, version, qs)
	for _, c := range cases {
		raw, _ := json.Marshal(c.value)
		want := tfAnswer("0")
		if c.accepted {
			want = ""
		}
		if diff := cmp.Diff(want, got[tfQuestion{decl: decls["dbver"], raw: string(raw)}.key(version)]); diff != "" {
			t.Errorf("\n%s\ndbver = %s: terraform's answer (-want +got):\n%s", c.reason, raw, diff)
		}
		if diff := cmp.Diff(c.accepted, accepts(tr.p, c.value)); diff != "" {
			t.Errorf("\n%s\nThe rule %s on %s (-want +got):\n%s", c.reason, tr.p.cel(), raw, diff)
		}
	}
}
