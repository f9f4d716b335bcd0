package reconcile

import (
	"context"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/module"
	"github.com/modkind/modkind/rollout"
)

const (
	errListInstances                = "cannot list the instances of"
	errUpdateRevision               = "cannot update the status of ModuleRevision"
	errDeleteRevision               = "cannot delete ModuleRevision"
	reasonRevision     event.Reason = "CannotRecordRevision"
	reasonRolloutStep  event.Reason = "RolloutStep"
	reasonNewRevision  event.Reason = "NewRevision"
	defaultHistory                  = 10
	rolloutPollCeiling              = 5 * time.Second
)

// revise records the ModuleRevision of mod, starts or moves on the rollout to it, and puts into
// snap which revision each unpinned instance is applied with. A rollout's new state is written to
// the Module's status before any instance is told to move, so that a restart resumes it where it
// was. It returns how soon to look again (0: at the usual recheck).
func (r *ModuleReconciler) revise(ctx context.Context, m *v1alpha1.Module, mod *module.Module, gvk schema.GroupVersionKind, snap *Snapshot) (time.Duration, error) {
	if mod.Resource != nil {
		return 0, nil
	}
	name, err := r.recordRevision(ctx, m, mod)
	if err != nil {
		return 0, err
	}
	spec := rolloutSpec(m)
	sig := rollout.Signals{Promote: m.GetAnnotations()[v1alpha1.AnnotationPromote], Undo: m.GetAnnotations()[v1alpha1.AnnotationUndo]}
	before := m.Status.Rollout.DeepCopy()
	if previous := m.Status.Revision; previous != name {
		if previous != "" {
			r.record.Event(m, event.Normal(reasonNewRevision, "Recorded ModuleRevision "+name+" (the newest was "+previous+")"))
		}
		m.Status.Rollout = rollout.Start(spec.Policy, m.Status.Rollout, previous, name, sig)
		m.Status.Revision = name
	}
	if spec.Policy == v1alpha1.RolloutAutomatic {
		m.Status.Rollout = nil
	}
	var wait time.Duration
	if m.Status.Rollout != nil {
		list, err := r.instances(ctx, gvk)
		if err != nil {
			return 0, err
		}
		fleet, _ := members(list)
		st, events, w := rollout.Advance(time.Now(), spec, *m.Status.Rollout, fleet, sig)
		m.Status.Rollout, wait = &st, w
		for _, e := range events {
			r.record.Event(m, event.Normal(reasonRolloutStep, e))
		}
		if st.Phase == v1alpha1.RolloutProgressing || (w > 0 && w > rolloutPollCeiling) {
			wait = rolloutPollCeiling
		}
	}
	if before != nil || m.Status.Rollout != nil {
		if !equalRollout(before, m.Status.Rollout) {
			if err := r.updateStatus(ctx, m); err != nil {
				return 0, err
			}
		}
	}
	snap.Revision = name
	snap.Fleet = &rollout.Fleet{Latest: name, Rollout: m.Status.Rollout.DeepCopy()}
	return wait, nil
}

func equalRollout(a, b *v1alpha1.RolloutStatus) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Phase == b.Phase && a.Step == b.Step && a.From == b.From && a.To == b.To &&
		len(a.Moved) == len(b.Moved) && len(a.Failed) == len(b.Failed) && len(a.Stay) == len(b.Stay) && a.Promoted == b.Promoted && a.Undone == b.Undone &&
		a.StepStarted.Equal(b.StepStarted) && a.StepCompleted.Equal(b.StepCompleted)
}

// rolloutSpec is the Module's rollout, Automatic when unset.
func rolloutSpec(m *v1alpha1.Module) v1alpha1.Rollout {
	if m.Spec.Rollout == nil {
		return v1alpha1.Rollout{Policy: v1alpha1.RolloutAutomatic}
	}
	s := *m.Spec.Rollout
	if s.Policy == "" {
		s.Policy = v1alpha1.RolloutAutomatic
	}
	return s
}

// instances lists the kind's instances in every namespace the controller watches, from the
// informer the kind's controller reads them from. The objects are the cache's own, not copies:
// callers only read them. Listing them from the API server instead decoded a copy of every
// instance at each Module reconcile (every minute; every few seconds during a rollout). The cache
// may be a moment behind, which only delays a rollout's next look.
func (r *ModuleReconciler) instances(ctx context.Context, gvk schema.GroupVersionKind) ([]unstructured.Unstructured, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := r.client.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, errors.Wrapf(err, "%s %s", errListInstances, gvk.Kind)
	}
	return list.Items, nil
}

// tidyRevisions counts the instances of each of the Module's revisions and removes the unused
// revisions beyond its history limit. A revision an instance uses, is pinned or held to, or the
// rollout names, stays. Failing here changes nothing an instance is applied with.
func (r *ModuleReconciler) tidyRevisions(ctx context.Context, m *v1alpha1.Module, gvk schema.GroupVersionKind) error {
	if m.Status.Revision == "" {
		return nil
	}
	revs, err := revisionsOf(ctx, r.apiReader, m.Name)
	if err != nil {
		return err
	}
	list, err := r.instances(ctx, gvk)
	if err != nil {
		return err
	}
	_, count := members(list)
	inUse := revisionsInUse(m, list, asRevisions(revs), count)
	limit := defaultHistory
	if l := m.Spec.RevisionHistoryLimit; l != nil {
		limit = int(*l)
	}
	gone := map[string]bool{}
	for _, name := range rollout.Prunable(asRevisions(revs), inUse, limit) {
		gone[name] = true
	}
	for i := range revs {
		rev := &revs[i]
		if gone[rev.Name] {
			if err := r.client.Delete(ctx, rev); err != nil {
				return errors.Wrapf(err, "%s %s", errDeleteRevision, rev.Name)
			}
			continue
		}
		if rev.Status.Instances != count[rev.Name] {
			rev.Status.Instances = count[rev.Name]
			if err := r.client.Status().Update(ctx, rev); err != nil {
				return errors.Wrapf(err, "%s %s", errUpdateRevision, rev.Name)
			}
		}
	}
	return nil
}

// revisionsInUse are the revisions nothing may prune: the newest, the rollout's, those instances
// were last applied with, and those they are pinned to by name or selector.
func revisionsInUse(m *v1alpha1.Module, list []unstructured.Unstructured, revs []rollout.Revision, count map[string]int64) map[string]bool {
	in := map[string]bool{m.Status.Revision: true}
	if ro := m.Status.Rollout; ro != nil {
		in[ro.From], in[ro.To] = true, true
		for _, g := range ro.Stay {
			in[g.Revision] = true
		}
	}
	for name := range count {
		in[name] = true
	}
	for i := range list {
		pin := instancePin(&list[i])
		switch {
		case pin.Ref != "":
			in[pin.Ref] = true
		case len(pin.Selector) > 0:
			in[rollout.Newest(revs, pin.Selector)] = true
		}
	}
	return in
}
