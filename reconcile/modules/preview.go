package modules

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/reconcile/kinds"
	"github.com/modkind/modkind/rollout"
)

const (
	// previewPoll is how soon a Module looks at its instances' previews again while some are
	// still to come.
	previewPoll = 10 * time.Second

	errGetRevisionPreview                = "cannot get ModuleRevision %s to show its preview"
	reasonPreviewComplete   event.Reason = "PreviewComplete"
	reasonCannotShowPreview event.Reason = "CannotShowPreview"
)

// fleetPreview counts what the instances a rollout to revision to moves would see, from their
// status.revisionPreview: in all, and per namespace. An instance pinned by name or selector is
// not counted; one that shows no preview of to is pending while one is to come
// (kinds.PreviewTarget), and not counted once none will (the rollout moved it first, or is over).
func fleetPreview(to string, fleet rollout.Fleet, list []unstructured.Unstructured) *v1alpha1.FleetPreview {
	out := &v1alpha1.FleetPreview{Revision: to}
	byNS := map[string]*v1alpha1.PreviewCounts{}
	for i := range list {
		inst := &list[i]
		pin := kinds.InstancePin(inst)
		if pin.Pinned() {
			continue
		}
		shown, ok := kinds.ReadPreview(inst)
		if !ok || shown.Revision != to {
			if kinds.PreviewTarget(kinds.Member(inst), pin, &fleet) != to {
				// No preview of to comes: the rollout moved it (or is over) before one was made.
				continue
			}
			shown = kinds.ShownPreview{}
		}
		c := byNS[inst.GetNamespace()]
		if c == nil {
			c = &v1alpha1.PreviewCounts{}
			byNS[inst.GetNamespace()] = c
		}
		addPreview(c, shown)
		addPreview(&out.PreviewCounts, shown)
	}
	for ns, c := range byNS {
		out.Namespaces = append(out.Namespaces, v1alpha1.NamespacePreview{Namespace: ns, PreviewCounts: *c})
	}
	sort.Slice(out.Namespaces, func(i, j int) bool { return out.Namespaces[i].Namespace < out.Namespaces[j].Namespace })
	return out
}

// addPreview adds an instance's preview to c; a zero preview is one still to come.
func addPreview(c *v1alpha1.PreviewCounts, p kinds.ShownPreview) {
	c.Instances++
	switch p.Outcome {
	case kinds.PreviewNoChanges:
		c.NoChanges++
	case kinds.PreviewUpdate:
		c.Update++
	case kinds.PreviewReplace:
		c.Replace++
	case kinds.PreviewDestroy:
		c.Destroy++
	case kinds.PreviewFailed:
		c.Failed++
	default:
		c.Pending++
	}
	if p.GuardRefuses && (p.Outcome == kinds.PreviewReplace || p.Outcome == kinds.PreviewDestroy) {
		c.ReplaceRefused++
	}
}

// showPreview counts the previews of the instances the Module's rollout will move into
// status.rollout.preview and the To revision's status.preview, writing the revision only when it
// changed (the Module's status is written by its reconcile), and says once that the preview of
// a revision is complete. It returns how soon to look again while previews are still to come.
func (r *ModuleReconciler) showPreview(ctx context.Context, m *v1alpha1.Module, gvk schema.GroupVersionKind) (time.Duration, error) {
	ro := m.Status.Rollout
	if ro == nil || ro.To == "" || ro.From == "" || ro.From == ro.To {
		return 0, nil
	}
	list, err := r.instances(ctx, gvk)
	if err != nil {
		return 0, err
	}
	fleet, _ := kinds.Members(list)
	spec := rolloutSpec(m)
	p := fleetPreview(ro.To, *fleetOf(m.Status.Revision, spec, ro, rollout.Held(spec, *ro, fleet)), list)
	before := ro.Preview
	ro.Preview = p
	if p.Instances > 0 && p.Pending == 0 && (before == nil || before.Pending > 0 || before.Revision != p.Revision) {
		r.record.Event(m, event.Normal(reasonPreviewComplete, previewLine(p)))
	}
	rev := &v1alpha1.ModuleRevision{}
	if err := r.apiReader.Get(ctx, types.NamespacedName{Name: ro.To}, rev); err != nil {
		return 0, errors.Wrapf(err, errGetRevisionPreview, ro.To)
	}
	if !equalPreview(rev.Status.Preview, p) {
		rev.Status.Preview = p.DeepCopy()
		if err := r.client.Status().Update(ctx, rev); err != nil {
			return 0, errors.Wrapf(err, "%s %s", errUpdateRevision, rev.Name)
		}
	}
	if p.Pending > 0 {
		return previewPoll, nil
	}
	return 0, nil
}

// previewLine says a FleetPreview in one line.
func previewLine(p *v1alpha1.FleetPreview) string {
	return fmt.Sprintf("Preview of ModuleRevision %s complete: %d instance(s): %d no changes, %d update, %d replace, %d destroy (%d the guard would refuse), %d failed",
		p.Revision, p.Instances, p.NoChanges, p.Update, p.Replace, p.Destroy, p.ReplaceRefused, p.Failed)
}

func equalPreview(a, b *v1alpha1.FleetPreview) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.Revision != b.Revision || a.PreviewCounts != b.PreviewCounts || len(a.Namespaces) != len(b.Namespaces) {
		return false
	}
	for i := range a.Namespaces {
		if a.Namespaces[i] != b.Namespaces[i] {
			return false
		}
	}
	return true
}
