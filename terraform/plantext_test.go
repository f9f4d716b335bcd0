package terraform

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tfjson "github.com/hashicorp/terraform-json"
)

// A plan's text, rendered from the plan's JSON, says what terraform show says of each change and
// never shows a value the plan marks sensitive, wherever in a value it is.
func TestRenderPlan(t *testing.T) {
	secret := "hunter2-never-rendered"
	created := &tfjson.Plan{ResourceChanges: []*tfjson.ResourceChange{{
		Address: `terraform_data.item["a"]`, Mode: tfjson.ManagedResourceMode, Type: "terraform_data", Name: "item",
		Change: &tfjson.Change{
			Actions:        tfjson.Actions{tfjson.ActionCreate},
			After:          map[string]any{"input": map[string]any{"name": "a", "keys": []any{"k1", secret}}, "triggers_replace": nil},
			AfterSensitive: map[string]any{"input": map[string]any{"keys": []any{false, true}}},
			AfterUnknown:   map[string]any{"id": true, "output": true},
		},
	}, {
		Address: "terraform_data.old", Mode: tfjson.ManagedResourceMode, Type: "terraform_data", Name: "old",
		Change: &tfjson.Change{
			Actions:         tfjson.Actions{tfjson.ActionDelete},
			Before:          map[string]any{"id": "old-id", "input": secret},
			BeforeSensitive: map[string]any{"input": true},
		},
	}}, OutputChanges: map[string]*tfjson.Change{
		"token": {Actions: tfjson.Actions{tfjson.ActionCreate}, After: secret, AfterSensitive: true},
		"name":  {Actions: tfjson.Actions{tfjson.ActionCreate}, After: "a"},
		"same":  {Actions: tfjson.Actions{tfjson.ActionNoop}, Before: "x", After: "x"},
		// modkind's own output, never the module's: not shown.
		SensitiveOutputs: {Actions: tfjson.Actions{tfjson.ActionCreate}, After: map[string]any{"name": false}},
	}}
	replaced := &tfjson.Plan{}
	raw, err := os.ReadFile(filepath.Join("testdata", "plans", "update-replace.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, replaced); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		reason string
		plan   *tfjson.Plan
		want   []string
		never  []string
	}{
		"CreateDelete": {
			reason: "created objects show every attribute, unknown ones in words; destroyed ones what they held; sensitive parts never",
			plan:   created,
			want: []string{
				`  # terraform_data.item["a"] will be created`,
				`  + resource "terraform_data" "item" {`,
				`      + id     = (known after apply)`,
				`      + input  = {`,
				`          + keys = ["k1",(sensitive value)]`,
				`          + name = "a"`,
				`  # terraform_data.old will be destroyed`,
				`      - id    = "old-id"`,
				`      - input = (sensitive value)`,
				"Plan: 1 to add, 0 to change, 1 to destroy.",
				`  + name  = "a"`,
				`  + token = (sensitive value)`,
			},
			never: []string{secret, "triggers_replace", "same", SensitiveOutputs},
		},
		"UpdateReplace": {
			reason: "a replacement names what forces it; unchanged attributes are counted, not shown (a plan terraform 1.11 made)",
			plan:   replaced,
			want: []string{
				`  # terraform_data.item["a"] will be updated in-place`,
				`  # terraform_data.item["b"] must be replaced`,
				`-/+ resource "terraform_data" "item" {`,
				`      ~ triggers_replace = (sensitive value) # forces replacement`,
				`          ~ pw = (sensitive value)`,
				`        # (2 unchanged attributes hidden)`,
				"Plan: 1 to add, 1 to change, 1 to destroy.",
				`  ~ leak   = "hunter2" -> "changed"`,
				`  ~ secret = (sensitive value)`,
			},
			never: []string{`"changed" # forces`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := renderPlan(tc.plan, Summarize(tc.plan, nil))
			for _, w := range tc.want {
				if !strings.Contains(got, w+"\n") {
					t.Errorf("%s\nrenderPlan: lacks line %q:\n%s", tc.reason, w, got)
				}
			}
			for _, n := range tc.never {
				if strings.Contains(got, n) {
					t.Errorf("%s\nrenderPlan: must not contain %q:\n%s", tc.reason, n, got)
				}
			}
		})
	}
	if got := renderPlan(&tfjson.Plan{}, PlanSummary{}); got != noChanges {
		t.Errorf("a plan without changes: want %q, got %q", noChanges, got)
	}
}
