package validation

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/modkind/modkind/crd/internal/crdtest"
)

// TestTerraformBase64Decode checks the facts base64Syntax rests on against terraform itself: which
// strings can(base64decode(x)) accepts, and that the pattern, rewritten as the rule has it, matches
// all of those and refuses the others but for bytes that are not UTF-8.
func TestTerraformBase64Decode(t *testing.T) {
	tf := crdtest.Terraform(t)
	version := terraformVersion(t, tf)
	src := `
variable "data" {
  type = string
  validation {
    condition     = can(base64decode(var.data))
    error_message = "base64"
  }
}
`
	own := crdtest.InspectSource(t, src)
	decls := declarationsOf(t, []byte(src), own)
	rewritten, ok := normalMatchPred{s: &term{expr: "self"}, re: base64Syntax}.rewritten()
	if !ok {
		t.Fatal("base64Syntax should be rewritten for the characters whose normal form is ASCII")
	}
	pattern := regexp.MustCompile(rewritten.re)
	cases := []struct {
		reason string
		value  string
		// decodes is what terraform says; notUTF8 marks the strings that decode, to bytes
		// base64decode refuses.
		decodes, notUTF8 bool
	}{
		{reason: "One byte, padded.", value: "QQ==", decodes: true},
		{reason: "Padding is required.", value: "QQ", decodes: false},
		{reason: "Bits left over in the last character need not be zero.", value: "QR==", decodes: true},
		{reason: "Two bytes, padded.", value: "QUI=", decodes: true},
		{reason: "Three bytes need no padding.", value: "QUJD", decodes: true},
		{reason: "Padding after a full group is refused.", value: "QUJD=", decodes: false},
		{reason: "Too much padding is refused.", value: "QUI==", decodes: false},
		{reason: "Nothing follows the padding.", value: "QQ==QQ==", decodes: false},
		{reason: "A character after the padding is refused.", value: "QQ=a", decodes: false},
		{reason: "The empty string decodes to nothing.", value: "", decodes: true},
		{reason: "CR and LF are skipped anywhere, even between the = of the padding.", value: "\nQ\r\nQ=\n=\r", decodes: true},
		{reason: "A space is not skipped.", value: " QUI=", decodes: false},
		{reason: "A character outside the alphabet is refused.", value: "QQ-=", decodes: false},
		{reason: "KELVIN SIGN normalizes to K, which is of the alphabet.", value: "\u212aw==", decodes: true},
		{reason: "A letter with a combining accent is outside the alphabet once normalized.", value: "QUI\u0301", decodes: false},
		{reason: "0xff is not UTF-8: base64decode errs though the decoding does not.", value: "/w==", decodes: false, notUTF8: true},
		{reason: "A gzip stream (H4sI...) is not UTF-8 either.", value: "H4sIAAAAAAAA", decodes: false, notUTF8: true},
	}
	qs := map[string]tfQuestion{}
	for _, c := range cases {
		raw, _ := json.Marshal(c.value)
		q := tfQuestion{decl: decls["data"], raw: string(raw)}
		qs[q.key(version)] = q
	}
	got := terraformDecides(t, tf, version, qs)
	for _, c := range cases {
		raw, _ := json.Marshal(c.value)
		want := tfAnswer("0")
		if c.decodes {
			want = ""
		}
		if diff := cmp.Diff(want, got[tfQuestion{decl: decls["data"], raw: string(raw)}.key(version)]); diff != "" {
			t.Errorf("\n%s\ncan(base64decode(%q)): terraform's answer (-want +got):\n%s", c.reason, c.value, diff)
		}
		if diff := cmp.Diff(c.decodes || c.notUTF8, pattern.MatchString(c.value)); diff != "" {
			t.Errorf("\n%s\nThe rule's pattern should match %q exactly where Go's decoder takes it (-want +got):\n%s", c.reason, c.value, diff)
		}
	}
}
