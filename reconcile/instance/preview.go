package instance

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/kind/fields"
	"github.com/modkind/modkind/reconcile/kinds"
	"github.com/modkind/modkind/slots"
	"github.com/modkind/modkind/terraform"
)

const (
	// previewRetry is how long after a failed preview the same one is tried again: a plan
	// fails for reasons outside the instance too (a provider's API down).
	previewRetry = 5 * time.Minute

	errGetPreviewRevision = "cannot get ModuleRevision %s to preview"
)

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
func previewDue(shown kinds.ShownPreview, ok bool, target, basis string, now time.Time) bool {
	if !ok || shown.Revision != target || shown.Basis != basis {
		return true
	}
	return shown.Outcome == kinds.PreviewFailed && now.Sub(shown.PlannedAt) >= previewRetry
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
		return kinds.PreviewDestroy, refuses
	case p.Replace > 0:
		return kinds.PreviewReplace, refuses
	case p.Add > 0 || p.Change > 0 || p.Destroy > 0:
		return kinds.PreviewUpdate, refuses
	}
	return kinds.PreviewNoChanges, refuses
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
	target := kinds.PreviewTarget(kinds.Member(&e.inst.Unstructured), kinds.InstancePin(&e.inst.Unstructured), base.Fleet)
	if target == "" {
		return
	}
	shown, ok := kinds.ReadPreview(&e.inst.Unstructured)
	snap, forProvider, err := e.previewSnapshot(ctx, base, target)
	if err != nil {
		e.showPreview(kinds.ShownPreview{Revision: target, Outcome: kinds.PreviewFailed, Message: err.Error(), Basis: shown.Basis}, shown, ok)
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
		e.showPreview(kinds.ShownPreview{Revision: target, Outcome: kinds.PreviewFailed, Message: err.Error(), Basis: basis}, shown, ok)
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
		e.showPreview(kinds.ShownPreview{Revision: target, Outcome: kinds.PreviewFailed, Message: w.Workspace.Redactor.Redact(res.Err.Error()), Basis: basis}, shown, ok)
	case res.Preview != nil:
		p := kinds.ShownPreview{Revision: target, Basis: basis, Add: res.Preview.Add, Change: res.Preview.Change,
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
func (e *external) showPreview(p, shown kinds.ShownPreview, ok bool) {
	p.PlannedAt = time.Now()
	if ok && p.Outcome == kinds.PreviewFailed && shown.Outcome == kinds.PreviewFailed && shown.Revision == p.Revision &&
		shown.Message == p.Message && time.Since(shown.PlannedAt) < previewRetry {
		return
	}
	e.inst.SetStatusField(fields.RevisionPreview, p.Value())
}

// previewSnapshot returns the snapshot of revision target, and the instance's forProvider values
// as they would be applied with it.
func (e *external) previewSnapshot(ctx context.Context, base *kinds.Snapshot, target string) (*kinds.Snapshot, map[string]any, error) {
	if target == base.Revision {
		return base, servedForProvider(base, e.inst), nil
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
	forProvider, err := fitsRevision(servedForProvider(base, e.inst), rev, mod, base.Module)
	if err != nil {
		return nil, nil, err
	}
	snap := *base
	snap.Module, snap.Revision = mod, target
	return &snap, forProvider, nil
}
