package job

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/executor"
	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/state"
	"github.com/modkind/modkind/terraform"
)

// Which Run's plan status.lastPlan shows after a run a Job executed: the newest Run's, when it is
// an Apply that is no longer active and made a plan; its start and how long it ran stand for the
// plan's time, which a runner does not report.
func TestEndedPlan(t *testing.T) {
	start := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	ref := state.Ref{NamespacedName: types.NamespacedName{Namespace: "team-a", Name: "tfstate-web"}}
	run := func(op v1alpha1.RunOperation, phase v1alpha1.RunPhase, plan *v1alpha1.RunPlan, took time.Duration) *v1alpha1.Run {
		r := &v1alpha1.Run{Spec: v1alpha1.RunSpec{Operation: op, InputsDigest: "in-1"}, Status: v1alpha1.RunStatus{Phase: phase, Plan: plan,
			StartTime: &metav1.Time{Time: start}}}
		if took > 0 {
			r.Status.CompletionTime = &metav1.Time{Time: start.Add(took)}
		}
		return r
	}
	changed := &v1alpha1.RunPlan{ID: "p1", Change: 1}
	shown := &kind.LastPlan{ID: "p1", Change: 1, At: start, Took: 3 * time.Second, Secret: state.PlanRefOf(ref).Name}
	cases := map[string]struct {
		reason string
		latest *v1alpha1.Run
		// stateFrom are the inputs the cached state says were applied ("in-1", the Run's, when
		// empty).
		stateFrom string
		want      *kind.LastPlan
	}{
		"None": {reason: "No Run seen: nothing to show."},
		"StateNotYetSeen": {reason: "An Apply Run that succeeded, before the cache shows the state it wrote: its plan is shown with that state (its event reconciles the instance), not in a status write of its own.",
			latest: run(v1alpha1.OperationApply, v1alpha1.PhaseSucceeded, changed, 3*time.Second), stateFrom: "in-0"},
		"FailedStateOlder": {reason: "An Apply that failed wrote no new state: its plan is shown at once.",
			latest: run(v1alpha1.OperationApply, v1alpha1.PhaseFailed, changed, 3*time.Second), stateFrom: "in-0", want: shown},
		"Succeeded": {reason: "An Apply Run that succeeded shows its plan, with the Run's start and duration.", latest: run(v1alpha1.OperationApply, v1alpha1.PhaseSucceeded, changed, 3*time.Second), want: shown},
		"Failed":    {reason: "An Apply that planned and then failed made that plan too.", latest: run(v1alpha1.OperationApply, v1alpha1.PhaseFailed, changed, 3*time.Second), want: shown},
		"Waiting": {reason: "A plan waiting for approval is the last plan; the Run has not ended, so no duration.",
			latest: run(v1alpha1.OperationApply, v1alpha1.PhaseWaitingForApproval, changed, 0),
			want:   &kind.LastPlan{ID: "p1", Change: 1, At: start, Secret: state.PlanRefOf(ref).Name}},
		"Running":   {reason: "A Run under way has shown nothing yet.", latest: run(v1alpha1.OperationApply, v1alpha1.PhaseRunning, changed, 0)},
		"NoPlan":    {reason: "An Apply that failed before planning made no plan.", latest: run(v1alpha1.OperationApply, v1alpha1.PhaseFailed, nil, time.Second)},
		"DriftPlan": {reason: "A drift check's plan is not the instance's last plan.", latest: run(v1alpha1.OperationDriftPlan, v1alpha1.PhaseSucceeded, changed, time.Second)},
		"Preview":   {reason: "A preview of a revision is not the instance's last plan.", latest: run(v1alpha1.OperationPlan, v1alpha1.PhaseSucceeded, changed, time.Second)},
	}
	var huge []string
	for i := 0; i < 5000; i++ {
		huge = append(huge, strings.Repeat("x", 10_000))
	}
	forged := run(v1alpha1.OperationApply, v1alpha1.PhaseSucceeded, &v1alpha1.RunPlan{ID: strings.Repeat("é", 5000), Destroy: 5000, Destructive: huge}, time.Second)
	cases["Forged"] = struct {
		reason    string
		latest    *v1alpha1.Run
		stateFrom string
		want      *kind.LastPlan
	}{
		reason: "A Run status the tenant's runner account forged is shown within bounds: an id of 64 bytes, 50 changes of 512 bytes and a count of the rest.",
		latest: forged,
		want: &kind.LastPlan{ID: strings.Repeat("é", 32) + "…", Destroy: 5000, At: start, Took: time.Second, Secret: state.PlanRefOf(ref).Name,
			Destructive: append(slices.Repeat([]string{strings.Repeat("x", 512) + "…"}, 50), "… and 4950 more")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			applied := tc.stateFrom
			if applied == "" {
				applied = "in-1"
			}
			w := &executor.Work{Op: v1alpha1.OperationApply, Workspace: &terraform.Workspace{State: ref}, Seen: &seen{latest: tc.latest},
				Stored: &state.Stored{AppliedInputs: applied}}
			if diff := cmp.Diff(tc.want, (&Executor{}).EndedPlan(w)); diff != "" {
				t.Errorf("%s\nEndedPlan(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
