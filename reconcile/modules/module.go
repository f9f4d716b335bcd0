package modules

import (
	"context"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/crd"
	"github.com/modkind/modkind/module"
)

// Reconcile fetches and inspects the Module's source, installs the generated CRD and makes sure
// a controller runs for its kind.
func (r *ModuleReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	res, err := r.reconcile(ctx, req)
	if kerrors.IsConflict(errors.Cause(err)) {
		// The Module changed while it was reconciled (its status written by a reconcile of an
		// older event): the newer version is reconciled next, so this is no error to report.
		ctrl.LoggerFrom(ctx).V(1).Info("Module changed while it was reconciled; reconciling it again", "error", err.Error())
		return reconcile.Result{Requeue: true}, nil
	}
	return res, err
}

func (r *ModuleReconciler) reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	m := &v1alpha1.Module{}
	if err := r.client.Get(ctx, req.NamespacedName, m); err != nil {
		if kerrors.IsNotFound(err) {
			// A deleted Module stops its controller; its CRD and instances stay.
			r.engine.StopModule(req.Name)
			r.lastReads.forget(req.Name)
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, errors.Wrap(err, errGetModule)
	}
	names := crd.Names(m.Spec.CRD)
	gvk := schema.GroupVersionKind{Group: names.Group, Version: names.Version, Kind: names.Kind}

	mod, res, err := r.readAtMostEvery(ctx, m)
	if mod == nil {
		return res, err
	}
	digest := mod.Digest
	want, err := crd.Synthesize(m.Name, m.Spec.CRD, mod)
	if err != nil {
		return r.fail(ctx, m, reasonSynthesize, err)
	}
	if reason, err := r.install(ctx, m, gvk, want); err != nil {
		return r.fail(ctx, m, reason, err)
	}
	showInstalled(m, mod, digest, want)
	if !crd.Established(want) {
		m.Status.SetConditions(xpv2.ReconcileSuccess(), xpv2.Condition{
			Type: xpv2.TypeReady, Status: corev1.ConditionFalse, Reason: conditionWaiting,
			Message: "waiting for CRD " + want.Name + " to be established", LastTransitionTime: metav1.Now(),
		})
		return reconcile.Result{RequeueAfter: time.Second}, r.updateStatus(ctx, m)
	}
	wait, reason, err := r.serve(ctx, m, mod, gvk, want)
	switch {
	case err != nil && reason == "":
		return reconcile.Result{}, err
	case err != nil:
		return r.fail(ctx, m, reason, err)
	}
	if err := r.tidyRevisions(ctx, m, gvk); err != nil {
		r.record.Event(m, event.Warning(reasonRevision, err))
	}
	if pw, err := r.showPreview(ctx, m, gvk); err != nil {
		r.record.Event(m, event.Warning(reasonCannotShowPreview, err))
	} else if pw > 0 && (wait == 0 || pw < wait) {
		wait = pw
	}
	if m.Status.GetCondition(xpv2.TypeReady).Status != "True" {
		r.record.Event(m, event.Normal(reasonReady, "Kind "+gvk.Kind+" is served by CRD "+want.Name))
	}
	m.Status.SetConditions(xpv2.ReconcileSuccess(), xpv2.Available())
	next := r.recheck
	if wait > 0 && wait < next {
		next = wait
	}
	return reconcile.Result{RequeueAfter: next}, r.updateStatus(ctx, m)
}

// install applies the CRD want, unless a CRD of that name belongs to something else or the change
// breaks existing instances and the Module does not allow that; a breaking change allowed records
// the fields it drops that instances set. On failure it returns the reason to record.
func (r *ModuleReconciler) install(ctx context.Context, m *v1alpha1.Module, gvk schema.GroupVersionKind, want *extv1.CustomResourceDefinition) (event.Reason, error) {
	// The fields this change drops that instances set, breaking changes allowed.
	var dropped []setField
	got := &extv1.CustomResourceDefinition{}
	// Read around the cache, which holds only modkind's CRDs: a foreign CRD of the same name must
	// be seen, so that it is never taken over.
	err := r.apiReader.Get(ctx, types.NamespacedName{Name: want.Name}, got)
	switch {
	case kerrors.IsNotFound(err):
	case err != nil:
		return reasonInstall, errors.Wrap(err, errGetCRD)
	case !crd.OwnedBy(got, m.Name):
		return reasonInstall, errors.Errorf(errNotOwner, want.Name)
	default:
		if breaks := crd.Breaks(got, want); len(breaks) > 0 {
			if dropped, err = r.droppedFieldsSet(ctx, gvk, got, want); err != nil {
				return reasonInstall, err
			}
			if !m.Spec.AllowBreakingChanges {
				return reasonBreaking, &BreakingChangeError{Breaks: withSetters(breaks, dropped)}
			}
		}
	}
	if err := crd.Apply(ctx, r.client, want); err != nil {
		return reasonInstall, err
	}
	r.recordDropped(m, dropped)
	return "", nil
}

// showInstalled puts into m's status what the installed CRD want, generated from mod (whose
// digest is digest), serves: its name, the module's variables, outputs and validations, and
// warnings about field names YAML reads as something else.
func showInstalled(m *v1alpha1.Module, mod *module.Module, digest string, want *extv1.CustomResourceDefinition) {
	m.Status.CRDName = want.Name
	m.Status.Digest = digest
	m.Status.Validations = validationStatus(crd.Validations(mod))
	m.Status.Warnings = nil
	for _, f := range crd.YAMLAmbiguousFields(want) {
		m.Status.Warnings = append(m.Status.Warnings, crd.YAMLKeyWarning(f))
	}
	m.Status.Variables, m.Status.Outputs = nil, nil
	for _, v := range mod.Variables {
		m.Status.Variables = append(m.Status.Variables, v.Name)
	}
	for _, o := range mod.Outputs {
		m.Status.Outputs = append(m.Status.Outputs, o.Name)
	}
}

// serve moves the Module's rollout on and has the kind served with its snapshot of mod. It returns
// how soon the rollout wants the Module looked at again; on failure the reason to record, or ""
// for an error to return as it is (a conflict: nothing moved, and the newer Module is read again).
func (r *ModuleReconciler) serve(ctx context.Context, m *v1alpha1.Module, mod *module.Module, gvk schema.GroupVersionKind, want *extv1.CustomResourceDefinition) (time.Duration, event.Reason, error) {
	snap, err := r.snapshot(m, mod)
	if err != nil {
		return 0, reasonSynthesize, err
	}
	snap.Served = crd.ForProviderFields(want)
	if !r.engine.Serving(gvk) {
		// Once only, before the kind's controller starts: its watch needs the grant.
		if err := mayManage(ctx, r.client, gvk.Group, crd.Names(m.Spec.CRD).Plural); err != nil {
			return 0, reasonNotGranted, err
		}
	}
	wait, err := r.revise(ctx, m, mod, gvk, snap)
	if kerrors.IsConflict(errors.Cause(err)) {
		// The rollout's new state lost a race with a newer Module: nothing moved; read it again.
		return 0, "", err
	}
	if err != nil {
		return 0, reasonRevision, err
	}
	if err := r.engine.Run(ctx, gvk, snap); err != nil {
		return 0, reasonStart, err
	}
	r.engine.Own(m.Name, gvk)
	if mod.Resource == nil {
		m.Status.Served = &v1alpha1.ServedModule{Digest: mod.Digest, Dir: mod.Dir}
	}
	return wait, "", nil
}

// validationStatus sums up, per variable, what the API server checks of its validation blocks.
func validationStatus(r crd.ValidationReport) []v1alpha1.VariableValidations {
	var out []v1alpha1.VariableValidations
	for _, b := range r.Blocks {
		if len(out) == 0 || out[len(out)-1].Variable != b.Variable {
			out = append(out, v1alpha1.VariableValidations{Variable: b.Variable})
		}
		v := &out[len(out)-1]
		switch b.Outcome {
		case crd.Enforced, crd.Implied:
			v.Admission++
		case crd.Partly:
			// Checked at admission, and what the rule lets through is left to plan time.
			v.Admission++
			v.PlanTime = append(v.PlanTime, b.Summary())
		default:
			v.PlanTime = append(v.PlanTime, b.Summary())
		}
	}
	return out
}
