package kinds

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/rollout"
)

// Which instances a rollout previews, and with which revision.
func TestPreviewTarget(t *testing.T) {
	waiting := &v1alpha1.RolloutStatus{From: "m-1", To: "m-2", Phase: v1alpha1.RolloutWaiting}
	with := func(phase v1alpha1.RolloutPhase) *rollout.Fleet {
		r := waiting.DeepCopy()
		r.Phase = phase
		return &rollout.Fleet{Latest: "m-2", Rollout: r}
	}
	x := rollout.Member{Key: "a/x", Namespace: "a", UID: "u-x", Current: "m-1"}
	// The rollout moved it: it is applied with To.
	moved := rollout.Member{Key: "a/moved", Namespace: "a", UID: "u-moved", Current: "m-2"}
	cases := map[string]struct {
		reason string
		key    rollout.Member
		pin    rollout.Pin
		fleet  *rollout.Fleet
		want   string
	}{
		"Manual":      {reason: "A Manual rollout waiting for promotion previews To for every instance not moved.", key: x, fleet: with(v1alpha1.RolloutWaiting), want: "m-2"},
		"Progressing": {reason: "A Staged rollout previews the instances its later steps will move.", key: x, fleet: with(v1alpha1.RolloutProgressing), want: "m-2"},
		"Paused":      {reason: "A paused rollout still previews what it will move.", key: x, fleet: with(v1alpha1.RolloutPausedPhase), want: "m-2"},
		"Moved":       {reason: "An instance the rollout moved is applied with To, not previewed.", key: moved, fleet: with(v1alpha1.RolloutWaiting)},
		"Pinned":      {reason: "A pinned instance does not move: nothing to preview.", key: x, pin: rollout.Pin{Ref: "m-1"}, fleet: with(v1alpha1.RolloutWaiting)},
		"Selector":    {reason: "An instance following a selector does not move with the rollout.", key: x, pin: rollout.Pin{Selector: map[string]string{"channel": "stable"}}, fleet: with(v1alpha1.RolloutWaiting)},
		"Automatic":   {reason: "Without status.rollout (Automatic) every instance moves at once: no preview.", key: x, fleet: &rollout.Fleet{Latest: "m-2"}},
		"NoFleet":     {reason: "A kind without revisions has nothing to preview.", key: x},
		"Complete":    {reason: "A complete rollout moved everything.", key: x, fleet: with(v1alpha1.RolloutComplete)},
		"Stopped":     {reason: "A stopped rollout moves nothing further.", key: x, fleet: with(v1alpha1.RolloutStopped)},
		"Undone":      {reason: "An undone rollout moves nothing to To.", key: x, fleet: with(v1alpha1.RolloutUndone)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, PreviewTarget(tc.key, tc.pin, tc.fleet)); diff != "" {
				t.Errorf("%s\npreviewTarget(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
