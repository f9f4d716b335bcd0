package modules

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/crd"
	"github.com/modkind/modkind/kind/fields"
)

const reasonFieldDropped event.Reason = "FieldDropped"

// A setField is a spec.forProvider field that a module change drops and that instances set to a
// value other than its default: the API server drops their values with the field, from every
// instance, also from one pinned to a revision that has the variable.
type setField struct {
	Name string
	// SetBy are the instances (namespace/name) that set it, sorted.
	SetBy []string
}

// droppedFieldsSet are the spec.forProvider fields that got, the installed CRD, has and want
// drops, and that some instance of the kind sets to a value other than its default.
func (r *ModuleReconciler) droppedFieldsSet(ctx context.Context, gvk schema.GroupVersionKind, got, want *extv1.CustomResourceDefinition) ([]setField, error) {
	dropped := crd.DroppedFields(got, want)
	if len(dropped) == 0 {
		return nil, nil
	}
	list, err := r.instances(ctx, gvk)
	if err != nil {
		return nil, err
	}
	return fieldsSetIn(list, dropped, func(field string, v any) bool { return crd.NotDefault(got, field, v) }), nil
}

// fieldsSetIn are the fields of names that some instance of list sets in spec.forProvider to a
// value isSet counts, in the order of names, with the instances that set each.
func fieldsSetIn(list []unstructured.Unstructured, names []string, isSet func(field string, v any) bool) []setField {
	setBy := map[string][]string{}
	for i := range list {
		fp, _, _ := unstructured.NestedMap(list[i].Object, "spec", fields.ForProvider)
		for _, n := range names {
			if v, ok := fp[n]; ok && isSet(n, v) {
				setBy[n] = append(setBy[n], list[i].GetNamespace()+"/"+list[i].GetName())
			}
		}
	}
	var out []setField
	for _, n := range names {
		if by := setBy[n]; len(by) > 0 {
			sort.Strings(by)
			out = append(out, setField{Name: n, SetBy: by})
		}
	}
	return out
}

// withSetters adds to each break that removes a field of set the instances that set it: what an
// admin weighs before allowing the change.
func withSetters(breaks []crd.Break, set []setField) []crd.Break {
	by := map[string][]string{}
	for _, f := range set {
		by["spec."+fields.ForProvider+"."+f.Name] = f.SetBy
	}
	out := make([]crd.Break, len(breaks))
	for i, b := range breaks {
		out[i] = b
		if s := by[b.Path]; len(s) > 0 {
			out[i].Reason += "; " + instancesSetting(s) + " (not to its default), and would lose the value"
		}
	}
	return out
}

// recordDropped tells, on the Module, which instances lost a value with a field its change
// dropped, breaking changes allowed.
func (r *ModuleReconciler) recordDropped(m *v1alpha1.Module, set []setField) {
	for _, f := range set {
		r.record.Event(m, event.Warning(reasonFieldDropped, fmt.Errorf(
			"spec.%s.%s is not in the new module and is dropped from every instance: %s (not to its default), "+
				"which from now on is applied without it", fields.ForProvider, f.Name, instancesSetting(f.SetBy))))
	}
}

// instancesSetting says which instances set a field, naming the first few.
func instancesSetting(by []string) string {
	const named = 3
	switch {
	case len(by) == 1:
		return "instance " + by[0] + " sets it"
	case len(by) <= named:
		return fmt.Sprintf("%d instances set it: %s", len(by), strings.Join(by, ", "))
	}
	return fmt.Sprintf("%d instances set it: %s and %d more", len(by), strings.Join(by[:named], ", "), len(by)-named)
}
