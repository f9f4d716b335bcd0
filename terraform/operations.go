package terraform

import (
	"context"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/modkind/modkind/state"
)

// Plan reports whether applying the run would change anything, refreshing first so that drift
// outside Terraform is seen. It never writes state.
func (r *Harness) Plan(ctx context.Context, run *Workspace, stored *state.Stored) (bool, error) {
	var changes bool
	err := r.withTerraform(ctx, "plan", run, stored, func(tf *session, _ *state.Stored) error {
		var err error
		changes, err = tf.plan(ctx)
		return run.Redactor.Error(errors.Wrap(err, errPlan))
	})
	return changes, err
}

// Refresh updates the run's state, and the outputs, from the real objects and changes nothing
// else, as an Observe-only instance needs. The inputs recorded as applied stay as they were.
//
// An output computed from a variable alone follows the run's inputs, even those never applied:
// the state keeps no copy of the variables last applied to evaluate it from.
func (r *Harness) Refresh(ctx context.Context, run *Workspace, stored *state.Stored) (*state.Stored, error) {
	saved := stored
	err := r.withTerraform(ctx, "refresh", run, stored, func(tf *session, stored *state.Stored) error {
		saved = stored
		err := tf.refresh(ctx)
		tf.done()
		if err != nil {
			return run.Redactor.Error(errors.Wrap(err, errRefresh))
		}
		inputs := ""
		if stored != nil {
			inputs = stored.AppliedInputs
		}
		saved, err = r.save(ctx, run, stored, inputs)
		return err
	})
	return saved, err
}

// Destroy destroys everything in the run's state. The state is saved whatever happens; it is
// deleted only by the caller and only after a successful destroy.
func (r *Harness) Destroy(ctx context.Context, run *Workspace, stored *state.Stored) error {
	return r.withTerraform(ctx, "destroy", run, stored, func(tf *session, stored *state.Stored) error {
		stop := r.persistWhileRunning(run, stored)
		destroyErr := tf.destroy(ctx)
		stored = stop()
		tf.done()
		if _, err := r.save(ctx, run, stored, ""); err != nil {
			return err
		}
		return run.Redactor.Error(errors.Wrap(destroyErr, errDestroy))
	})
}
