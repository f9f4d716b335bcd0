package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A RolloutPolicy says how instances move to a new revision of their module.
// +kubebuilder:validation:Enum=Automatic;Manual;Staged
type RolloutPolicy string

// Rollout policies.
const (
	// RolloutAutomatic applies every instance with a new revision as soon as it is recorded.
	RolloutAutomatic RolloutPolicy = "Automatic"
	// RolloutManual records a new revision and moves no instance until it is promoted.
	RolloutManual RolloutPolicy = "Manual"
	// RolloutStaged moves instances step by step.
	RolloutStaged RolloutPolicy = "Staged"
)

// Annotations on a Module that act once per new value, so that a GitOps commit can do what the
// CLI does.
const (
	// AnnotationPromote, set to a new value, promotes the rollout: a Manual rollout moves every
	// instance; a Staged rollout paused until promoted goes on to its next step.
	AnnotationPromote = "modkind.io/promote"
	// AnnotationUndo, set to a new value, moves the instances a rollout moved back to the
	// revision it moved them from, and stops the rollout.
	AnnotationUndo = "modkind.io/undo"
)

// Rollout says how instances move to a new revision.
// +kubebuilder:validation:XValidation:rule="!has(self.steps) || self.policy == 'Staged'",message="steps go with policy Staged"
// +kubebuilder:validation:XValidation:rule="self.policy != 'Staged' || (has(self.steps) && size(self.steps) > 0)",message="policy Staged needs at least one step"
type Rollout struct {
	// Policy is Automatic (every instance moves at once), Manual (no instance moves until the
	// rollout is promoted) or Staged (instances move step by step).
	// +kubebuilder:default=Automatic
	// +optional
	Policy RolloutPolicy `json:"policy,omitempty"`
	// Steps are a Staged rollout's steps, in order. Instances left after the last step move too.
	// +kubebuilder:validation:MaxItems=20
	// +optional
	Steps []RolloutStep `json:"steps,omitempty"`
	// Paused holds a rollout where it is: no further instance moves until it is false again.
	// +optional
	Paused bool `json:"paused,omitempty"`
}

// A RolloutStep moves some of the instances still on the old revision.
// +kubebuilder:validation:XValidation:rule="has(self.selector) != has(self.percent)",message="set exactly one of selector and percent"
type RolloutStep struct {
	// Selector moves the instances whose labels match (e.g. canaries).
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	// Percent moves this share of the instances not moved yet, rounded up.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	Percent *int32 `json:"percent,omitempty"`
	// MaxFailures is how many instances of the rollout may fail (their apply failed, or the
	// destroy/replace guard refused their plan) before it stops; 0 when unset.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxFailures int32 `json:"maxFailures,omitempty"`
	// Pause waits after the step completes: for a duration, or until the rollout is promoted.
	// +optional
	Pause *RolloutPause `json:"pause,omitempty"`
}

// RolloutPause is a wait between steps.
// +kubebuilder:validation:XValidation:rule="has(self.duration) != (has(self.untilPromoted) && self.untilPromoted)",message="set exactly one of duration and untilPromoted"
type RolloutPause struct {
	// Duration waits this long.
	// +optional
	Duration *metav1.Duration `json:"duration,omitempty"`
	// UntilPromoted waits until the rollout is promoted.
	// +optional
	UntilPromoted bool `json:"untilPromoted,omitempty"`
}

// A RolloutPhase is where a rollout stands.
type RolloutPhase string

// Rollout phases.
const (
	// RolloutWaiting waits to be promoted: a Manual rollout, or a step paused until promoted.
	RolloutWaiting RolloutPhase = "WaitingForPromotion"
	// RolloutProgressing moves instances.
	RolloutProgressing RolloutPhase = "Progressing"
	// RolloutPausedPhase is held by spec.rollout.paused, or waits out a step's pause.
	RolloutPausedPhase RolloutPhase = "Paused"
	// RolloutStopped stopped because more instances failed than allowed.
	RolloutStopped RolloutPhase = "Stopped"
	// RolloutComplete has moved every instance.
	RolloutComplete RolloutPhase = "Complete"
	// RolloutUndone moved the instances it had moved back to the revision they came from.
	RolloutUndone RolloutPhase = "Undone"
)

// RolloutStatus is the state of a rollout, kept in the Module's status so that a controller
// restart resumes it where it was.
type RolloutStatus struct {
	// From is the revision instances not moved yet stay on.
	From string `json:"from"`
	// To is the revision the rollout moves instances to.
	To string `json:"to"`
	// Phase is where the rollout stands.
	Phase RolloutPhase `json:"phase"`
	// Step is the index of the step under way (Staged); len(steps) once the last step is done.
	// +optional
	Step int32 `json:"step"`
	// StepStarted is when the current step (or its pause) began.
	// +optional
	StepStarted *metav1.Time `json:"stepStarted,omitempty"`
	// StepCompleted is when every instance of the current step was applied with To: its pause,
	// if any, runs from then.
	// +optional
	StepCompleted *metav1.Time `json:"stepCompleted,omitempty"`
	// Moved are the instances (namespace/name) the rollout moved to To.
	// +optional
	Moved []string `json:"moved,omitempty"`
	// Stay are the instances that an earlier rollout, superseded by this one before it was
	// complete, had moved to its revision: each stays there, rather than going back to From,
	// until this rollout moves it to To (an undo sends it back there too).
	// +optional
	Stay []RolloutStay `json:"stay,omitempty"`
	// Failed are the moved instances whose apply failed or whose plan the guard refused.
	// +optional
	Failed []string `json:"failed,omitempty"`
	// Promoted is the last modkind.io/promote value acted on.
	// +optional
	Promoted string `json:"promoted,omitempty"`
	// Undone is the last modkind.io/undo value acted on.
	// +optional
	Undone string `json:"undone,omitempty"`
	// Message says why the rollout stands where it is.
	// +optional
	Message string `json:"message,omitempty"`
	// Preview is what a plan of To shows for each instance the rollout has not moved yet, counted
	// over the fleet and per namespace: `modkind rollout preview` shows it per instance.
	// +optional
	Preview *FleetPreview `json:"preview,omitempty"`
}

// RolloutStay is a revision and the instances (namespace/name) that stay on it.
type RolloutStay struct {
	Revision  string   `json:"revision"`
	Instances []string `json:"instances"`
}

// PreviewCounts count instances by what a plan-only run of a new revision found for each.
type PreviewCounts struct {
	// Instances are those the preview covers: every instance the rollout will move.
	Instances int64 `json:"instances"`
	// Pending have no preview of the revision yet (not planned yet, or their plan is under way).
	Pending int64 `json:"pending"`
	// NoChanges would change nothing.
	NoChanges int64 `json:"noChanges"`
	// Update would create or update objects in place, and destroy none.
	Update int64 `json:"update"`
	// Replace would replace objects (destroy and create them again), and delete none.
	Replace int64 `json:"replace"`
	// ReplaceRefused are those of Replace and Destroy that the destroy/replace guard would
	// refuse: their instances do not allow destructive changes.
	ReplaceRefused int64 `json:"replaceRefused"`
	// Destroy would delete objects.
	Destroy int64 `json:"destroy"`
	// Failed could not be planned.
	Failed int64 `json:"failed"`
}

// NamespacePreview is a FleetPreview's counts in one namespace.
type NamespacePreview struct {
	Namespace     string `json:"namespace"`
	PreviewCounts `json:",inline"`
}

// FleetPreview is what the fleet would see of a revision: the instances a rollout will move,
// counted by what a plan-only run of the revision found for each, in all and per namespace.
type FleetPreview struct {
	// Revision is the ModuleRevision previewed.
	Revision      string `json:"revision"`
	PreviewCounts `json:",inline"`
	// Namespaces are the same counts per namespace, by name.
	// +optional
	Namespaces []NamespacePreview `json:"namespaces,omitempty"`
}
