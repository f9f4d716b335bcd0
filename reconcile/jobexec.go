package reconcile

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/artifact"
	"github.com/modkind/modkind/module"
	"github.com/modkind/modkind/reconcile/terraform"
	"github.com/modkind/modkind/slots"
	"github.com/modkind/modkind/state"
)

const (
	errBundle                = "cannot prepare the module and providers for the runner"
	errCreateJob             = "cannot create the runner Job of Run"
	errCreateInputs          = "cannot create the inputs Secret of Run"
	errJobClusterCredentials = "ClusterProviderConfig %s sets environment variables or files, which may hold a cluster admin's credentials (literal or from Secrets) " +
		"and never go to a runner pod, where the namespace's tenants could read them: give the runner's service account a cloud identity " +
		"(workload identity), or use a ProviderConfig of this namespace; a ClusterProviderConfig used by runner Jobs may set spec.providers and spec.runner only"

	// retryFailedAfter is how long after a failed Run of the same inputs the next one starts.
	retryFailedAfter = 30 * time.Second

	// adoptAfter is how old a pending Run without a Job must be before a controller makes its
	// Job: younger, the controller that created the Run may still be making it.
	adoptAfter = 10 * time.Second

	// msgNeverStarted ends a pending Run whose Job was never made and whose inputs have changed
	// since: the next Run starts at once.
	msgNeverStarted = "never started: the controller stopped before it created the Run's Job, and the instance changed since"
	// msgJobGone ends a running Run whose Job was deleted.
	msgJobGone = "the runner Job was deleted before the Run ended"
)

// JobExecutor hands an instance's terraform runs to Kubernetes Jobs: it creates the Run, the
// Secret with the Run's inputs and the Job that executes it (`modkind runner`), and never waits
// for one; the instance is reconciled again when its Run changes.
type JobExecutor struct {
	// Client reads from the manager's cache; observeJob reads the instance's Runs with it.
	Client client.Client
	// Reader reads Runs fresh, never from a cache that may not show the Run just created: before
	// a Run is started or adopted, and for the artifact server's authorization.
	Reader client.Reader
	// Runner installs the providers of each bundle, once, into the controller's plugin cache.
	Runner *terraform.Runner
	// Artifacts keeps the bundles and provider archives the artifact server hands to runners.
	Artifacts *artifact.Store
	// Modules is the module cache's root: a bundle carries the whole package a module lives in,
	// so that its calls of sibling directories resolve.
	Modules string
	// Dir holds a directory per bundle being prepared, where its providers are installed before
	// they are packed.
	Dir string
	// Job shapes every runner Job.
	Job JobOptions
	// Slots bounds the Runs active at once across the cluster (Total, --max-concurrent-runs) and
	// those of one namespace (its share): a Run beyond either starts once another ended.
	Slots slots.Policy
	// Keys sign the Runs this executor creates; only signed Runs count as active.
	Keys state.KeySource
	// RefreshEvery is how long after a Refresh Run of an Observe-only instance ended the next
	// one starts.
	RefreshEvery time.Duration

	mu      sync.Mutex
	bundles map[string]bundle
	// starting serializes counting active Runs and creating one, so that MaxActive holds.
	starting sync.Mutex
	// created are the Runs this process created lately, counted as active until the cache the
	// count reads shows them.
	created map[types.NamespacedName]time.Time
	// waiters are the instances waiting for a free run slot.
	waiters slotWaiters
}

// slotWaiters are the instances waiting for a free run slot: hit marks, by slotKey, the reconcile
// that found none; queue keeps the instances still waiting between their reconciles, so that a
// slot freed by a Run's end goes to the one that has waited longest.
type slotWaiters struct {
	hit sync.Map

	mu    sync.Mutex
	queue map[string]*slotWaiter
	// turn is, per kind, the namespace whose instance was woken last: the next freed slot goes to
	// the next namespace in turn (slots.NextTurn).
	turn map[schema.GroupVersionKind]string
}

// A slotWaiter is an instance waiting for a run slot since a time; woken says it was sent a freed
// slot and has not been reconciled since.
type slotWaiter struct {
	gvk   schema.GroupVersionKind
	name  types.NamespacedName
	since time.Time
	woken bool
}

func slotKey(gvk schema.GroupVersionKind, nn types.NamespacedName) string {
	return gvk.GroupKind().String() + "/" + nn.String()
}

func (w *slotWaiters) wait(key string) { w.hit.Store(key, struct{}{}) }

// took reports whether key's reconcile found no slot, and forgets it.
func (w *slotWaiters) took(key string) bool {
	_, ok := w.hit.LoadAndDelete(key)
	return ok
}

// waiting notes that the instance still waits, keeping its place if it waited already.
func (w *slotWaiters) waiting(gvk schema.GroupVersionKind, nn types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.queue == nil {
		w.queue = map[string]*slotWaiter{}
	}
	key := slotKey(gvk, nn)
	if q, ok := w.queue[key]; ok {
		q.woken = false
		return
	}
	w.queue[key] = &slotWaiter{gvk: gvk, name: nn, since: time.Now()}
}

// done notes that the instance waits no more.
func (w *slotWaiters) done(gvk schema.GroupVersionKind, nn types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.queue, slotKey(gvk, nn))
}

// next returns the instance of gvk to wake for a freed slot, and marks it woken: of the
// namespaces with an instance waiting that was not woken yet, the next in turn after the one woken
// last (round robin), and of its instances the one that has waited longest.
func (w *slotWaiters) next(gvk schema.GroupVersionKind) (types.NamespacedName, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	oldest := map[string]*slotWaiter{}
	var namespaces []string
	for _, q := range w.queue {
		if q.gvk != gvk || q.woken {
			continue
		}
		first, ok := oldest[q.name.Namespace]
		if !ok {
			namespaces = append(namespaces, q.name.Namespace)
		}
		if !ok || q.since.Before(first.since) {
			oldest[q.name.Namespace] = q
		}
	}
	if w.turn == nil {
		w.turn = map[schema.GroupVersionKind]string{}
	}
	ns, ok := slots.NextTurn(w.turn[gvk], namespaces)
	if !ok {
		return types.NamespacedName{}, false
	}
	w.turn[gvk] = ns
	oldest[ns].woken = true
	return oldest[ns].name, true
}

// A slotPacedReconciler retries an instance that waits for a free run slot at a steady pace.
// The managed reconciler treats the wait as a failed create, which the work queue retries with a
// backoff that doubles on every try, up to many minutes: instances that waited longest would
// start last, long after slots were free.
type slotPacedReconciler struct {
	reconcile.Reconciler
	gvk     schema.GroupVersionKind
	waiters *slotWaiters
}

// slotRetry is how soon an instance waiting for a run slot tries again: 2–4 s, spread so that
// waiters do not all come back at once.
func slotRetry() time.Duration { return 2*time.Second + rand.N(2*time.Second) }

func (r slotPacedReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	res, err := r.Reconciler.Reconcile(ctx, req)
	if r.waiters.took(slotKey(r.gvk, req.NamespacedName)) && err == nil {
		r.waiters.waiting(r.gvk, req.NamespacedName)
		return reconcile.Result{RequeueAfter: slotRetry()}, nil
	}
	r.waiters.done(r.gvk, req.NamespacedName)
	return res, err
}

// SlotFreed is the handler of Run events that, when a Run stops being active, reconciles at once
// the instance of gvk that has waited longest for a run slot, rather than at its next retry. Every
// kind's controller watches Runs, so a freed slot wakes one waiter of each kind; those that find
// it taken wait again, in their place.
func (x *JobExecutor) SlotFreed(gvk schema.GroupVersionKind) handler.EventHandler {
	wake := func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		if nn, ok := x.waiters.next(gvk); ok {
			q.Add(reconcile.Request{NamespacedName: nn})
		}
	}
	return handler.Funcs{
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			before, ok1 := e.ObjectOld.(*v1alpha1.Run)
			after, ok2 := e.ObjectNew.(*v1alpha1.Run)
			if ok1 && ok2 && active(before.Status.Phase) && !active(after.Status.Phase) {
				wake(q)
			}
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if run, ok := e.Object.(*v1alpha1.Run); ok && active(run.Status.Phase) {
				wake(q)
			}
		},
	}
}

// activeRuns counts the Runs that hold a run slot, in the cluster and per namespace: Runs the
// controller created (signed) that are pending or running and whose Job has not ended. What a
// Run's status says is its runner's word; a Run whose Job ended holds no slot whatever its status
// says (the JobWatcher ends it), nor one Running without a Job once its Job had time to be made.
func (x *JobExecutor) activeRuns(ctx context.Context) (int, map[string]int, error) {
	list := &v1alpha1.RunList{}
	if err := x.Client.List(ctx, list); err != nil {
		return 0, nil, errors.Wrap(err, errListRuns)
	}
	runs, _, err := provenRuns(ctx, x.Keys, list.Items)
	if err != nil {
		return 0, nil, errors.Wrap(err, errListRuns)
	}
	n, byNamespace := 0, map[string]int{}
	seen := map[types.NamespacedName]bool{}
	for i := range list.Items {
		seen[client.ObjectKeyFromObject(&list.Items[i])] = true
	}
	for i := range runs {
		if !active(runs[i].Status.Phase) {
			continue
		}
		live, err := x.holdsSlot(ctx, &runs[i])
		if err != nil {
			return 0, nil, err
		}
		if live {
			n++
			byNamespace[runs[i].Namespace]++
		}
	}
	for key, at := range x.created {
		switch {
		case seen[key] || time.Since(at) > time.Minute:
			delete(x.created, key)
		default:
			n++
			byNamespace[key.Namespace]++
		}
	}
	return n, byNamespace, nil
}

// holdsSlot reports whether an active Run's Job may still run it: it has not ended, or, with no
// Job in the cache, the Run is young enough for its Job to be on the way, or pending (to be
// adopted).
func (x *JobExecutor) holdsSlot(ctx context.Context, run *v1alpha1.Run) (bool, error) {
	job := &batchv1.Job{}
	err := x.Client.Get(ctx, client.ObjectKeyFromObject(run), job)
	switch {
	case kerrors.IsNotFound(err):
		return run.Status.Phase != v1alpha1.PhaseRunning || time.Since(runCreated(run)) < adoptAfter, nil
	case err != nil:
		return false, errors.Wrapf(err, "%s %s", errGetJob, run.Name)
	}
	if owner := metav1.GetControllerOf(job); owner == nil || owner.UID != run.UID {
		// Not the Job the controller made for this Run.
		return run.Status.Phase != v1alpha1.PhaseRunning || time.Since(runCreated(run)) < adoptAfter, nil
	}
	_, ended := jobEnd(job)
	return !ended, nil
}

// slotFree returns nil when a Run of inst may start now, or the error that says what it waits
// for: its namespace's share of the run slots, or a free slot at all. x.starting is held.
func (x *JobExecutor) slotFree(ctx context.Context, inst *Instance) error {
	total := x.Slots.Total
	if total <= 0 {
		return nil
	}
	n, byNamespace, err := x.activeRuns(ctx)
	if err != nil {
		return err
	}
	ns := inst.GetNamespace()
	key := slotKey(inst.GroupVersionKind(), types.NamespacedName{Namespace: ns, Name: inst.GetName()})
	if share := x.Slots.Share(ns); byNamespace[ns] >= share {
		x.waiters.wait(key)
		return &slots.ShareFullError{Namespace: ns, Active: byNamespace[ns], Share: share}
	}
	if n >= total {
		x.waiters.wait(key)
		return &slots.FullError{Active: n, Max: total}
	}
	return nil
}

// bundle is what a runner needs of a module and provider configuration besides the instance.
type bundle struct {
	digest string
	lock   []byte
	// sub is the module's directory within its package.
	sub string
}

// ActiveBundles lists the bundles runners of namespace may read: those its active Runs name. A
// runner reads a bundle, and the provider packages the bundle lists, only while its Run needs them.
func (x *JobExecutor) ActiveBundles(ctx context.Context, namespace string) ([]string, error) {
	runs := &v1alpha1.RunList{}
	if err := x.Reader.List(ctx, runs, client.InNamespace(namespace)); err != nil {
		return nil, errors.Wrap(err, errListRuns)
	}
	proven, _, err := provenRuns(ctx, x.Keys, runs.Items)
	if err != nil {
		return nil, errors.Wrap(err, errListRuns)
	}
	var digests []string
	for _, r := range proven {
		if d := r.Spec.ArtifactDigest; d != "" && active(r.Status.Phase) && !slices.Contains(digests, d) {
			digests = append(digests, d)
		}
	}
	return digests, nil
}

// PruneArtifacts removes the bundles no Run names any more, and the provider archives only they
// listed, so that the artifact store does not grow with every module version and provider
// configuration ever run. A bundle handed out within grace stays: its Run may not exist yet.
func (x *JobExecutor) PruneArtifacts(ctx context.Context, grace time.Duration) (int, error) {
	runs := &v1alpha1.RunList{}
	if err := x.Client.List(ctx, runs); err != nil {
		return 0, errors.Wrap(err, errListRuns)
	}
	var keep []string
	for _, r := range runs.Items {
		if d := r.Spec.ArtifactDigest; d != "" {
			keep = append(keep, d)
		}
	}
	// Puts happen under mu (bundleFor): none runs while the store is pruned.
	x.mu.Lock()
	defer x.mu.Unlock()
	removed, err := x.Artifacts.Prune(keep, grace)
	for key, b := range x.bundles {
		if !x.Artifacts.Has(b.digest) {
			delete(x.bundles, key)
		}
	}
	// Nothing is prepared meanwhile (prepare runs under mu and removes its directory): what is
	// there was left by a process that stopped while preparing, or by an older version.
	left, rerr := os.ReadDir(x.Dir)
	if rerr != nil && !os.IsNotExist(rerr) {
		return removed, errors.Join(err, rerr)
	}
	for _, d := range left {
		if rerr := os.RemoveAll(filepath.Join(x.Dir, d.Name())); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}
	return removed, err
}

// bundleFor returns the bundle of snap's module with the providers setup configures, preparing
// it the first time: one terraform init per module digest, provider block and lock file.
func (x *JobExecutor) bundleFor(ctx context.Context, snap *Snapshot, setup *terraform.ProviderSetup, lock []byte) (bundle, error) {
	key := terraform.Digest([]byte(snap.Module.Digest), setup.Providers, lock)
	x.mu.Lock()
	defer x.mu.Unlock()
	// Touched, the bundle is new again to PruneArtifacts until the Run naming it exists.
	if b, ok := x.bundles[key]; ok && x.Artifacts.Touch(b.digest) == nil {
		return b, nil
	}
	b, err := x.prepare(ctx, key, snap, setup, lock)
	if err != nil {
		return bundle{}, errors.Wrap(err, errBundle)
	}
	if x.bundles == nil {
		x.bundles = map[string]bundle{}
	}
	x.bundles[key] = b
	return b, nil
}

func (x *JobExecutor) prepare(ctx context.Context, key string, snap *Snapshot, setup *terraform.ProviderSetup, lock []byte) (bundle, error) {
	dir := filepath.Join(x.Dir, key)
	if err := os.RemoveAll(dir); err != nil {
		return bundle{}, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return bundle{}, err
	}
	// The bundle and the archives are what is kept; the installation was only their source.
	defer os.RemoveAll(dir) //nolint:errcheck // one left is removed by PruneArtifacts.
	var entries []artifact.Entry
	b := bundle{}
	src := ""
	if snap.Module.Resource == nil {
		pkg, sub, err := packageOf(x.Modules, snap.Module.Dir)
		if err != nil {
			return bundle{}, err
		}
		b.sub = sub
		entries = append(entries, artifact.Entry{Name: BundleModule, Source: pkg})
		if src, err = terraform.ModuleSource(dir, snap.Module.Dir); err != nil {
			return bundle{}, err
		}
	}
	// Init reads which providers to install from the root module, never the instance's values.
	root, err := terraform.Render(snap.Module, terraform.Inputs{ModuleSource: src, Providers: setup.Providers})
	if err != nil {
		return bundle{}, err
	}
	if err := os.WriteFile(filepath.Join(dir, terraform.FileMain), root.Main, 0o600); err != nil {
		return bundle{}, err
	}
	if lock != nil {
		if err := os.WriteFile(filepath.Join(dir, module.FileLock), lock, 0o600); err != nil {
			return bundle{}, err
		}
	}
	if err := x.Runner.Install(ctx, dir); err != nil {
		return bundle{}, err
	}
	if b.lock, err = os.ReadFile(filepath.Join(dir, module.FileLock)); err != nil && !os.IsNotExist(err) {
		return bundle{}, err
	}
	providers, err := x.providerPackages(filepath.Join(dir, ".terraform", "providers"))
	if err != nil {
		return bundle{}, err
	}
	if b.digest, err = x.Artifacts.Put(entries, providers...); err != nil {
		return bundle{}, err
	}
	return b, nil
}

// providerPackages puts each provider package init installed below a .terraform/providers
// directory (host/namespace/type/version/platform, links into the plugin cache followed) into the
// artifact store, as the archive the provider mirror serves runners.
func (x *JobExecutor) providerPackages(dir string) ([]artifact.Provider, error) {
	matches, err := filepath.Glob(filepath.Join(dir, "*", "*", "*", "*", "*"))
	if err != nil {
		return nil, err
	}
	var out []artifact.Provider
	for _, m := range matches {
		if st, err := os.Stat(m); err != nil || !st.IsDir() {
			continue
		}
		rel, err := filepath.Rel(dir, m)
		if err != nil {
			return nil, err
		}
		parts := strings.Split(filepath.ToSlash(rel), "/")
		p, err := x.Artifacts.PutProvider(artifact.Provider{
			Hostname: parts[0], Namespace: parts[1], Type: parts[2], Version: parts[3], Platform: parts[4],
		}, m)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// packageOf splits a module directory in the module cache into the package snapshot that holds
// it and its path within the package.
func packageOf(modules, dir string) (string, string, error) {
	rel, err := filepath.Rel(modules, dir)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return "", "", errors.Errorf("module directory %s is not in the module cache", dir)
	}
	parts := strings.SplitN(filepath.ToSlash(rel), "/", 2)
	sub := ""
	if len(parts) == 2 {
		sub = parts[1]
	}
	return filepath.Join(modules, parts[0]), sub, nil
}

// runnerInputs are the inputs of a Run of e's instance executed by a runner from bundle b.
func (e *external) runnerInputs(b bundle) (*RunInputs, error) {
	in := e.inputs
	if e.snap.Module.Resource == nil {
		src, err := terraform.ModuleSource(runnerWorkDir, filepath.Join(runnerBundleDir, BundleModule, b.sub))
		if err != nil {
			return nil, err
		}
		in.ModuleSource = src
	}
	root, err := terraform.Render(e.snap.Module, in)
	if err != nil {
		return nil, errors.Wrap(err, errRender)
	}
	ri := &RunInputs{
		Main: root.Main, Vars: root.Vars, Lock: b.lock, Env: e.run.Setup.Env, Files: e.run.Setup.Files,
		Redact: e.run.Redactor.Values(), State: e.run.State, Digest: e.run.Inputs,
		AllowDestructive: e.run.AllowDestructive, ApprovalRequired: e.run.ApprovalRequired, ApprovedPlan: e.run.ApprovedPlan,
	}
	if in.PreventDestroy && e.snap.Module.Resource != nil {
		open := in
		open.PreventDestroy = false
		unguarded, err := terraform.Render(e.snap.Module, open)
		if err != nil {
			return nil, errors.Wrap(err, errRender)
		}
		ri.Unguarded = unguarded.Main
	}
	return ri, nil
}

// observeJob looks at the instance's Runs as the manager's cache shows them. While one is active,
// the instance is left alone: the Run's end reconciles it again.
//
// The cache serves every poll, and is safe for what Observe decides from it:
//   - A Run's changes reach the instance through the same cache (the watch on Runs), so the
//     reconcile a Run's end triggers sees that end; until the cache shows it, the Run looks active
//     and the instance is left alone, which is what a fresh read would have done a moment before.
//   - A Run created moments ago, by this controller or another, may not be in the cache yet, and
//     the instance may then look idle. Nothing is started on that view: startJob reads the Runs
//     fresh before it starts one, and starts none while one is active or while the cache is
//     behind. Two controllers that still both start one make the same Run (its name follows from
//     the Run before it), so the second finds it made; and the runners of two Runs would still
//     take turns on the state Lease.
//   - A Run that adoptJob would complete or end is read fresh before it is acted on.
func (e *external) observeJob(ctx context.Context) (*managed.ExternalObservation, error) {
	return e.observeRuns(ctx, e.jobs.Client)
}

// observeRuns sets latest and busy from the instance's Runs as r shows them, and adopts active
// Runs left without a Job. While one is active, it returns the observation of a busy instance.
func (e *external) observeRuns(ctx context.Context, r client.Reader) (*managed.ExternalObservation, error) {
	runs, err := e.runs.listFrom(ctx, r, e.inst, e.record)
	if err != nil {
		return nil, err
	}
	e.latest, e.busy = nil, false
	if len(runs) == 0 {
		return nil, nil
	}
	e.latest = &runs[0]
	// Any active Run, not only the newest: one instance never has two.
	busy := false
	for i := range runs {
		if !active(runs[i].Status.Phase) {
			continue
		}
		still, err := e.adoptJob(ctx, &runs[i])
		if err != nil {
			return nil, err
		}
		busy = busy || still
	}
	if !busy {
		return nil, nil
	}
	e.busy = true
	if e.stored == nil && !meta.WasDeleted(e.inst) {
		e.inst.SetConditions(xpv2.Creating())
	}
	return &managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
}

// sameVersion reports whether two reads show the same version of the same Run, or both none.
func sameVersion(a, b *v1alpha1.Run) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.UID == b.UID && a.ResourceVersion == b.ResourceVersion
}

// refreshJob starts a Refresh Run of an Observe-only instance unless its newest Run is a Refresh
// that ended within RefreshEvery; the state that Run saved holds the outputs Observe publishes.
func (e *external) refreshJob(ctx context.Context) error {
	if l := e.latest; l != nil && l.Spec.Operation == v1alpha1.OperationRefresh && l.Status.Phase == v1alpha1.PhaseSucceeded &&
		l.Status.CompletionTime != nil && time.Since(l.Status.CompletionTime.Time) < e.jobs.RefreshEvery {
		return nil
	}
	return e.startJob(ctx, v1alpha1.OperationRefresh)
}

// startJob starts a Run of op executed by a Job, unless the newest Run of the same work says
// why not yet: it was refused, waits for approval, or failed a moment ago.
func (e *external) startJob(ctx context.Context, op v1alpha1.RunOperation) error {
	if e.busy {
		// Observe found a Run still active; a deleted instance is handed to Delete even then.
		return nil
	}
	// Observe read the cache (see observeJob): read the Runs fresh before starting one.
	cached := e.latest
	if o, err := e.observeRuns(ctx, e.jobs.Reader); err != nil || o != nil {
		return err
	}
	if !sameVersion(cached, e.latest) {
		// The cache is behind: the change it does not show yet reconciles the instance again,
		// and Observe decides from a cache that shows it.
		return nil
	}
	if l := e.latest; l != nil && l.Spec.Operation == op && l.Spec.ModuleDigest == e.snap.Module.Digest &&
		(op == v1alpha1.OperationDestroy || l.Spec.InputsDigest == e.run.Inputs) {
		if l.Status.Plan != nil {
			e.inst.SetStatusField("lastPlan", runPlanStatus(l.Status.Plan, e.run))
		}
		switch l.Status.Phase {
		case v1alpha1.PhaseRefused:
			return errors.New(l.Status.Message)
		case v1alpha1.PhaseWaitingForApproval:
			if l.Status.Plan == nil || e.run.ApprovedPlan != l.Status.Plan.ID {
				return errors.New(l.Status.Message)
			}
		case v1alpha1.PhaseFailed:
			if l.Status.Message != msgNeverStarted && l.Status.CompletionTime != nil &&
				time.Since(l.Status.CompletionTime.Time) < retryFailedAfter {
				return errors.New(l.Status.Message)
			}
		}
	}
	if name := e.run.Setup.ClusterCredentials; name != "" {
		return errors.Errorf(errJobClusterCredentials, name)
	}
	b, err := e.jobs.bundleFor(ctx, e.snap, e.run.Setup, e.run.Lock)
	if err != nil {
		return err
	}
	in, err := e.runnerInputs(b)
	if err != nil {
		return err
	}
	if e.latest != nil && e.latest.Status.Phase == v1alpha1.PhaseWaitingForApproval {
		// Its plan is approved or the instance changed: either way the next Run takes over.
		e.latest.Status.Phase = v1alpha1.PhaseFailed
		e.latest.Status.Message = "not applied: the instance changed before its plan was approved"
		if e.latest.Status.Plan != nil && e.run.ApprovedPlan == e.latest.Status.Plan.ID {
			e.latest.Status.Phase = v1alpha1.PhaseSucceeded
			e.latest.Status.Message = "plan approved: a new Run applies it"
		}
		e.latest.Status.CompletionTime = ptr.To(metav1.Now())
		if err := writeRunStatus(ctx, e.runs.Client, e.runs.Reader, e.latest); err != nil {
			return errors.Wrapf(err, "%s %s", errUpdateRun, e.latest.Name)
		}
	}
	prev := ""
	if e.latest != nil {
		prev = e.latest.Name
	}
	return e.jobs.start(ctx, e.runs, op, e.runSubject(), in, b.digest, prev)
}

// start creates the Run, its inputs Secret and its Job. A Run whose Secret or Job could not be
// made is marked Failed at once, so that it never looks active.
//
// The Run's name follows from the instance and the Run before it (prev), so that two controllers
// that both saw prev as the newest Run and both start the next make the same Run, and the second
// finds it made: never two active Runs for one instance, even without leader election.
func (x *JobExecutor) start(ctx context.Context, rec *RunRecorder, op v1alpha1.RunOperation, s RunSubject, in *RunInputs, bundleDigest, prev string) error {
	x.starting.Lock()
	defer x.starting.Unlock()
	if err := x.slotFree(ctx, s.Instance); err != nil {
		return err
	}
	raw, err := json.Marshal(in)
	if err != nil {
		return errors.Wrap(err, errCreateInputs)
	}
	run := rec.newRun(op, s)
	run.Name = run.GenerateName + terraform.Digest([]byte(s.Instance.GetUID()), []byte(prev))[:5]
	run.GenerateName = ""
	run.Spec.ArtifactDigest = bundleDigest
	run.Spec.RunInputsDigest = inputsDigest(raw)
	if err := signRun(ctx, x.Keys, run); err != nil {
		return err
	}
	if err := x.Client.Create(ctx, run); err != nil {
		if kerrors.IsAlreadyExists(err) {
			// Another controller started this very Run; its end reconciles the instance.
			return nil
		}
		return errors.Wrap(err, errCreateRun)
	}
	if x.created == nil {
		x.created = map[types.NamespacedName]time.Time{}
	}
	x.created[types.NamespacedName{Namespace: run.Namespace, Name: run.Name}] = time.Now()
	run.Status = v1alpha1.RunStatus{Phase: v1alpha1.PhasePending, Executor: v1alpha1.ExecutorJob}
	if err := x.Client.Status().Update(ctx, run); err != nil {
		return errors.Wrapf(err, "%s %s", errUpdateRun, run.Name)
	}
	if err := x.createJob(ctx, run, s, raw); err != nil {
		setOutcome(&run.Status, RunOutcome{Err: err}, terraform.NewRedactor(in.Redact...), time.Now())
		if werr := writeRunStatus(ctx, x.Client, x.Reader, run); werr != nil {
			return errors.Wrapf(werr, "%s %s", errUpdateRun, run.Name)
		}
		return err
	}
	return rec.prune(ctx, s.Instance, nil)
}

// createJob creates the Run's inputs Secret and Job. Either may exist already: a controller that
// adopts a Run completes what another began. A Secret that someone else made under the Run's name
// is harmless: the runner refuses inputs the Run does not control or whose digest differs.
func (x *JobExecutor) createJob(ctx context.Context, run *v1alpha1.Run, s RunSubject, raw []byte) error {
	owner := metav1.NewControllerRef(run, v1alpha1.SchemeGroupVersion.WithKind("Run"))
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: run.Namespace, Name: run.Name, Labels: run.Labels,
			OwnerReferences: []metav1.OwnerReference{*owner}},
		Data: map[string][]byte{KeyRunInputs: raw},
	}
	if err := x.Client.Create(ctx, sec); err != nil && !kerrors.IsAlreadyExists(err) {
		return errors.Wrapf(err, "%s %s", errCreateInputs, run.Name)
	}
	job := RunnerJob(run, s.Run.Setup.Runner, x.Job)
	if err := x.Client.Create(ctx, job); err != nil && !kerrors.IsAlreadyExists(err) {
		return errors.Wrapf(err, "%s %s", errCreateJob, run.Name)
	}
	return nil
}

// adoptJob makes the Job of a pending Run that has none and reports whether the Run is still
// active. A controller killed between creating a Run and its Job leaves such a Run; it would
// block its instance for good. The Job is made from the instance as it is now, only if that
// renders the very inputs the Run was created with; otherwise the Run ends and the next one
// starts at once.
func (e *external) adoptJob(ctx context.Context, run *v1alpha1.Run) (bool, error) {
	if run.Status.Executor == v1alpha1.ExecutorProcess || time.Since(runCreated(run)) < adoptAfter {
		return true, nil
	}
	x := e.jobs
	err := x.Client.Get(ctx, types.NamespacedName{Namespace: run.Namespace, Name: run.Name}, &batchv1.Job{})
	if !kerrors.IsNotFound(err) {
		return true, errors.Wrapf(err, "%s %s", errGetJob, run.Name)
	}
	// The Run may be the cache's, and may have ended since: act only on what the API server holds.
	if err := x.Reader.Get(ctx, types.NamespacedName{Namespace: run.Namespace, Name: run.Name}, run); err != nil {
		if kerrors.IsNotFound(err) {
			return false, nil
		}
		return true, errors.Wrapf(err, "%s %s", errReadRun, run.Name)
	}
	if !active(run.Status.Phase) {
		return false, nil
	}
	if run.Status.Phase == v1alpha1.PhaseRunning {
		// Its Job was deleted under it: nothing will record the Run's end.
		return false, e.endRun(ctx, run, msgJobGone)
	}
	same := run.Spec.Operation == v1alpha1.OperationDestroy || run.Spec.InputsDigest == e.run.Inputs
	var raw []byte
	// A setup holding cluster credentials never goes to a runner: the Run ends, and the next
	// one says why it does not start.
	same = same && e.run.Setup.ClusterCredentials == ""
	if same {
		b, err := x.bundleFor(ctx, e.snap, e.run.Setup, e.run.Lock)
		if err != nil {
			return true, err
		}
		in, err := e.runnerInputs(b)
		if err != nil {
			return true, err
		}
		if raw, err = json.Marshal(in); err != nil {
			return true, errors.Wrap(err, errCreateInputs)
		}
		same = b.digest == run.Spec.ArtifactDigest && inputsDigest(raw) == run.Spec.RunInputsDigest
	}
	if !same {
		return false, e.endRun(ctx, run, msgNeverStarted)
	}
	if run.Status.Phase == "" {
		run.Status = v1alpha1.RunStatus{Phase: v1alpha1.PhasePending, Executor: v1alpha1.ExecutorJob}
		if err := x.Client.Status().Update(ctx, run); err != nil {
			return true, errors.Wrapf(err, "%s %s", errUpdateRun, run.Name)
		}
	}
	ctrl.LoggerFrom(ctx).Info("creating the Job of a Run left without one", "run", run.Name)
	return true, x.createJob(ctx, run, e.runSubject(), raw)
}

// endRun marks an active Run Failed with msg. A conflict is an error, never overwritten:
// whoever changed the Run meanwhile knows better.
func (e *external) endRun(ctx context.Context, run *v1alpha1.Run, msg string) error {
	run.Status.Phase = v1alpha1.PhaseFailed
	run.Status.Message = msg
	run.Status.CompletionTime = ptr.To(metav1.Now())
	return errors.Wrapf(e.jobs.Client.Status().Update(ctx, run), "%s %s", errUpdateRun, run.Name)
}

// runPlanStatus is status.lastPlan from the plan a Run recorded.
func runPlanStatus(p *v1alpha1.RunPlan, run *terraform.Run) map[string]any {
	v := map[string]any{"id": p.ID, "add": p.Add, "change": p.Change, "destroy": p.Destroy,
		"secretName": terraform.PlanRef(run.State).Name}
	if len(p.Destructive) > 0 {
		d := make([]any, len(p.Destructive))
		for i, c := range p.Destructive {
			d[i] = c
		}
		v["destructive"] = d
	}
	return v
}
