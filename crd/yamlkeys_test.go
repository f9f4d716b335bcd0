package crd

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

func TestYAMLAmbiguousFields(t *testing.T) {
	cases := map[string]struct {
		reason string
		module string
		want   []string
	}{
		"TopLevel": {
			reason: "A variable named on is the field on, which YAML reads as true.",
			module: `variable "on" { type = bool }
variable "off" { type = bool }`,
			want: []string{"spec.forProvider.off", "spec.forProvider.on"},
		},
		"Nested": {
			reason: "Attributes of objects are fields too.",
			module: `variable "settings" {
  type = object({ yes = optional(bool), name = optional(string), inner = optional(object({ n = number })) })
  default = {}
}`,
			want: []string{"spec.forProvider.settings.inner.n", "spec.forProvider.settings.yes"},
		},
		"ListsAndMaps": {
			reason: "Attributes of the objects in a list or map are written in YAML as keys as well.",
			module: `variable "rules" {
  type    = list(object({ off = bool, port = number }))
  default = []
}
variable "by_name" {
  type    = map(object({ y = number }))
  default = {}
}`,
			want: []string{"spec.forProvider.byName{}.y", "spec.forProvider.rules[].off"},
		},
		"Capitalised": {
			reason: "Yes and Y become the fields yes and y; ON and TRUE become oN and tRUE, which YAML 1.1 reads as strings.",
			module: `variable "Yes" { type = string }
variable "Y" { type = string }
variable "ON" { type = string }
variable "TRUE" { type = string }`,
			want: []string{"spec.forProvider.y", "spec.forProvider.yes"},
		},
		"AllBooleans": {
			reason: "Every YAML 1.1 boolean spelling a field can have. true and false are read as booleans too, but written back as the same words: those fields are set.",
			module: `variable "v" {
  type = object({ y = number, yes = number, n = number, no = number, true = number, false = number, on = number, off = number })
}`,
			want: []string{
				"spec.forProvider.v.n", "spec.forProvider.v.no", "spec.forProvider.v.off",
				"spec.forProvider.v.on", "spec.forProvider.v.y", "spec.forProvider.v.yes",
			},
		},
		"NumbersAndNull": {
			reason: "Keys that read as numbers are lost the same way; a null key makes the manifest unreadable.",
			module: `variable "_0x10" { type = number }
variable "null" { type = number }
variable "_1e3" { type = number }`,
			want: []string{"spec.forProvider.0x10", "spec.forProvider.1e3", "spec.forProvider.null"},
		},
		"Sensitive": {
			reason: "A sensitive variable named on is the field onSecretRef, which YAML reads as it is.",
			module: `variable "on" {
  type      = string
  sensitive = true
}`,
		},
		"Ordinary": {
			reason: "Names that merely contain such words are strings to YAML; map keys are data, not fields.",
			module: `variable "enabled" { type = bool }
variable "no_public_ip" { type = bool }
variable "only" { type = bool }
variable "tags" {
  type    = map(string)
  default = { on = "x" }
}`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := YAMLAmbiguousFields(crdOf(t, tc.module))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("\n%s\nYAMLAmbiguousFields: -want, +got:\n%s", tc.reason, diff)
			}
			// What the warning is about: kubectl's YAML reader loses each listed key.
			for _, path := range got {
				key := path[len(path)-len(lastName(path)):]
				obj := map[string]any{}
				if err := yaml.Unmarshal([]byte(key+": 1\n"), &obj); err == nil {
					if _, ok := obj[key]; ok {
						t.Errorf("\nA listed field should be one YAML does not read as its name: %s", path)
					}
				}
			}
		})
	}
}

func lastName(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		switch path[i] {
		case '.', ']', '}':
			return path[i+1:]
		}
	}
	return path
}

func TestYAMLKeyWarning(t *testing.T) {
	cases := map[string]struct {
		reason string
		path   string
		want   string
	}{
		"Boolean": {
			reason: "The warning says what YAML makes of the key and how to quote it.",
			path:   "spec.forProvider.settings.on",
			want:   `spec.forProvider.settings.on: YAML reads the key on as "true": quote it in manifests ("on": ...)`,
		},
		"InList": {
			reason: "The name is the last part of the path, after [] too.",
			path:   "spec.forProvider.rules[].no",
			want:   `spec.forProvider.rules[].no: YAML reads the key no as "false": quote it in manifests ("no": ...)`,
		},
		"Number": {
			reason: "A key read as a number.",
			path:   "spec.forProvider.0x10",
			want:   `spec.forProvider.0x10: YAML reads the key 0x10 as "16": quote it in manifests ("0x10": ...)`,
		},
		"Null": {
			reason: "A key the reader refuses.",
			path:   "spec.forProvider.null",
			want:   `spec.forProvider.null: YAML cannot read the key null unquoted: quote it in manifests ("null": ...)`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, YAMLKeyWarning(tc.path)); diff != "" {
				t.Errorf("\n%s\nYAMLKeyWarning: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
