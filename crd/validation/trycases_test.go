package validation

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/modkind/modkind/crd/internal/crdtest"
)

// TestTerraformTryAndSets checks against terraform the facts tryTrue and the emptiness of sets
// rest on: which nulls make a condition err, that can() catches them, that terraform 1.11 reads
// past a false &&, and that a set of duplicates is not empty.
func TestTerraformTryAndSets(t *testing.T) {
	tf := crdtest.Terraform(t)
	version := terraformVersion(t, tf)
	src := `
variable "hosted" {
  type    = object({ enabled = optional(bool), subnet = optional(string) })
  default = null
  validation {
    condition     = try(var.hosted == null || var.hosted.enabled != true || var.hosted.subnet != null, true)
    error_message = "subnet"
  }
}
variable "dir" {
  type    = object({ kind = optional(string, "B"), ad = optional(object({ sid = optional(string) })) })
  default = null
  validation {
    condition     = try(var.dir.kind != "AD" || var.dir.ad.sid != null, true)
    error_message = "sid"
  }
  validation {
    condition     = try(var.dir.kind == "AD" && var.dir.ad.sid != null, true)
    error_message = "AD with a sid"
  }
}
variable "user" {
  type    = object({ name = optional(string) })
  default = null
  validation {
    condition     = try(var.user == null || can(regex("^[a-z]+$", var.user.name)), true)
    error_message = "name"
  }
}
variable "mesh" {
  type    = object({ mode = string })
  default = null
  validation {
    condition     = try(var.mesh == null || contains(["Istio"], var.mesh.mode), true)
    error_message = "mode"
  }
}
variable "proxy" {
  type    = object({ t = optional(object({ a = optional(number), b = optional(number) })) })
  default = null
  validation {
    condition     = try(var.proxy.t == null || alltrue([for v in [var.proxy.t.a, var.proxy.t.b] : v == null ? true : v == floor(v)]), true)
    error_message = "whole"
  }
}
variable "tags" {
  type    = set(string)
  default = []
  validation {
    condition     = length(var.tags) == 0
    error_message = "no tags"
  }
}
`
	own := crdtest.InspectSource(t, src)
	decls := declarationsOf(t, []byte(src), own)
	cases := []struct {
		reason string
		name   string
		raw    string
		want   tfAnswer
	}{
		{reason: "An unset subnet is null, which != compares without error: the condition is false.", name: "hosted", raw: `{"enabled":true}`, want: "0"},
		{reason: "An unset enabled is null, and null != true holds.", name: "hosted", raw: `{}`, want: ""},
		{reason: "A subnet set passes.", name: "hosted", raw: `{"enabled":true,"subnet":"s"}`, want: ""},
		{reason: "Reading sid of the unset ad errs: try() holds, in both blocks (terraform 1.11 reads past the false && of the second).", name: "dir", raw: `{"kind":"AD"}`, want: ""},
		{reason: "With ad set, an unset sid fails the first block; the second holds where kind is AD and sid is set only.", name: "dir", raw: `{"kind":"AD","ad":{}}`, want: "0,1"},
		{reason: "Another kind passes the first block and fails the second once ad is set.", name: "dir", raw: `{"kind":"X","ad":{"sid":"s"}}`, want: "1"},
		{reason: "Where ad is unset, terraform 1.11 errs on the right of the false && too: try() holds.", name: "dir", raw: `{"kind":"X"}`, want: ""},
		{reason: "can() catches regex() of null: an unset name fails without error.", name: "user", raw: `{}`, want: "0"},
		{reason: "A name that matches passes.", name: "user", raw: `{"name":"abc"}`, want: ""},
		{reason: "contains() of null errs in terraform 1.11: try() holds.", name: "mesh", raw: `{"mode":null}`, want: ""},
		{reason: "Another mode fails.", name: "mesh", raw: `{"mode":"Other"}`, want: "0"},
		{reason: "A fraction fails; the branch of the conditional that compares null is not picked, so its error does not count.", name: "proxy", raw: `{"t":{"a":0.5}}`, want: "0"},
		{reason: "Null elements and whole numbers pass.", name: "proxy", raw: `{"t":{"b":2}}`, want: ""},
		{reason: "An unset t reads as null in both readings.", name: "proxy", raw: `{}`, want: ""},
		{reason: "Two equal tags are a set of one: not empty.", name: "tags", raw: `["a","a"]`, want: "0"},
		{reason: "No tags pass.", name: "tags", raw: `[]`, want: ""},
	}
	qs := map[string]tfQuestion{}
	for _, c := range cases {
		q := tfQuestion{decl: decls[c.name], raw: c.raw}
		qs[q.key(version)] = q
	}
	got := terraformDecides(t, tf, version, qs)
	for _, c := range cases {
		if diff := cmp.Diff(c.want, got[tfQuestion{decl: decls[c.name], raw: c.raw}.key(version)]); diff != "" {
			t.Errorf("\n%s\n%s = %s: terraform's answer (the indexes of the blocks that refuse it) (-want +got):\n%s", c.reason, c.name, c.raw, diff)
		}
	}
}
