package terraform

import (
	"context"
	"fmt"
	"strings"

	tfjson "github.com/hashicorp/terraform-json"

	"github.com/modkind/modkind/state"
)

const (
	// maxPlanText keeps the text, with the Secret's metadata, under the 1 MiB a Secret may hold.
	maxPlanText = 900 << 10
)

// storePlanView stores the readable form of a plan: rendered from plan, its show -json, when it
// was shown (it waits for approval or was refused), else from stream, which names the changed
// objects and outputs but no values. A plan without changes is said in words. read is the plan
// as the run read it before terraform, nil when it did not.
func (r *Harness) storePlanView(ctx context.Context, ws *Workspace, read *state.PlanRead, plan *tfjson.Plan, stream *planStream, s *PlanSummary) error {
	text := noChanges
	switch {
	case plan != nil:
		text = planText(ws.Redactor, renderPlan(plan, *s))
	case stream != nil && s.ID != "":
		text = planText(ws.Redactor, renderStream(stream, *s))
	}
	return r.Plans.Write(ctx, state.PlanRefOf(ws.State), read, state.PlanView{ID: s.ID, Summary: CountsOf(s.Add, s.Change, s.Destroy), At: s.At, Text: text})
}

// readPlan reads the workspace's plan Secret before terraform runs (see state.Plans.Read).
func (r *Harness) readPlan(ctx context.Context, ws *Workspace) (*state.PlanRead, error) {
	return r.Plans.Read(ctx, state.PlanRefOf(ws.State))
}

// planText is the text of a plan as it is stored: every value read from a Secret redacted (the
// module may have un-marked one with nonsensitive()), and cut to fit a Secret.
func planText(r *Redactor, raw string) string {
	text := r.redactAll(raw)
	if len(text) <= maxPlanText {
		return text
	}
	cut := strings.LastIndexByte(text[:maxPlanText], '\n') + 1
	if cut == 0 {
		cut = maxPlanText
	}
	return text[:cut] + fmt.Sprintf("\n… %d more bytes of the plan are not shown.\n", len(text)-cut)
}

// DeletePlanView deletes the plan Secret of a workspace's state, if it is modkind's.
func (r *Harness) DeletePlanView(ctx context.Context, ws *Workspace) error {
	return r.Plans.Delete(ctx, state.PlanRefOf(ws.State))
}

// CountsOf is a plan's counts as its plan Secret and Runs show them: "+1 ~0 -0".
func CountsOf(add, change, destroy int) string {
	return fmt.Sprintf("+%d ~%d -%d", add, change, destroy)
}
