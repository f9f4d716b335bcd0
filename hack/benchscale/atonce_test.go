package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/modkind/modkind/apis/v1alpha1"
)

func TestAtOnceCountsRunsRunningTogether(t *testing.T) {
	run := func(name string, p v1alpha1.RunPhase) *v1alpha1.Run {
		return &v1alpha1.Run{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: v1alpha1.RunStatus{Phase: p}}
	}
	type seen struct {
		run  *v1alpha1.Run
		gone bool
	}
	cases := map[string]struct {
		reason string
		events []seen
		want   int
	}{
		"OneAfterAnother": {
			reason: "Runs that run one after another were never more than one at once.",
			events: []seen{
				{run: run("a", v1alpha1.PhaseRunning)}, {run: run("a", v1alpha1.PhaseSucceeded)},
				{run: run("b", v1alpha1.PhaseRunning)}, {run: run("b", v1alpha1.PhaseFailed)},
			},
			want: 1,
		},
		"Overlapping": {
			reason: "Three Runs Running before any ended are three at once, whatever comes after.",
			events: []seen{
				{run: run("a", v1alpha1.PhasePending)}, {run: run("a", v1alpha1.PhaseRunning)},
				{run: run("b", v1alpha1.PhaseRunning)}, {run: run("c", v1alpha1.PhaseRunning)},
				{run: run("a", v1alpha1.PhaseSucceeded)}, {run: run("d", v1alpha1.PhaseRunning)},
			},
			want: 3,
		},
		"SameRunTwice": {
			reason: "A Run seen Running in two events (a status write of its own) counts once.",
			events: []seen{{run: run("a", v1alpha1.PhaseRunning)}, {run: run("a", v1alpha1.PhaseRunning)}},
			want:   1,
		},
		"Deleted": {
			reason: "A Run deleted while Running no longer counts.",
			events: []seen{
				{run: run("a", v1alpha1.PhaseRunning)}, {run: run("a", v1alpha1.PhaseRunning), gone: true},
				{run: run("b", v1alpha1.PhaseRunning)},
			},
			want: 1,
		},
		"NoneRunning": {
			reason: "Queued and Pending Runs are not going.",
			events: []seen{{run: run("a", v1alpha1.PhaseQueued)}, {run: run("b", v1alpha1.PhasePending)}},
			want:   0,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var a runningPeak
			for _, e := range tc.events {
				a.see(e.run, e.gone)
			}
			if diff := cmp.Diff(tc.want, a.most); diff != "" {
				t.Errorf("%s\nmost at once: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
