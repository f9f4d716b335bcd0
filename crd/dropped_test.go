package crd

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A variable removed from the module drops its field and its From reference; an instance's value
// for it counts as set unless it is the default the installed schema fills in.
func TestDroppedFields(t *testing.T) {
	v1 := crdOf(t, `
variable "name" { type = string }
variable "colour" {
  type    = string
  default = "blue"
}
variable "size" {
  type    = number
  default = 1
}
variable "tags" {
  type    = map(string)
  default = { team = "a" }
}
variable "zone" { type = string }
`)
	v2 := crdOf(t, `
variable "name" { type = string }
variable "region" {
  type    = string
  default = "eu"
}
`)
	if diff := cmp.Diff([]string{"colour", "colourFrom", "size", "sizeFrom", "tags", "tagsFrom", "zone", "zoneFrom"}, DroppedFields(v1, v2)); diff != "" {
		t.Errorf("DroppedFields: -want +got:\n%s", diff)
	}
	if got := DroppedFields(v2, crdOf(t, "variable \"name\" { type = string }\nvariable \"region\" { type = string }\nvariable \"more\" { type = string }\n")); len(got) != 0 {
		t.Errorf("adding a variable drops nothing, got %v", got)
	}
	if diff := cmp.Diff(map[string]bool{"name": true, "nameFrom": true, "region": true, "regionFrom": true}, ForProviderFields(v2)); diff != "" {
		t.Errorf("ForProviderFields: -want +got:\n%s", diff)
	}
	for _, c := range []struct {
		reason string
		field  string
		value  any
		want   bool
	}{
		{"the default string", "colour", "blue", false},
		{"another string", "colour", "red", true},
		{"the default number, as an instance holds it", "size", int64(1), false},
		{"another number", "size", 2.5, true},
		{"the default map", "tags", map[string]any{"team": "a"}, false},
		{"another map", "tags", map[string]any{"team": "b"}, true},
		{"a field without a default", "zone", "a", true},
		{"a field the schema does not have", "unknown", "x", true},
	} {
		if got := NotDefault(v1, c.field, c.value); got != c.want {
			t.Errorf("%s: NotDefault(%s, %v) = %t, want %t", c.reason, c.field, c.value, got, c.want)
		}
	}
}
