package instance

import (
	"context"
	"fmt"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"k8s.io/apimachinery/pkg/types"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/executor"
	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/kind/fields"
	"github.com/modkind/modkind/slots"
	"github.com/modkind/modkind/state"
	"github.com/modkind/modkind/terraform"
)

const reasonApplied event.Reason = "Applied"

// Create applies an instance that has no state yet. An instance of a kind with one resource that
// already names an object (its external name) adopts that object: terraform imports it.
func (e *external) Create(ctx context.Context, _ resource.Managed) (managed.ExternalCreation, error) {
	details, err := e.apply(ctx)
	return managed.ExternalCreation{ConnectionDetails: details}, err
}

// Update applies an instance whose inputs changed, or whose objects drifted.
func (e *external) Update(ctx context.Context, _ resource.Managed) (managed.ExternalUpdate, error) {
	details, err := e.apply(ctx)
	return managed.ExternalUpdate{ConnectionDetails: details}, err
}

// apply has the instance's inputs applied, and shows the plan that was made and, when the apply
// ended here, what it left (see showApplied), returning the outputs as connection details.
func (e *external) apply(ctx context.Context) (managed.ConnectionDetails, error) {
	if e.busy {
		return nil, nil
	}
	if err := e.adopting(); err != nil {
		return nil, err
	}
	e.work.MadeFrom = e.madeFrom()
	e.work.HeldFor, _ = e.driftInterval()
	res := e.execute(ctx, v1alpha1.OperationApply)
	if res.Plan != nil {
		shown := *res.Plan
		if isHeld(res.Err) {
			shown = keepShownTime(e.inst, shown)
		}
		e.notes.SetPlan(e.inst.GetUID(), shown)
		e.inst.SetStatusField(fields.LastPlan, shown.Value())
	}
	if !res.Pending {
		e.noteRevision(res.Err)
	}
	if res.Err != nil || res.Pending {
		return nil, res.Err
	}
	e.drift.Checked(e.inst.GetUID())
	e.inst.ClearStatusField(fields.PendingDrift)
	if p := res.Plan; p != nil {
		e.record.Event(e.inst, event.Normal(reasonApplied, fmt.Sprintf("Applied plan %s: %d to add, %d to change, %d to destroy (planned in %s)",
			p.ID, p.Add, p.Change, p.Destroy, p.Took.Round(time.Millisecond))))
		e.notes.SetAnnounced(e.inst.GetUID())
	}
	if res.Stored == nil {
		return nil, nil
	}
	e.inst.SetState(e.work.Workspace.State.Name, res.Stored)
	e.remember(ctx, res.Stored)
	return e.showApplied(res.Stored)
}

// showApplied shows in status what an apply that ended in this reconcile left: its outputs, the
// sources of its inputs, the instance Ready, and the generation it applied; and names the object a kind of one resource
// made (its external name). The status crossplane-runtime writes after Create or Update is then
// the one the next Observe would write, and that Observe writes none: one status write per apply,
// where showing the outputs only at the next Observe took two.
func (e *external) showApplied(stored *state.Stored) (managed.ConnectionDetails, error) {
	outputs, err := stored.Outputs()
	if err != nil {
		return nil, errors.Wrap(err, errOutputs)
	}
	shown := e.outputPolicy(stored)
	details, err := e.publishOutputs(outputs, shown)
	if err != nil {
		return nil, err
	}
	e.setExternalName(shown.shown(e.snap.Module, outputs))
	e.showResolved()
	e.inst.SetConditions(xpv2.Available())
	e.notes.SetApplied(e.inst.GetUID(), types.NamespacedName{Namespace: e.inst.GetNamespace(), Name: e.inst.GetName()})
	e.inst.SetObservedGeneration(e.inst.GetGeneration())
	return details, nil
}

// adopting renders the instance's root module with an import block when it is of a kind of one
// resource, has no state, and names an existing object (its external name): the first apply
// imports that object rather than creating a second. The inputs stay those without the import
// block: once imported, it changes nothing.
func (e *external) adopting() error {
	r := e.snap.Module.Resource
	if r == nil || r.IDAttribute == "" || e.work.Stored != nil || meta.GetExternalName(e.inst) == "" {
		return nil
	}
	in := e.inputs
	in.ImportID = meta.GetExternalName(e.inst)
	root, err := terraform.Render(e.snap.Module, in)
	if err != nil {
		return errors.Wrap(err, errRender)
	}
	e.work.Workspace.Root = root
	return nil
}

// Delete has everything the instance's state tracks destroyed; the executor deletes the state
// only then.
func (e *external) Delete(ctx context.Context, _ resource.Managed) (managed.ExternalDelete, error) {
	if e.busy {
		return managed.ExternalDelete{}, nil
	}
	res := e.execute(ctx, v1alpha1.OperationDestroy)
	if res.Err != nil || res.Pending {
		// A destroy handed on deletes the state once it destroyed everything; Observe then sees
		// it gone.
		return managed.ExternalDelete{}, res.Err
	}
	e.inst.ClearStatusField(fields.State)
	e.drift.Forget(e.inst.GetUID())
	e.notes.Forget(e.inst.GetUID())
	e.exec.Forget(e.work)
	return managed.ExternalDelete{}, nil
}

func (e *external) Disconnect(context.Context) error { return nil }

// execute hands the Work of op to the executor, and notes what its run met: a stale lock it broke
// (shown in status at once, as an apply's status is the next observe's: see showApplied; and kept
// for the observes after), or no free run slot (the instance is tried again in a few seconds
// rather than after the work queue's backoff for a failure).
func (e *external) execute(ctx context.Context, op v1alpha1.RunOperation) executor.Result {
	e.work.Op = op
	res := e.exec.Execute(ctx, e.work)
	if res.LockBroken != nil {
		e.notes.SetLockBroken(e.inst.GetUID(), *res.LockBroken)
		e.inst.SetLockBroken(*res.LockBroken)
	}
	if e.waiters != nil && slots.IsWaiting(res.Err) {
		e.waiters.Wait(slots.Key(e.kind.gvk, types.NamespacedName{Namespace: e.inst.GetNamespace(), Name: e.inst.GetName()}), res.Err)
	}
	if quietWait(res, time.Now()) {
		// Handed on: its Run shows the wait, Queued, and the instance is tried again at its
		// waiter's pace (the waiters above) with nothing new to write. The event that says an
		// apply was handed on (crossplane-runtime's, after Create or Update) is recorded when
		// the Run starts, not at each try.
		if op == v1alpha1.OperationApply {
			e.notes.SetAnnounced(e.inst.GetUID())
		}
		res.Err, res.Pending = nil, true
	}
	if res.Pending {
		e.notes.SetUnderWay(e.inst.GetUID(), true)
	}
	return res
}

// waitShownAfter is how long a Run waits for a run slot, Queued, before its instance shows the
// wait (Synced=False, the wait's message). A wait that short is part of a change that starts
// many Runs at once, as a Pending pod is part of a rollout: shown on the instance, it was two
// status writes more per instance whose Run waited (the wait, and Synced again when the Run
// started). The Run shows it from the start.
const waitShownAfter = 10 * time.Second

// quietWait reports whether res is a wait for a run slot that a Run shows, Queued, for less than
// waitShownAfter at now: its instance does not show it yet.
func quietWait(res executor.Result, now time.Time) bool {
	return slots.IsWaiting(res.Err) && !res.QueuedAt.IsZero() && now.Sub(res.QueuedAt) < waitShownAfter
}

// isHeld says a run ended with a plan that waits for approval or was refused.
func isHeld(err error) bool {
	var waiting *terraform.AwaitingApprovalError
	var refused *terraform.RefusedPlanError
	return errors.As(err, &waiting) || errors.As(err, &refused)
}

// keepShownTime returns p with the time and duration status shows, when status shows p: a plan
// that waits for approval or was refused, made again, is the plan shown, made when it was first
// made (as its Secret keeps that time). Status is then not rewritten for a plan that did not
// change. A plan that is applied shows when it was made, even with the id of an earlier one.
func keepShownTime(inst *kind.Instance, p kind.LastPlan) kind.LastPlan {
	id, at, took, ok := inst.ShownPlan()
	if p.ID == "" || id != p.ID || !ok {
		return p
	}
	p.At, p.Took = at, took
	return p
}

// remember has the states the polls read keep stored, the state this controller's run wrote and
// returned, as if they had read it. A failure only costs the next poll a read.
func (e *external) remember(ctx context.Context, stored *state.Stored) {
	if m, ok := e.states.(statesMemory); ok {
		_ = m.Remember(ctx, e.work.Workspace.State, stored)
	}
}
