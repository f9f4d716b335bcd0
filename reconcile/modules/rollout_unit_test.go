package modules

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/rollout"
)

// What the kind's instances are told of a rollout, and when the Module's status is written.
func TestRolloutSnapshot(t *testing.T) {
	spec := v1alpha1.Rollout{Policy: v1alpha1.RolloutManual}
	full := &v1alpha1.RolloutStatus{From: "m-1", To: "m-2", Phase: v1alpha1.RolloutProgressing, Seed: "s", Cut: "00ff",
		Counts: v1alpha1.RolloutCounts{Moved: 3, Blocked: 1}, Failed: []string{"a/x"}, Blocked: []string{"a/y"}, Held: []string{"a"},
		Message: "promoted: 3 instances move to m-2", Stay: []v1alpha1.RolloutStay{{Revision: "m-0", Instances: []string{"a/z"}}}}
	cases := map[string]struct {
		reason string
		st     *v1alpha1.RolloutStatus
		held   map[string]bool
		want   *rollout.Fleet
	}{
		"None": {reason: "Without a rollout the instances follow the latest.", want: &rollout.Fleet{Latest: "m-2", Spec: spec}},
		"Stripped": {reason: "Counts, samples and message, which change as instances move, are left out, so that they do not have every instance observed again; a legacy Stay becomes StayOn.",
			st: full, held: map[string]bool{"a": true},
			want: &rollout.Fleet{Latest: "m-2", Spec: spec, Held: map[string]bool{"a": true},
				Rollout: &v1alpha1.RolloutStatus{From: "m-1", To: "m-2", Phase: v1alpha1.RolloutProgressing, Seed: "s", Cut: "00ff", StayOn: []string{"m-0"}}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, fleetOf("m-2", spec, tc.st, tc.held), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nfleetOf(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
	if full.Message == "" || len(full.Stay) == 0 {
		t.Errorf("fleetOf changed the status it was given: %+v", full)
	}
}

func TestEqualRollout(t *testing.T) {
	base := &v1alpha1.RolloutStatus{From: "m-1", To: "m-2", Phase: v1alpha1.RolloutProgressing, Counts: v1alpha1.RolloutCounts{Moved: 3}}
	with := func(edit func(*v1alpha1.RolloutStatus)) *v1alpha1.RolloutStatus {
		s := base.DeepCopy()
		edit(s)
		return s
	}
	cases := map[string]struct {
		reason string
		a, b   *v1alpha1.RolloutStatus
		want   bool
	}{
		"Same":    {reason: "An unchanged status is not written again.", a: base, b: with(func(*v1alpha1.RolloutStatus) {}), want: true},
		"Preview": {reason: "The preview is written by showPreview, not here.", a: base, b: with(func(s *v1alpha1.RolloutStatus) { s.Preview = &v1alpha1.FleetPreview{Revision: "m-2"} }), want: true},
		"Counts":  {reason: "New counts are written.", a: base, b: with(func(s *v1alpha1.RolloutStatus) { s.Counts.Applied = 1 })},
		"Blocked": {reason: "A new sample is written.", a: base, b: with(func(s *v1alpha1.RolloutStatus) { s.Blocked = []string{"a/x"} })},
		"Nil":     {reason: "A rollout begun or gone is written.", a: nil, b: base},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := equalRollout(tc.a, tc.b); got != tc.want {
				t.Errorf("%s\nequalRollout(...): want %t, got %t", tc.reason, tc.want, got)
			}
		})
	}
}

func TestHeldNamed(t *testing.T) {
	cases := map[string]struct {
		reason string
		st     *v1alpha1.RolloutStatus
		want   map[string]bool
	}{
		"None":  {reason: "No rollout holds nothing."},
		"Named": {reason: "Before the instances are read again, the namespaces the status names are held.", st: &v1alpha1.RolloutStatus{Held: []string{"a", "b"}}, want: map[string]bool{"a": true, "b": true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, heldNamed(tc.st), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nheldNamed(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// A rollout shows in the Module's Rollout condition; a Module that never had one shows none.
func TestShowRollout(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	staged := v1alpha1.Rollout{Policy: v1alpha1.RolloutStaged, Steps: []v1alpha1.RolloutStep{{}}}
	stopped := &v1alpha1.RolloutStatus{To: "m-2", Phase: v1alpha1.RolloutStopped, Counts: v1alpha1.RolloutCounts{Moved: 1, Failed: 1, HeldNamespaces: 1}, Message: "stopped"}
	cases := map[string]struct {
		reason     string
		st         *v1alpha1.RolloutStatus
		shown      bool
		wantStatus string
		wantReason string
	}{
		"Never":   {reason: "No rollout ever: no condition.", wantStatus: "Unknown"},
		"Stopped": {reason: "A stopped rollout: Rollout False, RolloutStopped.", st: stopped, wantStatus: "False", wantReason: "RolloutStopped"},
		"Ended":   {reason: "A Module that had a rollout and has none now: Rollout True, NoRollout.", shown: true, wantStatus: "True", wantReason: "NoRollout"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m := &v1alpha1.Module{}
			m.Status.Rollout = tc.st
			if tc.shown {
				m.Status.SetConditions(rollout.Condition(staged, stopped, now))
			}
			showRollout(m, staged, now)
			c := m.Status.GetCondition(rollout.TypeRollout)
			if diff := cmp.Diff(tc.wantStatus+"/"+tc.wantReason, string(c.Status)+"/"+string(c.Reason)); diff != "" {
				t.Errorf("%s\nRollout condition status/reason: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}
