package crd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/modkind/modkind/crd/internal/crdtest"
	"github.com/modkind/modkind/crd/validation"
	"github.com/modkind/modkind/kind/fields"
	"github.com/modkind/modkind/module"
)

// largeModule writes a module bigger than the big public ones: 121 variables, a third of them
// objects nested five deep, two objects in each, with optional(…, default) at every level (about
// 300 fields each), a third strings checked by long patterns, and the rest numbers and lists of
// objects with rules, and an enumeration of 200 regions.
func largeModule(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	deep := func(depth int) string {
		ty := "string"
		for d := depth; d > 0; d-- {
			ty = fmt.Sprintf(`object({
  level_%[1]d_name    = optional(string, "n%[1]d")
  level_%[1]d_count   = optional(number, %[1]d)
  level_%[1]d_enabled = optional(bool, true)
  level_%[1]d_tags    = optional(map(string), {})
  child_%[1]d         = optional(%[2]s, {})
  sibling_%[1]d       = optional(%[2]s, {})
})`, d, ty)
		}
		return strings.ReplaceAll(ty, `optional(string, {})`, `optional(string, "leaf")`)
	}
	for i := range 40 {
		fmt.Fprintf(&b, "variable \"deep_%02d\" {\n  description = \"Deeply nested settings %d.\"\n  type = %s\n  default = {}\n}\n\n", i, i, deep(5))
	}
	for i := range 40 {
		fmt.Fprintf(&b, `variable "name_%02[1]d" {
  description = "A DNS name."
  type        = string
  validation {
    condition     = length(var.name_%02[1]d) >= 1 && can(regex("^[a-z]([-a-z0-9]*[a-z0-9])?(\\.[a-z]([-a-z0-9]*[a-z0-9])?)*$", var.name_%02[1]d))
    error_message = "name_%02[1]d must be a DNS name."
  }
}

`, i)
	}
	for i := range 20 {
		fmt.Fprintf(&b, `variable "size_%02[1]d" {
  type    = number
  default = 1
  validation {
    condition     = var.size_%02[1]d >= 1 && var.size_%02[1]d <= 100
    error_message = "size_%02[1]d must be between 1 and 100."
  }
}

variable "rules_%02[1]d" {
  type = list(object({
    protocol = optional(string, "tcp")
    ports    = optional(list(number), [])
    cidrs    = optional(set(string), ["0.0.0.0/0"])
  }))
  default = []
  validation {
    condition     = length(var.rules_%02[1]d) <= 50
    error_message = "rules_%02[1]d may hold at most 50 rules."
  }
}

`, i)
	}
	regions := make([]string, 200)
	for i := range regions {
		regions[i] = fmt.Sprintf("%q", fmt.Sprintf("region-%03d-with-a-long-name", i))
	}
	fmt.Fprintf(&b, `variable "region" {
  type    = string
  default = "region-000-with-a-long-name"
  validation {
    condition     = contains([%s], var.region)
    error_message = "region must be a known region."
  }
}
`, strings.Join(regions, ", "))
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestLargeModuleAPIServer checks that a module with 100+ variables and deep optional objects
// still gives a CRD the API server accepts (object size, CEL cost), and that its instances are
// checked: the budget keeps the patterns of the first variables as rules and makes the others
// the schema's patterns.
func TestLargeModuleAPIServer(t *testing.T) {
	cl := crdtest.APIServer(t)
	ctx := context.Background()
	m, err := module.Inspect(largeModule(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Variables) < 100 {
		t.Fatalf("the large module has only %d variables", len(m.Variables))
	}
	c := synthesizeWithValidations(t, "large", m)
	raw, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	ts := validation.Translations(m)
	patterns, schema, dropped := 0, 0, 0
	for _, tr := range ts {
		switch {
		case strings.Contains(tr.Rule, "matches"):
			patterns++
		case !strings.HasPrefix(tr.Variable, "name_"):
		case len(tr.Schema) > 0:
			schema++
		default:
			dropped++
		}
	}
	t.Logf("%d variables, CRD of %d KiB, %d validation blocks: %d patterns kept as rules, %d as the schema's patterns for cost, %d left to Terraform", len(m.Variables), len(raw)/1024, len(ts), patterns, schema, dropped)
	if patterns == 0 || schema == 0 {
		t.Errorf("\nThe large module should exercise the CEL cost budget: %d patterns kept as rules, %d as the schema's", patterns, schema)
	}

	if err := installCRD(ctx, cl, c); err != nil {
		t.Fatalf("\nThe API server should accept the CRD of a module with %d variables (%d KiB).\n%v", len(m.Variables), len(raw)/1024, err)
	}
	lc := &corpus{crd: c}
	base := map[string]any{}
	for i := range 40 {
		base[fmt.Sprintf("name%02d", i)] = fmt.Sprintf("host-%d.example.org", i)
	}
	got, err := lc.create(ctx, cl, base, "deep00", json.RawMessage(`{"child1": {"child2": {"level3Count": 7}}}`))
	if err != nil {
		t.Fatalf("\nA valid instance of the large kind should be accepted.\n%v", err)
	}
	// Defaults apply at every depth of a partly given object.
	tf, err := fields.ToTerraform(got["deep00"], m.Variables[0].Type)
	if err != nil {
		t.Fatal(err)
	}
	leaf := tf.(map[string]any)["child_1"].(map[string]any)["child_2"].(map[string]any)
	if leaf["level_3_count"] != int64(7) || leaf["level_3_name"] != "n3" || leaf["child_3"].(map[string]any)["level_4_count"] != int64(4) {
		t.Errorf("\nThe API server should fill in the defaults of a deep object around the values given.\ndeep_00: %v", tf)
	}

	if _, err := lc.create(ctx, cl, base, "name00", json.RawMessage(`"Not A DNS Name"`)); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "name_00 must be a DNS name.") {
		t.Errorf("\nA kept pattern should refuse a value Terraform refuses, with the module's message.\nCreate: %v", err)
	}
	if _, err := lc.create(ctx, cl, base, "name39", json.RawMessage(`"Not A DNS Name"`)); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "should match") {
		t.Errorf("\nA pattern whose rule would cost too much should be the schema's pattern, and refuse a value Terraform refuses with the API server's message.\nCreate: %v", err)
	}
	if _, err := lc.create(ctx, cl, base, "name39", json.RawMessage(`"h\u00e9llo"`)); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "should match") {
		t.Errorf("\nThe schema's pattern of whole ASCII strings should refuse a string outside ASCII, as Terraform refuses its normal form.\nCreate: %v", err)
	}
	if _, err := lc.create(ctx, cl, base, "name39", json.RawMessage(`"\u212aelvin"`)); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "should match") {
		t.Errorf("\nThe schema's pattern of lower-case names should refuse KELVIN SIGN, which Terraform reads as K.\nCreate: %v", err)
	}
	if _, err := lc.create(ctx, cl, base, "region", json.RawMessage(`"region-199-with-a-long-name"`)); err != nil {
		t.Errorf("\nA value of a long enumeration should be accepted.\nCreate: %v", err)
	}
	if _, err := lc.create(ctx, cl, base, "region", json.RawMessage(`"region-200-with-a-long-name"`)); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "region must be a known region.") {
		t.Errorf("\nA long enumeration is cheap to check and kept.\nCreate: %v", err)
	}
	if _, err := lc.create(ctx, cl, base, "size19", json.RawMessage(`101`)); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "size_19 must be between 1 and 100.") {
		t.Errorf("\nA cheap rule is kept however many others there are.\nCreate: %v", err)
	}
}
