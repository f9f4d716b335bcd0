package validation

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/modkind/modkind/crd/internal/crdtest"
)

func TestValidationReport(t *testing.T) {
	m := crdtest.InspectSource(t, `
variable "tier" {
  type = string
  validation {
    condition     = contains(["a", "b"], var.tier)
    error_message = "tier is a or b."
  }
}

variable "name" {
  type = string
  validation {
    condition     = length(var.name) <= 8
    error_message = "name is short."
  }
}

variable "min" {
  type    = number
  default = 1
  validation {
    condition     = var.min <= var.max
    error_message = "min is at most max."
  }
}

variable "max" {
  type    = number
  default = 2
}

variable "set" {
  type = string
  validation {
    condition     = var.set != null
    error_message = "set must be set."
  }
}
`)
	r := NewReport(m)
	want := []string{
		"min (main.tf:21): at plan time: var.min <= var.max: it refers to another variable",
		"name (main.tf:12): partly checked at admission; at plan time: the rule lets through some values Terraform refuses (strings outside ASCII, which Terraform normalizes; nulls in conditions Terraform before 1.12 errs on)",
		"set (main.tf:34): holds for every non-null value the schema admits",
		"tier (main.tf:4): checked at admission",
	}
	if diff := cmp.Diff(want, r.Lines()); diff != "" {
		t.Errorf("\nEach block should be summed up in one line: checked at admission, partly, or at plan time and why.\nLines: -want, +got:\n%s", diff)
	}
	counts := map[Outcome]int{}
	for _, o := range []Outcome{Enforced, Partly, Implied, PlanTime} {
		counts[o] = r.Count(o)
	}
	if diff := cmp.Diff(map[Outcome]int{Enforced: 1, Partly: 1, Implied: 1, PlanTime: 1}, counts); diff != "" {
		t.Errorf("\nCount: -want, +got:\n%s", diff)
	}
}
