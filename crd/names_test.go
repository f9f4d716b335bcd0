package crd

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/modkind/modkind/apis/v1alpha1"
)

func TestPlural(t *testing.T) {
	cases := map[string]struct {
		reason string
		kind   string
		want   string
	}{
		"Regular":        {reason: "Most kinds take an s.", kind: "Bucket", want: "buckets"},
		"ConsonantY":     {reason: "A consonant and y becomes ies.", kind: "Policy", want: "policies"},
		"VowelY":         {reason: "A vowel and y takes an s.", kind: "Key", want: "keys"},
		"VowelYGateway":  {reason: "A vowel and y takes an s.", kind: "Gateway", want: "gateways"},
		"S":              {reason: "A kind ending in s takes es.", kind: "Class", want: "classes"},
		"X":              {reason: "A kind ending in x takes es.", kind: "Box", want: "boxes"},
		"Ch":             {reason: "A kind ending in ch takes es.", kind: "Branch", want: "branches"},
		"Sh":             {reason: "A kind ending in sh takes es.", kind: "Mesh", want: "meshes"},
		"CamelCase":      {reason: "The whole kind is lower-cased.", kind: "DatabaseInstance", want: "databaseinstances"},
		"CamelCaseProxy": {reason: "Only the last word is inflected.", kind: "TrafficProxy", want: "trafficproxies"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Plural(tc.kind)); diff != "" {
				t.Errorf("\n%s\nPlural(%q): -want, +got:\n%s", tc.reason, tc.kind, diff)
			}
		})
	}
}

func TestNames(t *testing.T) {
	cases := map[string]struct {
		reason string
		names  v1alpha1.CRDNames
		want   v1alpha1.CRDNames
	}{
		"Defaults": {
			reason: "Version, plural and the modkind category should be filled in.",
			names:  v1alpha1.CRDNames{Group: "example.org", Kind: "Policy"},
			want:   v1alpha1.CRDNames{Group: "example.org", Kind: "Policy", Version: "v1alpha1", Plural: "policies", Categories: []string{"modkind"}},
		},
		"Given": {
			reason: "Names the Module gives should be kept, and modkind added to its categories.",
			names: v1alpha1.CRDNames{Group: "example.org", Kind: "Database", Version: "v1", Plural: "dbs",
				ShortNames: []string{"db"}, Categories: []string{"storage"}},
			want: v1alpha1.CRDNames{Group: "example.org", Kind: "Database", Version: "v1", Plural: "dbs",
				ShortNames: []string{"db"}, Categories: []string{"storage", "modkind"}},
		},
		"CategoryOnce": {
			reason: "The modkind category should not be added twice.",
			names:  v1alpha1.CRDNames{Group: "example.org", Kind: "Bucket", Categories: []string{"modkind", "storage"}},
			want:   v1alpha1.CRDNames{Group: "example.org", Kind: "Bucket", Version: "v1alpha1", Plural: "buckets", Categories: []string{"modkind", "storage"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			before := tc.names.DeepCopy()
			got := Names(tc.names)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("\n%s\nNames(...): -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(*before, tc.names); diff != "" {
				t.Errorf("\n%s\nNames should not change the Module's names: -before, +after:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want.Plural+"."+tc.want.Group, Name(tc.names)); diff != "" {
				t.Errorf("\n%s\nName(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
