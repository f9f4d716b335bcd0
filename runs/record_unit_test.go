package runs

import (
	"fmt"
	"strings"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/google/go-cmp/cmp"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/terraform"
)

func TestRunOutcome(t *testing.T) {
	const secret = "hunter2-very-secret"
	red := terraform.NewRedactor(secret)
	refused := &terraform.RefusedPlanError{Changes: []terraform.DestructiveChange{{Address: `x.y["b"]`, Action: "delete"}}}
	waiting := &terraform.AwaitingApprovalError{Plan: terraform.PlanSummary{ID: "abc123", Add: 1}}
	type want struct {
		phase   v1alpha1.RunPhase
		message string
	}
	cases := map[string]struct {
		reason string
		err    error
		want   want
	}{
		"Succeeded": {"No error is a Run that Succeeded, with nothing to say.", nil, want{v1alpha1.PhaseSucceeded, ""}},
		"Waiting": {"A plan waiting for approval says which id to approve.", errors.Wrap(waiting, "apply"),
			want{v1alpha1.PhaseWaitingForApproval, "apply: " + waiting.Error()}},
		"Refused": {"A refused plan is Refused, with the addresses.", refused, want{v1alpha1.PhaseRefused, refused.Error()}},
		"FailedRedacted": {"A failure that quotes a sensitive value is Failed without the value.",
			fmt.Errorf("terraform apply: bad password %q", secret), want{v1alpha1.PhaseFailed, `terraform apply: bad password "(redacted)"`}},
		"FailedBounded": {"A long failure is cut, so a Run stays small.", errors.New(strings.Repeat("x", 3*terraform.MaxMessage)),
			want{v1alpha1.PhaseFailed, strings.Repeat("x", terraform.MaxMessage) + "…"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			phase, msg := PhaseOf(tc.err, red)
			if diff := cmp.Diff(tc.want, want{phase, msg}, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestRunPlan(t *testing.T) {
	s := terraform.PlanSummary{ID: "p1", Add: 1, Change: 2, Destroy: 3, Destructive: []terraform.DestructiveChange{
		{Address: "a.b", Action: "replace", ForcedBy: []string{"size"}},
		{Address: "c.d", Action: "delete"},
	}}
	want := &v1alpha1.RunPlan{ID: "p1", Add: 1, Change: 2, Destroy: 3, Replace: 1, Summary: "+1 ~2 -3",
		Destructive: []string{"a.b (replace, forced by size)", "c.d (delete)"}}
	if diff := cmp.Diff(want, PlanOf(s)); diff != "" {
		t.Errorf("a Run's plan holds the counts and addresses of status.lastPlan: -want, +got:\n%s", diff)
	}
}
