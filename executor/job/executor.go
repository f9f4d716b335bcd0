// Package job is the executor that hands each Work to a Kubernetes Job in the instance's
// namespace, under the service account its ProviderConfig names: it creates the Run, holds the
// Run's inputs in memory for its runner and creates the Job that executes it (`modkind runner`, see executor/runner; its
// pod shaped by the operator's settings, --runner-pod-defaults, under the ProviderConfig's
// spec.runner), and never waits for one; the Run's end reconciles the instance again. It keeps the bundles runner
// pods fetch (module and providers) behind the artifact server, which every replica answers (the
// leader serves, a follower relays to the address the leader election Lease names) with the
// certificates all replicas share in a Secret, and prepares again, as a new leader, the bundles of
// the Runs the old one made. It counts the Runs that hold run slots, watches runner Jobs that end
// without a result, and says what a runner's service account needs.
package job

import (
	"context"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/artifact"
	"github.com/modkind/modkind/executor"
	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/runs"
	"github.com/modkind/modkind/slots"
	"github.com/modkind/modkind/state"
	"github.com/modkind/modkind/terraform"
)

const (
	errUnknownOp = "the job executor does not run operation"

	// retryFailedAfter is how long after a failed Run of the same inputs the next one starts.
	retryFailedAfter = 30 * time.Second
)

// Executor hands an instance's terraform runs to Kubernetes Jobs.
type Executor struct {
	// Client reads from the manager's cache; Busy reads the instance's Runs with it.
	Client client.Client
	// Reader reads Runs fresh, never from a cache that may not show the Run just created: before
	// a Run is started or adopted, and for the artifact server's authorization.
	Reader client.Reader
	// Manager watches Runs for the instance controllers (Watch).
	Manager manager.Manager
	// Runs records the Runs; their executor is "job".
	Runs *runs.Recorder
	// Harness installs the providers of each bundle, once, into the controller's plugin cache.
	Harness *terraform.Harness
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
	// Pool, when set (--runner pool), executes the Runs in pods of a runner pool instead of a Job
	// per Run.
	Pool RunnerPool
	// Slots bounds the Runs active at once across the cluster (Total, --max-concurrent-runs) and
	// those of one namespace (its share): a Run beyond either starts once another ended.
	Slots slots.Policy
	// Waiters are the instances waiting for a run slot: a Run's end wakes the next.
	Waiters *slots.Waiters
	// Keys sign the Runs this executor creates; only signed Runs count as active.
	Keys state.KeySource
	// RefreshEvery is how long after a Refresh Run of an Observe-only instance ended the next
	// one starts.
	RefreshEvery time.Duration

	mu      sync.Mutex
	bundles map[string]bundle
	// runnersReady are the runner service accounts (namespace/name) found able to run, and when.
	runnersReady map[string]time.Time
	// starting serializes counting active Runs and reserving a slot for one, so that the slots
	// hold; the Run's writes are made after, outside it, so that starts do not queue behind each
	// other's requests.
	starting sync.Mutex
	// reserved are the slots taken for Runs this process is starting, counted as active until
	// the cache the count reads shows the Run started (see activeRuns).
	reserved map[types.NamespacedName]time.Time
	// inputs are the inputs of the active Runs, which the artifact server hands their runners.
	inputs heldInputs
}

// A RunnerPool executes Runs in long-lived runner pods of the Run's namespace (--runner pool)
// instead of a Job per Run: the executor makes the Run and holds its inputs as in job mode, and
// hands it to an idle pod of the Run's pool, or else a pod of the pool claims it.
type RunnerPool interface {
	// Assign labels run, before it is created, with the pool whose pods may take it: the pool of
	// its namespace under spec (the ProviderConfig's runner template, possibly nil). Called again
	// for an active Run, it learns the pool's pod again (a controller that restarted).
	Assign(run *v1alpha1.Run, spec *v1alpha1.RunnerSpec)
	// Executing reports whether an active Run may still be executed: it waits for a pod of its
	// pool, or a live pod of its pool holds its claim.
	Executing(ctx context.Context, run *v1alpha1.Run) (bool, error)
	// Hand returns an idle pod of run's pool to hand the Run to as it starts (written Running
	// with the pod as its runner), and false when the Run is to wait Pending for any pod of the
	// pool to take it.
	Hand(ctx context.Context, run *v1alpha1.Run) (runs.Claimant, bool)
}

// seen is what Busy saw of an instance's Runs, for Execute in the same reconcile: its newest
// Run, as the cache showed it.
type seen struct{ latest *v1alpha1.Run }

func seenOf(w *executor.Work) *v1alpha1.Run {
	if s, ok := w.Seen.(*seen); ok {
		return s.latest
	}
	return nil
}

// Busy reports whether a Run of the instance is active, as the manager's cache shows its Runs
// (adopting one left without a Job). The Run's end reconciles the instance again.
//
// The cache serves every poll, and is safe for what is decided from it:
//   - A Run's changes reach the instance through the same cache (the watch on Runs), so the
//     reconcile a Run's end triggers sees that end; until the cache shows it, the Run looks active
//     and the instance is left alone, which is what a fresh read would have done a moment before.
//   - A Run created moments ago, by this controller or another, may not be in the cache yet, and
//     the instance may then look idle. Nothing is started on that view: Execute reads the Runs
//     fresh before it starts one, and starts none while one is active or while the cache is
//     behind. Two controllers that still both start one make the same Run (its name follows from
//     the Run before it), so the second finds it made; and the runners of two Runs would still
//     take turns on the state Lease.
//   - A Run that adopt would complete or end is read fresh before it is acted on.
//
// A busy instance's active Run may have been made by another replica, the leader before this
// one: its runner then waits for a bundle this replica's store lacks, which Busy prepares again
// (restoreBundle).
func (x *Executor) Busy(ctx context.Context, w *executor.Work) (bool, error) {
	latest, busy, err := x.observe(ctx, x.Client, w)
	w.Seen = &seen{latest: latest}
	if busy && latest != nil {
		x.restoreBundle(ctx, w, latest)
	}
	return busy, err
}

// EndedPlan returns the plan of the newest Run Busy saw, when it is an Apply Run that ended (or
// waits for approval) with one. The plan of one that succeeded is shown with the state it wrote:
// until the cache shows that state (its own event reconciles the instance), the instance is
// shown as it was, rather than written once for the plan and again for the outputs.
func (x *Executor) EndedPlan(w *executor.Work) *kind.LastPlan {
	l := seenOf(w)
	if l == nil || l.Spec.Operation != v1alpha1.OperationApply || l.Status.Plan == nil || runs.Active(l.Status.Phase) {
		return nil
	}
	if l.Status.Phase == v1alpha1.PhaseSucceeded && (w.Stored == nil || w.Stored.AppliedInputs != l.Spec.InputsDigest) {
		return nil
	}
	p := lastPlanOf(l, w)
	return &p
}

// Execute starts a Run of the Work's operation, unless the newest Run of the same work says why
// not yet, or already holds its result.
func (x *Executor) Execute(ctx context.Context, w *executor.Work) executor.Result {
	latest := seenOf(w)
	switch w.Op {
	case v1alpha1.OperationRefresh:
		// The state the last Refresh saved holds the outputs the instance publishes.
		if l := latest; l != nil && l.Spec.Operation == v1alpha1.OperationRefresh && l.Status.Phase == v1alpha1.PhaseSucceeded &&
			l.Status.CompletionTime != nil && time.Since(l.Status.CompletionTime.Time) < x.RefreshEvery {
			return executor.Result{}
		}
	case v1alpha1.OperationDriftPlan:
		if changes, ok := driftPlanEnded(latest, w); ok {
			return executor.Result{Changes: changes}
		}
	case v1alpha1.OperationPlan:
		if res, ok := previewEnded(latest, w); ok {
			return res
		}
		if latest != nil && latest.Status.Phase == v1alpha1.PhaseWaitingForApproval {
			// The instance's own plan waits for approval: a preview does not end it.
			return executor.Result{}
		}
	case v1alpha1.OperationApply, v1alpha1.OperationDestroy:
	default:
		return executor.Result{Err: errors.Errorf("%s %s", errUnknownOp, w.Op)}
	}
	return x.startRun(ctx, w, latest)
}

// driftPlanEnded reports what the instance's newest Run found, when it is a drift plan of the
// current inputs that a Job ended after the last drift check acted on.
func driftPlanEnded(l *v1alpha1.Run, w *executor.Work) (changes, ok bool) {
	if l == nil || l.Spec.Operation != v1alpha1.OperationDriftPlan || l.Spec.InputsDigest != w.Workspace.Inputs ||
		l.Status.Phase != v1alpha1.PhaseSucceeded || l.Status.CompletionTime == nil ||
		!l.Status.CompletionTime.After(w.DriftCheckedAt) {
		return false, false
	}
	return l.Status.Message == runs.NoteDrift, true
}

// previewEnded returns what the instance's newest Run found, when it is a preview plan of the
// Work's module and inputs that ended. A runner writes that Run's status, as the tenant's service
// account may: what it says is only ever shown in the instance's own status, never acted on.
func previewEnded(l *v1alpha1.Run, w *executor.Work) (executor.Result, bool) {
	if l == nil || l.Spec.Operation != v1alpha1.OperationPlan || l.Spec.ModuleDigest != w.Module.Digest ||
		l.Spec.InputsDigest != w.Workspace.Inputs || !runs.Finished(l.Status.Phase) {
		return executor.Result{}, false
	}
	if l.Status.Phase != v1alpha1.PhaseSucceeded {
		return executor.Result{Err: errors.New(cut(w.Workspace.Redactor.Redact(l.Status.Message), maxShownMessage))}, true
	}
	p := &v1alpha1.RunPlan{}
	if l.Status.Plan != nil {
		p = l.Status.Plan.DeepCopy()
	}
	// The tenant's runner account wrote these counts: a count is never negative, so that one
	// instance's preview adds to its own outcome only (reconcile's classify and fleetPreview).
	// The destructive addresses stay whole here, to classify the plan; the preview shows a
	// bounded number of them.
	p.Add, p.Change, p.Destroy, p.Replace = max(p.Add, 0), max(p.Change, 0), max(p.Destroy, 0), max(p.Replace, 0)
	return executor.Result{Preview: p}, true
}

// Unsaved is nil: a runner pod stores what its terraform wrote before its Run ends.
func (x *Executor) Unsaved(*executor.Work) *state.State { return nil }

// Forget has nothing to drop: what the executor knows of an instance is its Runs.
func (x *Executor) Forget(*executor.Work) {}

// Watch reconciles an instance of gvk again when one of its Runs changes (a Run a Job executes
// ends without the controller waiting for it), and, when a Run stops being active, the instance
// whose turn it is to get the freed run slot.
func (x *Executor) Watch(c controller.Controller, gvk schema.GroupVersionKind) error {
	u := &kind.Instance{}
	u.SetGroupVersionKind(gvk)
	owner := handler.EnqueueRequestForOwner(x.Manager.GetScheme(), x.Manager.GetRESTMapper(), &u.Unstructured)
	if err := c.Watch(source.Kind[client.Object](x.Manager.GetCache(), &v1alpha1.Run{}, owner)); err != nil {
		return err
	}
	return c.Watch(source.Kind[client.Object](x.Manager.GetCache(), &v1alpha1.Run{}, x.SlotFreed(gvk)))
}

// SlotFreed is the handler of Run events that, when a Run stops being active, drops the inputs
// held for its runner and reconciles at once
// the instance of gvk whose turn it is to get the freed run slot (round robin by namespace), and
// the one of the Run's own namespace that has waited longest, whose share the Run freed, rather
// than at their next retries. Every kind's controller watches Runs, so a freed slot wakes waiters
// of each kind; those that find it taken wait again, in their place.
func (x *Executor) SlotFreed(gvk schema.GroupVersionKind) handler.EventHandler {
	wake := func(q workqueue.TypedRateLimitingInterface[reconcile.Request], namespace string) {
		if nn, ok := x.Waiters.Next(gvk); ok {
			q.Add(reconcile.Request{NamespacedName: nn})
		}
		if nn, ok := x.Waiters.NextIn(gvk, namespace); ok {
			q.Add(reconcile.Request{NamespacedName: nn})
		}
	}
	return handler.Funcs{
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			before, ok1 := e.ObjectOld.(*v1alpha1.Run)
			after, ok2 := e.ObjectNew.(*v1alpha1.Run)
			if ok1 && ok2 && runs.Active(before.Status.Phase) && !runs.Active(after.Status.Phase) {
				x.inputs.forget(after)
				wake(q, after.Namespace)
			}
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if run, ok := e.Object.(*v1alpha1.Run); ok {
				x.inputs.forget(run)
				if runs.Active(run.Status.Phase) {
					wake(q, run.Namespace)
				}
			}
		},
	}
}
