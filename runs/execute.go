package runs

import (
	"context"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/state"
	"github.com/modkind/modkind/terraform"
)

const (
	errDeleteState = "cannot delete Terraform state after destroy"
	errUnknownOp   = "modkind does not run operation"
)

// Execute does op's terraform work on the workspace, from the state stored, as the controller's
// process executor and a runner pod both do: an Apply plans and applies (or holds the plan for
// approval, or refuses it), a Refresh reads the objects into the state, a DriftPlan looks for
// changes made outside, a Plan previews a revision and writes nothing, and a Destroy destroys everything, then deletes the readable plan and,
// only then, the state.
func Execute(ctx context.Context, r *terraform.Harness, op v1alpha1.RunOperation, ws *terraform.Workspace, stored *state.Stored) Outcome {
	if ws.Log == nil {
		ws.Log = terraform.NewRunLog()
	}
	o := execute(ctx, r, op, ws, stored)
	// Redacted with what the run learned: readFresh adds the state's sensitive values.
	o.Log = ws.Log.Text(ws.Redactor)
	return o
}

func execute(ctx context.Context, r *terraform.Harness, op v1alpha1.RunOperation, ws *terraform.Workspace, stored *state.Stored) Outcome {
	switch op {
	case v1alpha1.OperationApply:
		saved, summary, err := r.Apply(ctx, ws, stored)
		return Outcome{Plan: summary, Stored: saved, OutputsPublished: true, Err: err}
	case v1alpha1.OperationRefresh:
		saved, err := r.Refresh(ctx, ws, stored)
		return Outcome{Stored: saved, OutputsPublished: true, Err: err}
	case v1alpha1.OperationDriftPlan:
		changes, err := r.Plan(ctx, ws, stored)
		return Outcome{Stored: stored, Changes: changes, Note: DriftNote(changes), Err: err}
	case v1alpha1.OperationPlan:
		// A preview: its summary is only ever shown, and it leaves the state as it found it.
		summary, err := r.Preview(ctx, ws, stored)
		return Outcome{Plan: summary, Err: err}
	case v1alpha1.OperationDestroy:
		if err := r.Destroy(ctx, ws, stored); err != nil {
			return Outcome{Err: err}
		}
		// The plan goes first: were the state gone and this failed, nothing would delete it later.
		if err := r.DeletePlanView(ctx, ws); err != nil {
			return Outcome{Err: err}
		}
		return Outcome{Err: errors.Wrap(r.States.Delete(ctx, ws.State), errDeleteState)}
	}
	return Outcome{Err: errors.Errorf("%s %s", errUnknownOp, op)}
}
