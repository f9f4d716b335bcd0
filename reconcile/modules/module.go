package modules

import (
	"context"
	"slices"
	"strings"
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
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/crd"
	"github.com/modkind/modkind/module"
	"github.com/modkind/modkind/reconcile/kinds"
)

const (
	errGetModule    = "cannot get Module"
	errUpdateStatus = "cannot update Module status"
	errGetCRD       = "cannot get CustomResourceDefinition"

	errGetSourceCredentials = "cannot get the source credentials Secret"
	errCredentialsNamespace = "spec.source.credentialsSecretRef: Secret %s/%s is outside the namespaces module credentials are read from (%s)"
	errLastGood             = "cannot serve the kind with the module it was last served with"
	errDriftInterval        = "spec.driftInterval: %s is shorter than the minimum of %s; use 0s to turn drift detection off"
	errNotOwner             = "CustomResourceDefinition %s exists and does not belong to this Module"

	reasonFetch      event.Reason = "CannotFetchModule"
	reasonProvider   event.Reason = "CannotReadProviderSchema"
	reasonInspect    event.Reason = "CannotInspectModule"
	reasonSynthesize event.Reason = "CannotGenerateSchema"
	reasonInstall    event.Reason = "CannotInstallCRD"
	reasonBreaking   event.Reason = "BreakingSchemaChange"
	reasonStart      event.Reason = "CannotStartController"
	reasonReady      event.Reason = "KindReady"

	conditionWaiting xpv2.ConditionReason = "WaitingForCRD"
)

// A Fetcher makes a Module's source available locally, telling what it resolved to.
type Fetcher interface {
	FetchSource(ctx context.Context, src module.Source, creds ...module.Credentials) (module.Result, error)
}

// A ProviderReader installs a resource source's provider and describes the resource as a module,
// telling which provider version it selected.
type ProviderReader interface {
	Resource(ctx context.Context, src module.ResourceSource) (*module.Module, string, error)
}

// A KindServer runs one instance controller per generated kind (package instance's Engine). The
// Module controller tells it which snapshot each kind's instances are applied with; it knows no
// more of the instance controllers than this.
type KindServer interface {
	// Run starts or updates the controller of gvk so that its instances are applied with snap.
	Run(ctx context.Context, gvk schema.GroupVersionKind, snap *kinds.Snapshot) error
	// Serving reports whether a controller runs for gvk.
	Serving(gvk schema.GroupVersionKind) bool
	// Own records that Module name defines gvk; StopModule stops the controller of that kind.
	Own(name string, gvk schema.GroupVersionKind)
	StopModule(name string)
	// MinDriftInterval is the shortest drift interval a Module may ask for.
	MinDriftInterval() time.Duration
}

// ModuleReconciler turns each Module into an installed CRD and a running instance controller.
type ModuleReconciler struct {
	client    client.Client
	apiReader client.Reader
	fetcher   Fetcher
	providers ProviderReader
	engine    KindServer
	record    event.Recorder
	// credentialsNamespaces are the only namespaces a Module's credentials Secret may live in.
	credentialsNamespaces []string
	// recheck is how often a ready Module's source is fetched again to notice changes.
	recheck time.Duration
	// retry is how soon a Module that failed is tried again.
	retry time.Duration
	// lastReads are the sources last read, reused until recheck has passed.
	lastReads lastReads
}

// SetupModuleController registers the Module controller with mgr.
func SetupModuleController(mgr ctrl.Manager, fetcher Fetcher, providers ProviderReader, engine KindServer, recheck time.Duration, credentialsNamespaces []string) error {
	r := &ModuleReconciler{
		client:    mgr.GetClient(),
		apiReader: mgr.GetAPIReader(),
		fetcher:   fetcher,
		providers: providers,
		engine:    engine,
		record:    event.NewAPIRecorder(mgr.GetEventRecorderFor("modkind/module")),
		recheck:   recheck,
		retry:     10 * time.Second,

		credentialsNamespaces: credentialsNamespaces,
	}
	owned := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetLabels()[crd.LabelModule] != "" })
	return ctrl.NewControllerManagedBy(mgr).
		Named("module").
		// An annotation (modkind.io/promote, modkind.io/undo) acts on the rollout at once.
		For(&v1alpha1.Module{}, builder.WithPredicates(predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Watches(&extv1.CustomResourceDefinition{}, handler.EnqueueRequestsFromMapFunc(
			func(_ context.Context, o client.Object) []reconcile.Request {
				return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: crd.ModuleOf(o)}}}
			}), builder.WithPredicates(owned)).
		Complete(r)
}

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

	// The fields this change drops that instances set, breaking changes allowed.
	var dropped []setField
	got := &extv1.CustomResourceDefinition{}
	// Read around the cache, which holds only modkind's CRDs: a foreign CRD of the same name must
	// be seen, so that it is never taken over.
	err = r.apiReader.Get(ctx, types.NamespacedName{Name: want.Name}, got)
	switch {
	case kerrors.IsNotFound(err):
	case err != nil:
		return r.fail(ctx, m, reasonInstall, errors.Wrap(err, errGetCRD))
	case !crd.OwnedBy(got, m.Name):
		return r.fail(ctx, m, reasonInstall, errors.Errorf(errNotOwner, want.Name))
	default:
		if breaks := crd.Breaks(got, want); len(breaks) > 0 {
			if dropped, err = r.droppedFieldsSet(ctx, gvk, got, want); err != nil {
				return r.fail(ctx, m, reasonInstall, err)
			}
			if !m.Spec.AllowBreakingChanges {
				return r.fail(ctx, m, reasonBreaking, &BreakingChangeError{Breaks: withSetters(breaks, dropped)})
			}
		}
	}
	if err := crd.Apply(ctx, r.client, want); err != nil {
		return r.fail(ctx, m, reasonInstall, err)
	}
	r.recordDropped(m, dropped)
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
	if !crd.Established(want) {
		m.Status.SetConditions(xpv2.ReconcileSuccess(), xpv2.Condition{
			Type: xpv2.TypeReady, Status: corev1.ConditionFalse, Reason: conditionWaiting,
			Message: "waiting for CRD " + want.Name + " to be established", LastTransitionTime: metav1.Now(),
		})
		return reconcile.Result{RequeueAfter: time.Second}, r.updateStatus(ctx, m)
	}
	snap, err := r.snapshot(m, mod)
	if err != nil {
		return r.fail(ctx, m, reasonSynthesize, err)
	}
	snap.Served = crd.ForProviderFields(want)
	wait, err := r.revise(ctx, m, mod, gvk, snap)
	if kerrors.IsConflict(errors.Cause(err)) {
		// The rollout's new state lost a race with a newer Module: nothing moved; read it again.
		return reconcile.Result{}, err
	}
	if err != nil {
		return r.fail(ctx, m, reasonRevision, err)
	}
	if err := r.engine.Run(ctx, gvk, snap); err != nil {
		return r.fail(ctx, m, reasonStart, err)
	}
	r.engine.Own(m.Name, gvk)
	if mod.Resource == nil {
		m.Status.Served = &v1alpha1.ServedModule{Digest: mod.Digest, Dir: mod.Dir}
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

// snapshot is what the kind's instances are applied with, once mod is installed.
func (r *ModuleReconciler) snapshot(m *v1alpha1.Module, mod *module.Module) (*kinds.Snapshot, error) {
	snap := &kinds.Snapshot{ModuleName: m.Name, Module: mod, Retired: kinds.RetiredSet(m)}
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

// read fetches and inspects a Module's source, or installs its resource's provider and reads the
// resource's schema. When that fails it has already recorded why, and returns a result to go on
// with and a nil module.
func (r *ModuleReconciler) read(ctx context.Context, m *v1alpha1.Module) (*module.Module, reconcile.Result, error) {
	if rs := m.Spec.Source.Resource; rs != nil {
		src := module.ResourceSource{Provider: rs.Provider, Version: rs.Version, Type: rs.Type}
		mod, version, err := r.providers.Resource(ctx, src)
		if err != nil {
			res, err := r.fail(ctx, m, reasonProvider, err)
			return nil, res, err
		}
		m.Status.Source = &v1alpha1.ResolvedSource{Provider: version}
		return mod, reconcile.Result{}, nil
	}
	src := module.Source{Path: m.Spec.Source.Path, URL: m.Spec.Source.URL, Version: m.Spec.Source.Version}
	creds, err := r.credentials(ctx, m.Spec.Source.CredentialsSecretRef)
	if err != nil {
		res, err := r.fail(ctx, m, reasonFetch, err)
		return nil, res, err
	}
	fetched, err := r.fetcher.FetchSource(ctx, src, creds)
	if err != nil {
		res, err := r.fail(ctx, m, reasonFetch, err)
		return nil, res, err
	}
	m.Status.Source = nil
	if fetched.Version != "" || fetched.Commit != "" {
		m.Status.Source = &v1alpha1.ResolvedSource{Version: fetched.Version, Commit: fetched.Commit}
	}
	mod, err := module.Inspect(fetched.Dir)
	if err != nil {
		res, err := r.fail(ctx, m, reasonInspect, errors.Wrapf(err, "%s", src))
		return nil, res, err
	}
	mod.Digest = fetched.Digest
	return mod, reconcile.Result{}, nil
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

// A BreakingChangeError refuses a module change that existing instances may not survive.
type BreakingChangeError struct{ Breaks []crd.Break }

func (e *BreakingChangeError) Error() string {
	list := make([]string, len(e.Breaks))
	for i, b := range e.Breaks {
		list[i] = b.String()
	}
	return "refused a schema change that existing instances may not survive: " + strings.Join(list, "; ") +
		"; set spec.allowBreakingChanges: true to apply it"
}

// credentials reads the Secret a Module's source names. Its keys: username and token (git over
// https), bearerToken, sshPrivateKey and known_hosts (git over ssh), TF_TOKEN_<host> (registries).
func (r *ModuleReconciler) credentials(ctx context.Context, ref *v1alpha1.SecretReference) (module.Credentials, error) {
	var c module.Credentials
	if ref == nil {
		return c, nil
	}
	if !slices.Contains(r.credentialsNamespaces, ref.Namespace) {
		return c, errors.Errorf(errCredentialsNamespace, ref.Namespace, ref.Name, strings.Join(r.credentialsNamespaces, ", "))
	}
	sec := &corev1.Secret{}
	if err := r.apiReader.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, sec); err != nil {
		return c, errors.Wrapf(err, "%s %s/%s", errGetSourceCredentials, ref.Namespace, ref.Name)
	}
	c.GitUsername = string(sec.Data["username"])
	c.GitToken = string(sec.Data["token"])
	c.GitBearerToken = string(sec.Data["bearerToken"])
	c.GitSSHPrivateKey = sec.Data["sshPrivateKey"]
	c.GitSSHKnownHosts = sec.Data["known_hosts"]
	for k, v := range sec.Data {
		if strings.HasPrefix(k, "TF_TOKEN_") {
			if c.RegistryTokens == nil {
				c.RegistryTokens = map[string]string{}
			}
			c.RegistryTokens[k] = string(v)
		}
	}
	return c, nil
}

// fail records why the Module cannot be served. The CRD and controller from an earlier success, if
// any, stay in place: a broken source must not break the instances that already work.
func (r *ModuleReconciler) fail(ctx context.Context, m *v1alpha1.Module, reason event.Reason, err error) (reconcile.Result, error) {
	r.record.Event(m, event.Warning(reason, err))
	r.serveLastGood(ctx, m)
	m.Status.SetConditions(xpv2.ReconcileError(err), xpv2.Unavailable().WithMessage(err.Error()))
	return reconcile.Result{RequeueAfter: r.retry}, r.updateStatus(ctx, m)
}

func (r *ModuleReconciler) updateStatus(ctx context.Context, m *v1alpha1.Module) error {
	m.Status.ObservedGeneration = m.Generation
	return errors.Wrap(r.client.Status().Update(ctx, m), errUpdateStatus)
}
