package runs

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/modkind/modkind/apis/v1alpha1"
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

// A Run's log (written by the runner account in job mode) fits its CRD's maxLength, keeping its
// newest lines from a line's start; each outcome's log replaces the last, for a plan approved is
// made again before it is applied and its log tells it whole.
func TestSetOutcomeLog(t *testing.T) {
	long := strings.Repeat("terraform_data.x[\"é\"]: Creating...\n", 2000) + "Apply complete! Resources: 2000 added, 0 changed, 0 destroyed.\n"
	cases := []struct {
		reason, before, log string
		want                func(string) bool
	}{
		{"A log that fits is kept whole.", "", "$ terraform apply\nApply complete!\n", func(s string) bool { return s == "$ terraform apply\nApply complete!\n" }},
		{"A new outcome's log replaces the one of the plan that waited.", "$ terraform apply\nPlan: 1 to add\n", "$ terraform apply\nApply complete!\n",
			func(s string) bool { return s == "$ terraform apply\nApply complete!\n" }},
		{"A longer one keeps its end, from a line's start, and says it was cut.", "", long, func(s string) bool {
			return len(s) <= MaxLog && utf8.ValidString(s) && strings.HasPrefix(s, "… (earlier lines not kept)\nterraform_data.x") &&
				strings.HasSuffix(s, "Apply complete! Resources: 2000 added, 0 changed, 0 destroyed.\n")
		}},
	}
	for _, tc := range cases {
		st := &v1alpha1.RunStatus{Log: tc.before}
		SetOutcome(st, Outcome{Log: tc.log}, nil, time.Now())
		if !tc.want(st.Log) {
			t.Errorf("%s\ngot %d bytes: %.200q", tc.reason, len(st.Log), st.Log)
		}
	}
}
