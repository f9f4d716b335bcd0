package kind

import (
	"github.com/crossplane/crossplane-runtime/v2/pkg/fieldpath"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/modkind/modkind/kind/fields"
)

// An Instance is an object of a generated kind, seen as a Crossplane v2 namespaced managed
// resource. Generated kinds are unknown at compile time, so it wraps an unstructured object.
type Instance struct {
	unstructured.Unstructured
}

// DeepCopyObject returns a copy that is still an *Instance, as the managed reconciler expects.
func (i *Instance) DeepCopyObject() runtime.Object {
	return &Instance{Unstructured: *i.Unstructured.DeepCopy()}
}

func (i *Instance) paved() *fieldpath.Paved { return fieldpath.Pave(i.Object) }

// GetCondition returns the condition of the given type.
func (i *Instance) GetCondition(ct xpv2.ConditionType) xpv2.Condition {
	cs := xpv2.ConditionedStatus{Conditions: conditionsOf(i.Object)}
	return cs.GetCondition(ct)
}

// SetConditions sets the given conditions, keeping the others.
func (i *Instance) SetConditions(c ...xpv2.Condition) {
	// An object read back with "status: null" has no status to set conditions in; start from an empty one.
	if _, ok := i.Object["status"].(map[string]any); !ok {
		delete(i.Object, "status")
	}
	cs := xpv2.ConditionedStatus{Conditions: conditionsOf(i.Object)}
	cs.SetConditions(c...)
	setConditionsOf(i.Object, cs.Conditions)
}

// GetWriteConnectionSecretToReference returns spec.writeConnectionSecretToRef.
func (i *Instance) GetWriteConnectionSecretToReference() *xpv2.LocalSecretReference {
	name, _, _ := unstructured.NestedString(i.Object, "spec", "writeConnectionSecretToRef", "name")
	if name == "" {
		return nil
	}
	return &xpv2.LocalSecretReference{Name: name}
}

// SetWriteConnectionSecretToReference sets spec.writeConnectionSecretToRef.
func (i *Instance) SetWriteConnectionSecretToReference(r *xpv2.LocalSecretReference) {
	_ = i.paved().SetValue("spec.writeConnectionSecretToRef", r)
}

// GetProviderConfigReference returns spec.providerConfigRef.
func (i *Instance) GetProviderConfigReference() *xpv2.ProviderConfigReference {
	name, _, _ := unstructured.NestedString(i.Object, "spec", "providerConfigRef", "name")
	if name == "" {
		return nil
	}
	kind, _, _ := unstructured.NestedString(i.Object, "spec", "providerConfigRef", "kind")
	return &xpv2.ProviderConfigReference{Kind: kind, Name: name}
}

// SetProviderConfigReference sets spec.providerConfigRef.
func (i *Instance) SetProviderConfigReference(r *xpv2.ProviderConfigReference) {
	_ = i.paved().SetValue("spec.providerConfigRef", r)
}

// GetManagementPolicies returns spec.managementPolicies.
func (i *Instance) GetManagementPolicies() xpv2.ManagementPolicies {
	list, _, _ := unstructured.NestedSlice(i.Object, "spec", "managementPolicies")
	out := make(xpv2.ManagementPolicies, 0, len(list))
	for _, p := range list {
		if s, ok := p.(string); ok {
			out = append(out, xpv2.ManagementAction(s))
		}
	}
	return out
}

// SetManagementPolicies sets spec.managementPolicies.
func (i *Instance) SetManagementPolicies(p xpv2.ManagementPolicies) {
	_ = i.paved().SetValue("spec.managementPolicies", p)
}

// ForProvider returns spec.forProvider.
func (i *Instance) ForProvider() map[string]any {
	fp, _, _ := unstructured.NestedMap(i.Object, "spec", fields.ForProvider)
	if fp == nil {
		fp = map[string]any{}
	}
	return fp
}

// SetAtProvider replaces status.atProvider.
func (i *Instance) SetAtProvider(v map[string]any) {
	if st, ok := i.Object["status"]; ok && st == nil {
		delete(i.Object, "status")
	}
	_ = unstructured.SetNestedField(i.Object, v, "status", fields.AtProvider)
}

// AllowDestructive reports whether the instance allows plans that destroy or replace objects.
func (i *Instance) AllowDestructive() bool {
	b, _, _ := unstructured.NestedBool(i.Object, "spec", fields.AllowDestructive)
	return b
}

// Approval returns whether the instance is in approval mode and which plan it approved.
func (i *Instance) Approval() (manual bool, approvedPlan string) {
	mode, _, _ := unstructured.NestedString(i.Object, "spec", fields.Approval, fields.ApprovalMode)
	approved, _, _ := unstructured.NestedString(i.Object, "spec", fields.Approval, fields.ApprovedPlan)
	return mode == fields.ApprovalManual, approved
}

// SetStatusField replaces status.<name>.
func (i *Instance) SetStatusField(name string, v map[string]any) {
	if st, ok := i.Object["status"]; ok && st == nil {
		delete(i.Object, "status")
	}
	_ = unstructured.SetNestedField(i.Object, v, "status", name)
}

// SetObservedGeneration records the generation that status.atProvider describes.
func (i *Instance) SetObservedGeneration(g int64) {
	_ = unstructured.SetNestedField(i.Object, g, "status", fields.ObservedGeneration)
}
