package crd

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// withoutInputRefs is c as modkind made it before <field>From references (issue 26): no
// reference fields, no rules about them, required variables in forProvider's required list.
func withoutInputRefs(c *extv1.CustomResourceDefinition, required ...string) *extv1.CustomResourceDefinition {
	old := c.DeepCopy()
	spec := old.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	fp := spec.Properties["forProvider"]
	for name := range fp.Properties {
		if strings.HasSuffix(name, "From") {
			delete(fp.Properties, name)
		}
	}
	fp.XValidations = nil
	fp.Required = required
	spec.Properties["forProvider"] = fp
	old.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
	return old
}

// Upgrading modkind adds references to every kind: its CRDs must evolve without a break, and a
// required variable added later is still reported as one.
func TestBreaksInputRefs(t *testing.T) {
	const mod = `
variable "name" { type = string }
variable "size" {
  type    = number
  default = null
}
variable "tier" {
  type    = string
  default = "a"
}
`
	cases := map[string]struct {
		reason string
		old    *extv1.CustomResourceDefinition
		next   string
		want   []Break
	}{
		"Upgrade": {
			reason: "References are new optional fields; a required variable becomes 'its value or its reference', which is looser.",
			old:    withoutInputRefs(crdOf(t, mod), "name"),
			next:   mod,
		},
		"NewRequiredAfterUpgrade": {
			reason: "A new required variable is still a break, named as one.",
			old:    crdOf(t, mod),
			next:   mod + `variable "region" { type = string }`,
			want:   []Break{{Path: "spec.forProvider.region", Reason: "newly required"}},
		},
		"OptionalBecomesRequired": {
			reason: "An optional variable that loses its default is newly required.",
			old:    crdOf(t, mod),
			next:   strings.Replace(mod, "default = \"a\"", "", 1),
			// An instance with tierFrom had tier too, filled from the default: refused now.
			want: []Break{{Path: "spec.forProvider", Reason: `new validation rule "!has(self.tier) || !has(self.tierFrom)"`}, {Path: "spec.forProvider.tier", Reason: "newly required"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Breaks(tc.old, crdOf(t, tc.next))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("\n%s\nBreaks: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
