package rollout

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/modkind/modkind/apis/v1alpha1"
)

func TestAdvance(t *testing.T) {
	now := time.Date(2026, 11, 26, 2, 0, 0, 0, time.UTC)
	at := metav1.NewTime(now)
	earlier := metav1.NewTime(now.Add(-time.Hour))
	minuteAgo := metav1.NewTime(now.Add(-time.Minute))
	fourAgo := metav1.NewTime(now.Add(-4 * time.Minute))
	staged := v1alpha1.Rollout{Policy: v1alpha1.RolloutStaged, Steps: []v1alpha1.RolloutStep{
		{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"canary": "true"}}, Pause: &v1alpha1.RolloutPause{UntilPromoted: true}},
		{Percent: ptr.To[int32](50), Pause: &v1alpha1.RolloutPause{Duration: &metav1.Duration{Duration: 10 * time.Minute}}},
	}}
	manual := v1alpha1.Rollout{Policy: v1alpha1.RolloutManual}
	ro := func(mod func(*v1alpha1.RolloutStatus)) v1alpha1.RolloutStatus {
		st := v1alpha1.RolloutStatus{From: "m-2", To: "m-3", Phase: v1alpha1.RolloutProgressing, Seed: "s"}
		mod(&st)
		return st
	}
	pinned := fleetOf("m-2")
	pinned[1].Pinned = true
	canaryDone := applied(fleetOf("m-2"), "m-3", []string{"a/i0"})
	canaryFailed := fleetOf("m-2")
	canaryFailed[0].Failed = "m-3"
	// The 50% step takes 5 of the 9 not moved yet: the lowest ranks under the seed, not names.
	half, halfCut := lowest("s", fleetOf("m-2"), 5, "a/i0")
	halfDone := applied(fleetOf("m-2"), "m-3", half)
	// With namespace a held, the 50% step takes 3 of b's 5.
	_, bCut := lowest("s", fleetOf("m-2")[5:], 3)
	oneBlocked := applied(fleetOf("m-2"), "m-3", []string{"a/i0", "a/i1", "a/i2", "a/i4", "b/i5", "b/i6", "b/i7", "b/i8", "b/i9"})

	type want struct {
		st     v1alpha1.RolloutStatus
		events []Event
		wait   time.Duration
	}
	step := func(msg string) Event { return Event{Reason: ReasonStep, Message: msg} }
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
			spec:   manual, st: ro(func(*v1alpha1.RolloutStatus) {}), fleet: fleetOf("m-2"),
			want: want{st: ro(func(s *v1alpha1.RolloutStatus) {
				s.Phase, s.Message = v1alpha1.RolloutWaiting, "m-3 is recorded; no instance moves from m-2 until the rollout is promoted"
			})},
		},
		"ManualPromoted": {
			reason: "Promoting a Manual rollout moves every unpinned instance: counted, not listed.",
			spec:   manual, st: ro(func(*v1alpha1.RolloutStatus) {}), fleet: pinned, sig: Signals{Promote: "1"},
			want: want{events: []Event{step("promoted: 9 instances move to m-3")}, st: ro(func(s *v1alpha1.RolloutStatus) {
				s.Promoted, s.StepStarted, s.Counts = "1", &at, v1alpha1.RolloutCounts{Moved: 9}
				s.Message = "promoted: 9 instances move to m-3"
			})},
		},
		"ManualBlockedCompletes": {
			reason: "A promoted Manual rollout is complete once its deadline is past: the instance that did not move is counted blocked, named, and warned of.",
			spec:   manual, st: ro(func(s *v1alpha1.RolloutStatus) { s.Promoted, s.StepStarted = "1", &earlier }), fleet: oneBlocked, sig: Signals{Promote: "1"},
			want: want{
				events: []Event{
					{Warning: true, Reason: ReasonBlocked, Message: "1 instances moved to m-3 were neither applied nor failed within the progress deadline (10m0s) and no longer hold the rollout: a/i3"},
					step("complete: 9 instances are applied with m-3, 0 failed there, 1 are blocked"),
				},
				st: ro(func(s *v1alpha1.RolloutStatus) {
					s.Phase, s.Promoted, s.StepStarted, s.StepCompleted = v1alpha1.RolloutComplete, "1", &earlier, &at
					s.Counts, s.Blocked = v1alpha1.RolloutCounts{Moved: 10, Applied: 9, Blocked: 1}, []string{"a/i3"}
					s.Message = "complete: 9 instances are applied with m-3, 0 failed there, 1 are blocked"
				})},
		},
		"CanaryFirst": {
			reason: "The first step moves the canaries only, and looks again at its progress deadline.",
			spec:   staged, st: ro(func(*v1alpha1.RolloutStatus) {}), fleet: fleetOf("m-2"),
			want: want{events: []Event{step("step 1 of 3: 1 instances move to m-3")}, wait: 10 * time.Minute, st: ro(func(s *v1alpha1.RolloutStatus) {
				s.StepStarted, s.Counts, s.Message = &at, v1alpha1.RolloutCounts{Moved: 1}, "step 1 of 3: 1 instances move to m-3"
			})},
		},
		"CanaryPending": {
			reason: "Within its deadline a step waits for an instance it moved.",
			spec:   staged, st: ro(func(s *v1alpha1.RolloutStatus) { s.StepStarted = &fourAgo }), fleet: fleetOf("m-2"),
			want: want{wait: 6 * time.Minute, st: ro(func(s *v1alpha1.RolloutStatus) {
				s.StepStarted, s.Counts = &fourAgo, v1alpha1.RolloutCounts{Moved: 1}
			})},
		},
		"CanaryBlocked": {
			reason: "Past its deadline a step completes without the instance that did not move (paused, waiting for approval or inputs): it is counted blocked, named, and warned of.",
			spec:   staged, st: ro(func(s *v1alpha1.RolloutStatus) { s.StepStarted = &earlier }), fleet: fleetOf("m-2"),
			want: want{
				events: []Event{step("step 1 of 3 is complete"), {Warning: true, Reason: ReasonBlocked,
					Message: "1 instances moved to m-3 were neither applied nor failed within the progress deadline (10m0s) and no longer hold the rollout: a/i0"}},
				st: ro(func(s *v1alpha1.RolloutStatus) {
					s.Phase, s.StepStarted, s.StepCompleted = v1alpha1.RolloutWaiting, &earlier, &at
					s.Counts, s.Blocked = v1alpha1.RolloutCounts{Moved: 1, Blocked: 1}, []string{"a/i0"}
					s.Message = "step 1 of 3 is complete; waiting to be promoted"
				})},
		},
		"CanaryDoneWaitsForPromotion": {
			reason: "A step paused until promoted waits once its instances are applied with To.",
			spec:   staged, st: ro(func(s *v1alpha1.RolloutStatus) { s.StepStarted = &minuteAgo }), fleet: canaryDone,
			want: want{events: []Event{step("step 1 of 3 is complete")}, st: ro(func(s *v1alpha1.RolloutStatus) {
				s.Phase, s.StepStarted, s.StepCompleted = v1alpha1.RolloutWaiting, &minuteAgo, &at
				s.Counts, s.Message = v1alpha1.RolloutCounts{Moved: 1, Applied: 1}, "step 1 of 3 is complete; waiting to be promoted"
			})},
		},
		"HalfOfTheRest": {
			reason: "Promoted, the 50% step moves half of the remaining nine, rounded up, lowest keyed ranks first: the status keeps the cut, not the names.",
			spec:   staged, st: ro(func(s *v1alpha1.RolloutStatus) {
				s.Phase, s.StepStarted, s.StepCompleted = v1alpha1.RolloutWaiting, &earlier, &earlier
			}), fleet: canaryDone, sig: Signals{Promote: "go"},
			want: want{events: []Event{step("step 2 of 3: 5 instances move to m-3")}, wait: 10 * time.Minute, st: ro(func(s *v1alpha1.RolloutStatus) {
				s.Step, s.StepStarted, s.Promoted, s.Cut = 1, &at, "go", halfCut
				s.Counts, s.Message = v1alpha1.RolloutCounts{Moved: 6, Applied: 1}, "step 2 of 3: 5 instances move to m-3"
			})},
		},
		"EarlierStepBlockedAtOnce": {
			reason: "An instance an earlier step moved and that still has not moved is blocked at once: it had its deadline, and does not hold this step.",
			spec:   staged, st: ro(func(s *v1alpha1.RolloutStatus) { s.Step, s.StepStarted, s.Cut = 1, &minuteAgo, halfCut }), fleet: halfDone,
			want: want{wait: 10 * time.Minute,
				events: []Event{step("step 2 of 3 is complete"), {Warning: true, Reason: ReasonBlocked,
					Message: "1 instances moved to m-3 were neither applied nor failed within the progress deadline (10m0s) and no longer hold the rollout: a/i0"}},
				st: ro(func(s *v1alpha1.RolloutStatus) {
					s.Phase, s.Step, s.StepStarted, s.StepCompleted, s.Cut = v1alpha1.RolloutPausedPhase, 1, &minuteAgo, &at, halfCut
					s.Counts, s.Blocked = v1alpha1.RolloutCounts{Moved: 6, Applied: 5, Blocked: 1}, []string{"a/i0"}
					s.Message = "step 2 of 3 is complete; pausing until 2026-11-26T02:10:00Z"
				})},
		},
		"FailureHoldsItsNamespace": {
			reason: "A failure over maxFailures holds its own namespace, named and warned of; the step completes and others go on.",
			spec:   staged, st: ro(func(s *v1alpha1.RolloutStatus) { s.StepStarted = &minuteAgo }), fleet: canaryFailed,
			want: want{
				events: []Event{step("step 1 of 3 is complete"), {Warning: true, Reason: ReasonHeld,
					Message: "1 namespaces are held: more of their instances failed with m-3 than the 0 allowed in each, and no more of theirs move: a"}},
				st: ro(func(s *v1alpha1.RolloutStatus) {
					s.Phase, s.StepStarted, s.StepCompleted = v1alpha1.RolloutWaiting, &minuteAgo, &at
					s.Counts, s.Failed, s.Held = v1alpha1.RolloutCounts{Moved: 1, Failed: 1, HeldNamespaces: 1}, []string{"a/i0"}, []string{"a"}
					s.Message = "step 1 of 3 is complete; waiting to be promoted"
				})},
		},
		"HeldNamespacePassedBy": {
			reason: "The next step takes its share of the namespaces not held only.",
			spec:   staged, st: ro(func(s *v1alpha1.RolloutStatus) {
				s.Phase, s.StepStarted, s.StepCompleted = v1alpha1.RolloutWaiting, &earlier, &earlier
				s.Counts = v1alpha1.RolloutCounts{Moved: 1, Failed: 1, HeldNamespaces: 1}
			}), fleet: canaryFailed, sig: Signals{Promote: "go"},
			want: want{events: []Event{step("step 2 of 3: 3 instances move to m-3")}, wait: 10 * time.Minute, st: ro(func(s *v1alpha1.RolloutStatus) {
				s.Step, s.StepStarted, s.Promoted, s.Cut = 1, &at, "go", bCut
				s.Counts, s.Failed, s.Held = v1alpha1.RolloutCounts{Moved: 4, Failed: 1, HeldNamespaces: 1}, []string{"a/i0"}, []string{"a"}
				s.Message = "step 2 of 3: 3 instances move to m-3"
			})},
		},
		"StoppedWhenOnlyHeldLeft": {
			reason: "Once only held namespaces have instances left to move, the rollout stops, naming them.",
			spec:   staged, st: ro(func(s *v1alpha1.RolloutStatus) { s.StepStarted = &minuteAgo }), fleet: canaryFailed[:5],
			want: want{
				events: []Event{{Warning: true, Reason: string(ReasonStopped), Message: "stopped: only namespaces held by failures have instances left to move: a; 1 instances failed with m-3 (more than 0 in each held namespace): a/i0"},
					{Warning: true, Reason: ReasonHeld, Message: "1 namespaces are held: more of their instances failed with m-3 than the 0 allowed in each, and no more of theirs move: a"}},
				st: ro(func(s *v1alpha1.RolloutStatus) {
					s.Phase, s.StepStarted = v1alpha1.RolloutStopped, &minuteAgo
					s.Counts, s.Failed, s.Held = v1alpha1.RolloutCounts{Moved: 1, Failed: 1, HeldNamespaces: 1}, []string{"a/i0"}, []string{"a"}
					s.Message = "stopped: only namespaces held by failures have instances left to move: a; 1 instances failed with m-3 (more than 0 in each held namespace): a/i0"
				})},
		},
		"GoesOnOnceFailuresClear": {
			reason: "A stopped rollout goes on once the failures that held it are fixed.",
			spec:   staged, st: ro(func(s *v1alpha1.RolloutStatus) {
				s.Phase, s.StepStarted = v1alpha1.RolloutStopped, &minuteAgo
				s.Counts, s.Failed, s.Held = v1alpha1.RolloutCounts{Moved: 1, Failed: 1, HeldNamespaces: 1}, []string{"a/i0"}, []string{"a"}
			}), fleet: canaryDone[:5],
			want: want{events: []Event{step("step 1 of 3 is complete")}, st: ro(func(s *v1alpha1.RolloutStatus) {
				s.Phase, s.StepStarted, s.StepCompleted = v1alpha1.RolloutWaiting, &minuteAgo, &at
				s.Counts, s.Message = v1alpha1.RolloutCounts{Moved: 1, Applied: 1}, "step 1 of 3 is complete; waiting to be promoted"
			})},
		},
		"LastStepTakesTheRest": {
			reason: "After the configured steps every remaining unpinned instance moves; the pinned one never does.",
			spec:   staged, st: ro(func(s *v1alpha1.RolloutStatus) { s.Step = 2 }), fleet: applied(pinned, "m-3", []string{"a/i0"}),
			want: want{events: []Event{step("step 3 of 3: 8 instances move to m-3")}, wait: 10 * time.Minute, st: ro(func(s *v1alpha1.RolloutStatus) {
				s.Step, s.StepStarted = 2, &at
				s.Counts, s.Message = v1alpha1.RolloutCounts{Moved: 9, Applied: 1}, "step 3 of 3: 8 instances move to m-3"
			})},
		},
		"Complete": {
			reason: "Once every moved instance is applied with To the rollout is complete.",
			spec:   staged, st: ro(func(s *v1alpha1.RolloutStatus) { s.Step, s.StepStarted = 2, &minuteAgo }), fleet: applied(pinned[:3], "m-3", []string{"a/i0", "a/i2"}),
			want: want{events: []Event{step("complete: 2 instances are applied with m-3")}, st: ro(func(s *v1alpha1.RolloutStatus) {
				s.Phase, s.Step, s.StepStarted, s.StepCompleted = v1alpha1.RolloutComplete, 2, &minuteAgo, &at
				s.Counts, s.Message = v1alpha1.RolloutCounts{Moved: 2, Applied: 2}, "complete: 2 instances are applied with m-3"
			})},
		},
		"Undo": {
			reason: "A new undo value sends the moved instances back, even from a stopped rollout.",
			spec:   staged, st: ro(func(s *v1alpha1.RolloutStatus) {
				s.Phase, s.Counts = v1alpha1.RolloutStopped, v1alpha1.RolloutCounts{Moved: 2}
			}),
			fleet: canaryFailed, sig: Signals{Undo: "u1"},
			want: want{events: []Event{step("undone: the 2 instances moved to m-3 go back to m-2")}, st: ro(func(s *v1alpha1.RolloutStatus) {
				s.Phase, s.Undone, s.Counts = v1alpha1.RolloutUndone, "u1", v1alpha1.RolloutCounts{Moved: 2}
				s.Message = "undone: the 2 instances moved to m-3 go back to m-2"
			})},
		},
		"PromotedWhilePaused": {
			reason: "A promotion asked for while paused is not used up: it acts once the rollout resumes.",
			spec:   v1alpha1.Rollout{Policy: v1alpha1.RolloutManual, Paused: true}, st: ro(func(*v1alpha1.RolloutStatus) {}), fleet: fleetOf("m-2"), sig: Signals{Promote: "1"},
			want: want{events: []Event{{Warning: true, Reason: "RolloutPaused",
				Message: "paused by spec.rollout.paused: rollout to m-3, 0 moved, 0 applied, 0 failed, 0 blocked, 0 namespaces held"}},
				st: ro(func(s *v1alpha1.RolloutStatus) {
					s.Phase, s.Message = v1alpha1.RolloutPausedPhase, "paused by spec.rollout.paused"
				})},
		},
		"StillPaused": {
			reason: "A rollout that stays paused is not warned of again.",
			spec:   v1alpha1.Rollout{Policy: v1alpha1.RolloutManual, Paused: true},
			st: ro(func(s *v1alpha1.RolloutStatus) {
				s.Phase, s.Message = v1alpha1.RolloutPausedPhase, "paused by spec.rollout.paused"
			}), fleet: fleetOf("m-2"),
			want: want{st: ro(func(s *v1alpha1.RolloutStatus) {
				s.Phase, s.Message = v1alpha1.RolloutPausedPhase, "paused by spec.rollout.paused"
			})},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			st, events, wait := Advance(now, tc.spec, tc.st, tc.fleet, tc.sig)
			if diff := cmp.Diff(tc.want.st, st, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nAdvance(...) status: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want.events, events, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nAdvance(...) events: -want, +got:\n%s", tc.reason, diff)
			}
			if wait != tc.want.wait {
				t.Errorf("%s\nAdvance(...) wait: want %s, got %s", tc.reason, tc.want.wait, wait)
			}
		})
	}
}

// TestStatusBounded checks that a rollout's status names at most RolloutSample instances and
// namespaces, however many fail, block or are held, and counts them all.
func TestStatusBounded(t *testing.T) {
	now := time.Date(2026, 11, 26, 2, 0, 0, 0, time.UTC)
	earlier := metav1.NewTime(now.Add(-time.Hour))
	// 25 namespaces with two failed instances each (held); 25 with ten applied and ten that
	// never moved (blocked); names of the maximal length.
	long := strings.Repeat("x", 240)
	var fleet []Member
	for n := 0; n < 25; n++ {
		for i := 0; i < 20; i++ {
			name := fmt.Sprintf("%s-%02d-%02d", long, n, i)
			if i < 2 {
				fleet = append(fleet, failed(member(fmt.Sprintf("held-%02d", n), name, "h"+name, nil, "m-1"), "m-2"))
			}
			cur := "m-1"
			if i < 10 {
				cur = "m-2"
			}
			fleet = append(fleet, member(fmt.Sprintf("ok-%02d", n), name, "o"+name, nil, cur))
		}
	}
	st, _, _ := Advance(now, v1alpha1.Rollout{Policy: v1alpha1.RolloutManual},
		v1alpha1.RolloutStatus{From: "m-1", To: "m-2", Phase: v1alpha1.RolloutProgressing, Seed: "s", StepStarted: &earlier, Promoted: "1"}, fleet, Signals{Promote: "1"})
	want := v1alpha1.RolloutCounts{Moved: 550, Applied: 250, Failed: 50, Blocked: 250, HeldNamespaces: 25}
	if diff := cmp.Diff(want, st.Counts); diff != "" {
		t.Errorf("Advance(...) counts: -want, +got:\n%s", diff)
	}
	if len(st.Message) > 20*300 {
		t.Errorf("status.rollout.message: want it bounded by the samples, got %d bytes", len(st.Message))
	}
	for name, l := range map[string][]string{"failed": st.Failed, "blocked": st.Blocked, "held": st.Held} {
		if len(l) != v1alpha1.RolloutSample {
			t.Errorf("status.rollout.%s: want a sample of %d names, got %d", name, v1alpha1.RolloutSample, len(l))
		}
	}
}

// TestPercentStepIgnoresNames checks that which instances a percent step takes depends on their
// UIDs and the rollout's seed only: renaming every instance (a tenant choosing names whose plain
// hash sorts first) changes nothing, and another seed orders them otherwise.
func TestPercentStepIgnoresNames(t *testing.T) {
	step := v1alpha1.RolloutStep{Percent: ptr.To[int32](10)}
	var fleet, renamed []Member
	for i := 0; i < 200; i++ {
		uid := "uid-" + time.Duration(i).String()
		fleet = append(fleet, member("ns", "n"+time.Duration(i).String(), uid, nil, "m-1"))
		renamed = append(renamed, member("tenant", "aaaaaaaa-"+time.Duration(i).String(), uid, map[string]string{"canary": "true"}, "m-1"))
	}
	cases := map[string]struct {
		reason   string
		seed     string
		fleet    []Member
		sameAsS1 bool
	}{
		"Renamed":     {reason: "Names and labels do not change the cut.", seed: "s1", fleet: renamed, sameAsS1: true},
		"AnotherSeed": {reason: "Another rollout's seed takes other instances.", seed: "s2", fleet: fleet, sameAsS1: false},
	}
	taken := func(seed string, fleet []Member) map[string]bool {
		c := cut(step, v1alpha1.RolloutStatus{Seed: seed}, fleet)
		out := map[string]bool{}
		for _, m := range fleet {
			if Rank(seed, m.UID) <= c {
				out[m.UID] = true
			}
		}
		return out
	}
	base := taken("s1", fleet)
	if len(base) != 20 {
		t.Fatalf("10%% of 200: want 20 taken, got %d", len(base))
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := taken(tc.seed, tc.fleet)
			if tc.sameAsS1 != cmp.Equal(base, got) {
				t.Errorf("%s\ntaken (by UID): got %v, with seed s1 %v", tc.reason, got, base)
			}
		})
	}
}
