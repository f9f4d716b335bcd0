package kind

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
			got := PlanRef(tc.groupKind, "team-a", tc.name).NamespacedName
			st := StateRef(tc.groupKind, "team-a", tc.name)
			if got.Namespace != "team-a" || !strings.HasPrefix(got.Name, "tfplan.") || got.Name == st.Name || len(got.Name) > 253 {
				t.Errorf("%s\nPlanRef: got %s (state %s)", tc.reason, got, st.Name)
			}
			if again := PlanRef(tc.groupKind, "team-a", tc.name).NamespacedName; again != got {
				t.Errorf("%s\nPlanRef is not deterministic: %s, then %s", tc.reason, got, again)
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
