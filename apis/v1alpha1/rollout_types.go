package v1alpha1

import (
	"time"

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
	// ProgressDeadline is how long a step (and a promoted Manual rollout) waits for the
	// instances it moved to be applied with the new revision or fail there. One that has done
	// neither by then (it is paused, waits for approval or for its inputs, or its apply is slow)
	// is counted blocked, named in status.rollout.blocked and a Warning event, and holds the
	// rollout no longer: it still moves when it can. 10m when unset, as a Deployment's
	// progressDeadlineSeconds: long enough for a module's apply, short enough that one tenant's
	// held instance delays the others' rollout by minutes, not for ever.
	// +optional
	ProgressDeadline *metav1.Duration `json:"progressDeadline,omitempty"`
}

// DefaultProgressDeadline is a rollout step's progress deadline when spec.rollout.progressDeadline
// is unset.
const DefaultProgressDeadline = 10 * time.Minute

// RolloutSample is how many instances (or namespaces) status.rollout names at most in each of its
// lists, whatever the size of the fleet: the counts give the whole number, each instance's own
// status the whole truth.
const RolloutSample = 20

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
	// MaxFailures is how many instances of one namespace may fail with the new revision (their
	// apply failed, or the destroy/replace guard refused their plan) before the rollout holds
	// that namespace: none of its instances moves further while more than this many of them fail
	// there. Other namespaces go on, so that one tenant's failing instances never stop another's;
	// the rollout stops once only held namespaces have instances left to move. It counts per
	// namespace, not over the fleet, for that reason; 0 when unset. The step under way sets the
	// limit; the remaining instances after the last step take the last step's.
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
	// RolloutStopped has no instance left to move but those of namespaces it holds: namespaces
	// where more instances failed than maxFailures allows. It goes on if their failures clear.
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
	// Seed keys the hash that orders instances (by UID) for percent steps: random, chosen by the
	// controller when the rollout starts, so that no one can choose names or labels that put an
	// instance early or late in a percent step.
	// +optional
	Seed string `json:"seed,omitempty"`
	// Cut is the highest rank (16 hex digits of the keyed hash of an instance's UID) that the
	// percent steps so far moved: every unpinned instance whose rank is at most Cut moves, as do
	// those the selectors of the steps begun so far match. Which instances a rollout moved is
	// thus computed, not listed, and stays the same across controller restarts.
	// +optional
	Cut string `json:"cut,omitempty"`
	// CutBefore is Cut before the step under way: the instances of earlier steps that still have
	// not moved are counted blocked at once rather than waited for again.
	// +optional
	CutBefore string `json:"cutBefore,omitempty"`
	// StayOn are revisions that earlier rollouts, superseded by this one before they were
	// complete, moved instances to. An instance this rollout has not moved and last applied with
	// one of these stays there rather than going back to From, so that superseding a rollout never
	// applies an instance with an older revision than it has; an undo sends it back there too.
	// +optional
	StayOn []string `json:"stayOn,omitempty"`
	// Counts are how many instances the rollout moved, and where they stand.
	// +optional
	Counts RolloutCounts `json:"counts"`
	// Failed names at most RolloutSample of the moved instances (namespace/name) whose apply
	// with To failed or whose plan the guard refused; Counts.Failed counts them all.
	// +optional
	Failed []string `json:"failed,omitempty"`
	// Blocked names at most RolloutSample of the moved instances that were neither applied with
	// To nor failed there within spec.rollout.progressDeadline; Counts.Blocked counts them all.
	// +optional
	Blocked []string `json:"blocked,omitempty"`
	// Held names at most RolloutSample of the namespaces held by failures (more than maxFailures
	// of their instances failed with To); Counts.HeldNamespaces counts them all.
	// +optional
	Held []string `json:"held,omitempty"`
	// Moved is no longer written: it listed every moved instance and outgrew etcd's limit on a
	// large fleet. Counts.Moved counts them instead.
	//
	// Deprecated: read Counts; kept so that a status an earlier version wrote can be read once
	// and converted (rollout.Migrate).
	// +optional
	Moved []string `json:"moved,omitempty"`
	// Stay is no longer written: StayOn replaces it.
	//
	// Deprecated: read StayOn; kept so that a status an earlier version wrote can be read once
	// and converted (rollout.Migrate).
	// +optional
	Stay []RolloutStay `json:"stay,omitempty"`
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

// RolloutCounts count the instances a rollout moved to its To revision.
type RolloutCounts struct {
	// Moved are the unpinned instances the rollout moved to To so far.
	Moved int64 `json:"moved"`
	// Applied of them are applied with To.
	Applied int64 `json:"applied"`
	// Failed of them failed with To (their apply, or the guard refused their plan).
	Failed int64 `json:"failed"`
	// Blocked of them were neither applied with To nor failed there within the progress deadline.
	Blocked int64 `json:"blocked"`
	// HeldNamespaces are the namespaces held by more failures than maxFailures allows.
	HeldNamespaces int64 `json:"heldNamespaces"`
}

// RolloutStay is a revision and the instances (namespace/name) that stay on it.
//
// Deprecated: status.rollout.stay is no longer written; see StayOn.
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
