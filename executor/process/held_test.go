package process

import (
	"testing"
	"time"

	"github.com/modkind/modkind/executor"
	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/terraform"
)

// A plan that waits for approval or was refused is not made again while nothing it was made from
// changed: the last run's answer stands until what the plan is made from changes (spec, inputs,
// module or state: MadeFrom), the plan is approved, or the hold lapses (the drift interval).
func TestStillHeld(t *testing.T) {
	waits := &terraform.AwaitingApprovalError{Plan: terraform.PlanSummary{ID: "abc123", Add: 1}}
	work := func(madeFrom, approved string, heldFor time.Duration) *executor.Work {
		inst := &kind.Instance{}
		inst.SetUID("web-uid")
		return &executor.Work{Instance: inst, MadeFrom: madeFrom, HeldFor: heldFor,
			Workspace: &terraform.Workspace{Inputs: "inputs-1", ApprovalRequired: true, ApprovedPlan: approved}}
	}
	held := func(from string, age time.Duration) *heldPlan {
		return &heldPlan{from: from, id: "abc123", err: waits, at: time.Now().Add(-age)}
	}
	cases := map[string]struct {
		reason string
		held   *heldPlan
		w      *executor.Work
		want   error
	}{
		"Unchanged":     {reason: "nothing changed: the plan still waits, without terraform", held: held("from-1", 0), w: work("from-1", "", time.Hour), want: waits},
		"NothingHeld":   {reason: "no plan waits: terraform plans", w: work("from-1", "", time.Hour)},
		"MadeFromOther": {reason: "a plan made from another spec, inputs, module or state is made again", held: held("from-1", 0), w: work("from-2", "", time.Hour)},
		"Approved":      {reason: "the plan approved is applied", held: held("from-1", 0), w: work("from-1", "abc123", time.Hour)},
		"OtherApproved": {reason: "approving another plan than the one waiting changes nothing", held: held("from-1", 0), w: work("from-1", "fff000", time.Hour), want: waits},
		"HoldLapsed":    {reason: "the world is looked at again every drift interval", held: held("from-1", 2*time.Minute), w: work("from-1", "", time.Minute)},
		"NoLapse":       {reason: "with drift detection off, only a change makes the plan again", held: held("from-1", 24*time.Hour), w: work("from-1", "", 0), want: waits},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			x := &Executor{}
			x.hold(tc.w.Instance.GetUID(), tc.held)
			h, ok := x.stillHeld(tc.w)
			var got error
			if ok {
				got = h.err
			}
			if got != tc.want {
				t.Errorf("%s\nstillHeld: want %v, got %v", tc.reason, tc.want, got)
			}
		})
	}
}
