package modules

import (
	"context"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
	errGetModule     = "cannot get Module"
	errUpdateStatus  = "cannot update Module status"
	errGetCRD        = "cannot get CustomResourceDefinition"
	errListInstances = "cannot list the instances of"

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
	reasonNotGranted event.Reason = event.Reason(ReasonGroupNotGranted)
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

// updateStatus writes m's status, saying which generation of the Module it is of.
func (r *ModuleReconciler) updateStatus(ctx context.Context, m *v1alpha1.Module) error {
	m.Status.ObservedGeneration = m.Generation
	return errors.Wrap(r.client.Status().Update(ctx, m), errUpdateStatus)
}
