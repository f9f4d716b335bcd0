package fields

// Fields of every generated kind's spec, beside the module's variables in ForProvider. crd writes
// them into the kind's schema; the controllers and the CLI read and write them.
const (
	// ForProvider holds the module's variables (a resource kind's arguments), typed.
	ForProvider = "forProvider"
	// AllowDestructive lets an instance apply plans that destroy or replace objects. Without it
	// such plans are refused: a control plane re-applies forever, so one careless spec change
	// must never delete a database.
	AllowDestructive = "allowDestructivePlans"
	// Approval is the approval mode: with mode Manual, a planned change is applied only once its
	// id is written to ApprovedPlan.
	Approval       = "approval"
	ApprovalMode   = "mode"
	ApprovedPlan   = "approvedPlan"
	ApprovalAuto   = "Auto"
	ApprovalManual = "Manual"
)

// Fields of every generated kind's status, beside the module's outputs in AtProvider.
const (
	// AtProvider holds the module's non-sensitive outputs (a resource kind's attributes).
	AtProvider = "atProvider"
	// LastPlan is the last plan made: its id, counts, destructive changes and Secret.
	LastPlan = "lastPlan"
	// State is the state the instance was seen with: Secret, lineage, serial.
	State = "state"
	// StateLock tells when a stale state lock was broken, and whose it was.
	StateLock = "stateLock"
	// PendingDrift says a drift check found changes that are not applied yet.
	PendingDrift = "pendingDrift"
	// ObservedGeneration is the generation the status describes.
	ObservedGeneration = "observedGeneration"
)

// Fields that tie an instance to a revision of its module (ModuleRevision).
const (
	// ModuleRevisionRef pins the instance to one ModuleRevision of its Module, by name.
	ModuleRevisionRef = "moduleRevisionRef"
	// ModuleRevisionSelector makes the instance follow the newest ModuleRevision of its Module
	// whose labels match.
	ModuleRevisionSelector = "moduleRevisionSelector"
	// ModuleRevision (status) is the revision the instance was last applied with.
	ModuleRevision = "moduleRevision"
	// FailedModuleRevision (status) is the revision whose last apply failed, or whose plan the
	// destroy/replace guard refused; cleared by an apply that succeeds.
	FailedModuleRevision = "failedModuleRevision"
	// RevisionPreview (status) is what a plan-only run of the revision a rollout will move the
	// instance to found: shown, never acted on.
	RevisionPreview = "revisionPreview"
)
