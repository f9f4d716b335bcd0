package crd

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/module"
)

// crdOf synthesizes the CRD of a module written on the spot.
func crdOf(t *testing.T, src string) *extv1.CustomResourceDefinition {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := module.Inspect(dir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Synthesize("m", v1alpha1.CRDNames{Group: "example.org", Kind: "Thing"}, m)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestBreaks(t *testing.T) {
	const base = `
variable "name" { type = string }
variable "size" {
  type    = number
  default = 1
}
variable "tier" {
  type    = string
  default = "a"
  validation {
    condition     = contains(["a", "b", "c"], var.tier)
    error_message = "tier is a, b or c"
  }
}
variable "settings" {
  type    = object({ max = optional(number, 3) })
  default = {}
}
`
	cases := map[string]struct {
		reason string
		next   string
		want   []Break
	}{
		"Unchanged": {
			reason: "The same module breaks nothing.",
			next:   base,
		},
		"NewOptionalField": {
			reason: "A new variable with a default is compatible.",
			next:   base + `variable "extra" { default = "x" }`,
		},
		"FieldRemoved": {
			reason: "Instances that set a removed variable would lose it.",
			next: `
variable "name" { type = string }
variable "tier" {
  type    = string
  default = "a"
  validation {
    condition     = contains(["a", "b", "c"], var.tier)
    error_message = "tier is a, b or c"
  }
}
variable "settings" {
  type    = object({ max = optional(number, 3) })
  default = {}
}
`,
			want: []Break{{Path: "spec.forProvider.size", Reason: "field removed"}},
		},
		"TypeChanged": {
			reason: "A number that becomes a string invalidates stored values.",
			next: `
variable "name" { type = string }
variable "size" {
  type    = string
  default = "1"
}
variable "tier" {
  type    = string
  default = "a"
  validation {
    condition     = contains(["a", "b", "c"], var.tier)
    error_message = "tier is a, b or c"
  }
}
variable "settings" {
  type    = object({ max = optional(number, 3) })
  default = {}
}
`,
			want: []Break{{Path: "spec.forProvider.size", Reason: "type changed from number to string"}},
		},
		"NewRequired": {
			reason: "Existing instances do not set a new required variable.",
			next:   base + `variable "region" { type = string }`,
			want:   []Break{{Path: "spec.forProvider.region", Reason: "newly required"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Breaks(crdOf(t, base), crdOf(t, tc.next))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestBreaksEnumNarrowed(t *testing.T) {
	mod := func(values string) string {
		return `
variable "tier" {
  type = string
  validation {
    condition     = contains([` + values + `], var.tier)
    error_message = "bad tier"
  }
}
`
	}
	narrower := Breaks(crdOf(t, mod(`"a", "b", "c"`)), crdOf(t, mod(`"a", "b"`)))
	if len(narrower) == 0 {
		t.Errorf("narrowing the allowed values must be a break")
	}
}
