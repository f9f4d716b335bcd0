package crd

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
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
	const sizeVariable = `variable "size" {
  type    = number
  default = 1
}
`
	const base = `
variable "name" { type = string }
` + sizeVariable + `variable "tier" {
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
			reason: "Instances that set a removed variable (its value or its reference) would lose it.",
			next:   strings.Replace(base, sizeVariable, "", 1),
			want:   []Break{{Path: "spec.forProvider.size", Reason: "field removed"}, {Path: "spec.forProvider.sizeFrom", Reason: "field removed"}},
		},
		"TypeChanged": {
			reason: "A number that becomes a string invalidates stored values.",
			next:   strings.Replace(base, sizeVariable, "variable \"size\" {\n  type    = string\n  default = \"1\"\n}\n", 1),
			want:   []Break{{Path: "spec.forProvider.size", Reason: "type changed from number to string"}},
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

func TestBreaksSchemaChecks(t *testing.T) {
	// A map the module does not bound: its pattern costs too much as a rule and is the schema's.
	mod := func(condition string) string {
		return `
variable "labels" {
  type    = map(string)
  default = {}
  validation {
    condition     = ` + condition + `
    error_message = "bad labels"
  }
}
`
	}
	cases := map[string]struct {
		reason    string
		from, to  string
		wantBreak string // a fragment of a break's reason, "" for none
	}{
		"NewPattern": {
			reason:    "A pattern the schema did not have may refuse existing instances.",
			from:      `length(var.labels) >= 0`,
			to:        `alltrue([for k, v in var.labels : can(regex("^[a-z]+$", v))])`,
			wantBreak: `new pattern "(?:^[a-z]+$)"`,
		},
		"SamePattern": {
			reason: "The same pattern again changes nothing.",
			from:   `alltrue([for k, v in var.labels : can(regex("^[a-z]+$", v))])`,
			to:     `alltrue([for k, v in var.labels : can(regex("^[a-z]+$", v))])`,
		},
		"LowerBound": {
			reason:    "A lower maxLength may refuse existing instances.",
			from:      `alltrue([for k, v in var.labels : can(regex("^[a-z]{1,20}$", v))]) && length(var.labels) <= 4`,
			to:        `alltrue([for k, v in var.labels : can(regex("^[a-z]{1,20}$", v))]) && length(var.labels) <= 3`,
			wantBreak: "maxProperties now 3",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			breaks := Breaks(crdOf(t, mod(tc.from)), crdOf(t, mod(tc.to)))
			found := false
			for _, b := range breaks {
				found = found || tc.wantBreak != "" && strings.Contains(b.Reason, tc.wantBreak)
			}
			if tc.wantBreak == "" && len(breaks) > 0 || tc.wantBreak != "" && !found {
				t.Errorf("\n%s\nBreaks: want one saying %q, got %v", tc.reason, tc.wantBreak, breaks)
			}
		})
	}
}

// withProviderConfigKinds is c with the kinds spec.providerConfigRef.kind allows set to kinds.
func withProviderConfigKinds(c *extv1.CustomResourceDefinition, kinds ...string) *extv1.CustomResourceDefinition {
	c = c.DeepCopy()
	root := c.Spec.Versions[0].Schema.OpenAPIV3Schema
	spec := root.Properties["spec"]
	ref := spec.Properties["providerConfigRef"]
	ref.Properties = maps.Clone(ref.Properties)
	kind := ref.Properties["kind"]
	kind.Enum = nil
	for _, k := range kinds {
		kind.Enum = append(kind.Enum, extv1.JSON{Raw: []byte(`"` + k + `"`)})
	}
	ref.Properties["kind"] = kind
	spec.Properties["providerConfigRef"] = ref
	root.Properties["spec"] = spec
	return c
}

func TestBreaksProviderConfigKinds(t *testing.T) {
	const mod = `variable "name" { type = string }`
	current := crdOf(t, mod)
	cases := map[string]struct {
		reason    string
		installed *extv1.CustomResourceDefinition
		wanted    *extv1.CustomResourceDefinition
		want      []Break
	}{
		"ClusterProviderConfigAdded": {
			reason:    "A CRD installed before ClusterProviderConfig allowed ProviderConfig only: allowing one more kind keeps every instance valid.",
			installed: withProviderConfigKinds(current, "ProviderConfig"),
			wanted:    current,
		},
		"ClusterProviderConfigRemoved": {
			reason:    "Instances may reference a ClusterProviderConfig: taking it away would make them invalid.",
			installed: current,
			wanted:    withProviderConfigKinds(current, "ProviderConfig"),
			want:      []Break{{Path: "spec.providerConfigRef.kind", Reason: `values no longer allowed: "ClusterProviderConfig"`}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Breaks(tc.installed, tc.wanted)); diff != "" {
				t.Errorf("%s\n-want +got:\n%s", tc.reason, diff)
			}
		})
	}
	kind := current.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["providerConfigRef"].Properties["kind"]
	if diff := cmp.Diff(`"ProviderConfig"`, string(kind.Default.Raw)); diff != "" {
		t.Errorf("\nAn instance that names no kind references a ProviderConfig, as before.\ndefault: -want, +got:\n%s", diff)
	}
}

func TestEstablishedWaitsForTheServedGeneration(t *testing.T) {
	cond := func(typ extv1.CustomResourceDefinitionConditionType, og int64) extv1.CustomResourceDefinitionCondition {
		return extv1.CustomResourceDefinitionCondition{Type: typ, Status: extv1.ConditionTrue, ObservedGeneration: og}
	}
	cases := map[string]struct {
		reason string
		gen    int64
		conds  []extv1.CustomResourceDefinitionCondition
		status int64
		want   bool
	}{
		"Current": {reason: "Conditions about this generation mean its schema is served.", gen: 2,
			conds: []extv1.CustomResourceDefinitionCondition{cond(extv1.Established, 2), cond(extv1.NamesAccepted, 2)}, status: 2, want: true},
		"Stale": {reason: "Established for an older generation: the new schema may not be served yet.", gen: 3,
			conds: []extv1.CustomResourceDefinitionCondition{cond(extv1.Established, 2), cond(extv1.NamesAccepted, 2)}, status: 2, want: false},
		"Untracked": {reason: "Servers that do not track generations leave Established as the only signal.", gen: 3,
			conds: []extv1.CustomResourceDefinitionCondition{cond(extv1.Established, 0), cond(extv1.NamesAccepted, 0)}, want: true},
		"NotEstablished": {reason: "Nothing is served before Established.", gen: 1,
			conds: []extv1.CustomResourceDefinitionCondition{cond(extv1.NamesAccepted, 1)}, status: 1, want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := &extv1.CustomResourceDefinition{}
			c.Generation = tc.gen
			c.Status.Conditions = tc.conds
			c.Status.ObservedGeneration = tc.status
			if got := Established(c); got != tc.want {
				t.Errorf("%s\nwant %v, got %v", tc.reason, tc.want, got)
			}
		})
	}
}
