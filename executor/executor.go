// Package executor is the line between deciding and doing: the instance client (reconcile)
// decides what an instance needs (an apply, a destroy, a drift plan, a refresh, or the preview
// plan of a module revision it is not applied with yet) and hands it, as a
// Work, to an Executor, which decides how. Two implement it: executor/process runs terraform in
// this process; executor/job hands each Work to a Kubernetes Job as a Run, and executor/runner is
// what that Job's pod executes.
package executor

import (
	"context"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/module"
	"github.com/modkind/modkind/state"
	"github.com/modkind/modkind/terraform"
)

// A Work is one decision of the instance client, ready to run: an operation on an instance, with
// everything it was decided from, rendered once.
type Work struct {
	Op       v1alpha1.RunOperation
	Instance *kind.Instance
	// Module is the module the instance is applied with.
	Module *module.Module
	// Workspace is the instance's terraform working set: the rendered root module, provider
	// configuration, state and plan Secrets, guard and approval. Dir is the executor's to set.
	Workspace *terraform.Workspace
	// Stored is the state the instance was observed with, nil when it has none.
	Stored *state.Stored
	// MadeFrom identifies what a plan of this Work is made from (spec generation, rendered
	// inputs, module, state): a plan that waits for approval or was refused is not made again
	// while it is unchanged and younger than HeldFor.
	MadeFrom string
	HeldFor  time.Duration
	// DriftCheckedAt is when the instance was last known to match its configuration: a drift
	// plan that ended since is news.
	DriftCheckedAt time.Time
	// Events receives what people should see of the run.
	Events event.Recorder
	// Seen is what the executor's Busy saw, for its Execute in the same reconcile.
	Seen any
}

// A Result is what became of a Work.
type Result struct {
	// Pending says the Work was handed on (a Run a Job executes): its result comes later, and
	// the instance is reconciled again when it does.
	Pending bool
	// Stored is the state the run left, nil when unknown or unchanged.
	Stored *state.Stored
	// Plan is the plan the run made, as status shows it; nil for none.
	Plan *kind.LastPlan
	// Preview is what a plan-only run (OperationPlan) found: counts and addresses, never values;
	// nil for any other operation, and when the plan failed (Err).
	Preview *v1alpha1.RunPlan
	// Changes says a drift plan found the objects differ from the configuration.
	Changes bool
	// LockBroken is the stale state lock the run broke, nil for none.
	LockBroken *state.BrokenLock
	// QueuedAt is when the Run that waits for a run slot (Err, one of slots') was made to wait
	// where others see it, Queued; zero when the wait is not shown on a Run (process mode).
	QueuedAt time.Time
	// Err is how the run failed, waits for approval (*terraform.AwaitingApprovalError) or was
	// refused (*terraform.RefusedPlanError); a run that waits for a run slot is one of slots'.
	Err error
}

// An Executor runs the Works the instance client decides on.
type Executor interface {
	// Busy reports whether a run of the instance is still under way where the controller does
	// not wait for it (a Run a Job executes): the instance is left alone until it ends.
	Busy(ctx context.Context, w *Work) (bool, error)
	// Execute runs the Work, or hands it on (Result.Pending).
	Execute(ctx context.Context, w *Work) Result
	// EndedPlan returns the plan of the instance's newest run when it ended without the
	// controller waiting for it (an Apply Run a Job executed), as Busy saw it; nil when none.
	// Status shows it as it shows the plan of a run Execute returns: an Apply Run that succeeded
	// reaches no Execute.
	EndedPlan(w *Work) *kind.LastPlan
	// Unsaved returns the state a run of the instance left where the executor runs terraform and
	// that may not be stored yet (a controller killed before it stored it), nil when none.
	Unsaved(w *Work) *state.State
	// Forget drops what the executor keeps of an instance that is gone.
	Forget(w *Work)
	// Watch adds what must reconcile an instance of gvk again to its controller: the end of a
	// Run the executor handed on.
	Watch(c controller.Controller, gvk schema.GroupVersionKind) error
}
