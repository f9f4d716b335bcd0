package terraform

import (
	"strings"
	"testing"
)

// The stored text of a plan never holds a value read from a Secret, however long the plan, and
// always fits in a Secret.
func TestPlanViewText(t *testing.T) {
	secret := "s3cret-value"
	long := strings.Repeat("  # filler line of a long plan\n", 200)
	huge := strings.Repeat("0123456789abcdef\n", (maxPlanText/17)+1000)
	cases := map[string]struct {
		reason   string
		raw      string
		want     func(got string) string
		maxBytes int
	}{
		"RedactedAnywhere": {
			reason: "a value from a Secret is redacted wherever it appears, also past the length Redact keeps for messages",
			raw:    "+ leak = \"" + secret + "\"\n" + long + "+ again = \"" + secret + "\"\n",
			want: func(got string) string {
				if strings.Contains(got, secret) {
					return "the secret is still there"
				}
				if strings.Count(got, "(redacted)") != 2 {
					return "want both occurrences redacted"
				}
				if !strings.Contains(got, long) {
					return "the rest of the plan must be kept whole"
				}
				return ""
			},
			maxBytes: maxPlanText,
		},
		"CutToFit": {
			reason: "a plan too large for a Secret is cut at a line, and says how much is missing",
			raw:    huge,
			want: func(got string) string {
				if !strings.HasPrefix(huge, strings.SplitN(got, "\n…", 2)[0]) {
					return "the kept part must be the plan's beginning"
				}
				if !strings.Contains(got, "more bytes of the plan are not shown") {
					return "the cut must be said"
				}
				return ""
			},
			maxBytes: maxPlanText + 100,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := planText(NewRedactor(secret), tc.raw)
			if msg := tc.want(got); msg != "" {
				t.Errorf("%s\nplanText: %s; got %d bytes:\n%.500s", tc.reason, msg, len(got), got)
			}
			if len(got) > tc.maxBytes {
				t.Errorf("%s\nplanText: %d bytes, want at most %d", tc.reason, len(got), tc.maxBytes)
			}
		})
	}
}
