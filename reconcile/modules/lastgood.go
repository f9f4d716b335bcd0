package modules

import (
	"context"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/crd"
	"github.com/modkind/modkind/module"
	"github.com/modkind/modkind/reconcile/kinds"
)

// snapshot is what the kind's instances are applied with, once mod is installed.
func (r *ModuleReconciler) snapshot(m *v1alpha1.Module, mod *module.Module) (*kinds.Snapshot, error) {
	snap := &kinds.Snapshot{ModuleName: m.Name, Module: mod, Retired: kinds.RetiredSet(m), Public: kinds.PublicOutputs(m)}
	if d := m.Spec.DriftInterval; d != nil {
		if min := r.engine.MinDriftInterval(); d.Duration != 0 && d.Duration < min {
			return nil, errors.Errorf(errDriftInterval, d.Duration, min)
		}
		snap.DriftInterval = &d.Duration
	}
	return snap, nil
}

// serveLastGood starts the kind's controller with the module it was last served with, when a
// Module fails before its controller runs (after a restart): instances that worked keep working
// while the source is broken or its change is refused.
func (r *ModuleReconciler) serveLastGood(ctx context.Context, m *v1alpha1.Module) {
	if m.Status.Served == nil || m.Status.CRDName == "" {
		return
	}
	names := crd.Names(m.Spec.CRD)
	gvk := schema.GroupVersionKind{Group: names.Group, Version: names.Version, Kind: names.Kind}
	if r.engine.Serving(gvk) {
		return
	}
	mod, err := module.Inspect(m.Status.Served.Dir)
	if err != nil {
		r.record.Event(m, event.Warning(reasonInspect, errors.Wrap(err, errLastGood)))
		return
	}
	mod.Digest = m.Status.Served.Digest
	snap, err := r.snapshot(m, mod)
	if err == nil && m.Status.Revision != "" {
		// Instances stay where the recorded rollout put them.
		snap.Revision = m.Status.Revision
		// The namespaces held are known from the instances only once the Module is read again:
		// until then, those the status names.
		snap.Fleet = fleetOf(m.Status.Revision, rolloutSpec(m), m.Status.Rollout, heldNamed(m.Status.Rollout))
	}
	if err == nil {
		err = r.engine.Run(ctx, gvk, snap)
	}
	if err != nil {
		r.record.Event(m, event.Warning(reasonStart, errors.Wrap(err, errLastGood)))
		return
	}
	r.engine.Own(m.Name, gvk)
}

// ReasonCRDTooLarge is the reason of a Module whose kind's CRD would be too large to install
// (crd.MaxBytes); its message names the heaviest variables and what to do.
const ReasonCRDTooLarge xpv2.ConditionReason = "CRDTooLarge"

// fail records why the Module cannot be served. The CRD and controller from an earlier success, if
// any, stay in place: a broken source must not break the instances that already work.
func (r *ModuleReconciler) fail(ctx context.Context, m *v1alpha1.Module, reason event.Reason, err error) (reconcile.Result, error) {
	synced, ready := xpv2.ReconcileError(err), xpv2.Unavailable().WithMessage(err.Error())
	var notGranted *GroupNotGrantedError
	var tooLarge *crd.TooLargeError
	switch {
	case errors.As(err, &notGranted):
		synced.Reason, ready.Reason = ReasonGroupNotGranted, ReasonGroupNotGranted
	case errors.As(err, &tooLarge):
		synced.Reason, ready.Reason, reason = ReasonCRDTooLarge, ReasonCRDTooLarge, event.Reason(ReasonCRDTooLarge)
	}
	r.record.Event(m, event.Warning(reason, err))
	r.serveLastGood(ctx, m)
	m.Status.SetConditions(synced, ready)
	return reconcile.Result{RequeueAfter: r.retry}, r.updateStatus(ctx, m)
}
