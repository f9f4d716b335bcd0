package instance

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/modkind/modkind/kind"
)

// A plan that waits or was refused, made again, keeps the time and duration status showed when it
// was first made, so that waiting costs no status write; another plan shows its own.
func TestKeepShownTime(t *testing.T) {
	first := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	again := first.Add(time.Minute)
	shown := func(id, at string) *kind.Instance {
		u := unstructured.Unstructured{Object: map[string]any{"status": map[string]any{
			"lastPlan": map[string]any{"id": id, "time": at, "duration": "80ms"},
		}}}
		return &kind.Instance{Unstructured: u}
	}
	plan := func(id string) kind.LastPlan {
		return kind.LastPlan{ID: id, Add: 1, At: again, Took: 90 * time.Millisecond}
	}
	cases := map[string]struct {
		reason   string
		inst     *kind.Instance
		plan     kind.LastPlan
		wantAt   time.Time
		wantTook time.Duration
	}{
		"SamePlan": {reason: "a plan with the id shown is the plan shown", inst: shown("abc123", first.Format(time.RFC3339)),
			plan: plan("abc123"), wantAt: first, wantTook: 80 * time.Millisecond},
		"OtherPlan": {reason: "another plan shows when it was made", inst: shown("abc123", first.Format(time.RFC3339)),
			plan: plan("def456"), wantAt: again, wantTook: 90 * time.Millisecond},
		"NoChanges": {reason: "a plan without changes has no id to compare", inst: shown("", first.Format(time.RFC3339)),
			plan: plan(""), wantAt: again, wantTook: 90 * time.Millisecond},
		"NothingShown": {reason: "a first plan shows when it was made", inst: &kind.Instance{},
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
