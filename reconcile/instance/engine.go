package instance

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	"github.com/go-logr/logr"
	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/modkind/modkind/executor"
	"github.com/modkind/modkind/reconcile/kinds"
	"github.com/modkind/modkind/slots"
	"github.com/modkind/modkind/state"
)

const errStartController = "cannot start controller for generated kind"

// Options tune the instance controllers.
type Options struct {
	// Dir is the controller's own directory (--work-dir): no tenant's environment variable may
	// name a file in it.
	Dir string
	// PollInterval is how often an instance is observed while something is under way for it;
	// ResyncInterval how often at the latest once it is settled (pace.go). No terraform runs then.
	PollInterval   time.Duration
	ResyncInterval time.Duration
	// DriftInterval is how often a refreshing plan looks for changes made outside modkind; 0 never.
	DriftInterval time.Duration
	// MinDriftInterval is the shortest drift interval an instance or Module may ask for.
	MinDriftInterval time.Duration
	// Timeout bounds one reconcile, terraform runs included.
	Timeout time.Duration
	// MaxReconciles is the number of instances of one kind reconciled at once.
	MaxReconciles int
	// CredentialsNamespaces are the namespaces ClusterProviderConfigs may take Secrets from.
	CredentialsNamespaces []string
	// Executor runs what the instance controllers decide.
	Executor executor.Executor
	// Waiters are the instances waiting for a run slot, retried at a steady pace.
	Waiters *slots.Waiters
	// Modules is the module cache's root.
	Modules string
	// Keys is the state key ring; each instance's own key is derived from it
	// (terraform.Workspace.IDKey).
	Keys state.KeySource
}

// Engine starts, updates and stops one controller per generated kind while modkind runs.
type Engine struct {
	mgr    manager.Manager
	states States
	opts   Options
	log    logr.Logger
	drift  *driftClock
	notes  *notebook
	// revisions holds the modules of the ModuleRevisions instances are pinned or held to.
	revisions revisionLoader

	// base bounds the life of every instance controller; it is the manager's, set by Start.
	base    context.Context
	started chan struct{}

	mu     sync.Mutex
	kinds  map[schema.GroupVersionKind]*generatedKind
	owners map[string]schema.GroupVersionKind
	// wiring reconciles the instances that take values from a changed object.
	wiring *wiring
}

// NewEngine returns an Engine whose instance controllers read states from states and have
// o.Executor run what they decide.
func NewEngine(mgr manager.Manager, states States, o Options) *Engine {
	e := &Engine{
		mgr: mgr, states: states, opts: o,
		log:     mgr.GetLogger().WithName("instances"),
		drift:   newDriftClock(o.DriftInterval, o.MinDriftInterval),
		notes:   newNotebook(),
		kinds:   map[schema.GroupVersionKind]*generatedKind{},
		owners:  map[string]schema.GroupVersionKind{},
		started: make(chan struct{}),
	}
	e.wiring = newWiring(mgr.GetClient(), e.snapshotOf, e.Running)
	if m, ok := states.(statesMemory); ok {
		e.wiring.known = m.Knows
	}
	return e
}

// snapshotOf is the module the kind gk is served with, nil when modkind does not serve it.
func (e *Engine) snapshotOf(gk schema.GroupKind) *kinds.Snapshot {
	e.mu.Lock()
	defer e.mu.Unlock()
	for gvk, k := range e.kinds {
		if gvk.GroupKind() == gk {
			return k.Snapshot()
		}
	}
	return nil
}

// Start makes the Engine ready to run instance controllers until ctx ends; the manager calls it.
func (e *Engine) Start(ctx context.Context) error {
	e.base = ctx
	close(e.started)
	// ConfigMaps and Secrets that instances take values from reconcile them when they change.
	go func() {
		if err := e.wiring.watchKeys(ctx, e.mgr.GetCache()); err != nil && ctx.Err() == nil {
			e.log.Error(err, "instances will see changed ConfigMaps and Secrets only at their next poll")
		}
	}()
	// So do the ProviderConfigs and ClusterProviderConfigs they name.
	go func() {
		if err := e.wiring.watchConfigs(ctx, e.mgr.GetCache()); err != nil && ctx.Err() == nil {
			e.log.Error(err, "instances will see changed ProviderConfigs only at their next poll")
		}
	}()
	<-ctx.Done()
	for _, gvk := range e.Running() {
		e.Stop(gvk)
	}
	return nil
}

// NeedLeaderElection is true: only the leader runs instance controllers.
func (e *Engine) NeedLeaderElection() bool { return true }

// Run starts or updates the controller of gvk so that its instances are applied with snap. The
// controller runs until the manager stops or Stop is called.
func (e *Engine) Run(ctx context.Context, gvk schema.GroupVersionKind, snap *kinds.Snapshot) error {
	select {
	case <-e.started:
	case <-ctx.Done():
		return errors.Wrap(ctx.Err(), errStartController)
	}
	e.mu.Lock()
	if k, ok := e.kinds[gvk]; ok {
		old := k.snapshot.Swap(snap)
		k.schema.servedChanged(old, snap)
		moved := snapshotMoved(old, snap)
		e.mu.Unlock()
		// Settled instances would otherwise take the new snapshot at their next resync. Listed
		// without the lock: the cache may wait for its informer.
		if moved {
			if err := e.wiring.enqueueInstances(ctx, gvk, "", nil); err != nil {
				e.log.Error(err, "instances will take the new module at their next poll", "kind", gvk.GroupKind().String())
			}
		}
		return nil
	}
	defer e.mu.Unlock()
	k := &generatedKind{gvk: gvk, done: make(chan struct{}), schema: &schemaWatch{}}
	k.snapshot.Store(snap)

	km := newKindManager(e.mgr, gvk, k.schema)
	// An instance that waits on its wiring says so in its Synced condition's reason.
	km.client = reasonClient{Client: km.client, notes: e.notes}
	log := e.log.WithValues("kind", gvk.GroupKind().String())
	name := "instances/" + strings.ToLower(gvk.GroupKind().String())
	recorder := event.NewAPIRecorder(e.mgr.GetEventRecorderFor("modkind/" + strings.ToLower(gvk.Kind)))
	conn := &connector{
		kind: k, client: e.mgr.GetAPIReader(), states: e.states, exec: e.opts.Executor, modules: e.opts.Modules,
		configs: &ProviderConfigResolver{Client: e.mgr.GetAPIReader(), CredentialsNamespaces: e.opts.CredentialsNamespaces, Protected: []string{e.opts.ownDir()}},
		drift:   e.drift, resync: e.opts.ResyncInterval, notes: e.notes, record: recorder, waiters: e.opts.Waiters, wiring: e.wiring, revisions: &e.revisions,
		keys: e.opts.Keys,
	}
	r := newInstanceReconciler(km, gvk, conn, e.opts, log)
	// An instance that waits for its inputs, or was just created, is not retried at a backoff.
	// One waiting for a run slot is tried again at a steady pace.
	rec := e.opts.Waiters.Paced(gvk, settling{Reconciler: r, notes: e.notes, poll: e.opts.PollInterval})
	c, err := controller.NewUnmanaged(name, controller.Options{
		Reconciler:              rec,
		SkipNameValidation:      ptr.To(true),
		MaxConcurrentReconciles: max(e.opts.MaxReconciles, 1),
		Logger:                  lazyLogger(log),
		RateLimiter:             instanceRateLimiter(),
	})
	if err != nil {
		return errors.Wrap(err, errStartController)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := e.watch(c, u); err != nil {
		return errors.Wrap(err, errStartController)
	}
	inf, err := e.mgr.GetCache().GetInformer(ctx, u, cache.BlockUntilSynced(false))
	if err == nil {
		_, err = inf.AddEventHandler(k.schema.handler())
	}
	if err != nil {
		return errors.Wrap(err, errStartController)
	}
	cctx, cancel := context.WithCancel(e.base)
	k.stop = cancel
	go func() {
		defer close(k.done)
		if err := c.Start(cctx); err != nil {
			log.Error(err, "instance controller stopped")
		}
		// Drop the informer so that a kind whose CRD is gone stops costing a watch.
		_ = e.mgr.GetCache().RemoveInformer(context.Background(), u)
	}()
	e.kinds[gvk] = k
	log.Info("started instance controller")
	return nil
}

// watch has c reconcile an instance of u's kind when its spec changes, when a run the executor
// handed on ends, and when a source it takes values from changes.
func (e *Engine) watch(c controller.Controller, u *unstructured.Unstructured) error {
	// Only a change of what the user asks for reconciles an instance at once, as in Crossplane's
	// providers: the status this controller writes would otherwise reconcile it again, reading
	// its state Secret for nothing. Polls, drift checks and the reconciler's own requeues stay.
	if err := c.Watch(source.Kind[client.Object](e.mgr.GetCache(), u, &handler.EnqueueRequestForObject{}, resource.DesiredStateChanged())); err != nil {
		return err
	}
	// What the executor needs to reconcile an instance again: the end of a run it handed on.
	if err := e.opts.Executor.Watch(c, u.GroupVersionKind()); err != nil {
		return err
	}
	// What the instances that take values from others need: a change of a source.
	kindSource := func(o client.Object, h handler.EventHandler) source.Source {
		return source.Kind[client.Object](e.mgr.GetCache(), o, h)
	}
	return e.wiring.watch(c, u, kindSource)
}

// newInstanceReconciler is the managed reconciler of gvk's instances: crossplane-runtime's,
// with conn as the instance client.
func newInstanceReconciler(km *kindManager, gvk schema.GroupVersionKind, conn *connector, o Options, log logr.Logger) *managed.Reconciler {
	return managed.NewReconciler(km, resource.ManagedKind(gvk),
		managed.WithExternalConnector(conn),
		managed.WithInitializers(),
		managed.WithFinalizer(finalizer{client: km.GetClient()}),
		// Terraform state makes a repeated create safe: an interrupted apply is just applied again.
		managed.WithDeterministicExternalName(true),
		// Existence is read from the state Secret, which is never eventually consistent.
		managed.WithCreationGracePeriod(0),
		managed.WithManagementPolicies(),
		managed.WithPollInterval(o.PollInterval),
		// crossplane-runtime's crossplane.io/poll-interval annotation, which a tenant writes, may
		// ask for longer polls, never shorter ones: 1ns would observe the instance in a loop and
		// keep the kind's workers from every other tenant's instances.
		managed.WithMinPollInterval(o.PollInterval),
		managed.WithPollIntervalHook(pollHook(conn.notes, o.PollInterval)),
		// An apply that ends in Create or Update shows its outputs itself (showApplied): the
		// instance is observed again a poll interval later, as any other (settle).
		managed.WithTimeout(o.Timeout),
		managed.WithLogger(quietLogger{log: log}),
		managed.WithRecorder(quiet(conn.record, conn.notes)),
	)
}

// Stop ends the controller of gvk, if one runs, and waits for it to finish.
func (e *Engine) Stop(gvk schema.GroupVersionKind) {
	e.mu.Lock()
	k, ok := e.kinds[gvk]
	delete(e.kinds, gvk)
	e.mu.Unlock()
	if !ok {
		return
	}
	k.stop()
	<-k.done
	e.log.Info("stopped instance controller", "kind", gvk.GroupKind().String())
}

// Digests are the module digests the running controllers apply instances with.
func (e *Engine) Digests() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, k := range e.kinds {
		if s := k.Snapshot(); s != nil && s.Module != nil {
			out = append(out, s.Module.Digest)
		}
	}
	return out
}

// Serving reports whether a controller runs for gvk.
func (e *Engine) Serving(gvk schema.GroupVersionKind) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, ok := e.kinds[gvk]
	return ok
}

// Running reports the kinds with a running controller.
func (e *Engine) Running() []schema.GroupVersionKind {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]schema.GroupVersionKind, 0, len(e.kinds))
	for gvk := range e.kinds {
		out = append(out, gvk)
	}
	return out
}

// Own records that Module name defines gvk, so that deleting the Module stops the controller.
func (e *Engine) Own(name string, gvk schema.GroupVersionKind) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.owners[name] = gvk
}

// StopModule stops the controller of the kind Module name defines.
func (e *Engine) StopModule(name string) {
	e.mu.Lock()
	gvk, ok := e.owners[name]
	delete(e.owners, name)
	e.mu.Unlock()
	if ok {
		e.Stop(gvk)
	}
}

// MinDriftInterval is the shortest drift interval an instance or Module may ask for.
func (e *Engine) MinDriftInterval() time.Duration { return e.drift.min }

func (o Options) ownDir() string { return o.Dir }

// MaxRetryDelay is the longest an instance whose reconcile failed (or whose plan waits for
// approval, or was refused) waits to be tried again: a minute, as Crossplane's providers wait.
// controller-runtime's own limit is 1000 s, so an instance that failed for ten minutes while a
// cloud was down would be tried again only some ten minutes after it came back.
const MaxRetryDelay = time.Minute

// instanceRateLimiter spaces the retries of a failing instance exponentially from 5 ms up to
// MaxRetryDelay, and all retries of a kind to 10 per second (bursts of 100).
func instanceRateLimiter() workqueue.TypedRateLimiter[reconcile.Request] {
	return workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](5*time.Millisecond, MaxRetryDelay),
		&workqueue.TypedBucketRateLimiter[reconcile.Request]{Limiter: rate.NewLimiter(rate.Limit(10), 100)},
	)
}
