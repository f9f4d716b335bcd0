package reconcile

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/modkind/modkind/reconcile/terraform"
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

// The same plan made again keeps the time and duration status showed when it was first made, so a
// plan that waits for approval costs no status write per poll; another plan shows its own.
func TestLastPlanStatusKeepsTheFirstTime(t *testing.T) {
	first := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	again := first.Add(time.Minute)
	run := &terraform.Run{State: StateRef("Web.example.org", "team-a", "web")}
	shown := func(id string) *Instance {
		u := unstructured.Unstructured{Object: map[string]any{"status": map[string]any{
			"lastPlan": map[string]any{"id": id, "time": first.Format(time.RFC3339), "duration": "80ms"},
		}}}
		return &Instance{Unstructured: u}
	}
	cases := map[string]struct {
		reason       string
		inst         *Instance
		plan         terraform.PlanSummary
		wantTime     string
		wantDuration string
	}{
		"SamePlan": {reason: "a plan with the id shown is the plan shown", inst: shown("abc123"),
			plan: terraform.PlanSummary{ID: "abc123", Add: 1, At: again, Took: 90 * time.Millisecond}, wantTime: first.Format(time.RFC3339), wantDuration: "80ms"},
		"OtherPlan": {reason: "another plan shows when it was made", inst: shown("abc123"),
			plan: terraform.PlanSummary{ID: "def456", Add: 2, At: again, Took: 90 * time.Millisecond}, wantTime: again.Format(time.RFC3339), wantDuration: "90ms"},
		"NoChanges": {reason: "a plan without changes has no id to compare: it shows when it was made", inst: shown(""),
			plan: terraform.PlanSummary{At: again, Took: 90 * time.Millisecond}, wantTime: again.Format(time.RFC3339), wantDuration: "90ms"},
		"NothingShown": {reason: "a first plan shows when it was made", inst: &Instance{},
			plan: terraform.PlanSummary{ID: "abc123", At: again, Took: 90 * time.Millisecond}, wantTime: again.Format(time.RFC3339), wantDuration: "90ms"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := lastPlanStatus(tc.inst, tc.plan, run)
			want := tc.plan.StatusValue()
			want["time"], want["duration"], want["secretName"] = tc.wantTime, tc.wantDuration, terraform.PlanRef(run.State).Name
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s\nlastPlanStatus: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}
