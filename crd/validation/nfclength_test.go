package validation

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/text/unicode/norm"

	"github.com/modkind/modkind/crd/internal/crdtest"
)

// TestMaxDecomposition checks maxDecomposition over all of Unicode: no code point's canonical
// decomposition is longer, and one is that long.
func TestMaxDecomposition(t *testing.T) {
	longest, example := 0, rune(0)
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		if n := utf8.RuneCountInString(norm.NFD.String(string(r))); n > longest {
			longest, example = n, r
		}
	}
	if diff := cmp.Diff(maxDecomposition, longest); diff != "" {
		t.Errorf("\nThe longest canonical decomposition of a code point (%U) (-maxDecomposition +got):\n%s", example, diff)
	}
}

func TestMaxGivenLength(t *testing.T) {
	cases := map[string]struct {
		reason string
		re     string
		want   int64
		ok     bool
	}{
		"AnyCharacters":    {reason: "64 code points of the normal form, each of at most 4 as given.", re: `^.{1,64}$`, want: 256, ok: true},
		"Alternatives":     {reason: "The longest alternative bounds.", re: `^ab$|^.{3}x?$`, want: 16, ok: true},
		"Classes":          {reason: "A class matches one code point.", re: `^[^/]{2}/[a-z]{0,3}$`, want: 24, ok: true},
		"Unbounded":        {reason: "A star bounds nothing.", re: `^.{1,64}x*$`},
		"NotAnchoredAtEnd": {reason: "A search not anchored at the end matches longer strings.", re: `^.{1,64}`},
		"Invalid":          {reason: "A pattern that does not parse bounds nothing.", re: `^(.$`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			n, ok := maxGivenLength(tc.re)
			if diff := cmp.Diff([2]any{tc.want, tc.ok}, [2]any{n, ok}); diff != "" {
				t.Errorf("\n%s\nmaxGivenLength(%q) (-want +got):\n%s", tc.reason, tc.re, diff)
			}
		})
	}
}

// TestTerraformLengthOfNormalForm checks against terraform that a pattern counts the code points of
// a string's NFC form, which may have fewer than the string as given: the bound maxGivenLength
// sets allows for that.
func TestTerraformLengthOfNormalForm(t *testing.T) {
	tf := crdtest.Terraform(t)
	version := terraformVersion(t, tf)
	src := `
variable "name" {
  type = string
  validation {
    condition     = can(regex("^.{1,8}$", var.name))
    error_message = "1 to 8"
  }
}
`
	own := crdtest.InspectSource(t, src)
	decls := declarationsOf(t, []byte(src), own)
	bound, _ := maxGivenLength(`^.{1,8}$`)
	cases := []struct {
		reason string
		value  string
		want   tfAnswer
	}{
		{reason: "8 letters with 3 combining marks each: 32 code points as given, 8 of the normal form (ệ and ǖ take two marks).", value: strings.Repeat("e\u0323\u0302", 4) + strings.Repeat("u\u0308\u0304", 4), want: ""},
		{reason: "9 code points of the normal form are too many.", value: strings.Repeat("e\u0301", 9), want: "0"},
	}
	qs := map[string]tfQuestion{}
	for _, c := range cases {
		raw, _ := json.Marshal(c.value)
		q := tfQuestion{decl: decls["name"], raw: string(raw)}
		qs[q.key(version)] = q
	}
	got := terraformDecides(t, tf, version, qs)
	for _, c := range cases {
		raw, _ := json.Marshal(c.value)
		if diff := cmp.Diff(c.want, got[tfQuestion{decl: decls["name"], raw: string(raw)}.key(version)]); diff != "" {
			t.Errorf("\n%s\nname = %s: terraform's answer (-want +got):\n%s", c.reason, raw, diff)
		}
		if n := int64(utf8.RuneCountInString(c.value)); c.want == "" && n > bound {
			t.Errorf("\n%s\nname = %s: terraform accepts %d code points, beyond the bound %d", c.reason, raw, n, bound)
		}
	}
}
