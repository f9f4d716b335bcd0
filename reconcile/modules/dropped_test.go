package modules

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/modkind/modkind/crd"
)

// Which instances lose a value with a field a module change drops, as the refusal and the
// FieldDropped event name them.
func TestFieldsSetIn(t *testing.T) {
	inst := func(ns, name string, fp map[string]any) unstructured.Unstructured {
		u := unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"forProvider": fp}}}
		u.SetNamespace(ns)
		u.SetName(name)
		return u
	}
	list := []unstructured.Unstructured{
		inst("b", "y", map[string]any{"colour": "red", "name": "y"}),
		inst("a", "x", map[string]any{"colour": "green", "sizeFrom": map[string]any{"secretKeyRef": map[string]any{"name": "s", "key": "k"}}}),
		inst("a", "z", map[string]any{"colour": "blue", "name": "z"}),
		{Object: map[string]any{"spec": map[string]any{}}},
	}
	notBlue := func(field string, v any) bool { return field != "colour" || v != "blue" }
	cases := map[string]struct {
		reason string
		names  []string
		want   []setField
	}{
		"Set": {reason: "A field set to another value than its default, with every instance that does so.", names: []string{"colour", "size", "sizeFrom"},
			want: []setField{{Name: "colour", SetBy: []string{"a/x", "b/y"}}, {Name: "sizeFrom", SetBy: []string{"a/x"}}}},
		"NoneSet": {reason: "A field no instance sets loses nothing.", names: []string{"size"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, fieldsSetIn(list, tc.names, notBlue)); diff != "" {
				t.Errorf("%s\nfieldsSetIn(...): -want +got:\n%s", tc.reason, diff)
			}
		})
	}

	breaks := []crd.Break{{Path: "spec.forProvider.colour", Reason: "field removed"}, {Path: "spec.forProvider.size", Reason: "field removed"}}
	want := []crd.Break{
		{Path: "spec.forProvider.colour", Reason: "field removed; 2 instances set it: a/x, b/y (not to its default), and would lose the value"},
		{Path: "spec.forProvider.size", Reason: "field removed"},
	}
	if diff := cmp.Diff(want, withSetters(breaks, fieldsSetIn(list, []string{"colour", "size"}, notBlue))); diff != "" {
		t.Errorf("withSetters: -want +got:\n%s", diff)
	}
	for _, c := range []struct {
		by   []string
		want string
	}{
		{[]string{"a/x"}, "instance a/x sets it"},
		{[]string{"a/x", "b/y"}, "2 instances set it: a/x, b/y"},
		{[]string{"a/1", "a/2", "a/3", "a/4", "a/5"}, "5 instances set it: a/1, a/2, a/3 and 2 more"},
	} {
		if got := instancesSetting(c.by); got != c.want {
			t.Errorf("instancesSetting(%v) = %q, want %q", c.by, got, c.want)
		}
	}
}
