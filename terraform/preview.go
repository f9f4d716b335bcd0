package terraform

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/hashicorp/terraform-exec/tfexec"

	"github.com/modkind/modkind/state"
)

// Preview plans the run's root module as terraform plan does (refreshing first) and returns what
// the plan would do, for a module revision the instance is not applied with yet. It takes the
// state Lease and a run slot as any run does, but it only reads: it never applies, never stores a
// state (not even one an interrupted run left in the work directory) and never writes the
// readable plan an approval or `modkind plan` would read. The destroy/replace guard does not
// stop it: the summary lists the destructive changes, and the caller says whether the guard
// would refuse them.
func (r *Harness) Preview(ctx context.Context, run *Workspace, stored *state.Stored) (*PlanSummary, error) {
	run.PlanOnly = true
	var summary *PlanSummary
	err := r.withTerraform(ctx, "preview", run, stored, func(tf *session, _ *state.Stored) error {
		planFile := filepath.Join(run.Dir, filePlan)
		// The saved plan holds values; it is read once (show) when the stream cannot decide alone.
		defer os.Remove(planFile)
		start := time.Now()
		changes, stream, err := tf.planJSON(ctx, tfexec.Out(planFile))
		if err != nil {
			return run.Redactor.Error(errors.Wrap(err, errPlan))
		}
		s := &PlanSummary{}
		if changes {
			streamed, complete := stream.summarize(run.Inputs)
			*s = streamed
			if !complete {
				plan, err := tf.show(ctx, planFile)
				if err != nil {
					return run.Redactor.Error(errors.Wrap(err, errShowPlan))
				}
				*s = withStreamed(Summarize(plan, run.IDKey), streamed.Destructive)
			}
		}
		tf.done()
		s.At, s.Took = start, time.Since(start)
		summary = run.Redactor.Summary(s)
		return nil
	})
	return summary, err
}

// Replacements counts the objects a plan would replace (not those it deletes outright).
func (s PlanSummary) Replacements() int {
	n := 0
	for _, d := range s.Destructive {
		if d.Action == "replace" {
			n++
		}
	}
	return n
}
