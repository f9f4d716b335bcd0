package modules

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/module"
	"github.com/modkind/modkind/reconcile/kinds"
	"github.com/modkind/modkind/rollout"
)

const (
	errUpdateRevision               = "cannot update the status of ModuleRevision"
	errDeleteRevision               = "cannot delete ModuleRevision"
	errSeed                         = "cannot choose a rollout's random seed"
	reasonRevision     event.Reason = "CannotRecordRevision"
	reasonNewRevision  event.Reason = "NewRevision"
	defaultHistory                  = 10
	rolloutPollCeiling              = 5 * time.Second
)

// revise records the ModuleRevision of mod, starts or moves on the rollout to it, and puts into
// snap which revision each unpinned instance is applied with. A rollout's new state is written to
// the Module's status before any instance is told to move, so that a restart resumes it where it
// was. It returns how soon to look again (0: at the usual recheck).
func (r *ModuleReconciler) revise(ctx context.Context, m *v1alpha1.Module, mod *module.Module, gvk schema.GroupVersionKind, snap *kinds.Snapshot) (time.Duration, error) {
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
		seed, err := newSeed()
		if err != nil {
			return 0, err
		}
		m.Status.Rollout = rollout.Start(spec.Policy, m.Status.Rollout, previous, name, seed, sig)
		m.Status.Revision = name
	}
	if spec.Policy == v1alpha1.RolloutAutomatic {
		m.Status.Rollout = nil
	}
	var wait time.Duration
	var held map[string]bool
	if m.Status.Rollout != nil {
		list, err := r.instances(ctx, gvk)
		if err != nil {
			return 0, err
		}
		fleet, _ := kinds.Members(list)
		st, events, w := rollout.Advance(time.Now(), spec, *m.Status.Rollout, fleet, sig)
		m.Status.Rollout, wait = &st, w
		held = rollout.Held(spec, st, fleet)
		for _, e := range events {
			if e.Warning {
				r.record.Event(m, event.Warning(event.Reason(e.Reason), errors.New(e.Message)))
				continue
			}
			r.record.Event(m, event.Normal(event.Reason(e.Reason), e.Message))
		}
		if st.Phase == v1alpha1.RolloutProgressing || (w > 0 && w > rolloutPollCeiling) {
			wait = rolloutPollCeiling
		}
	}
	showRollout(m, spec, time.Now())
	if before != nil || m.Status.Rollout != nil {
		if !equalRollout(before, m.Status.Rollout) {
			if err := r.updateStatus(ctx, m); err != nil {
				return 0, err
			}
		}
	}
	snap.Revision = name
	snap.Fleet = fleetOf(name, spec, m.Status.Rollout, held)
	return wait, nil
}

// showRollout sets the Module's Rollout condition from its rollout, so that a stopped or paused
// rollout shows among the Module's conditions and in its ROLLOUT column: once a rollout began,
// and from then on (True, NoRollout, once the Module rolls out Automatically again).
func showRollout(m *v1alpha1.Module, spec v1alpha1.Rollout, now time.Time) {
	if m.Status.Rollout == nil && m.Status.GetCondition(rollout.TypeRollout).Reason == "" {
		return
	}
	m.Status.SetConditions(rollout.Condition(spec, m.Status.Rollout, now))
}

// fleetOf is what the kind's instances are told of the rollout: what decides which revision
// each is on, without the counts, samples and message, which change as instances move and would
// have every instance of the kind observed again each time they do.
func fleetOf(latest string, spec v1alpha1.Rollout, st *v1alpha1.RolloutStatus, held map[string]bool) *rollout.Fleet {
	f := &rollout.Fleet{Latest: latest, Spec: *spec.DeepCopy(), Held: held}
	if st != nil {
		f.Rollout = st.DeepCopy()
		rollout.Migrate(f.Rollout)
		f.Rollout.Counts = v1alpha1.RolloutCounts{}
		f.Rollout.Failed, f.Rollout.Blocked, f.Rollout.Held, f.Rollout.Message = nil, nil, nil, ""
	}
	return f
}

// newSeed is a rollout's random seed (see RolloutStatus.Seed).
func newSeed() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", errors.Wrap(err, errSeed)
	}
	return hex.EncodeToString(b), nil
}

// equalRollout reports whether a and b are the same status, but for the preview, which its own
// write keeps (showPreview).
func equalRollout(a, b *v1alpha1.RolloutStatus) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := *a, *b
	x.Preview, y.Preview = nil, nil
	return equality.Semantic.DeepEqual(x, y)
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

// tidyRevisions counts the instances of each of the Module's revisions and removes the unused
// revisions beyond its history limit. A revision an instance uses, is pinned or held to, or the
// rollout names, stays. Failing here changes nothing an instance is applied with.
func (r *ModuleReconciler) tidyRevisions(ctx context.Context, m *v1alpha1.Module, gvk schema.GroupVersionKind) error {
	if m.Status.Revision == "" {
		return nil
	}
	revs, err := kinds.RevisionsOf(ctx, r.apiReader, m.Name)
	if err != nil {
		return err
	}
	list, err := r.instances(ctx, gvk)
	if err != nil {
		return err
	}
	_, count := kinds.Members(list)
	inUse := revisionsInUse(m, list, kinds.AsRevisions(revs), count)
	limit := defaultHistory
	if l := m.Spec.RevisionHistoryLimit; l != nil {
		limit = int(*l)
	}
	gone := map[string]bool{}
	for _, name := range rollout.Prunable(kinds.AsRevisions(revs), inUse, limit) {
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
		for _, rev := range ro.StayOn {
			in[rev] = true
		}
	}
	for name := range count {
		in[name] = true
	}
	for i := range list {
		pin := kinds.InstancePin(&list[i])
		switch {
		case pin.Ref != "":
			in[pin.Ref] = true
		case len(pin.Selector) > 0:
			in[rollout.Newest(revs, pin.Selector)] = true
		}
	}
	return in
}

// heldNamed are the namespaces st names held: all of them unless more are held than it names.
func heldNamed(st *v1alpha1.RolloutStatus) map[string]bool {
	if st == nil || len(st.Held) == 0 {
		return nil
	}
	held := map[string]bool{}
	for _, ns := range st.Held {
		held[ns] = true
	}
	return held
}
