package reconcile

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/kind/fields"
	"github.com/modkind/modkind/rollout"
	"github.com/modkind/modkind/slots"
	"github.com/modkind/modkind/terraform"
)

// Outcomes of a preview: what a plan of the revision a rollout will move an instance to found.
const (
	PreviewNoChanges = "NoChanges"
	// PreviewUpdate creates or updates objects in place, and destroys none.
	PreviewUpdate = "Update"
	// PreviewReplace replaces objects, and deletes none outright.
	PreviewReplace = "Replace"
	// PreviewDestroy deletes objects.
	PreviewDestroy = "Destroy"
	PreviewFailed  = "Failed"
)

const (
	// previewRetry is how long after a failed preview the same one is tried again: a plan
	// fails for reasons outside the instance too (a provider's API down).
	previewRetry = 5 * time.Minute
	// previewPoll is how soon a Module looks at its instances' previews again while some are
	// still to come.
	previewPoll = 10 * time.Second

	errGetPreviewRevision                = "cannot get ModuleRevision %s to preview"
	errGetRevisionPreview                = "cannot get ModuleRevision %s to show its preview"
	reasonPreviewComplete   event.Reason = "PreviewComplete"
	reasonCannotShowPreview event.Reason = "CannotShowPreview"
)

// A shownPreview is an instance's status.revisionPreview.
type shownPreview struct {
	Revision, Outcome, Message    string
	Add, Change, Destroy, Replace int64
	GuardRefuses                  bool
	Destructive                   []string
	PlannedAt                     time.Time
	// Basis identifies what the preview was made from (previewBasis).
	Basis string
}

func (p shownPreview) value() map[string]any {
	v := map[string]any{"revision": p.Revision, "outcome": p.Outcome, "add": p.Add, "change": p.Change,
		"destroy": p.Destroy, "replace": p.Replace, "guardRefuses": p.GuardRefuses, "basis": p.Basis,
		"plannedAt": p.PlannedAt.UTC().Format(time.RFC3339)}
	if p.Message != "" {
		v["message"] = p.Message
	}
	if len(p.Destructive) > 0 {
		d := make([]any, len(p.Destructive))
		for i, s := range p.Destructive {
			d[i] = s
		}
		v["destructive"] = d
	}
	return v
}

// readPreview reads an instance's status.revisionPreview; ok is false when it has none.
func readPreview(u *unstructured.Unstructured) (shownPreview, bool) {
	m, ok, _ := unstructured.NestedMap(u.Object, "status", fields.RevisionPreview)
	if !ok {
		return shownPreview{}, false
	}
	str := func(k string) string { s, _ := m[k].(string); return s }
	num := func(k string) int64 {
		switch n := m[k].(type) {
		case int64:
			return n
		case float64:
			return int64(n)
		}
		return 0
	}
	p := shownPreview{Revision: str("revision"), Outcome: str("outcome"), Message: str("message"), Basis: str("basis"),
		Add: num("add"), Change: num("change"), Destroy: num("destroy"), Replace: num("replace")}
	p.GuardRefuses, _ = m["guardRefuses"].(bool)
	p.PlannedAt, _ = time.Parse(time.RFC3339, str("plannedAt"))
	if d, ok := m["destructive"].([]any); ok {
		for _, s := range d {
			if s, ok := s.(string); ok {
				p.Destructive = append(p.Destructive, s)
			}
		}
	}
	return p, true
}

// previewTarget returns the revision the kind's rollout will move the instance m to, which its
// preview plans; "" when there is none to preview: no rollout under way (none, or one that is
// complete, stopped or undone), an instance pinned by name or selector (rollouts pass it by), or
// one the rollout moved already. An Automatic rollout has no status.rollout: its instances move
// at once, and nothing previews them.
func previewTarget(m rollout.Member, pin rollout.Pin, f *rollout.Fleet) string {
	if f == nil || f.Rollout == nil || pin.Pinned() {
		return ""
	}
	r := f.Rollout
	switch r.Phase {
	case v1alpha1.RolloutWaiting, v1alpha1.RolloutProgressing, v1alpha1.RolloutPausedPhase:
	default:
		return ""
	}
	if r.To == "" || r.From == r.To || rollout.Choose(m, pin, nil, *f) == r.To {
		return ""
	}
	return r.To
}

// previewBasis identifies what a preview of the revision whose module has digest target is made
// from: the spec (generation), the inputs the instance is applied with now (its rendered root
// module, provider configuration and the values its references resolve to), the state, and the
// revision's module. The instance's current inputs stand for those of the preview: whatever
// changes one changes the other, and they are known without rendering the preview.
func previewBasis(generation int64, inputs, target, lineage string, serial int64) string {
	return terraform.Digest([]byte(strconv.FormatInt(generation, 10)), []byte(inputs), []byte(target),
		[]byte(lineage), []byte(strconv.FormatInt(serial, 10)))
}

// previewDue reports whether the instance must be planned with revision target: it shows no
// preview of target made from basis, or the one it shows failed more than previewRetry ago.
func previewDue(shown shownPreview, ok bool, target, basis string, now time.Time) bool {
	if !ok || shown.Revision != target || shown.Basis != basis {
		return true
	}
	return shown.Outcome == PreviewFailed && now.Sub(shown.PlannedAt) >= previewRetry
}

// classify says what a plan summary means for an instance: its outcome, and whether the
// destroy/replace guard would refuse it. A plan that deletes something outright is a Destroy
// even when it also replaces; a tainted object replaced is how terraform finishes creating it,
// not a destructive change (the plan does not list it), and so an Update.
func classify(p *v1alpha1.RunPlan, allowDestructive bool) (string, bool) {
	deletes := int64(len(p.Destructive)) - p.Replace
	refuses := len(p.Destructive) > 0 && !allowDestructive
	switch {
	case deletes > 0:
		return PreviewDestroy, refuses
	case p.Replace > 0:
		return PreviewReplace, refuses
	case p.Add > 0 || p.Change > 0 || p.Destroy > 0:
		return PreviewUpdate, refuses
	}
	return PreviewNoChanges, refuses
}

// preview plans, once per revision and basis, the revision the kind's rollout will move the
// instance to, and shows what the plan found in status.revisionPreview. It is called only for an
// instance that needed nothing else in this reconcile: real work goes first. A preview changes
// nothing else: not the state, not the conditions, not the instance's own last plan; a preview
// that fails is shown as Failed, and the instance stays as Ready and Synced as it was.
func (e *external) preview(ctx context.Context) {
	base := e.kind.Snapshot()
	if base == nil {
		return
	}
	target := previewTarget(member(&e.inst.Unstructured), instancePin(&e.inst.Unstructured), base.Fleet)
	if target == "" {
		return
	}
	shown, ok := readPreview(&e.inst.Unstructured)
	snap, forProvider, err := e.previewSnapshot(ctx, base, target)
	if err != nil {
		e.showPreview(shownPreview{Revision: target, Outcome: PreviewFailed, Message: err.Error(), Basis: shown.Basis}, shown, ok)
		return
	}
	lineage, serial := "", int64(0)
	if s := e.work.Stored; s != nil {
		lineage, serial = s.Lineage, s.Serial
	}
	basis := previewBasis(e.inst.GetGeneration(), e.work.Workspace.Inputs, snap.Module.Digest, lineage, serial)
	if !previewDue(shown, ok, target, basis, time.Now()) {
		return
	}
	// Rendered without prevent_destroy: the plan shows what would be destroyed, and the guard is
	// judged from it, as it is for an apply.
	w, _, _, err := e.render(ctx, e.inst, snap, forProvider, e.setup, false)
	if err != nil {
		e.showPreview(shownPreview{Revision: target, Outcome: PreviewFailed, Message: err.Error(), Basis: basis}, shown, ok)
		return
	}
	w.Op, w.Stored, w.Seen = v1alpha1.OperationPlan, e.work.Stored, e.work.Seen
	res := e.exec.Execute(ctx, w)
	switch {
	case res.Pending:
		return
	case slots.IsWaiting(res.Err):
		// Tried again when a slot is free, as any run.
		if e.waiters != nil {
			e.waiters.Wait(slots.Key(e.kind.gvk, types.NamespacedName{Namespace: e.inst.GetNamespace(), Name: e.inst.GetName()}), res.Err)
		}
		return
	case res.Err != nil:
		e.showPreview(shownPreview{Revision: target, Outcome: PreviewFailed, Message: w.Workspace.Redactor.Redact(res.Err.Error()), Basis: basis}, shown, ok)
	case res.Preview != nil:
		p := shownPreview{Revision: target, Basis: basis, Add: res.Preview.Add, Change: res.Preview.Change,
			Destroy: res.Preview.Destroy, Replace: res.Preview.Replace, Destructive: shownDestructive(res.Preview.Destructive)}
		p.Outcome, p.GuardRefuses = classify(res.Preview, e.inst.AllowDestructive())
		e.showPreview(p, shown, ok)
	}
}

// Bounds on the destructive addresses a preview shows: in job mode they come from a Run status
// the tenant's runner account writes, and must not grow the instance past what the API server
// stores.
const (
	maxPreviewDestructive = 50
	maxPreviewAddress     = 512
)

// shownDestructive is the destructive addresses a preview shows: the first maxPreviewDestructive,
// each cut to maxPreviewAddress bytes, and how many more there are.
func shownDestructive(all []string) []string {
	if len(all) == 0 {
		return nil
	}
	out := make([]string, 0, min(len(all), maxPreviewDestructive+1))
	for i, d := range all {
		if i == maxPreviewDestructive {
			out = append(out, fmt.Sprintf("… and %d more", len(all)-i))
			break
		}
		if len(d) > maxPreviewAddress {
			d = strings.ToValidUTF8(d[:maxPreviewAddress], "") + "…"
		}
		out = append(out, d)
	}
	return out
}

// showPreview puts p into status, unless status shows the same preview already (its time aside).
func (e *external) showPreview(p, shown shownPreview, ok bool) {
	p.PlannedAt = time.Now()
	if ok && p.Outcome == PreviewFailed && shown.Outcome == PreviewFailed && shown.Revision == p.Revision &&
		shown.Message == p.Message && time.Since(shown.PlannedAt) < previewRetry {
		return
	}
	e.inst.SetStatusField(fields.RevisionPreview, p.value())
}

// previewSnapshot returns the snapshot of revision target, and the instance's forProvider values
// as they would be applied with it.
func (e *external) previewSnapshot(ctx context.Context, base *Snapshot, target string) (*Snapshot, map[string]any, error) {
	if target == base.Revision {
		return base, base.ForProvider(e.inst), nil
	}
	rev := &v1alpha1.ModuleRevision{}
	if err := e.client.Get(ctx, types.NamespacedName{Name: target}, rev); err != nil {
		return nil, nil, errors.Wrapf(err, errGetPreviewRevision, target)
	}
	if rev.Spec.ModuleName != base.ModuleName {
		return nil, nil, errors.Errorf(errForeignRevision, target, rev.Spec.ModuleName, base.ModuleName)
	}
	mod, err := e.revisions.load(rev)
	if err != nil {
		return nil, nil, err
	}
	forProvider, err := fitsRevision(base.ForProvider(e.inst), rev, mod, base.Module)
	if err != nil {
		return nil, nil, err
	}
	snap := *base
	snap.Module, snap.Revision = mod, target
	return &snap, forProvider, nil
}

// fleetPreview counts what the instances a rollout to revision to moves would see, from their
// status.revisionPreview: in all, and per namespace. An instance pinned by name or selector is
// not counted; one that shows no preview of to is pending while one is to come (previewTarget),
// and not counted once none will (the rollout moved it first, or is over).
func fleetPreview(to string, fleet rollout.Fleet, list []unstructured.Unstructured) *v1alpha1.FleetPreview {
	out := &v1alpha1.FleetPreview{Revision: to}
	byNS := map[string]*v1alpha1.PreviewCounts{}
	for i := range list {
		inst := &list[i]
		pin := instancePin(inst)
		if pin.Pinned() {
			continue
		}
		shown, ok := readPreview(inst)
		if !ok || shown.Revision != to {
			if previewTarget(member(inst), pin, &fleet) != to {
				// No preview of to comes: the rollout moved it (or is over) before one was made.
				continue
			}
			shown = shownPreview{}
		}
		c := byNS[inst.GetNamespace()]
		if c == nil {
			c = &v1alpha1.PreviewCounts{}
			byNS[inst.GetNamespace()] = c
		}
		count(c, shown)
		count(&out.PreviewCounts, shown)
	}
	for ns, c := range byNS {
		out.Namespaces = append(out.Namespaces, v1alpha1.NamespacePreview{Namespace: ns, PreviewCounts: *c})
	}
	sort.Slice(out.Namespaces, func(i, j int) bool { return out.Namespaces[i].Namespace < out.Namespaces[j].Namespace })
	return out
}

// count adds an instance's preview to c; a zero preview is one still to come.
func count(c *v1alpha1.PreviewCounts, p shownPreview) {
	c.Instances++
	switch p.Outcome {
	case PreviewNoChanges:
		c.NoChanges++
	case PreviewUpdate:
		c.Update++
	case PreviewReplace:
		c.Replace++
	case PreviewDestroy:
		c.Destroy++
	case PreviewFailed:
		c.Failed++
	default:
		c.Pending++
	}
	if p.GuardRefuses && (p.Outcome == PreviewReplace || p.Outcome == PreviewDestroy) {
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
	fleet, _ := members(list)
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
