package job

import (
	"context"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	batchv1 "k8s.io/api/batch/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/executor"
	"github.com/modkind/modkind/runs"
	"github.com/modkind/modkind/slots"
)

const (
	// reservedFor bounds how long a slot reserved for a Run counts without the cache showing it
	// started: a Run whose start failed half way is adopted or ended by its instance's next
	// reconcile.
	reservedFor = time.Minute
	// adoptAfter is how old a pending Run without a Job must be before a controller makes its
	// Job: younger, the controller that created the Run may still be making it.
	adoptAfter = 10 * time.Second
)

// activeRuns counts the Runs that hold a run slot, in the cluster and per namespace: Runs the
// controller created (signed) that are pending or running and whose Job has not ended, and the
// slots reserved for Runs being started that the cache does not show started yet. What a
// Run's status says is its runner's word; a Run whose Job ended holds no slot whatever its status
// says (the JobWatcher ends it), nor one Running without a Job once its Job had time to be made.
// queued counts, per namespace, the signed Runs Queued for a slot.
func (x *Executor) activeRuns(ctx context.Context) (n int, byNamespace, queued map[string]int, err error) {
	list := &v1alpha1.RunList{}
	// Read only, and called at every start: the cache's own Runs, not a copy of every Run of
	// every instance's history each time.
	if err := x.Client.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		return 0, nil, nil, errors.Wrap(err, errListRuns)
	}
	// Only a Run Queued or active counts: the others' signatures are not checked, at each start
	// of every Run, over the history of every instance.
	counted := make([]v1alpha1.Run, 0, len(list.Items))
	for i := range list.Items {
		if phase := list.Items[i].Status.Phase; phase == v1alpha1.PhaseQueued || runs.Active(phase) {
			counted = append(counted, list.Items[i])
		}
	}
	rs, _, err := runs.Proven(ctx, x.Keys, counted)
	if err != nil {
		return 0, nil, nil, errors.Wrap(err, errListRuns)
	}
	byNamespace, queued = map[string]int{}, map[string]int{}
	cached := map[types.NamespacedName]v1alpha1.RunPhase{}
	for i := range list.Items {
		cached[client.ObjectKeyFromObject(&list.Items[i])] = list.Items[i].Status.Phase
	}
	for i := range rs {
		if rs[i].Status.Phase == v1alpha1.PhaseQueued {
			queued[rs[i].Namespace]++
		}
		if !runs.Active(rs[i].Status.Phase) {
			continue
		}
		live, err := x.holdsSlot(ctx, &rs[i])
		if err != nil {
			return 0, nil, nil, err
		}
		if live {
			n++
			byNamespace[rs[i].Namespace]++
		}
	}
	for key, at := range x.reserved {
		phase, ok := cached[key]
		switch {
		case ok && phase != v1alpha1.PhaseQueued || time.Since(at) > reservedFor:
			// The cache shows it started (counted above while active) or ended.
			delete(x.reserved, key)
		default:
			n++
			byNamespace[key.Namespace]++
		}
	}
	return n, byNamespace, queued, nil
}

// holdsSlot reports whether an active Run's Job may still run it: it has not ended, or, with no
// Job in the cache, the Run is young enough for its Job to be on the way, or pending (to be
// adopted).
func (x *Executor) holdsSlot(ctx context.Context, run *v1alpha1.Run) (bool, error) {
	if x.Pool != nil {
		return x.Pool.Executing(ctx, run)
	}
	job := &batchv1.Job{}
	err := x.Client.Get(ctx, client.ObjectKeyFromObject(run), job)
	switch {
	case kerrors.IsNotFound(err):
		return run.Status.Phase != v1alpha1.PhaseRunning || time.Since(runs.Created(run)) < adoptAfter, nil
	case err != nil:
		return false, errors.Wrapf(err, "%s %s", errGetJob, run.Name)
	}
	if owner := metav1.GetControllerOf(job); owner == nil || owner.UID != run.UID {
		// Not the Job the controller made for this Run.
		return run.Status.Phase != v1alpha1.PhaseRunning || time.Since(runs.Created(run)) < adoptAfter, nil
	}
	_, ended := jobEnd(job)
	return !ended, nil
}

// slotFree returns nil when a Run of the Work's instance may start now, or the error that says
// what it waits for: its namespace's share of the run slots, or a free slot at all. Beyond its
// share it starts on an idle slot, one that no Queued Run of another namespace claims within that
// namespace's share (slots.Policy.MayStart). x.starting is held.
func (x *Executor) slotFree(ctx context.Context, w *executor.Work) error {
	if x.Slots.Total <= 0 {
		return nil
	}
	_, byNamespace, queued, err := x.activeRuns(ctx)
	if err != nil {
		return err
	}
	// The Run being started is not among those that claim a slot: its own Queued Run, if any,
	// is the one that asks.
	return x.Slots.MayStart(w.Instance.GetNamespace(), slots.Load{Running: byNamespace, Waiting: queued})
}

// reserve takes a run slot for run, a Run of the Work created or about to be, or returns what it
// waits for (slotFree). The slot stays taken until the cache shows the Run started or ended, or
// the Run cannot be made (unreserve).
func (x *Executor) reserve(ctx context.Context, w *executor.Work, run *v1alpha1.Run) error {
	x.starting.Lock()
	defer x.starting.Unlock()
	if err := x.slotFree(ctx, w); err != nil {
		return err
	}
	if x.reserved == nil {
		x.reserved = map[types.NamespacedName]time.Time{}
	}
	x.reserved[types.NamespacedName{Namespace: run.Namespace, Name: run.Name}] = time.Now()
	return nil
}

// starts reports whether a slot is reserved for run: this process is starting it.
func (x *Executor) starts(run *v1alpha1.Run) bool {
	x.starting.Lock()
	defer x.starting.Unlock()
	at, ok := x.reserved[types.NamespacedName{Namespace: run.Namespace, Name: run.Name}]
	return ok && time.Since(at) < reservedFor
}

// unreserve gives back the slot reserved for a Run that was not made.
func (x *Executor) unreserve(run *v1alpha1.Run) {
	x.starting.Lock()
	defer x.starting.Unlock()
	delete(x.reserved, types.NamespacedName{Namespace: run.Namespace, Name: run.Name})
}
