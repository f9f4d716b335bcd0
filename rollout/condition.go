package rollout

import (
	"fmt"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/modkind/modkind/apis/v1alpha1"
)

// TypeRollout is the Module condition that says whether its rollout goes on by itself: False,
// with the reason, when it needs a person (stopped by failures, paused by spec.rollout.paused,
// waiting to be promoted); True while it progresses (a step's timed pause included) and once it
// is complete or undone.
const TypeRollout xpv2.ConditionType = "Rollout"

// Reasons of the Rollout condition.
const (
	ReasonStopped     xpv2.ConditionReason = "RolloutStopped"
	ReasonPaused      xpv2.ConditionReason = "RolloutPaused"
	ReasonWaiting     xpv2.ConditionReason = "WaitingForPromotion"
	ReasonProgressing xpv2.ConditionReason = "RolloutProgressing"
	ReasonComplete    xpv2.ConditionReason = "RolloutComplete"
	ReasonUndone      xpv2.ConditionReason = "RolloutUndone"
	ReasonNone        xpv2.ConditionReason = "NoRollout"
)

const msgNone = "no rollout: every instance not pinned follows the newest revision"

// Condition is the Rollout condition of a Module whose rollout is st (nil: none): its message
// names the step and the counts, then says why it stands there (st.Message).
func Condition(spec v1alpha1.Rollout, st *v1alpha1.RolloutStatus, now time.Time) xpv2.Condition {
	c := xpv2.Condition{Type: TypeRollout, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now)}
	if st == nil {
		c.Reason, c.Message = ReasonNone, msgNone
		return c
	}
	switch st.Phase {
	case v1alpha1.RolloutStopped:
		c.Status, c.Reason = corev1.ConditionFalse, ReasonStopped
	case v1alpha1.RolloutPausedPhase:
		c.Reason = ReasonProgressing
		if spec.Paused {
			c.Status, c.Reason = corev1.ConditionFalse, ReasonPaused
		}
	case v1alpha1.RolloutWaiting:
		c.Status, c.Reason = corev1.ConditionFalse, ReasonWaiting
	case v1alpha1.RolloutComplete:
		c.Reason = ReasonComplete
	case v1alpha1.RolloutUndone:
		c.Reason = ReasonUndone
	default:
		c.Reason = ReasonProgressing
	}
	c.Message = fmt.Sprintf("%s to %s, %s: %s", where(spec, *st), st.To, countsOf(*st), st.Message)
	return c
}

// where names the step a rollout stands at.
func where(spec v1alpha1.Rollout, st v1alpha1.RolloutStatus) string {
	if spec.Policy != v1alpha1.RolloutStaged {
		return "rollout"
	}
	n := len(spec.Steps) + 1
	return fmt.Sprintf("step %d of %d", min(int(st.Step)+1, n), n)
}

// countsOf says where the instances the rollout moved stand.
func countsOf(st v1alpha1.RolloutStatus) string {
	c := st.Counts
	return fmt.Sprintf("%d moved, %d applied, %d failed, %d blocked, %d namespaces held", c.Moved, c.Applied, c.Failed, c.Blocked, c.HeldNamespaces)
}

// An Action is what a person asks of a rollout (modkind rollout promote|undo|pause|resume).
type Action string

// The actions Check knows.
const (
	ActionPromote Action = "promote"
	ActionUndo    Action = "undo"
	ActionPause   Action = "pause"
	ActionResume  Action = "resume"
)

const (
	errAutomatic     = "Module %s rolls out Automatically: there is no rollout to %s"
	errNoRollout     = "no rollout of Module %s is under way: nothing to %s"
	errRolloutEnded  = "the rollout of Module %s to %s is %s: nothing to %s"
	errNotWaiting    = "the rollout of Module %s to %s is %s, not waiting to be promoted: a promotion now would be spent without moving anything"
	errStoppedNoMove = "the rollout of Module %s to %s is stopped by failures: promoting moves nothing; fix the failed instances, or undo"
	errPaused        = "the rollout of Module %s is paused already"
	errNotPaused     = "the rollout of Module %s is not paused"
	errUnknownAction = "unknown rollout action %q"
)

// Check says whether action would change anything for the rollout of Module module (spec, and
// st its status, nil when none): nil when it would, else an error that says why not, which the
// CLI prints before it exits non-zero, writing nothing.
func Check(action Action, module string, spec v1alpha1.Rollout, st *v1alpha1.RolloutStatus) error {
	switch action {
	case ActionPromote, ActionUndo, ActionPause, ActionResume:
	default:
		return errors.Errorf(errUnknownAction, action)
	}
	if spec.Policy == "" || spec.Policy == v1alpha1.RolloutAutomatic {
		return errors.Errorf(errAutomatic, module, action)
	}
	switch action {
	case ActionPause:
		if spec.Paused {
			return errors.Errorf(errPaused, module)
		}
		// With no rollout under way, a pause holds the next one at its start (Advance): there is
		// something to pause.
		return nil
	case ActionResume:
		if !spec.Paused {
			return errors.Errorf(errNotPaused, module)
		}
		return nil
	}
	if st == nil {
		return errors.Errorf(errNoRollout, module, action)
	}
	switch st.Phase {
	case v1alpha1.RolloutComplete:
		return errors.Errorf(errRolloutEnded, module, st.To, "complete", action)
	case v1alpha1.RolloutUndone:
		return errors.Errorf(errRolloutEnded, module, st.To, "undone", action)
	}
	if action != ActionPromote {
		return nil
	}
	switch st.Phase {
	case v1alpha1.RolloutWaiting:
		return nil
	case v1alpha1.RolloutPausedPhase:
		// Paused by spec, a promotion is kept for when it resumes (Advance). A step's timed
		// pause waits for no promotion.
		if spec.Paused {
			return nil
		}
	case v1alpha1.RolloutStopped:
		return errors.Errorf(errStoppedNoMove, module, st.To)
	}
	return errors.Errorf(errNotWaiting, module, st.To, st.Phase)
}
