package terraform

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Distill over the errors terraform 1.11 and OpenTofu 1.10 gave modkind's own calls
// (testdata/errors, recorded, and checked against the terraform under test, by
// TestRunErrorsAsTerraformSaysThem), as an instance's condition shows them: crossplane-runtime's
// "create failed: " and modkind's "terraform apply failed: " before them.
func TestDistill(t *testing.T) {
	const postcondition = `Error: Resource postcondition failed

  on main.tf line 11:
  11:       condition     = self.id == "never" || self.input == "ok"

The input must be ok, got bad.`
	const second = `Error: Resource postcondition failed

  on main.tf line 21:
  21:       condition     = self.input == "ok"

The second object's input must be ok too.`
	cases := map[string]struct {
		reason string
		file   string
		prefix string
		want   string
	}{
		"FreshApply": {
			reason: "A create's apply -json: the error first, the CLI configuration's warning and the exit status gone, what failed last.",
			file:   "apply-json-postcondition.txt", prefix: "create failed: terraform apply failed: ",
			want: postcondition + "\n\n(create failed: terraform apply failed)",
		},
		"Retry": {
			reason: "The retry, whose plan meets the same check: it says the same, an apply that failed.",
			file:   "plan-json-postcondition.txt", prefix: "update failed: terraform apply failed: ",
			want: postcondition + "\n\n(update failed: terraform apply failed)",
		},
		"TwoErrors": {
			reason: "Two errors: both, in terraform's order.",
			file:   "plan-json-two-errors.txt", prefix: "update failed: terraform apply failed: ",
			want: second + "\n\n" + postcondition + "\n\n(update failed: terraform apply failed)",
		},
		"SavedPlan": {
			reason: "A saved plan applied without -json: the values under the expression kept, the box-drawing rule and edges gone.",
			file:   "apply-postcondition.txt", prefix: "update failed: terraform apply failed: ",
			want: `Error: Resource postcondition failed

  on main.tf line 11, in resource "terraform_data" "checked":
  11:       condition     = self.id == "never" || self.input == "ok"
    self.id is "<id>"
    self.input is "bad"

The input must be ok, got bad.

Error: Resource postcondition failed

  on main.tf line 21, in resource "terraform_data" "also":
  21:       condition     = self.input == "ok"
    self.input is "bad"

The second object's input must be ok too.

(update failed: terraform apply failed)`,
		},
		"Invalid": {
			reason: "A module terraform refuses: its error first.",
			file:   "plan-json-undeclared.txt", prefix: "terraform plan failed: ",
			want: `Error: Reference to undeclared input variable

  on main.tf line 1:
  1: resource "terraform_data" "x" { input = var.missing }

An input variable with the name "missing" has not been declared. This variable can be declared with a variable "missing" {} block.

(terraform plan failed)`,
		},
	}
	id := regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	for _, bin := range []string{"terraform", "tofu"} {
		for name, tc := range cases {
			t.Run(bin+"/"+name, func(t *testing.T) {
				raw, err := os.ReadFile(filepath.Join("testdata", "errors", bin, tc.file))
				if err != nil {
					t.Fatal(err)
				}
				got := id.ReplaceAllString(Distill(tc.prefix+string(raw)), "<id>")
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("\n%s\n-want +got:\n%s", tc.reason, diff)
				}
			})
		}
	}
}

// Messages that are no terraform output are left as they are.
func TestDistillLeavesOtherMessages(t *testing.T) {
	cases := map[string]struct {
		reason string
		in     string
		want   string
	}{
		"Plain":   {reason: "A message of modkind's own.", in: "waiting for textFrom: ConfigMap settings does not exist", want: "waiting for textFrom: ConfigMap settings does not exist"},
		"NoBlock": {reason: "A failed run without diagnostics keeps its message, less the exit status.", in: "terraform apply failed: exit status 1", want: "terraform apply failed"},
		"Inline":  {reason: "An Error: inside a line starts no block.", in: "cannot read Secret s: Error: x", want: "cannot read Secret s: Error: x"},
		"Empty":   {reason: "Nothing stays nothing.", in: "", want: ""},
		"Boxed": {
			reason: "An error in a box, as terraform prints it in colour: the box gone.",
			in:     "terraform apply failed: exit status 1\n╷\n│ Error: Invalid count argument\n│\n│   on main.tf line 3:\n│\n│ The count is unknown.\n╵\n",
			want:   "Error: Invalid count argument\n\n  on main.tf line 3:\n\nThe count is unknown.\n\n(terraform apply failed)",
		},
		"CLIConfigError": {
			reason: "An error of the CLI configuration is the run's error: kept, its warning dropped.",
			in:     "terraform init failed: exit status 1\nThere are some problems with the CLI configuration:\n╷\n│ Warning: Unable to open CLI configuration file\n│\n│ gone\n╵\n╷\n│ Error: Invalid provider installation method\n│\n│ bad block\n╵\n",
			want:   "Error: Invalid provider installation method\n\nbad block\n\n(terraform init failed)",
		},
		"UnboxedCLIWarning": {
			reason: "The CLI configuration's warning without boxes (no colour) is dropped too.",
			in:     "terraform apply failed: exit status 1\nThere are some problems with the CLI configuration:\n\nWarning: Unable to open CLI configuration file\n\nThe file does not exist.\n\nError: Boom\n\nDetail.\n",
			want:   "Error: Boom\n\nDetail.\n\n(terraform apply failed)",
		},
		"OtherWarning": {
			reason: "A warning that is not the CLI configuration's stays, after the errors.",
			in:     "terraform apply failed: exit status 1\n╷\n│ Warning: Deprecated attribute\n│\n│ Use b.\n╵\n╷\n│ Error: Boom\n╵\n",
			want:   "Error: Boom\n\nWarning: Deprecated attribute\n\nUse b.\n\n(terraform apply failed)",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Distill(tc.in)); diff != "" {
				t.Errorf("\n%s\n-want +got:\n%s", tc.reason, diff)
			}
		})
	}
}
