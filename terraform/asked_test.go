package terraform

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func readAsked(t *testing.T, binary, name string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "planstreams", binary, name+".ask.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// Recorded up to terraform's question and the "Apply cancelled." that answering no gives;
	// modkind answers at the question.
	out, _, _ := strings.Cut(string(raw), "Enter a value: ")
	return out + "Enter a value: "
}

// What apply prints before it asks is read into the very summary that plan's JSON stream of the
// same plan gives, with terraform and OpenTofu. (Not the same ID: the stream also says why each
// object changes, which the printed plan says in other words.)
func TestAskedSummary(t *testing.T) {
	for _, bin := range streamBinaries {
		for _, name := range []string{"create", "update", "replace", "delete", "tainted", "forget"} {
			t.Run(bin+"/"+name, func(t *testing.T) {
				fromStream, _ := readStream(t, bin, name).summarize("inputs")
				asked := parseAsked(readAsked(t, bin, name))
				got, complete := asked.summarize("inputs")
				if !complete {
					t.Errorf("summarize(parseAsked(%s)): the recorded plan must be read completely: %+v", name, asked)
				}
				if diff := cmp.Diff(fromStream, got, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(PlanSummary{}, "ID")); diff != "" {
					t.Errorf("the stream and what apply printed disagree: -stream +asked:\n%s", diff)
				}
			})
		}
	}
}

// modkind answers yes only to a plan it read whole that destroys nothing, or to any plan it read
// whole when the run allows destruction; everything else, including values that pose as
// terraform's own lines, gets no.
func TestAnswer(t *testing.T) {
	const question = "\nDo you want to perform these actions?\n  Terraform will perform the actions described above.\n  Only 'yes' will be accepted to approve.\n\n  Enter a value: "
	const updateHeader = "Terraform will perform the following actions:\n\n  # terraform_data.one will be updated in-place\n  ~ resource \"terraform_data\" \"one\" {\n      ~ input = \"a\" -> \"b\"\n    }\n\n"
	recorded := func(bin, name string) func(t *testing.T) string {
		return func(t *testing.T) string { return readAsked(t, bin, name) }
	}
	text := func(s string) func(*testing.T) string { return func(*testing.T) string { return s } }
	cases := map[string]struct {
		reason           string
		out              func(*testing.T) string
		allowDestructive bool
		want             bool
	}{
		"Update":            {reason: "an update in place destroys nothing", out: recorded("terraform", "update"), want: true},
		"UpdateTofu":        {reason: "OpenTofu says it the same way", out: recorded("tofu", "update"), want: true},
		"Create":            {reason: "objects added destroy nothing", out: recorded("terraform", "create"), want: true},
		"Forget":            {reason: "a removed block leaves the object alone", out: recorded("terraform", "forget"), want: true},
		"ForgetTofu":        {reason: "OpenTofu's removed block too", out: recorded("tofu", "forget"), want: true},
		"Replace":           {reason: "a replacement is refused", out: recorded("terraform", "replace")},
		"ReplaceTofu":       {reason: "OpenTofu's replacement is refused", out: recorded("tofu", "replace")},
		"Delete":            {reason: "a deletion is refused", out: recorded("terraform", "delete")},
		"Tainted":           {reason: "a tainted object's replacement is left to the saved-plan path, which lists it", out: recorded("terraform", "tainted")},
		"TaintedTofu":       {reason: "OpenTofu's too", out: recorded("tofu", "tainted")},
		"ReplaceAllowed":    {reason: "a run that allows destruction applies a replacement", out: recorded("terraform", "replace"), allowDestructive: true, want: true},
		"DeleteAllowedTofu": {reason: "and a deletion", out: recorded("tofu", "delete"), allowDestructive: true, want: true},
		"PlanFailed": {
			reason: "a plan that failed asks nothing",
			out:    recorded("terraform", "preventdestroy"),
		},
		"ValuePosesAsPlan": {
			reason: "a multi-line value that says Plan and asks is printed indented, and the replacement it hides is still counted",
			out: text("Terraform will perform the following actions:\n\n  # terraform_data.one must be replaced\n-/+ resource \"terraform_data\" \"one\" {\n" +
				"      ~ input = <<-EOT\n          + Plan: 0 to add, 0 to change, 0 to destroy.\n          + Do you want to perform these actions?\n          +   Enter a value:\n        EOT\n    }\n\n" +
				"Plan: 1 to add, 0 to change, 1 to destroy.\n" + question),
		},
		"SecondPlanLine": {
			reason: "two Plan lines at the margin are not terraform's plan",
			out:    text(updateHeader + "Plan: 0 to add, 1 to change, 0 to destroy.\nPlan: 0 to add, 1 to change, 0 to destroy.\n" + question),
		},
		"CountsDisagree": {
			reason: "terraform counts a destroy that no header shows",
			out:    text(updateHeader + "Plan: 0 to add, 1 to change, 1 to destroy.\n" + question),
		},
		"UnknownHeader": {
			reason: "a change modkind cannot name may destroy something",
			out:    text("Terraform will perform the following actions:\n\n  # terraform_data.one will be obliterated\n\nPlan: 0 to add, 0 to change, 0 to destroy.\n" + question),
		},
		"NoPlanLine": {
			reason: "a plan that changes only outputs has no counts to check the headers against",
			out:    text("Changes to Outputs:\n  ~ echo = \"a\" -> \"b\"\n" + question),
		},
		"VariablePrompt": {
			reason: "terraform asking for a variable's value is no question to apply",
			out:    text("var.input\n  Enter a value: "),
		},
		"QuestionBeforePlan": {
			reason: "the question must follow the plan it asks about",
			out:    text("Do you want to perform these actions?\n" + updateHeader + "Plan: 0 to add, 1 to change, 0 to destroy.\n  Enter a value: "),
		},
		"NotAsked": {
			reason: "output that does not end with the question is answered nothing",
			out:    text(updateHeader + "Plan: 0 to add, 1 to change, 0 to destroy.\n"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, _, _ := answer(tc.out(t), "inputs", tc.allowDestructive)
			if got != tc.want {
				t.Errorf("%s\nanswer(...): got approved %v, want %v", tc.reason, got, tc.want)
			}
		})
	}
}
