// Package process is the executor that runs terraform in the controller's own process, with the
// controller's identity: each Work is a run of the terraform harness in the instance's work
// directory below WorkRoot, at most --max-concurrent-runs at once (shared fairly among
// namespaces; a slot freed wakes the next waiting instance), recorded as a Run whose history the
// recorder keeps in memory, this controller being its only writer. A plan that waits for approval
// or was refused is remembered, so that it is not made again while nothing it was made from
// changed.
package process

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	xpevent "github.com/crossplane/crossplane-runtime/v2/pkg/event"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/executor"
	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/runs"
	"github.com/modkind/modkind/slots"
	"github.com/modkind/modkind/state"
	"github.com/modkind/modkind/terraform"
)

const (
	reasonLockBroken xpevent.Reason = "StateLockBroken"
	reasonRecovered  xpevent.Reason = "StateRecovered"
)

// Executor runs Works as terraform processes of this controller.
type Executor struct {
	// Harness is the terraform harness, with the controller's run slots.
	Harness *terraform.Harness
	// WorkRoot holds one work directory per instance.
	WorkRoot string
	// Runs records each run as a Run.
	Runs *runs.Recorder
	// Waiters are the instances waiting for a run slot: a run that gives back its slot or its
	// place in its namespace's share wakes the next of them (Watch).
	Waiters *slots.Waiters

	mu   sync.Mutex
	held map[types.UID]heldPlan
	// freed has, per kind watched, the channel a freed slot is told on.
	freed []chan event.GenericEvent
}

// A heldPlan is a plan that waits for approval or was refused, with what it was made from: while
// that is unchanged, making it again would make the same plan.
type heldPlan struct {
	// from identifies what the plan was made from: spec generation, inputs, module and state.
	from string
	// id is the plan's id; plan is as status showed it; err is how the run ended.
	id   string
	plan kind.LastPlan
	err  error
	// at is when it was made.
	at time.Time
}

// Busy is false: the controller waits for every run it starts itself.
func (x *Executor) Busy(context.Context, *executor.Work) (bool, error) { return false, nil }

// Watch has a run slot freed in this process reconcile at once the instance of gvk whose turn it
// is (round robin by namespace) and the one of the slot's namespace that has waited longest,
// rather than at their next retries. A run's own end needs no watch: it ends before its
// reconcile does.
func (x *Executor) Watch(c controller.Controller, gvk schema.GroupVersionKind) error {
	if x.Waiters == nil {
		return nil
	}
	ch := make(chan event.GenericEvent, freedBuffer)
	x.mu.Lock()
	first := len(x.freed) == 0
	x.freed = append(x.freed, ch)
	x.mu.Unlock()
	if first {
		x.Harness.Slots.OnFreed(x.slotFreed)
	}
	wake := handler.Funcs{GenericFunc: func(_ context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		if nn, ok := x.Waiters.Next(gvk); ok {
			q.Add(reconcile.Request{NamespacedName: nn})
		}
		if nn, ok := x.Waiters.NextIn(gvk, e.Object.GetNamespace()); ok {
			q.Add(reconcile.Request{NamespacedName: nn})
		}
	}}
	return c.Watch(source.Channel(ch, wake))
}

// freedBuffer is how many freed slots a kind's controller may not have taken yet before more are
// dropped: a waiter not woken tries again at its own pace.
const freedBuffer = 1024

// slotFreed tells every kind watched that a run of namespace freed its slot or place; it never
// blocks the pool.
func (x *Executor) slotFreed(namespace string) {
	e := event.GenericEvent{Object: &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: namespace}}}
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, ch := range x.freed {
		select {
		case ch <- e:
		default:
		}
	}
}

// Unsaved returns the state file the instance's last terraform left in its work directory, nil
// when there is none (or only a torn one): the next run adopts it when it is newer than the stored
// state.
func (x *Executor) Unsaved(w *executor.Work) *state.State {
	inst := w.Instance
	ws := terraform.Workspace{Dir: WorkDir(x.WorkRoot, inst.GroupVersionKind(), inst.GetNamespace(), inst.GetName(), inst.GetUID())}
	st, err := ws.LocalState()
	if err != nil {
		return nil
	}
	return st
}

// Forget drops what is remembered of the instance: its held plan and its Runs.
func (x *Executor) Forget(w *executor.Work) {
	x.Runs.Forget(w.Instance.GetUID())
	x.mu.Lock()
	defer x.mu.Unlock()
	delete(x.held, w.Instance.GetUID())
}

// Execute runs the Work's terraform in the instance's work directory and records it as a Run. A
// Destroy that succeeded removes the work directory: it holds rendered values, some maybe
// sensitive.
func (x *Executor) Execute(ctx context.Context, w *executor.Work) executor.Result {
	var broken *state.BrokenLock
	x.prepare(w, &broken)
	var res executor.Result
	switch w.Op {
	case v1alpha1.OperationApply:
		res = x.apply(ctx, w)
	case v1alpha1.OperationPlan:
		res = x.preview(ctx, w)
	default:
		rec := x.recordOnceLocked(ctx, w)
		o := runs.Execute(ctx, x.Harness, w.Op, w.Workspace, w.Stored)
		rec.Finish(ctx, o)
		res = executor.Result{Stored: o.Stored, Changes: o.Changes, Err: o.Err}
		if w.Op == v1alpha1.OperationDestroy && o.Err == nil {
			x.Forget(w)
			// The work directories hold rendered values, some maybe sensitive; nothing needs them any more.
			_ = os.RemoveAll(w.Workspace.Dir)
			inst := w.Instance
			_ = os.RemoveAll(PreviewDir(x.WorkRoot, inst.GroupVersionKind(), inst.GetNamespace(), inst.GetName(), inst.GetUID()))
		}
	}
	res.LockBroken = broken
	return res
}

// preview plans the Work in a work directory of its own beside the instance's (PreviewDir): the
// preview's module is another revision, which would otherwise replace the instance's initialized
// module and providers for its next real run. It stores nothing.
func (x *Executor) preview(ctx context.Context, w *executor.Work) executor.Result {
	inst := w.Instance
	w.Workspace.Dir = PreviewDir(x.WorkRoot, inst.GroupVersionKind(), inst.GetNamespace(), inst.GetName(), inst.GetUID())
	rec := x.recordOnceLocked(ctx, w)
	o := runs.Execute(ctx, x.Harness, w.Op, w.Workspace, w.Stored)
	rec.Finish(ctx, o)
	res := executor.Result{Err: o.Err}
	if o.Err == nil && o.Plan != nil {
		res.Preview = runs.PlanOf(*o.Plan)
	}
	return res
}

// prepare gives the Work's workspace its work directory and owner, and has what the run meets on
// its way (a stale lock broken, a state an interrupted run left) said as events; *broken is the
// lock broken, if any.
func (x *Executor) prepare(w *executor.Work, broken **state.BrokenLock) {
	inst, ws := w.Instance, w.Workspace
	gvk := inst.GroupVersionKind()
	ws.Dir = WorkDir(x.WorkRoot, gvk, inst.GetNamespace(), inst.GetName(), inst.GetUID())
	ws.Owner = &terraform.Owner{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind,
		Namespace: inst.GetNamespace(), Name: inst.GetName(), UID: inst.GetUID()}
	ws.OnRecovered = func(st *state.State) {
		w.Events.Event(inst, xpevent.Normal(reasonRecovered, fmt.Sprintf(
			"saved state serial %d that an interrupted terraform run had written but not stored", st.Serial)))
	}
	ws.OnLockBroken = func(l *state.BrokenLock) {
		*broken = l
		w.Events.Event(inst, xpevent.Warning(reasonLockBroken, errors.Errorf(
			"broke the stale state lock of %s, last renewed %s", l.Holder, l.Renewed.UTC().Format(time.RFC3339))))
	}
}

// apply plans and applies, unless the plan it would make is one held already: that plan waits
// for approval or was refused, and nothing it was made from changed, so each retry answers with
// it and runs no terraform, until the hold lapses (HeldFor: the world is looked at again).
func (x *Executor) apply(ctx context.Context, w *executor.Work) executor.Result {
	if h, ok := x.stillHeld(w); ok {
		return executor.Result{Err: h.err}
	}
	rec := x.recordOnceLocked(ctx, w)
	o := runs.Execute(ctx, x.Harness, w.Op, w.Workspace, w.Stored)
	rec.Finish(ctx, o)
	res := executor.Result{Stored: o.Stored, Err: o.Err}
	summary, err := o.Plan, o.Err
	var held *heldPlan
	if summary != nil {
		p := LastPlan(*summary, w.Workspace)
		res.Plan = &p
		if isHeld(err) {
			held = &heldPlan{from: w.MadeFrom, id: summary.ID, plan: p, err: err, at: time.Now()}
		}
	}
	x.hold(w.Instance.GetUID(), held)
	return res
}

// stillHeld returns the plan the instance's last apply left waiting for approval or refused, when
// nothing it was made from changed, it is not the plan approved now, and it is younger than
// HeldFor (0: no limit).
func (x *Executor) stillHeld(w *executor.Work) (heldPlan, bool) {
	x.mu.Lock()
	h, ok := x.held[w.Instance.GetUID()]
	x.mu.Unlock()
	ws := w.Workspace
	switch {
	case !ok || h.from != w.MadeFrom, ws.ApprovalRequired && ws.ApprovedPlan == h.id,
		w.HeldFor > 0 && time.Since(h.at) >= w.HeldFor:
		return heldPlan{}, false
	}
	return h, true
}

func (x *Executor) hold(uid types.UID, h *heldPlan) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if h == nil {
		delete(x.held, uid)
		return
	}
	if x.held == nil {
		x.held = map[types.UID]heldPlan{}
	}
	x.held[uid] = *h
}

// isHeld says a run ended with a plan that waits for approval or was refused.
func isHeld(err error) bool {
	var waiting *terraform.AwaitingApprovalError
	var refused *terraform.RefusedPlanError
	return errors.As(err, &waiting) || errors.As(err, &refused)
}

// recordOnceLocked records a Run of the Work once the run holds the instance's state Lease, never
// before: another replica's run that holds it is then not taken for one a stopped controller
// left, and a run that never gets the Lease leaves no Run. It is Queued while the run waits for a
// run slot, and Running once it holds one.
func (x *Executor) recordOnceLocked(ctx context.Context, w *executor.Work) *lazyRecord {
	l := &lazyRecord{}
	subject := runs.Subject{Instance: w.Instance, Workspace: w.Workspace, ModuleDigest: w.Module.Digest, Events: w.Events}
	w.Workspace.OnLocked = func() { l.rec = x.Runs.Begin(ctx, w.Op, subject) }
	w.Workspace.OnQueued = func(reason error) { l.rec.Queued(ctx, reason) }
	w.Workspace.OnStarted = func() { l.rec.Started(ctx) }
	return l
}

// lazyRecord is a runs.Record begun, if at all, once the run holds the state Lease.
type lazyRecord struct{ rec *runs.Record }

func (l *lazyRecord) Finish(ctx context.Context, o runs.Outcome) { l.rec.Finish(ctx, o) }

// EndedPlan is nil: the controller waits for every run it executes, and Execute returns its plan.
func (x *Executor) EndedPlan(*executor.Work) *kind.LastPlan { return nil }

// LastPlan is a plan the harness made as status.lastPlan shows it.
func LastPlan(s terraform.PlanSummary, ws *terraform.Workspace) kind.LastPlan {
	p := kind.LastPlan{ID: s.ID, Add: int64(s.Add), Change: int64(s.Change), Destroy: int64(s.Destroy),
		At: s.At, Took: s.Took, Secret: state.PlanRefOf(ws.State).Name}
	for _, d := range s.Destructive {
		p.Destructive = append(p.Destructive, d.String())
	}
	return p
}

// PreviewDir is the work directory of an instance's preview plans under root: beside WorkDir, so
// that the collector removes it with the instance.
func PreviewDir(root string, gvk schema.GroupVersionKind, namespace, name string, uid types.UID) string {
	return WorkDir(root, gvk, namespace, name, uid) + ".preview"
}

// WorkDir is the work directory of an instance under root. The UID keeps a new instance of the
// same name from ever seeing an old one's leftovers; every path element stays within the 255
// bytes a file name may have, whatever the lengths of group and name.
func WorkDir(root string, gvk schema.GroupVersionKind, namespace, name string, uid types.UID) string {
	k := strings.ToLower(gvk.Kind) + "." + gvk.Group
	if len(k) > 200 {
		k = strings.ToLower(gvk.Kind) + "." + state.Digest([]byte(gvk.Group))
	}
	if len(name) > 200 {
		name = name[:200]
	}
	return filepath.Join(root, namespace, k, name+"."+string(uid))
}
