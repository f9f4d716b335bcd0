package rollout

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/modkind/modkind/apis/v1alpha1"
)

func TestChoose(t *testing.T) {
	revs := []Revision{
		{Name: "m-1", Number: 1, Labels: map[string]string{"channel": "stable"}},
		{Name: "m-2", Number: 2, Labels: map[string]string{"channel": "stable"}},
		{Name: "m-3", Number: 3, Labels: map[string]string{"channel": "beta"}},
	}
	under := &v1alpha1.RolloutStatus{From: "m-2", To: "m-3", Phase: v1alpha1.RolloutProgressing, Moved: []string{"a/moved"}}
	// A rollout m-1 -> m-3 that superseded one to m-2, which had moved a/early and a/moved.
	superseding := &v1alpha1.RolloutStatus{From: "m-1", To: "m-3", Phase: v1alpha1.RolloutProgressing, Moved: []string{"a/moved"},
		Stay: []v1alpha1.RolloutStay{{Revision: "m-2", Instances: []string{"a/early", "a/moved"}}}}
	cases := map[string]struct {
		reason string
		key    string
		pin    Pin
		fleet  Fleet
		want   string
	}{
		"NoRollout":      {reason: "Without a rollout an instance follows the latest revision.", key: "a/x", fleet: Fleet{Latest: "m-3"}, want: "m-3"},
		"Ref":            {reason: "A pin by name wins over everything.", key: "a/moved", pin: Pin{Ref: "m-1"}, fleet: Fleet{Latest: "m-3", Rollout: under}, want: "m-1"},
		"Selector":       {reason: "A selector takes the newest matching revision.", key: "a/x", pin: Pin{Selector: map[string]string{"channel": "stable"}}, fleet: Fleet{Latest: "m-3"}, want: "m-2"},
		"SelectorNone":   {reason: "A selector matching nothing chooses nothing.", key: "a/x", pin: Pin{Selector: map[string]string{"channel": "none"}}, fleet: Fleet{Latest: "m-3"}, want: ""},
		"NotMovedYet":    {reason: "An instance a rollout has not moved stays on From.", key: "a/x", fleet: Fleet{Latest: "m-3", Rollout: under}, want: "m-2"},
		"Moved":          {reason: "An instance a rollout moved is applied with To.", key: "a/moved", fleet: Fleet{Latest: "m-3", Rollout: under}, want: "m-3"},
		"Complete":       {reason: "Once complete, every instance follows the latest.", key: "a/x", fleet: Fleet{Latest: "m-3", Rollout: &v1alpha1.RolloutStatus{From: "m-2", To: "m-3", Phase: v1alpha1.RolloutComplete}}, want: "m-3"},
		"Undone":         {reason: "An undone rollout sends even moved instances back to From.", key: "a/moved", fleet: Fleet{Latest: "m-3", Rollout: &v1alpha1.RolloutStatus{From: "m-2", To: "m-3", Phase: v1alpha1.RolloutUndone, Moved: []string{"a/moved"}}}, want: "m-2"},
		"StoppedKeepsTo": {reason: "A stopped rollout leaves moved instances on To and moves no more.", key: "a/moved", fleet: Fleet{Latest: "m-3", Rollout: &v1alpha1.RolloutStatus{From: "m-2", To: "m-3", Phase: v1alpha1.RolloutStopped, Moved: []string{"a/moved"}}}, want: "m-3"},
		"Stays":          {reason: "An instance a superseded rollout moved stays on that rollout's revision, not From, until this one moves it.", key: "a/early", fleet: Fleet{Latest: "m-3", Rollout: superseding}, want: "m-2"},
		"StayerMoved":    {reason: "Once this rollout moves an instance that stayed, it is applied with To.", key: "a/moved", fleet: Fleet{Latest: "m-3", Rollout: superseding}, want: "m-3"},
		"OthersOnFrom":   {reason: "An instance neither rollout moved is on From.", key: "a/x", fleet: Fleet{Latest: "m-3", Rollout: superseding}, want: "m-1"},
		"UndoneStays": {reason: "An undo sends an instance this rollout moved back to where it stood before it: the revision it stayed on.", key: "a/moved",
			fleet: Fleet{Latest: "m-3", Rollout: &v1alpha1.RolloutStatus{From: "m-1", To: "m-3", Phase: v1alpha1.RolloutUndone, Moved: []string{"a/moved"},
				Stay: []v1alpha1.RolloutStay{{Revision: "m-2", Instances: []string{"a/early", "a/moved"}}}}}, want: "m-2"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Choose(tc.key, tc.pin, revs, tc.fleet)); diff != "" {
				t.Errorf("%s\nChoose(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestStart(t *testing.T) {
	cases := map[string]struct {
		reason   string
		policy   v1alpha1.RolloutPolicy
		prev     *v1alpha1.RolloutStatus
		previous string
		want     *v1alpha1.RolloutStatus
	}{
		"Automatic":   {reason: "Automatic starts no rollout.", policy: v1alpha1.RolloutAutomatic, previous: "m-1"},
		"First":       {reason: "The first revision has nothing to move from.", policy: v1alpha1.RolloutManual},
		"Manual":      {reason: "A new revision under Manual starts a rollout from the previous one.", policy: v1alpha1.RolloutManual, previous: "m-1", want: &v1alpha1.RolloutStatus{From: "m-1", To: "m-3", Phase: v1alpha1.RolloutProgressing, Promoted: "p1"}},
		"AfterDone":   {reason: "After a complete rollout the fleet is on its To.", policy: v1alpha1.RolloutStaged, previous: "m-2", prev: &v1alpha1.RolloutStatus{From: "m-1", To: "m-2", Phase: v1alpha1.RolloutComplete}, want: &v1alpha1.RolloutStatus{From: "m-2", To: "m-3", Phase: v1alpha1.RolloutProgressing, Promoted: "p1"}},
		"AfterUndone": {reason: "After an undone rollout the fleet is on its From.", policy: v1alpha1.RolloutStaged, previous: "m-2", prev: &v1alpha1.RolloutStatus{From: "m-1", To: "m-2", Phase: v1alpha1.RolloutUndone}, want: &v1alpha1.RolloutStatus{From: "m-1", To: "m-3", Phase: v1alpha1.RolloutProgressing, Promoted: "p1"}},
		"BackToFrom":  {reason: "A source moved back to where the fleet is needs no rollout.", policy: v1alpha1.RolloutStaged, previous: "m-2", prev: &v1alpha1.RolloutStatus{From: "m-3", To: "m-2", Phase: v1alpha1.RolloutUndone}},
		"Superseded": {reason: "A new revision while a rollout is under way: the instances it moved stay on its revision (one whose apply failed there does not), the rest on From, until the new rollout moves them.",
			policy: v1alpha1.RolloutStaged, previous: "m-2",
			prev: &v1alpha1.RolloutStatus{From: "m-1", To: "m-2", Phase: v1alpha1.RolloutPausedPhase, Moved: []string{"b/y", "a/x", "a/failed"}, Failed: []string{"a/failed"}},
			want: &v1alpha1.RolloutStatus{From: "m-1", To: "m-3", Phase: v1alpha1.RolloutProgressing, Promoted: "p1",
				Stay: []v1alpha1.RolloutStay{{Revision: "m-2", Instances: []string{"a/x", "b/y"}}}}},
		"SupersededTwice": {reason: "Superseded again: those the second rollout moved stay on its revision, those it had not moved stay where the first left them.",
			policy: v1alpha1.RolloutStaged, previous: "m-2",
			prev: &v1alpha1.RolloutStatus{From: "m-0", To: "m-2", Phase: v1alpha1.RolloutProgressing, Moved: []string{"a/x", "a/new"},
				Stay: []v1alpha1.RolloutStay{{Revision: "m-1", Instances: []string{"a/x", "a/y"}}}},
			want: &v1alpha1.RolloutStatus{From: "m-0", To: "m-3", Phase: v1alpha1.RolloutProgressing, Promoted: "p1",
				Stay: []v1alpha1.RolloutStay{{Revision: "m-1", Instances: []string{"a/y"}}, {Revision: "m-2", Instances: []string{"a/new", "a/x"}}}}},
		"SupersededUndone": {reason: "An undone rollout moved nobody: only the instances its own Stay kept stay.",
			policy: v1alpha1.RolloutStaged, previous: "m-2",
			prev: &v1alpha1.RolloutStatus{From: "m-0", To: "m-2", Phase: v1alpha1.RolloutUndone, Moved: []string{"a/x"},
				Stay: []v1alpha1.RolloutStay{{Revision: "m-1", Instances: []string{"a/x"}}}},
			want: &v1alpha1.RolloutStatus{From: "m-0", To: "m-3", Phase: v1alpha1.RolloutProgressing, Promoted: "p1",
				Stay: []v1alpha1.RolloutStay{{Revision: "m-1", Instances: []string{"a/x"}}}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Start(tc.policy, tc.prev, tc.previous, "m-3", Signals{Promote: "p1"})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nStart(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// fleetOf makes members a/i0..a/i4 (zone a) and b/i5..b/i9 (zone b), i0 a canary, on revision cur.
func fleetOf(cur string) []Member {
	var out []Member
	for i := 0; i < 10; i++ {
		ns, zone := "a", "a"
		if i >= 5 {
			ns, zone = "b", "b"
		}
		l := map[string]string{"zone": zone}
		if i == 0 {
			l["canary"] = "true"
		}
		out = append(out, Member{Key: ns + "/i" + string(rune('0'+i)), Labels: l, Current: cur})
	}
	return out
}

// applied returns fleet with the instances in keys applied with rev.
func applied(fleet []Member, rev string, keys []string) []Member {
	out := make([]Member, len(fleet))
	copy(out, fleet)
	for i := range out {
		if contains(keys, out[i].Key) {
			out[i].Current = rev
		}
	}
	return out
}

func TestAdvance(t *testing.T) {
	now := time.Date(2026, 11, 26, 2, 0, 0, 0, time.UTC)
	at := metav1.NewTime(now)
	earlier := metav1.NewTime(now.Add(-time.Hour))
	staged := v1alpha1.Rollout{Policy: v1alpha1.RolloutStaged, Steps: []v1alpha1.RolloutStep{
		{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"canary": "true"}}, Pause: &v1alpha1.RolloutPause{UntilPromoted: true}},
		{Percent: ptr.To[int32](50), Pause: &v1alpha1.RolloutPause{Duration: &metav1.Duration{Duration: 10 * time.Minute}}},
	}}
	begin := v1alpha1.RolloutStatus{From: "m-2", To: "m-3", Phase: v1alpha1.RolloutProgressing}
	pinned := fleetOf("m-2")
	pinned[1].Pinned = true
	failing := applied(fleetOf("m-2"), "m-3", []string{"a/i0"})
	failing[5].Failed = "m-3"

	type want struct {
		st     v1alpha1.RolloutStatus
		events int
		wait   time.Duration
	}
	cases := map[string]struct {
		reason string
		spec   v1alpha1.Rollout
		st     v1alpha1.RolloutStatus
		fleet  []Member
		sig    Signals
		want   want
	}{
		"ManualWaits": {
			reason: "A Manual rollout moves nothing until promoted.",
			spec:   v1alpha1.Rollout{Policy: v1alpha1.RolloutManual}, st: begin, fleet: fleetOf("m-2"),
			want: want{st: v1alpha1.RolloutStatus{From: "m-2", To: "m-3", Phase: v1alpha1.RolloutWaiting,
				Message: "m-3 is recorded; no instance moves from m-2 until the rollout is promoted"}},
		},
		"ManualPromoted": {
			reason: "Promoting a Manual rollout moves every unpinned instance.",
			spec:   v1alpha1.Rollout{Policy: v1alpha1.RolloutManual}, st: begin, fleet: pinned, sig: Signals{Promote: "1"},
			want: want{events: 1, st: v1alpha1.RolloutStatus{From: "m-2", To: "m-3", Phase: v1alpha1.RolloutProgressing, Promoted: "1", StepStarted: &at,
				Moved: []string{"a/i0", "a/i2", "a/i3", "a/i4", "b/i5", "b/i6", "b/i7", "b/i8", "b/i9"}, Message: "promoted: 9 instances move to m-3"}},
		},
		"CanaryFirst": {
			reason: "The first step moves the canaries only.",
			spec:   staged, st: begin, fleet: fleetOf("m-2"),
			want: want{events: 1, st: v1alpha1.RolloutStatus{From: "m-2", To: "m-3", Phase: v1alpha1.RolloutProgressing, StepStarted: &at,
				Moved: []string{"a/i0"}, Message: "step 1 of 3: 1 instances move to m-3"}},
		},
		"CanaryDoneWaitsForPromotion": {
			reason: "A step paused until promoted waits once its instances are applied with To.",
			spec:   staged, st: v1alpha1.RolloutStatus{From: "m-2", To: "m-3", Phase: v1alpha1.RolloutProgressing, StepStarted: &earlier, Moved: []string{"a/i0"}},
			fleet: applied(fleetOf("m-2"), "m-3", []string{"a/i0"}),
			want: want{events: 1, st: v1alpha1.RolloutStatus{From: "m-2", To: "m-3", Phase: v1alpha1.RolloutWaiting, StepStarted: &earlier, StepCompleted: &at,
				Moved: []string{"a/i0"}, Message: "step 1 of 3 is complete; waiting to be promoted"}},
		},
		"HalfOfTheRest": {
			reason: "Promoted, the 50% step moves half of the remaining nine, rounded up, and the step's pause is timed from its completion.",
			spec:   staged, st: v1alpha1.RolloutStatus{From: "m-2", To: "m-3", Phase: v1alpha1.RolloutWaiting, StepStarted: &earlier, StepCompleted: &earlier, Moved: []string{"a/i0"}},
			fleet: applied(fleetOf("m-2"), "m-3", []string{"a/i0"}), sig: Signals{Promote: "go"},
			want: want{events: 1, st: v1alpha1.RolloutStatus{From: "m-2", To: "m-3", Phase: v1alpha1.RolloutProgressing, Step: 1, StepStarted: &at, Promoted: "go",
				Moved: append([]string{"a/i0"}, Select(v1alpha1.RolloutStep{Percent: ptr.To[int32](50)}, applied(fleetOf("m-2"), "m-3", nil)[1:])...), Message: "step 2 of 3: 5 instances move to m-3"}},
		},
		"DurationPause": {
			reason: "A step with a duration pause waits that long after it completed.",
			spec:   staged, st: v1alpha1.RolloutStatus{From: "m-2", To: "m-3", Phase: v1alpha1.RolloutProgressing, Step: 1, StepStarted: &earlier, StepCompleted: &at, Moved: []string{"a/i0"}},
			fleet: applied(fleetOf("m-2"), "m-3", []string{"a/i0"}),
			want: want{wait: 10 * time.Minute, st: v1alpha1.RolloutStatus{From: "m-2", To: "m-3", Phase: v1alpha1.RolloutPausedPhase, Step: 1, StepStarted: &earlier, StepCompleted: &at,
				Moved: []string{"a/i0"}, Message: "step 2 of 3 is complete; pausing until 2026-11-26T02:10:00Z"}},
		},
		"LastStepTakesTheRest": {
			reason: "After the configured steps every remaining unpinned instance moves; the pinned one never does.",
			spec:   staged, st: v1alpha1.RolloutStatus{From: "m-2", To: "m-3", Phase: v1alpha1.RolloutProgressing, Step: 2, Moved: []string{"a/i0"}},
			fleet: applied(pinned, "m-3", []string{"a/i0"}),
			want: want{events: 1, st: v1alpha1.RolloutStatus{From: "m-2", To: "m-3", Phase: v1alpha1.RolloutProgressing, Step: 2, StepStarted: &at,
				Moved: []string{"a/i0", "a/i2", "a/i3", "a/i4", "b/i5", "b/i6", "b/i7", "b/i8", "b/i9"}, Message: "step 3 of 3: 8 instances move to m-3"}},
		},
		"Complete": {
			reason: "Once every moved instance is applied with To the rollout is complete.",
			spec:   staged, st: v1alpha1.RolloutStatus{From: "m-2", To: "m-3", Phase: v1alpha1.RolloutProgressing, Step: 2, StepStarted: &earlier, Moved: []string{"a/i0", "a/i2"}},
			fleet: applied(pinned[:3], "m-3", []string{"a/i0", "a/i2"}),
			want: want{events: 1, st: v1alpha1.RolloutStatus{From: "m-2", To: "m-3", Phase: v1alpha1.RolloutComplete, Step: 2, StepStarted: &earlier, StepCompleted: &at,
				Moved: []string{"a/i0", "a/i2"}, Message: "complete: 2 instances are applied with m-3"}},
		},
		"StopOnFailure": {
			reason: "A moved instance that failed with To, over maxFailures 0, stops the rollout and is named.",
			spec:   staged, st: v1alpha1.RolloutStatus{From: "m-2", To: "m-3", Phase: v1alpha1.RolloutProgressing, Step: 1, StepStarted: &earlier, Moved: []string{"a/i0", "b/i5"}},
			fleet: failing,
			want: want{events: 1, st: v1alpha1.RolloutStatus{From: "m-2", To: "m-3", Phase: v1alpha1.RolloutStopped, Step: 1, StepStarted: &earlier,
				Moved: []string{"a/i0", "b/i5"}, Failed: []string{"b/i5"}, Message: "stopped: 1 instances failed with m-3, more than the 0 allowed: b/i5"}},
		},
		"StoppedStays": {
			reason: "A stopped rollout moves nothing further, promoted or not.",
			spec:   staged, st: v1alpha1.RolloutStatus{From: "m-2", To: "m-3", Phase: v1alpha1.RolloutStopped, Step: 1, Moved: []string{"a/i0"}},
			fleet: fleetOf("m-2"), sig: Signals{Promote: "again"},
			want: want{st: v1alpha1.RolloutStatus{From: "m-2", To: "m-3", Phase: v1alpha1.RolloutStopped, Step: 1, Moved: []string{"a/i0"}}},
		},
		"Undo": {
			reason: "A new undo value sends the moved instances back, even from a stopped rollout.",
			spec:   staged, st: v1alpha1.RolloutStatus{From: "m-2", To: "m-3", Phase: v1alpha1.RolloutStopped, Step: 1, Moved: []string{"a/i0", "b/i5"}},
			fleet: failing, sig: Signals{Undo: "u1"},
			want: want{events: 1, st: v1alpha1.RolloutStatus{From: "m-2", To: "m-3", Phase: v1alpha1.RolloutUndone, Step: 1, Undone: "u1",
				Moved: []string{"a/i0", "b/i5"}, Message: "undone: the 2 instances moved to m-3 go back to m-2"}},
		},
		"PromotedWhilePaused": {
			reason: "A promotion asked for while paused is not used up: it acts once the rollout resumes.",
			spec:   v1alpha1.Rollout{Policy: v1alpha1.RolloutManual, Paused: true}, st: begin, fleet: fleetOf("m-2"), sig: Signals{Promote: "1"},
			want: want{st: v1alpha1.RolloutStatus{From: "m-2", To: "m-3", Phase: v1alpha1.RolloutPausedPhase, Message: "paused by spec.rollout.paused"}},
		},
		"Paused": {
			reason: "spec.rollout.paused holds the rollout where it is.",
			spec:   v1alpha1.Rollout{Policy: v1alpha1.RolloutStaged, Steps: staged.Steps, Paused: true}, st: begin, fleet: fleetOf("m-2"),
			want: want{st: v1alpha1.RolloutStatus{From: "m-2", To: "m-3", Phase: v1alpha1.RolloutPausedPhase, Message: "paused by spec.rollout.paused"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			st, events, wait := Advance(now, tc.spec, tc.st, tc.fleet, tc.sig)
			if diff := cmp.Diff(tc.want.st, st, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nAdvance(...) status: -want, +got:\n%s", tc.reason, diff)
			}
			if len(events) != tc.want.events {
				t.Errorf("%s\nAdvance(...) events: want %d, got %q", tc.reason, tc.want.events, events)
			}
			if wait != tc.want.wait {
				t.Errorf("%s\nAdvance(...) wait: want %s, got %s", tc.reason, tc.want.wait, wait)
			}
		})
	}
}

func TestSelectPercent(t *testing.T) {
	members := fleetOf("m-1")
	cases := map[string]struct {
		reason  string
		percent int32
		want    int
	}{
		"Half":    {reason: "50% of ten is five.", percent: 50, want: 5},
		"RoundUp": {reason: "A share is rounded up, so that 1% of a small fleet moves one instance.", percent: 1, want: 1},
		"All":     {reason: "100% moves every one.", percent: 100, want: 10},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Select(v1alpha1.RolloutStep{Percent: &tc.percent}, members)
			if len(got) != tc.want {
				t.Errorf("%s\nSelect(%d%%): want %d instances, got %q", tc.reason, tc.percent, tc.want, got)
			}
			if again := Select(v1alpha1.RolloutStep{Percent: &tc.percent}, members); !cmp.Equal(got, again) {
				t.Errorf("%s\nSelect is not stable: %q then %q", tc.reason, got, again)
			}
		})
	}
}

func TestPrunable(t *testing.T) {
	revs := []Revision{{Name: "r1", Number: 1}, {Name: "r2", Number: 2}, {Name: "r3", Number: 3}, {Name: "r4", Number: 4}, {Name: "r5", Number: 5}}
	cases := map[string]struct {
		reason string
		inUse  map[string]bool
		limit  int
		want   []string
	}{
		"KeepNewest": {reason: "Unused revisions beyond the limit go, oldest first.", inUse: map[string]bool{"r5": true}, limit: 2, want: []string{"r1", "r2"}},
		"InUseStays": {reason: "A revision in use is never pruned, however old.", inUse: map[string]bool{"r5": true, "r1": true}, limit: 1, want: []string{"r2", "r3"}},
		"ZeroLimit":  {reason: "A limit of 0 keeps only what is in use.", inUse: map[string]bool{"r5": true, "r3": true}, limit: 0, want: []string{"r1", "r2", "r4"}},
		"UnderLimit": {reason: "Nothing goes under the limit.", inUse: map[string]bool{"r5": true}, limit: 10},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Prunable(revs, tc.inUse, tc.limit), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nPrunable(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
