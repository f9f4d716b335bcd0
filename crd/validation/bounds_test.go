package validation

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMaxASCIILength(t *testing.T) {
	type want struct {
		N  int64
		OK bool
	}
	cases := map[string]struct {
		reason string
		re     string
		want   want
	}{
		"Bounded":      {reason: "An anchored pattern of bounded repetitions of ASCII classes.", re: `^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`, want: want{63, true}},
		"Alternatives": {reason: "The longest alternative counts.", re: `^(Disabled|Enabled)$`, want: want{8, true}},
		"EachAnchored": {reason: "Alternatives each anchored.", re: `^a$|^bcd$`, want: want{3, true}},
		"GUID":         {reason: "Fixed repetitions.", re: `^[0-9a-f]{8}-([0-9a-f]{4}-){3}[0-9a-f]{12}$`, want: want{36, true}},
		"Optional":     {reason: "An optional part counts whole.", re: `^v[0-9]{1,3}(\.[0-9]{1,3})?$`, want: want{8, true}},
		"Unanchored":   {reason: "A search matches within longer strings.", re: `[a-z]{1,8}`, want: want{0, false}},
		"EndOnly":      {reason: "Anchored at one end only.", re: `^[a-z]{1,8}`, want: want{0, false}},
		"Star":         {reason: "Unbounded repetition.", re: `^[a-z]+$`, want: want{0, false}},
		"AnyChar":      {reason: "Any character may be outside ASCII.", re: `^.{1,64}$`, want: want{0, false}},
		"NotASCII":     {reason: "A class with non-ASCII characters.", re: `^[a-zé]{1,3}$`, want: want{0, false}},
		"Negated":      {reason: "A negated class holds non-ASCII characters.", re: `^[^/]{1,3}$`, want: want{0, false}},
		"FoldCase":     {reason: "Case folding matches KELVIN SIGN for k.", re: `^(?i)kms$`, want: want{0, false}},
		"Multiline":    {reason: "Line anchors match inside longer strings.", re: `(?m)^[a-z]{1,3}$`, want: want{0, false}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			n, ok := maxASCIILength(tc.re)
			if diff := cmp.Diff(tc.want, want{n, ok}); diff != "" {
				t.Errorf("\n%s\nmaxASCIILength(%s): -want, +got:\n%s", tc.reason, tc.re, diff)
			}
		})
	}
}
