package job

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	batchv1 "k8s.io/api/batch/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
	errCreateJob      = "cannot create the runner Job of Run"
	errRenderInputs   = "cannot render the inputs of Run"
	errCreateRun      = "cannot create Run"
	errDeleteRun      = "cannot delete the Queued Run"
	errReadRun        = "cannot get Run"
	errUpdateRun      = "cannot update the status of Run"
	errInputsTooLarge = "the inputs of Run %s are %d bytes, more than the %d a runner reads: " +
		"the instance's values and its ProviderConfig's files are too large for a runner"
	errJobClusterCredentials = "ClusterProviderConfig %s sets environment variables or files, which may hold a cluster admin's credentials (literal or from Secrets) " +
		"and never go to a runner pod, where the namespace's tenants could read them: give the runner's service account a cloud identity " +
		"(workload identity), or use a ProviderConfig of this namespace; a ClusterProviderConfig used by runner Jobs may set spec.providers and spec.runner only"

	// stateLag is how long after an Apply Run of the same work succeeded an instance that does
	// not look applied is taken to be one whose new state has not reached the cache yet.
	stateLag = 30 * time.Second

	// msgNeverStarted ends a pending Run whose Job was never made and whose inputs have changed
	// since: the next Run starts at once.
	msgNeverStarted = "never started: the controller stopped before it created the Run's Job, and the instance changed since"
	// msgJobGone ends a running Run whose Job was deleted.
	msgJobGone = "the runner Job was deleted before the Run ended"
)

// observe returns the instance's newest Run as r shows it, and whether one of its Runs is
// still active, holding the inputs of an active Run another controller started and adopting one
// left without a Job.
func (x *Executor) observe(ctx context.Context, r client.Reader, w *executor.Work) (*v1alpha1.Run, bool, error) {
	list, err := x.Runs.List(ctx, r, w.Instance, w.Events)
	if err != nil || len(list) == 0 {
		return nil, false, err
	}
	// Any active Run, not only the newest: one instance never has two.
	busy := false
	for i := range list {
		if phase := list[i].Status.Phase; !runs.Active(phase) {
			if phase != v1alpha1.PhaseQueued {
				// Its end's event dropped its inputs (SlotFreed), unless a reconcile that read
				// it active held them again meanwhile. (A Queued Run may be one this controller
				// just started, which the cache does not show started yet.)
				x.inputs.forget(&list[i])
			}
			continue
		}
		x.takeOver(ctx, w, &list[i])
		still, err := x.adopt(ctx, w, &list[i])
		if err != nil {
			return nil, false, err
		}
		busy = busy || still
	}
	return &list[0], busy, nil
}

// sameVersion reports whether two reads show the same version of the same Run, or both none.
func sameVersion(a, b *v1alpha1.Run) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.UID == b.UID && a.ResourceVersion == b.ResourceVersion
}

// startRun starts a Run of the Work's operation executed by a Job, unless the newest Run of the
// same work says why not yet: it was refused, waits for approval, or failed a moment ago.
// cached is the newest Run as Busy saw it in the cache.
func (x *Executor) startRun(ctx context.Context, w *executor.Work, cached *v1alpha1.Run) executor.Result {
	latest := cached
	if cached == nil || cached.Status.Phase != v1alpha1.PhaseQueued {
		// Busy read the cache: read the Runs fresh before making one. (A Queued Run is
		// started by writes that carry the version the cache showed: a cache behind makes
		// them conflicts, never a second Run; and each slot freed wakes a waiter, whose
		// fresh read would be one more LIST of the namespace's Runs per Run.)
		fresh, busy, err := x.observe(ctx, x.Reader, w)
		if err != nil || busy || !sameVersion(cached, fresh) {
			// Active, or the cache is behind: the change it does not show yet reconciles the
			// instance again, and Busy decides from a cache that shows it.
			return executor.Result{Pending: err == nil, Err: err}
		}
		latest = fresh
	}
	res := executor.Result{Pending: true}
	if l := latest; l != nil && sameWork(l, w) {
		if l.Status.Plan != nil {
			p := lastPlanOf(l, w)
			res.Plan = &p
		}
		if err := heldBy(l, w.Workspace); err != nil {
			return executor.Result{Plan: res.Plan, Err: err}
		}
		if justApplied(l, time.Now()) {
			// Its runner wrote the state before the Run's end: the instance was reconciled before
			// the state reached the cache, and the state's event reconciles it again, and shows
			// the plan with the outputs (see EndedPlan). Another Run would apply the same inputs
			// twice, and one that found every slot taken would stay Queued once the instance is
			// found up to date.
			return executor.Result{Pending: true}
		}
	}
	if name := w.Workspace.Setup.ClusterCredentials; name != "" {
		return executor.Result{Plan: res.Plan, Err: errors.Errorf(errJobClusterCredentials, name)}
	}
	if err := x.runnerReady(ctx, w); err != nil {
		return executor.Result{Plan: res.Plan, Err: err}
	}
	if latest != nil && latest.Status.Phase == v1alpha1.PhaseQueued {
		started, err := x.startQueued(ctx, w, latest)
		if started || err != nil {
			queued := executor.Result{Pending: err == nil, Plan: res.Plan, Err: err}
			if slots.IsWaiting(err) {
				queued.QueuedAt = runs.Created(latest)
			}
			return queued
		}
	}
	b, err := x.bundleFor(ctx, w)
	if err != nil {
		return executor.Result{Plan: res.Plan, Err: err}
	}
	if err := x.settleWaiting(ctx, latest, w.Workspace); err != nil {
		return executor.Result{Plan: res.Plan, Err: err}
	}
	prev := ""
	if latest != nil {
		prev = latest.Name
	}
	if err := x.start(ctx, w, inputsOf(w, b), b.digest, prev); err != nil {
		queued := executor.Result{Plan: res.Plan, Err: err}
		if slots.IsWaiting(err) {
			queued.QueuedAt = time.Now()
		}
		return queued
	}
	return res
}

// startQueued starts the instance's Queued Run once a run slot is free for it, and reports
// whether it did. A Queued Run whose work is no longer the instance's (it changed, or goes) never
// ran and never will: it is deleted, and the caller starts one of the current work instead.
func (x *Executor) startQueued(ctx context.Context, w *executor.Work, queued *v1alpha1.Run) (bool, error) {
	raw, same, err := x.sameInputs(ctx, w, queued)
	if err != nil {
		return false, err
	}
	if !same || queued.Spec.Operation != w.Op || queued.Spec.ModuleDigest != w.Module.Digest {
		// Only as read: a Run another controller started meanwhile is a conflict, not deleted.
		err := x.Client.Delete(ctx, queued, client.Preconditions{UID: &queued.UID, ResourceVersion: &queued.ResourceVersion})
		if kerrors.IsConflict(err) {
			return true, nil
		}
		return false, errors.Wrapf(client.IgnoreNotFound(err), "%s %s", errDeleteRun, queued.Name)
	}
	if x.starts(queued) {
		// A reconcile before this one is starting it, and the cache does not show that yet.
		return true, nil
	}
	if err := x.reserve(ctx, w, queued); err != nil {
		if slots.IsWaiting(err) && queued.Status.Message != err.Error() {
			// Why it waits changed (its namespace's share, or every slot): say so. A conflict
			// only means another controller wrote it.
			queued.Status.Message = err.Error()
			_ = x.Client.Status().Update(ctx, queued)
		}
		return false, err
	}
	return true, x.launch(ctx, w, queued, raw)
}

// justApplied reports whether run, of the Work's very work (sameWork), applied it successfully
// less than stateLag before now.
func justApplied(run *v1alpha1.Run, now time.Time) bool {
	return run.Spec.Operation == v1alpha1.OperationApply && run.Status.Phase == v1alpha1.PhaseSucceeded &&
		run.Status.CompletionTime != nil && now.Sub(run.Status.CompletionTime.Time) < stateLag
}

// sameWork reports whether run was made for the same work as w: the same operation on the same
// module, and for anything but a destroy, the same inputs.
func sameWork(run *v1alpha1.Run, w *executor.Work) bool {
	return run.Spec.Operation == w.Op && run.Spec.ModuleDigest == w.Module.Digest &&
		(w.Op == v1alpha1.OperationDestroy || run.Spec.InputsDigest == w.Workspace.Inputs)
}

// heldBy returns why a Run of the same work as run does not start yet: run was refused (the same
// inputs are refused again), waits for approval of a plan that is not the one approved, or failed
// less than retryFailedAfter ago.
func heldBy(run *v1alpha1.Run, ws *terraform.Workspace) error {
	switch run.Status.Phase {
	case v1alpha1.PhaseRefused:
		return errors.New(run.Status.Message)
	case v1alpha1.PhaseWaitingForApproval:
		if run.Status.Plan == nil || ws.ApprovedPlan != run.Status.Plan.ID {
			return errors.New(run.Status.Message)
		}
	case v1alpha1.PhaseFailed:
		if run.Status.Message != msgNeverStarted && run.Status.CompletionTime != nil &&
			time.Since(run.Status.CompletionTime.Time) < retryFailedAfter {
			return errors.New(run.Status.Message)
		}
	}
	return nil
}

// settleWaiting ends the instance's newest Run when it waits for approval: its plan is approved
// (a new Run applies it) or the instance changed, either way the next Run takes over.
func (x *Executor) settleWaiting(ctx context.Context, latest *v1alpha1.Run, ws *terraform.Workspace) error {
	if latest == nil || latest.Status.Phase != v1alpha1.PhaseWaitingForApproval {
		return nil
	}
	latest.Status.Phase = v1alpha1.PhaseFailed
	latest.Status.Message = "not applied: the instance changed before its plan was approved"
	if latest.Status.Plan != nil && ws.ApprovedPlan == latest.Status.Plan.ID {
		latest.Status.Phase = v1alpha1.PhaseSucceeded
		latest.Status.Message = "plan approved: a new Run applies it"
	}
	latest.Status.CompletionTime = ptr.To(metav1.Now())
	return errors.Wrapf(runs.WriteStatus(ctx, x.Runs.Client, x.Runs.Reader, latest), "%s %s", errUpdateRun, latest.Name)
}

// start creates the Run, holds its inputs and creates its Job, or, when no run slot is free for it, the
// Run alone, Queued, saying what it waits for (and returns that wait).
//
// The Run's name follows from the instance and the Run before it (prev), so that two controllers
// that both saw prev as the newest Run and both start the next make the same Run, and the second
// finds it made: never two active Runs for one instance, even without leader election.
func (x *Executor) start(ctx context.Context, w *executor.Work, in *runs.Inputs, bundleDigest, prev string) error {
	raw, err := json.Marshal(in)
	if err != nil {
		return errors.Wrap(err, errRenderInputs)
	}
	s := subject(w)
	run := x.Runs.NewRun(w.Op, s)
	run.Name = run.GenerateName + terraform.Digest([]byte(w.Instance.GetUID()), []byte(prev))[:5]
	run.GenerateName = ""
	run.Spec.ArtifactDigest = bundleDigest
	run.Spec.RunInputsDigest = runs.InputsDigest(raw)
	if x.Pool != nil {
		x.Pool.Assign(run, w.Workspace.Setup.Runner)
	}
	if err := runs.Sign(ctx, x.Keys, run); err != nil {
		return err
	}
	wait := x.reserve(ctx, w, run)
	if wait != nil && !slots.IsWaiting(wait) {
		return wait
	}
	if err := x.Client.Create(ctx, run); err != nil {
		if wait == nil {
			x.unreserve(run)
		}
		if kerrors.IsAlreadyExists(err) {
			// Another controller started this very Run; its end reconciles the instance.
			return wait
		}
		return errors.Wrap(err, errCreateRun)
	}
	if wait != nil {
		// The Run waits for a slot where people look for it, saying why; the instance's
		// reconcile starts it once a slot is free.
		run.Status = v1alpha1.RunStatus{Phase: v1alpha1.PhaseQueued, Executor: v1alpha1.ExecutorJob, Message: wait.Error()}
		if err := x.Client.Status().Update(ctx, run); err != nil {
			return errors.Wrapf(err, "%s %s", errUpdateRun, run.Name)
		}
		return wait
	}
	return x.launch(ctx, w, run, raw)
}

// launch starts run, which holds a run slot now: its inputs held for its runner, then its Pending
// status (so that a pool's pod, which takes Pending Runs, finds the inputs held; or Running,
// handed to an idle pod of its pool), then its Job (none for a pool); and prunes the instance's
// Runs. A Run whose inputs are refused or whose Job could not be made is marked Failed at once, so
// that it never looks active. A conflict on the
// Pending write means another controller started the Run (or the cache showed an older version):
// the change reconciles the instance, and the slot is its to count.
func (x *Executor) launch(ctx context.Context, w *executor.Work, run *v1alpha1.Run, raw []byte) error {
	err := x.holdInputs(w, run, raw)
	if err == nil {
		run.Status.Phase, run.Status.Executor, run.Status.Message = v1alpha1.PhasePending, v1alpha1.ExecutorJob, ""
		if x.Pool != nil {
			if pod, ok := x.Pool.Hand(ctx, run); ok {
				// Handed to an idle pod of its pool, which executes it without a claim.
				now := metav1.Now()
				run.Status.Phase, run.Status.Runner, run.Status.StartTime = v1alpha1.PhaseRunning, pod.String(), &now
			}
		}
		if err := x.Client.Status().Update(ctx, run); err != nil {
			if kerrors.IsNotFound(err) {
				// Deleted meanwhile: it needs no slot, nor inputs.
				x.unreserve(run)
				x.inputs.forget(run)
				return nil
			}
			if kerrors.IsConflict(err) {
				// Another controller started it, or this one did in a reconcile the cache does
				// not show yet: the slot stays counted until the cache shows the Run started.
				return nil
			}
			// Not started: its instance's next reconcile starts it again, or adopts it.
			x.unreserve(run)
			return errors.Wrapf(err, "%s %s", errUpdateRun, run.Name)
		}
		err = x.createJob(ctx, run, w)
	}
	if err != nil {
		// Marked Failed below: it holds no slot, and no runner reads its inputs.
		x.unreserve(run)
		x.inputs.forget(run)
		runs.SetOutcome(&run.Status, runs.Outcome{Err: err}, w.Workspace.Redactor, time.Now())
		if werr := runs.WriteStatus(ctx, x.Client, x.Reader, run); werr != nil {
			return errors.Wrapf(werr, "%s %s", errUpdateRun, run.Name)
		}
		return err
	}
	return x.prune(ctx, w)
}

// prune deletes the instance's finished Runs beyond the history limit, as the cache shows them.
// A cache behind shows fewer of the newest Runs, so that it keeps more, never fewer (the next
// start prunes them), and the API server is spared a LIST of the instance's Runs per Run
// started (it filters every Run of the namespace for one instance's).
func (x *Executor) prune(ctx context.Context, w *executor.Work) error {
	cached, err := x.Runs.List(ctx, x.Client, w.Instance, nil)
	if err != nil || len(cached) == 0 {
		return err
	}
	return x.Runs.Prune(ctx, w.Instance, cached)
}

// subject is what the Work's Runs are recorded for.
func subject(w *executor.Work) runs.Subject {
	return runs.Subject{Instance: w.Instance, Workspace: w.Workspace, ModuleDigest: w.Module.Digest, Events: w.Events}
}

// createJob creates the Run's Job, unless a pool's pod takes it. It may exist already: a
// controller that adopts a Run completes what another began.
func (x *Executor) createJob(ctx context.Context, run *v1alpha1.Run, w *executor.Work) error {
	if x.Pool != nil {
		return nil
	}
	job := RunnerJob(run, w.Workspace.Setup.Runner, x.Job)
	if err := x.Client.Create(ctx, job); err != nil && !kerrors.IsAlreadyExists(err) {
		return errors.Wrapf(err, "%s %s", errCreateJob, run.Name)
	}
	return nil
}

// adopt makes the Job of a pending Run that has none and reports whether the Run is still
// active. A controller killed between creating a Run and its Job leaves such a Run; it would
// block its instance for good. The Job is made from the instance as it is now, only if that
// renders the very inputs the Run was created with; otherwise the Run ends and the next one
// starts at once.
func (x *Executor) adopt(ctx context.Context, w *executor.Work, run *v1alpha1.Run) (bool, error) {
	if run.Status.Executor == v1alpha1.ExecutorProcess || time.Since(runs.Created(run)) < adoptAfter {
		return true, nil
	}
	if x.Pool != nil {
		return x.adoptPooled(ctx, w, run)
	}
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
	if !runs.Active(run.Status.Phase) {
		return false, nil
	}
	if run.Status.Phase == v1alpha1.PhaseRunning {
		// Its Job was deleted under it: nothing will record the Run's end.
		return false, x.endRun(ctx, run, msgJobGone)
	}
	raw, same, err := x.sameInputs(ctx, w, run)
	if err != nil {
		return true, err
	}
	if !same {
		return false, x.endRun(ctx, run, msgNeverStarted)
	}
	ctrl.LoggerFrom(ctx).Info("creating the Job of a Run left without one", "run", run.Name)
	return true, x.complete(ctx, w, run, raw)
}

// complete makes what a controller stopped before making of an active Run (see launch): its
// inputs held, its Pending status, its Job.
func (x *Executor) complete(ctx context.Context, w *executor.Work, run *v1alpha1.Run, raw []byte) error {
	if err := x.holdInputs(w, run, raw); err != nil {
		return err
	}
	if run.Status.Phase == "" {
		run.Status = v1alpha1.RunStatus{Phase: v1alpha1.PhasePending, Executor: v1alpha1.ExecutorJob}
		if err := x.Client.Status().Update(ctx, run); err != nil {
			return errors.Wrapf(err, "%s %s", errUpdateRun, run.Name)
		}
	}
	return x.createJob(ctx, run, w)
}

// adoptPooled completes a Run of a pool that a controller killed while starting it left without
// its Pending status (which pods wait for), from the instance as it is now
// when that renders the very inputs the Run was made with; otherwise the Run ends as never
// started. A running Run is the pool's to watch: it fails when the pod holding it ends.
func (x *Executor) adoptPooled(ctx context.Context, w *executor.Work, run *v1alpha1.Run) (bool, error) {
	x.Pool.Assign(run, w.Workspace.Setup.Runner)
	if run.Status.Phase == v1alpha1.PhaseRunning {
		return true, nil
	}
	if run.Status.Phase == v1alpha1.PhasePending {
		// Its inputs were held before it was marked Pending, and are held again by whoever leads
		// now (takeOver): a pod takes it, or the pool fails it.
		return true, nil
	}
	if err := x.Reader.Get(ctx, types.NamespacedName{Namespace: run.Namespace, Name: run.Name}, run); err != nil {
		if kerrors.IsNotFound(err) {
			return false, nil
		}
		return true, errors.Wrapf(err, "%s %s", errReadRun, run.Name)
	}
	if !runs.Active(run.Status.Phase) {
		return false, nil
	}
	raw, same, err := x.sameInputs(ctx, w, run)
	if err != nil {
		return true, err
	}
	if !same {
		return false, x.endRun(ctx, run, msgNeverStarted)
	}
	ctrl.LoggerFrom(ctx).Info("completing a pooled Run left unstarted", "run", run.Name)
	return true, x.complete(ctx, w, run, raw)
}

// sameInputs returns the inputs of a Run of the Work as it is now, and whether they are the very
// inputs run was created with (its bundle and spec.runInputsDigest). A setup holding cluster
// credentials never goes to a runner: its Run ends, and the next one says why it does not start.
func (x *Executor) sameInputs(ctx context.Context, w *executor.Work, run *v1alpha1.Run) ([]byte, bool, error) {
	same := run.Spec.Operation == v1alpha1.OperationDestroy || run.Spec.InputsDigest == w.Workspace.Inputs
	if !same || w.Workspace.Setup.ClusterCredentials != "" {
		return nil, false, nil
	}
	b, err := x.bundleFor(ctx, w)
	if err != nil {
		return nil, false, err
	}
	raw, err := json.Marshal(inputsOf(w, b))
	if err != nil {
		return nil, false, errors.Wrap(err, errRenderInputs)
	}
	return raw, b.digest == run.Spec.ArtifactDigest && runs.InputsDigest(raw) == run.Spec.RunInputsDigest, nil
}

// endRun marks an active Run Failed with msg. A conflict is an error, never overwritten:
// whoever changed the Run meanwhile knows better.
func (x *Executor) endRun(ctx context.Context, run *v1alpha1.Run, msg string) error {
	run.Status.Phase = v1alpha1.PhaseFailed
	run.Status.Message = msg
	run.Status.CompletionTime = ptr.To(metav1.Now())
	return errors.Wrapf(x.Client.Status().Update(ctx, run), "%s %s", errUpdateRun, run.Name)
}

// inputsOf are the inputs of a Run of the Work executed by a runner from bundle b: the root
// module the instance client rendered, which calls the module below the runner's link to the
// bundle's package as it does below the controller's.
func inputsOf(w *executor.Work, b bundle) *runs.Inputs {
	ws := w.Workspace
	return &runs.Inputs{
		Main: ws.Root.Main, Vars: ws.Root.Vars, Unguarded: ws.Root.Unguarded, Lock: b.lock,
		Env: ws.Setup.Env, Files: ws.Setup.Files, Redact: ws.Redactor.Values(), State: ws.State, Digest: ws.Inputs, IDKey: ws.IDKey,
		AllowDestructive: ws.AllowDestructive, ApprovalRequired: ws.ApprovalRequired, ApprovedPlan: ws.ApprovedPlan,
	}
}

// Bounds on what a Run's status, which the tenant's runner account writes, puts into the
// instance's status.lastPlan: a forged Run must not grow the instance past what the API server
// stores.
const (
	maxShownID          = 64
	maxShownDestructive = 50
	maxShownChange      = 512
	// maxShownMessage bounds the message of a failed Plan Run a preview shows.
	maxShownMessage = 1024
)

// lastPlanOf is the plan run recorded as status.lastPlan shows it, within the bounds above. A
// runner reports no time of its plan: the Run's start and, once it ended, how long it ran stand
// for them.
func lastPlanOf(run *v1alpha1.Run, w *executor.Work) kind.LastPlan {
	p := run.Status.Plan
	shown := kind.LastPlan{ID: cut(p.ID, maxShownID), Add: p.Add, Change: p.Change, Destroy: p.Destroy,
		Secret: state.PlanRefOf(w.Workspace.State).Name}
	for i, d := range p.Destructive {
		if i == maxShownDestructive {
			shown.Destructive = append(shown.Destructive, fmt.Sprintf("… and %d more", len(p.Destructive)-i))
			break
		}
		shown.Destructive = append(shown.Destructive, cut(d, maxShownChange))
	}
	if start := run.Status.StartTime; start != nil {
		shown.At = start.Time
		if end := run.Status.CompletionTime; end != nil && end.After(start.Time) {
			shown.Took = end.Sub(start.Time)
		}
	}
	return shown
}

// cut is s, shortened to at most n bytes (at a rune boundary) with "…" when it was longer.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// holdInputs holds raw, the inputs of run, for the Work's runner account, once they fit what a
// runner reads.
func (x *Executor) holdInputs(w *executor.Work, run *v1alpha1.Run, raw []byte) error {
	if len(raw) > artifact.MaxInputsBytes {
		return errors.Errorf(errInputsTooLarge, run.Name, len(raw), artifact.MaxInputsBytes)
	}
	x.inputs.hold(run, artifact.HeldInputs{Raw: raw, ServiceAccount: runnerServiceAccount(w)})
	return nil
}

// takeOver holds again the inputs of an active Run started by another controller (this one's
// former self, or the leader before it) that its runner may still ask for: rendered from the
// instance as it is now, when they are the very inputs the Run was made with; otherwise they
// are gone, and a runner that asks fails its Run, and the next one starts. A Run not started yet
// (Queued, or made and not marked Pending) gets its inputs as it starts. Failing here changes
// nothing of the instance's reconcile (its runner asks again, and the next reconcile tries
// again), and a Run already running may have read its inputs long ago.
func (x *Executor) takeOver(ctx context.Context, w *executor.Work, run *v1alpha1.Run) {
	if run.Status.Executor == v1alpha1.ExecutorProcess || x.inputs.holds(run) ||
		(run.Status.Phase != v1alpha1.PhasePending && run.Status.Phase != v1alpha1.PhaseRunning) {
		return
	}
	log := ctrl.LoggerFrom(ctx).WithValues("run", run.Name)
	raw, same, err := x.sameInputs(ctx, w, run)
	switch {
	case err != nil:
		log.Info("Cannot render again the inputs of an active Run another controller started", "error", err.Error())
	case !same:
		log.Info("The inputs of an active Run another controller started cannot be made again: its instance or module changed since")
		x.inputs.hold(run, artifact.HeldInputs{ServiceAccount: runnerServiceAccount(w), Gone: true})
	default:
		if err := x.holdInputs(w, run, raw); err != nil {
			log.Info("Cannot hold again the inputs of an active Run another controller started", "error", err.Error())
		}
	}
}
