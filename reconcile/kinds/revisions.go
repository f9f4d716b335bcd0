package kinds

import (
	"context"
	"sort"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/crd"
	"github.com/modkind/modkind/kind/fields"
	"github.com/modkind/modkind/rollout"
)

const errListRevisions = "cannot list the ModuleRevisions of Module"

// RevisionsOf lists the ModuleRevisions of Module name.
func RevisionsOf(ctx context.Context, c client.Reader, name string) ([]v1alpha1.ModuleRevision, error) {
	list := &v1alpha1.ModuleRevisionList{}
	if err := c.List(ctx, list, client.MatchingLabels{crd.LabelModule: crd.ModuleLabelValue(name)}); err != nil {
		return nil, errors.Wrapf(err, "%s %s", errListRevisions, name)
	}
	out := list.Items[:0]
	for _, r := range list.Items {
		// A hashed label value may in theory be shared: the spec says whose a revision is.
		if r.Spec.ModuleName == name {
			out = append(out, r)
		}
	}
	return out, nil
}

// AsRevisions is what the rollout decisions need of revisions.
func AsRevisions(list []v1alpha1.ModuleRevision) []rollout.Revision {
	out := make([]rollout.Revision, 0, len(list))
	for _, r := range list {
		out = append(out, rollout.Revision{Name: r.Name, Number: r.Spec.Revision, Labels: r.Labels, Digest: r.Spec.Digest, Variables: r.Spec.Variables})
	}
	return out
}

// InstancePin reads what an instance asks of revisions.
func InstancePin(inst *unstructured.Unstructured) rollout.Pin {
	ref, _, _ := unstructured.NestedString(inst.Object, "spec", fields.ModuleRevisionRef, "name")
	sel, _, _ := unstructured.NestedStringMap(inst.Object, "spec", fields.ModuleRevisionSelector, "matchLabels")
	return rollout.Pin{Ref: ref, Selector: sel}
}

// RolloutKey names an instance in a rollout: namespace/name.
func RolloutKey(inst client.Object) string { return inst.GetNamespace() + "/" + inst.GetName() }

// Members reads the kind's instances as a rollout sees them, and counts them per revision.
func Members(list []unstructured.Unstructured) ([]rollout.Member, map[string]int64) {
	out := make([]rollout.Member, 0, len(list))
	count := map[string]int64{}
	for i := range list {
		m := Member(&list[i])
		if m.Current != "" {
			count[m.Current]++
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, count
}

// Member is an instance as a rollout sees it.
func Member(inst *unstructured.Unstructured) rollout.Member {
	cur, _, _ := unstructured.NestedString(inst.Object, "status", fields.ModuleRevision)
	failed, _, _ := unstructured.NestedString(inst.Object, "status", fields.FailedModuleRevision)
	return rollout.Member{Key: RolloutKey(inst), Namespace: inst.GetNamespace(), UID: string(inst.GetUID()), Labels: inst.GetLabels(),
		Pinned: InstancePin(inst).Pinned(), Current: cur, Failed: failed}
}

// RetiredSet is the Module's spec.retiredRevisions as a set; nil when none is retired.
func RetiredSet(m *v1alpha1.Module) map[string]bool {
	if len(m.Spec.RetiredRevisions) == 0 {
		return nil
	}
	out := make(map[string]bool, len(m.Spec.RetiredRevisions))
	for _, name := range m.Spec.RetiredRevisions {
		out[name] = true
	}
	return out
}

// PublicOutputs is the Module's spec.publicOutputs as a set; nil when it names none.
func PublicOutputs(m *v1alpha1.Module) map[string]bool {
	if len(m.Spec.PublicOutputs) == 0 {
		return nil
	}
	out := make(map[string]bool, len(m.Spec.PublicOutputs))
	for _, name := range m.Spec.PublicOutputs {
		out[name] = true
	}
	return out
}
