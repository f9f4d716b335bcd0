package validation

import (
	"fmt"
	"strings"
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

// The header `modkind generate` prints, and a Module's status, say what the lines below them say:
// over every public module, the blocks the header counts as checked at admission are those whose
// line says checked at admission, in part or fully, or holding for every value, and the blocks it
// counts as in part are those whose line says partly.
func TestReportHeaderAgreesWithLines(t *testing.T) {
	for dir, m := range publicModules(t) {
		r := NewReport(m)
		checked, inPart := 0, 0
		for _, l := range r.Lines() {
			switch {
			case strings.Contains(l, ": partly checked at admission;"):
				checked++
				inPart++
			case strings.HasSuffix(l, ": checked at admission"), strings.HasSuffix(l, ": holds for every non-null value the schema admits"):
				checked++
			case strings.Contains(l, ": at plan time: "):
			default:
				t.Errorf("%s: a line that says neither admission nor plan time: %q", dir, l)
			}
		}
		want := fmt.Sprintf("validation blocks: %d of %d checked at admission (%d of them in part), the rest at plan time", checked, len(r.Lines()), inPart)
		if got := r.Header(); got != want {
			t.Errorf("%s: the header disagrees with the lines below it:\n got %s\nwant %s", dir, got, want)
		}
	}
}
