package instance

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The destructive addresses a preview shows are bounded, whatever a Run reported.
func TestShownDestructive(t *testing.T) {
	many := make([]string, 120)
	for i := range many {
		many[i] = "terraform_data.x (replace)"
	}
	long := strings.Repeat("é", 400) // 800 bytes
	cases := map[string]struct {
		reason string
		in     []string
		want   []string
	}{
		"None": {reason: "No destructive change shows none."},
		"Few":  {reason: "A few addresses show as they are.", in: []string{"a (delete)", "b (replace)"}, want: []string{"a (delete)", "b (replace)"}},
		"Many": {reason: "Past the bound, the rest is counted.", in: many, want: append(append([]string{}, many[:maxPreviewDestructive]...), "… and 70 more")},
		"Long": {reason: "A long address is cut at a character boundary.", in: []string{long}, want: []string{strings.Repeat("é", maxPreviewAddress/2) + "…"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, shownDestructive(tc.in)); diff != "" {
				t.Errorf("%s\nshownDestructive: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
