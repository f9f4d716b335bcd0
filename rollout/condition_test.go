package rollout

import (
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/modkind/modkind/apis/v1alpha1"
)

func TestCondition(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	staged := v1alpha1.Rollout{Policy: v1alpha1.RolloutStaged, Steps: []v1alpha1.RolloutStep{{}, {}}}
	counts := v1alpha1.RolloutCounts{Moved: 4, Applied: 2, Failed: 2, HeldNamespaces: 1}
	cases := map[string]struct {
		reason string
		spec   v1alpha1.Rollout
		st     *v1alpha1.RolloutStatus
		want   xpv2.Condition
	}{
		"Stopped": {
			reason: "Stopped by failures: False, the reason names the stop, the message the step and the counts.",
			spec:   staged, st: &v1alpha1.RolloutStatus{To: "m-3", Phase: v1alpha1.RolloutStopped, Step: 0, Counts: counts, Message: "stopped: only namespaces held by failures have instances left to move: a"},
			want: xpv2.Condition{Type: TypeRollout, Status: corev1.ConditionFalse, Reason: ReasonStopped,
				Message: "step 1 of 3 to m-3, 4 moved, 2 applied, 2 failed, 0 blocked, 1 namespaces held: stopped: only namespaces held by failures have instances left to move: a"},
		},
		"PausedBySpec": {
			reason: "Paused by spec.rollout.paused: False, a person must resume it.",
			spec:   v1alpha1.Rollout{Policy: v1alpha1.RolloutStaged, Steps: staged.Steps, Paused: true},
			st:     &v1alpha1.RolloutStatus{To: "m-3", Phase: v1alpha1.RolloutPausedPhase, Step: 1, Counts: counts, Message: "paused by spec.rollout.paused"},
			want: xpv2.Condition{Type: TypeRollout, Status: corev1.ConditionFalse, Reason: ReasonPaused,
				Message: "step 2 of 3 to m-3, 4 moved, 2 applied, 2 failed, 0 blocked, 1 namespaces held: paused by spec.rollout.paused"},
		},
		"TimedPause": {
			reason: "A step's timed pause goes on by itself: True, progressing.",
			spec:   staged, st: &v1alpha1.RolloutStatus{To: "m-3", Phase: v1alpha1.RolloutPausedPhase, Step: 0, Message: "step 1 of 3 is complete; pausing until later"},
			want: xpv2.Condition{Type: TypeRollout, Status: corev1.ConditionTrue, Reason: ReasonProgressing,
				Message: "step 1 of 3 to m-3, 0 moved, 0 applied, 0 failed, 0 blocked, 0 namespaces held: step 1 of 3 is complete; pausing until later"},
		},
		"Waiting": {
			reason: "Waiting to be promoted: False, a person must promote it.",
			spec:   v1alpha1.Rollout{Policy: v1alpha1.RolloutManual}, st: &v1alpha1.RolloutStatus{To: "m-3", Phase: v1alpha1.RolloutWaiting, Message: "m-3 is recorded"},
			want: xpv2.Condition{Type: TypeRollout, Status: corev1.ConditionFalse, Reason: ReasonWaiting,
				Message: "rollout to m-3, 0 moved, 0 applied, 0 failed, 0 blocked, 0 namespaces held: m-3 is recorded"},
		},
		"LastStep": {
			reason: "Past the last step, the step named is the last.",
			spec:   staged, st: &v1alpha1.RolloutStatus{To: "m-3", Phase: v1alpha1.RolloutComplete, Step: 5, Message: "complete"},
			want: xpv2.Condition{Type: TypeRollout, Status: corev1.ConditionTrue, Reason: ReasonComplete,
				Message: "step 3 of 3 to m-3, 0 moved, 0 applied, 0 failed, 0 blocked, 0 namespaces held: complete"},
		},
		"None": {
			reason: "No rollout: True.",
			want:   xpv2.Condition{Type: TypeRollout, Status: corev1.ConditionTrue, Reason: ReasonNone, Message: msgNone},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tc.want.LastTransitionTime = metav1.NewTime(now)
			if diff := cmp.Diff(tc.want, Condition(tc.spec, tc.st, now)); diff != "" {
				t.Errorf("\n%s\n-want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	manual := v1alpha1.Rollout{Policy: v1alpha1.RolloutManual}
	paused := v1alpha1.Rollout{Policy: v1alpha1.RolloutStaged, Paused: true}
	at := func(p v1alpha1.RolloutPhase) *v1alpha1.RolloutStatus {
		return &v1alpha1.RolloutStatus{From: "m-2", To: "m-3", Phase: p}
	}
	cases := map[string]struct {
		reason string
		action Action
		spec   v1alpha1.Rollout
		st     *v1alpha1.RolloutStatus
		want   string
	}{
		"PromoteWaiting":     {reason: "A rollout waiting to be promoted is promoted.", action: ActionPromote, spec: manual, st: at(v1alpha1.RolloutWaiting)},
		"PromotePaused":      {reason: "A promotion while paused by spec is kept for the resume.", action: ActionPromote, spec: paused, st: at(v1alpha1.RolloutPausedPhase)},
		"PromoteComplete":    {reason: "A complete rollout has nothing to promote.", action: ActionPromote, spec: manual, st: at(v1alpha1.RolloutComplete), want: "the rollout of Module net to m-3 is complete: nothing to promote"},
		"PromoteProgressing": {reason: "A progressing rollout waits for no promotion: it would be spent for nothing.", action: ActionPromote, spec: manual, st: at(v1alpha1.RolloutProgressing), want: "the rollout of Module net to m-3 is Progressing, not waiting to be promoted: a promotion now would be spent without moving anything"},
		"PromoteStopped":     {reason: "Promoting a stopped rollout moves nothing.", action: ActionPromote, spec: manual, st: at(v1alpha1.RolloutStopped), want: "the rollout of Module net to m-3 is stopped by failures: promoting moves nothing; fix the failed instances, or undo"},
		"PromoteNone":        {reason: "No rollout, nothing to promote.", action: ActionPromote, spec: manual, want: "no rollout of Module net is under way: nothing to promote"},
		"PromoteAutomatic":   {reason: "An Automatic Module has no rollout.", action: ActionPromote, want: "Module net rolls out Automatically: there is no rollout to promote"},
		"UndoStopped":        {reason: "A stopped rollout can be undone.", action: ActionUndo, spec: manual, st: at(v1alpha1.RolloutStopped)},
		"UndoUndone":         {reason: "An undone rollout is not undone twice.", action: ActionUndo, spec: manual, st: at(v1alpha1.RolloutUndone), want: "the rollout of Module net to m-3 is undone: nothing to undo"},
		"UndoComplete":       {reason: "A complete rollout is over: undo does nothing.", action: ActionUndo, spec: manual, st: at(v1alpha1.RolloutComplete), want: "the rollout of Module net to m-3 is complete: nothing to undo"},
		"Pause":              {reason: "A progressing rollout is paused.", action: ActionPause, spec: manual, st: at(v1alpha1.RolloutProgressing)},
		"PauseAgain":         {reason: "Paused already.", action: ActionPause, spec: paused, st: at(v1alpha1.RolloutPausedPhase), want: "the rollout of Module net is paused already"},
		"PauseComplete":      {reason: "After a complete rollout, a pause holds the next one at its start.", action: ActionPause, spec: manual, st: at(v1alpha1.RolloutComplete)},
		"PauseAhead":         {reason: "Before any rollout, a pause holds the first one at its start.", action: ActionPause, spec: manual},
		"Resume":             {reason: "spec.rollout.paused is cleared, with or without a rollout.", action: ActionResume, spec: paused},
		"ResumeNotPaused":    {reason: "Nothing to resume.", action: ActionResume, spec: manual, st: at(v1alpha1.RolloutProgressing), want: "the rollout of Module net is not paused"},
		"Unknown":            {reason: "An action Check does not know.", action: "restart", spec: manual, want: `unknown rollout action "restart"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ""
			if err := Check(tc.action, "net", tc.spec, tc.st); err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("\n%s\n-want +got:\n%s", tc.reason, diff)
			}
		})
	}
}
