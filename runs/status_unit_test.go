package runs

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// A Run's message fits its CRD's maxLength whatever a Job's or an Event's text said, so that the
// API server never refuses the status that records how the Run ended; what is cut is said, and a
// message that fits is kept whole.
func TestBoundMessage(t *testing.T) {
	long := strings.Repeat("Back-off pulling image «runner» — ", 2000)
	cases := []struct {
		reason string
		msg    string
		prefix string
		cut    bool
	}{
		{"A message that fits is kept whole.", "runner not started: no service account", "runner not started: no service account", false},
		{"One of exactly the bound is kept whole.", strings.Repeat("x", MaxMessage), strings.Repeat("x", MaxMessage), false},
		{"A longer one keeps its start, cut on a character's boundary, and says it was cut.", long, long[:1000], true},
	}
	for _, tc := range cases {
		got := BoundMessage(tc.msg)
		seen := map[string]any{"fits": len(got) <= MaxMessage, "valid": utf8.ValidString(got), "prefix": strings.HasPrefix(got, tc.prefix),
			"saysCut": strings.HasSuffix(got, "bytes more, cut)")}
		want := map[string]any{"fits": true, "valid": true, "prefix": true, "saysCut": tc.cut}
		if diff := cmp.Diff(want, seen); diff != "" {
			t.Errorf("%s\n-want +got:\n%s", tc.reason, diff)
		}
	}
}
