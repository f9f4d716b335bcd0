package reconcile

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/modkind/modkind/module"
	"github.com/modkind/modkind/reconcile/terraform"
	"github.com/modkind/modkind/state"
)

// The plan Secret's name is derived from the instance alone, is never a state's name, and is a
// valid name however long the instance's.
func TestPlanViewSecretName(t *testing.T) {
	cases := map[string]struct {
		reason          string
		groupKind, name string
	}{
		"Short": {reason: "an ordinary instance", groupKind: "Trace.example.org", name: "web"},
		"Long":  {reason: "a name of 253 characters", groupKind: "Trace.example.org", name: strings.Repeat("n", 253)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := PlanSecretName(tc.groupKind, "team-a", tc.name)
			st := StateRef(tc.groupKind, "team-a", tc.name)
			if got.Namespace != "team-a" || !strings.HasPrefix(got.Name, "tfplan.") || got.Name == st.Name || len(got.Name) > 253 {
				t.Errorf("%s\nPlanSecretName: got %s (state %s)", tc.reason, got, st.Name)
			}
			if again := PlanSecretName(tc.groupKind, "team-a", tc.name); again != got {
				t.Errorf("%s\nPlanSecretName is not deterministic: %s, then %s", tc.reason, got, again)
			}
		})
	}
}

// WaitingPlan reads from an instance's status whether a plan waits for approval, and which.
func TestPlanViewWaitingPlan(t *testing.T) {
	inst := func(generation int64, synced map[string]any, lastPlanID string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{
			"conditions": []any{map[string]any{"type": "Ready", "status": "False"}, synced},
			"lastPlan":   map[string]any{"id": lastPlanID},
		}}}
		u.SetGeneration(generation)
		return u
	}
	waits := func(id string, og int64) map[string]any {
		return map[string]any{"type": "Synced", "status": "False", "observedGeneration": og,
			"message": "update failed: plan " + id + " (+1 ~0 -0) waits for approval: set spec.approval.approvedPlan to \"" + id + "\" to apply it"}
	}
	cases := map[string]struct {
		reason string
		u      *unstructured.Unstructured
		want   string
	}{
		"Waits":        {reason: "the Synced condition of this generation says the last plan waits", u: inst(3, waits("abc123", 3), "abc123"), want: "abc123"},
		"OldCondition": {reason: "a condition of an older generation says nothing of the spec now", u: inst(4, waits("abc123", 3), "abc123")},
		"OtherPlan":    {reason: "a condition naming another plan than status.lastPlan is not trusted", u: inst(3, waits("abc123", 3), "def456")},
		"Synced":       {reason: "a synced instance has nothing waiting", u: inst(3, map[string]any{"type": "Synced", "status": "True", "observedGeneration": int64(3)}, "abc123")},
		"Failed": {reason: "a failed plan is not one waiting for approval", u: inst(3, map[string]any{"type": "Synced", "status": "False", "observedGeneration": int64(3),
			"message": "terraform plan failed"}, "abc123")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := WaitingPlan(tc.u); got != tc.want {
				t.Errorf("%s\nWaitingPlan: want %q, got %q", tc.reason, tc.want, got)
			}
		})
	}
}

// A plan that waits or was refused, made again, keeps the time and duration status showed when it
// was first made, so that waiting costs no status write; another plan shows its own.
func TestKeepShownTime(t *testing.T) {
	first := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	again := first.Add(time.Minute)
	shown := func(id, at string) *Instance {
		u := unstructured.Unstructured{Object: map[string]any{"status": map[string]any{
			"lastPlan": map[string]any{"id": id, "time": at, "duration": "80ms"},
		}}}
		return &Instance{Unstructured: u}
	}
	plan := func(id string) terraform.PlanSummary {
		return terraform.PlanSummary{ID: id, Add: 1, At: again, Took: 90 * time.Millisecond}
	}
	cases := map[string]struct {
		reason   string
		inst     *Instance
		plan     terraform.PlanSummary
		wantAt   time.Time
		wantTook time.Duration
	}{
		"SamePlan": {reason: "a plan with the id shown is the plan shown", inst: shown("abc123", first.Format(time.RFC3339)),
			plan: plan("abc123"), wantAt: first, wantTook: 80 * time.Millisecond},
		"OtherPlan": {reason: "another plan shows when it was made", inst: shown("abc123", first.Format(time.RFC3339)),
			plan: plan("def456"), wantAt: again, wantTook: 90 * time.Millisecond},
		"NoChanges": {reason: "a plan without changes has no id to compare", inst: shown("", first.Format(time.RFC3339)),
			plan: plan(""), wantAt: again, wantTook: 90 * time.Millisecond},
		"NothingShown": {reason: "a first plan shows when it was made", inst: &Instance{},
			plan: plan("abc123"), wantAt: again, wantTook: 90 * time.Millisecond},
		"UnreadableTime": {reason: "a time status cannot show back is not kept", inst: shown("abc123", "yesterday"),
			plan: plan("abc123"), wantAt: again, wantTook: 90 * time.Millisecond},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := keepShownTime(tc.inst, tc.plan)
			want := tc.plan
			want.At, want.Took = tc.wantAt, tc.wantTook
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s\nkeepShownTime: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// A plan that waits for approval or was refused is not made again while nothing it was made from
// changed: the last run's answer stands until the spec, inputs, module or state change, the plan
// is approved, or the drift interval passed.
func TestStillHeld(t *testing.T) {
	waits := &terraform.AwaitingApprovalError{Plan: terraform.PlanSummary{ID: "abc123", Add: 1}}
	build := func(generation int64, approved string, annotations map[string]string) *external {
		inst := &Instance{}
		inst.SetUID("web-uid")
		inst.SetGeneration(generation)
		inst.SetAnnotations(annotations)
		return &external{
			connector: &connector{notes: newNotebook(), drift: newDriftClock(30*time.Minute, time.Second)},
			inst:      inst,
			snap:      &Snapshot{Module: &module.Module{Digest: "module-1"}},
			run:       &terraform.Run{Inputs: "inputs-1", ApprovalRequired: true, ApprovedPlan: approved},
			stored:    &state.Stored{State: &state.State{Lineage: "l-1", Serial: 3}},
		}
	}
	cases := map[string]struct {
		reason string
		held   func(e *external) *heldPlan
		e      *external
		want   error
	}{
		"Unchanged": {reason: "nothing changed: the plan still waits, without terraform",
			e: build(2, "", nil), held: func(e *external) *heldPlan {
				return &heldPlan{from: e.planMadeFrom(), id: "abc123", err: waits, at: time.Now()}
			},
			want: waits},
		"NothingHeld": {reason: "no plan waits: terraform plans",
			e: build(2, "", nil), held: func(*external) *heldPlan { return nil }},
		"SpecChanged": {reason: "a plan made from another generation of the spec is made again",
			e: build(3, "", nil), held: func(e *external) *heldPlan {
				return &heldPlan{from: build(2, "", nil).planMadeFrom(), id: "abc123", err: waits, at: time.Now()}
			}},
		"StateChanged": {reason: "a plan made from another state is made again",
			e: build(2, "", nil), held: func(e *external) *heldPlan {
				older := build(2, "", nil)
				older.stored.Serial = 2
				return &heldPlan{from: older.planMadeFrom(), id: "abc123", err: waits, at: time.Now()}
			}},
		"Approved": {reason: "the plan approved is applied",
			e: build(2, "abc123", nil), held: func(e *external) *heldPlan {
				return &heldPlan{from: e.planMadeFrom(), id: "abc123", err: waits, at: time.Now()}
			}},
		"OtherApproved": {reason: "approving another plan than the one waiting changes nothing",
			e: build(2, "fff000", nil), held: func(e *external) *heldPlan {
				return &heldPlan{from: e.planMadeFrom(), id: "abc123", err: waits, at: time.Now()}
			},
			want: waits},
		"DriftIntervalPassed": {reason: "the world is looked at again every drift interval",
			e: build(2, "", map[string]string{AnnotationDriftInterval: "1m"}), held: func(e *external) *heldPlan {
				return &heldPlan{from: e.planMadeFrom(), id: "abc123", err: waits, at: time.Now().Add(-2 * time.Minute)}
			}},
		"DriftOff": {reason: "with drift detection off, only a change makes the plan again",
			e: build(2, "", map[string]string{AnnotationDriftInterval: "0s"}), held: func(e *external) *heldPlan {
				return &heldPlan{from: e.planMadeFrom(), id: "abc123", err: waits, at: time.Now().Add(-24 * time.Hour)}
			}, want: waits},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tc.e.notes.SetHeld(tc.e.inst.GetUID(), tc.held(tc.e))
			if got := tc.e.stillHeld(tc.e.planMadeFrom()); got != tc.want {
				t.Errorf("%s\nstillHeld: want %v, got %v", tc.reason, tc.want, got)
			}
		})
	}
}
