package terraform

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/hashicorp/terraform-exec/tfexec"
	tfjson "github.com/hashicorp/terraform-json"

	"github.com/modkind/modkind/state"
)

// Apply plans and applies the run's root module, saving the state Terraform wrote whether or not
// the apply succeeded, since a failed apply may still have created objects.
//
// It applies exactly the plan it saved, never a fresh one, and refuses with a *RefusedPlanError a
// plan that would destroy or replace anything unless the run allows it. The plan's summary is
// returned whenever a plan was made.
func (r *Harness) Apply(ctx context.Context, run *Workspace, stored *state.Stored) (*state.Stored, *PlanSummary, error) {
	var (
		saved   *state.Stored
		summary *PlanSummary
	)
	err := r.withTerraform(ctx, "apply", run, stored, func(tf *session, stored *state.Stored) error {
		var err error
		saved, summary, err = r.apply(ctx, tf, run, stored)
		return err
	})
	// An address is no value, but an instance key may be one (for_each over a Secret's keys).
	return saved, run.Redactor.Summary(summary), err
}

func (r *Harness) apply(ctx context.Context, tf *session, run *Workspace, stored *state.Stored) (*state.Stored, *PlanSummary, error) {
	if !run.ApprovalRequired {
		if tracksNothing(stored) {
			return r.applyFresh(ctx, tf, run, stored)
		}
		if saved, summary, decided, err := r.applyAsked(ctx, tf, run, stored); decided {
			return saved, summary, err
		}
	}
	planFile := filepath.Join(run.Dir, filePlan)
	defer os.Remove(planFile)
	start := time.Now()
	changes, stream, err := tf.planJSON(ctx, tfexec.Out(planFile))
	if err != nil && run.Root.Unguarded != nil && strings.Contains(err.Error(), "prevent_destroy") {
		// prevent_destroy fails a plan without saying what forces a replacement, and refuses
		// even to replace a tainted object, which the guard allows. The guard below decides on
		// the same plan without it.
		changes, stream, err = r.planUnguarded(ctx, tf, run, planFile)
	}
	if err != nil {
		// The run is an apply: a plan that fails fails it, as the same error does when terraform
		// meets it while applying (a check on a value known only then), so a retry of a failed
		// apply says what the first try said.
		return nil, nil, run.Redactor.Error(errors.Wrap(err, errApply))
	}
	// A plan that changes nothing (plan's detailed exit code) is neither shown nor applied. One
	// with changes is judged from plan's JSON stream, which says what each change does to which
	// object. It is shown (terraform show -json, one more terraform process) only when something
	// needs what the stream lacks: a plan that waits for approval is identified by every value it
	// changes (planID) and a person reads it whole; a refused plan says which attributes force
	// each replacement; a stream modkind cannot fully read is not trusted alone.
	summary := &PlanSummary{At: start}
	var plan *tfjson.Plan
	if changes {
		streamed, complete := stream.summarize(run.Inputs)
		*summary = streamed
		if run.ApprovalRequired || !complete || (len(streamed.Destructive) > 0 && !run.AllowDestructive) {
			plan, err = tf.show(ctx, planFile)
			if err != nil {
				return nil, nil, run.Redactor.Error(errors.Wrap(err, errShowPlan))
			}
			*summary = withStreamed(Summarize(plan, run.IDKey), streamed.Destructive)
		}
		summary.At = start
	}
	summary.Took = time.Since(start)
	// Stored before the guard and approval decide, so that a refused or waiting plan can be read.
	if err := r.storePlanView(ctx, run, nil, plan, stream, summary); err != nil {
		return stored, summary, err
	}
	if !changes {
		// Nothing to apply; only record that these inputs are applied.
		saved, err := r.save(ctx, run, stored, run.Inputs)
		return saved, summary, err
	}
	if len(summary.Destructive) > 0 && !run.AllowDestructive {
		metricRefusedPlans.Inc()
		// Addresses and attribute paths are no values; the error stays typed for callers.
		return stored, summary, &RefusedPlanError{Changes: run.Redactor.Changes(summary.Destructive)}
	}
	if run.ApprovalRequired && run.ApprovedPlan != summary.ID {
		return stored, summary, &AwaitingApprovalError{Plan: *summary}
	}
	stop := r.persistWhileRunning(run, stored)
	applyErr := tf.apply(ctx, tfexec.DirOrPlan(planFile))
	stored = stop()
	tf.done()
	saved, err := r.saveApplied(ctx, run, stored, applyErr)
	return saved, summary, err
}

// tracksNothing reports whether stored tracks no object at all (no state, or one that lists no
// resources). A state that cannot be read tracks something, as far as the guard is concerned.
func tracksNothing(stored *state.Stored) bool {
	if stored == nil || stored.State == nil {
		return true
	}
	n, err := stored.ResourceCount()
	return err == nil && n == 0
}

// applyFresh applies a root module whose state tracks nothing in one terraform call, the way
// `terraform apply -auto-approve` plans and applies: with nothing in the state no plan can
// destroy or replace anything, so the guard has nothing to judge, and the separate plan would
// only double the work of every create. The JSON stream of the apply says what it planned.
// A run that waits for approval plans first, as any other.
func (r *Harness) applyFresh(ctx context.Context, tf *session, run *Workspace, stored *state.Stored) (*state.Stored, *PlanSummary, error) {
	start := time.Now()
	read, err := r.readPlan(ctx, run)
	if err != nil {
		return stored, nil, err
	}
	stop := r.persistWhileRunning(run, stored)
	stream, applyErr := tf.applyJSON(ctx)
	stored = stop()
	tf.done()
	summary := &PlanSummary{}
	if stream != nil {
		*summary, _ = stream.summarize(run.Inputs)
	}
	// The plan's own time, not the apply's: the stream says when planning ended.
	summary.At, summary.Took = start, time.Since(start)
	if took, ok := stream.planTook(); ok {
		summary.Took = took
	}
	saved, err := r.saveApplied(ctx, run, stored, applyErr)
	if err != nil {
		return saved, summary, err
	}
	return saved, summary, r.storePlanView(ctx, run, read, nil, stream, summary)
}

// applyAsked plans and applies in one terraform call, `apply` answering terraform's question
// itself (see asked.go). decided is false when nothing was changed and nothing decided: terraform
// was answered "no" (a plan that destroys or replaces something, or one not read completely), or
// failed before it asked. The saved-plan path then plans again, to refuse, show or apply that
// plan, and to say why a plan failed as it always has.
func (r *Harness) applyAsked(ctx context.Context, tf *session, run *Workspace, stored *state.Stored) (saved *state.Stored, summary *PlanSummary, decided bool, err error) {
	start := time.Now()
	read, err := r.readPlan(ctx, run)
	if err != nil {
		return stored, nil, true, err
	}
	var (
		ps      *planStream
		planned PlanSummary
	)
	var planTook time.Duration
	decide := func(out string) bool {
		// Terraform asks once it has planned: the plan's own time, not the apply's.
		planTook = time.Since(start)
		var approved bool
		approved, ps, planned = answer(out, run.Inputs, run.AllowDestructive)
		return approved
	}
	stop := r.persistWhileRunning(run, stored)
	tf.log.command("apply")
	asked, approved, out, applyErr := tf.applyAsking(ctx, decide)
	stored = stop()
	if asked && !approved {
		tf.log.add("(answered no: the plan is made again, saved, to be judged whole)")
	}
	tf.log.failed(applyErr)
	summary = &PlanSummary{At: start}
	noChanges := !asked && applyErr == nil && strings.Contains(out, askNoChanges)
	if noChanges || approved {
		tf.done()
	}
	switch {
	case noChanges:
		// A plan that changes nothing: applied without a question, as terraform does.
		summary.Took = time.Since(start)
		if err := r.storePlanView(ctx, run, read, nil, nil, summary); err != nil {
			return stored, summary, true, err
		}
		saved, err := r.save(ctx, run, stored, run.Inputs)
		return saved, summary, true, err
	case !approved:
		return stored, nil, false, nil
	}
	*summary = planned
	summary.At, summary.Took = start, planTook
	saved, err = r.saveApplied(ctx, run, stored, applyErr)
	if err != nil {
		return saved, summary, true, err
	}
	return saved, summary, true, r.storePlanView(ctx, run, read, nil, ps, summary)
}

// planUnguarded saves a plan of the run's root module without lifecycle.prevent_destroy, then
// puts the guarded root module back.
func (r *Harness) planUnguarded(ctx context.Context, tf *session, run *Workspace, planFile string) (bool, *planStream, error) {
	main := filepath.Join(run.Dir, FileMain)
	if err := os.WriteFile(main, run.Root.Unguarded, 0o600); err != nil {
		return false, nil, errors.Wrap(err, errWorkDir)
	}
	changes, stream, err := tf.planJSON(ctx, tfexec.Out(planFile))
	if werr := os.WriteFile(main, run.Root.Main, 0o600); werr != nil && err == nil {
		err = errors.Wrap(werr, errWorkDir)
	}
	return changes, stream, err
}
