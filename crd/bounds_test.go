package crd

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/modkind/modkind/crd/internal/crdtest"
	"github.com/modkind/modkind/crd/validation"
)

// TestBoundsAPIServer checks that a module whose conditions bound a list and its strings gets a
// schema with those bounds, and with them a quantifier rule the API server could not afford
// without: values within the bounds are judged by the rule, values beyond them refused.
func TestBoundsAPIServer(t *testing.T) {
	cl := crdtest.APIServer(t)
	ctx := context.Background()
	src := `
variable "zones" {
  type    = list(string)
  default = ["eu-west-1a"]
  validation {
    condition     = length(var.zones) <= 6
    error_message = "At most 6 zones."
  }
  validation {
    condition     = alltrue([for z in var.zones : can(regex("^[a-z]{2}-[a-z]{4,9}-[0-9][a-z]$", z))])
    error_message = "Zones are like eu-west-1a."
  }
}

variable "labels" {
  type    = map(string)
  default = {}
  validation {
    condition     = alltrue([for k, v in var.labels : can(regex("^[a-z]{1,20}$", v))])
    error_message = "Label values are up to 20 lower-case letters."
  }
}
`
	c := crdOf(t, src)
	m := crdtest.InspectSource(t, src)
	rules := map[string][]string{}
	for _, tr := range validation.Translations(m) {
		rules[tr.Variable] = append(rules[tr.Variable], tr.Rule)
	}
	want := map[string][]string{
		"zones":  {"size(self) <= 6", "self.all(z, z.matches('^[a-z]{2}-[a-z]{4,9}-[0-9][a-z]$'))"},
		"labels": {""},
	}
	if diff := cmp.Diff(want, rules); diff != "" {
		t.Fatalf("\nThe bounded quantifier should be kept within the budget; one over a map the module does not bound costs too much.\nRules: -want, +got:\n%s", diff)
	}
	fp := c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["forProvider"]
	validation.Apply(&fp, m)
	zones := fp.Properties["zones"]
	if zones.MaxItems == nil || *zones.MaxItems != 6 || zones.Items.Schema.MaxLength == nil || *zones.Items.Schema.MaxLength != 15 {
		t.Fatalf("\nThe schema should bound the list and its strings as the conditions do: maxItems %v, items maxLength %v", zones.MaxItems, zones.Items.Schema.MaxLength)
	}
	if fp.Properties["labels"].MaxProperties != nil || fp.Properties["labels"].AdditionalProperties.Schema.MaxLength != nil {
		t.Errorf("\nA map the module does not bound gets no bounds.")
	}
	if got, want := fp.Properties["labels"].AdditionalProperties.Schema.Pattern, `(?:^[a-z]{1,20}$)`; got != want {
		t.Errorf("\nThe pattern whose rule costs too much should be the pattern of the map's values: got %q, want %q", got, want)
	}
	spec := c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	spec.Properties["forProvider"] = fp
	c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
	c.Name, c.Spec.Group = "things.bounds.example.org", "bounds.example.org"
	if err := installCRD(ctx, cl, c); err != nil {
		t.Fatalf("\nThe API server should accept the CRD with its bounded rules.\n%v", err)
	}
	lc := &corpus{crd: c}
	cases := map[string]struct {
		reason string
		field  string // zones unless given
		value  string
		want   string // "" when accepted, else a fragment of the refusal
	}{
		"LabelPattern":  {reason: "The schema's pattern judges each value of the map.", field: "labels", value: `{"a": "abc", "b": "ABC"}`, want: "should match"},
		"LabelNotASCII": {reason: "The schema's pattern of whole ASCII strings refuses a string outside ASCII, as Terraform refuses its normal form.", field: "labels", value: `{"a": "\u00e9t\u00e9"}`, want: "should match"},
		"LabelValid":    {reason: "Values the module accepts pass the schema's pattern.", field: "labels", value: `{"a": "abc", "b": "z"}`},
		"Valid":         {reason: "Zones within the bounds and the pattern.", value: `["eu-west-1a", "us-east-2b"]`},
		"Pattern":       {reason: "The rule judges each zone.", value: `["eu-west-1a", "nowhere"]`, want: "Zones are like eu-west-1a."},
		"TooMany":       {reason: "More zones than the module allows.", value: `["eu-west-1a", "eu-west-1b", "eu-west-1c", "eu-west-2a", "eu-west-2b", "eu-west-2c", "eu-west-3a"]`, want: "must have at most 6 items"},
		"TooLong":       {reason: "A zone longer than the pattern allows.", value: `["eu-westwestwest-1a"]`, want: "may not be more than 15"},
		"CodePoints":    {reason: "maxLength counts code points: ten characters of two bytes are within 15; the rule, not the bound, refuses them, as Terraform does.", value: `["\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9"]`, want: "Zones are like eu-west-1a."},
		"KelvinSigns":   {reason: "Three-byte characters that Terraform reads as ASCII count once: within the bound, refused by the rule as Terraform refuses KKK...", value: `["\u212a\u212a\u212a\u212a\u212a\u212a\u212a\u212a\u212a\u212a\u212a\u212a\u212a\u212a\u212a"]`, want: "Zones are like eu-west-1a."},
		"KelvinZone":    {reason: "A zone with a KELVIN SIGN where its normal form has K is decided as Terraform decides its normal form.", value: `["eu-west-1a", "\u212a\u212a-west-1a"]`, want: "Zones are like eu-west-1a."},
		"NotASCIILong":  {reason: "A long string outside ASCII, which the pattern never matches, is beyond the bound too.", value: `["\u00e9u-w\u00e9st-1a-\u00e9\u00e9\u00e9\u00e9\u00e9"]`, want: "may not be more than 15"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			field := tc.field
			if field == "" {
				field = "zones"
			}
			_, err := lc.create(ctx, cl, map[string]any{}, field, json.RawMessage(tc.value))
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("\n%s\nCreate: %v", tc.reason, err)
			case tc.want != "" && (!apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("\n%s\nCreate: want an error containing %q, got %v", tc.reason, tc.want, err)
			}
		})
	}
}
