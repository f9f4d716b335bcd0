package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RunOperation is the terraform work a Run does.
// +kubebuilder:validation:Enum=Apply;Plan;Destroy;DriftPlan;Refresh
type RunOperation string

// Operations of a Run.
const (
	// OperationApply plans, then applies exactly the plan it saved.
	OperationApply RunOperation = "Apply"
	// OperationPlan plans only, to preview a revision the instance is not applied with yet: it
	// never applies, never stores state or a plan, and its result is only ever shown.
	OperationPlan RunOperation = "Plan"
	// OperationDestroy destroys everything the instance's state tracks.
	OperationDestroy RunOperation = "Destroy"
	// OperationDriftPlan is a refreshing plan that looks for changes made outside modkind.
	OperationDriftPlan RunOperation = "DriftPlan"
	// OperationRefresh brings the state of an Observe-only instance up to date with the real objects.
	OperationRefresh RunOperation = "Refresh"
)

// RunPhase is where a Run is in its life.
// +kubebuilder:validation:Enum=Queued;Pending;Running;WaitingForApproval;Refused;Succeeded;Failed
type RunPhase string

// Phases of a Run.
const (
	// PhaseQueued: the Run waits for a run slot, its namespace's share or any; status.message
	// says which. It holds no slot.
	PhaseQueued RunPhase = "Queued"
	// PhasePending: the Run holds a run slot and its runner Job is made, but its runner has not
	// started yet; status.message says what it waits for, when something holds it up.
	PhasePending            RunPhase = "Pending"
	PhaseRunning            RunPhase = "Running"
	PhaseWaitingForApproval RunPhase = "WaitingForApproval"
	// PhaseRefused: the plan would destroy or replace objects and the instance does not allow it.
	PhaseRefused   RunPhase = "Refused"
	PhaseSucceeded RunPhase = "Succeeded"
	PhaseFailed    RunPhase = "Failed"
)

// Executors of Runs.
const (
	// ExecutorProcess runs terraform as a child process of the controller.
	ExecutorProcess = "process"
	// ExecutorJob runs terraform in a Kubernetes Job in the Run's namespace, under the service
	// account the instance's ProviderConfig names (spec.runner).
	ExecutorJob = "job"
)

// Labels on every Run.
const (
	// LabelInstanceUID selects the Runs of one instance.
	LabelInstanceUID = "modkind.io/instance-uid"
	// LabelInstance is the instance's name (or a digest of it when longer than a label value).
	LabelInstance = "modkind.io/instance"
	// AnnotationInstance is the instance as Kind/name, for the INSTANCE column.
	AnnotationInstance = "modkind.io/instance"
)

// InstanceReference names the instance a Run belongs to, in the Run's namespace.
type InstanceReference struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	UID        string `json:"uid"`
}

// RunSpec is what a Run was made from. The controller writes it once, when it creates the Run.
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="a Run's spec is written once"
type RunSpec struct {
	// InstanceRef is the instance this Run belongs to.
	InstanceRef InstanceReference `json:"instanceRef"`
	// Operation is the terraform work this Run does.
	Operation RunOperation `json:"operation"`
	// ModuleDigest is the digest of the module the instance was applied with (the Module's
	// status.served.digest at the time).
	// +optional
	ModuleDigest string `json:"moduleDigest,omitempty"`
	// InputsDigest identifies the rendered root module, variables and provider configuration; it
	// is what the state records as applied when an Apply succeeds.
	// +optional
	InputsDigest string `json:"inputsDigest,omitempty"`
	// ArtifactDigest is the digest of the bundle (module, providers and dependency lock file) a
	// runner fetches from the controller's artifact server; the runner refuses a bundle that does
	// not match it.
	// +kubebuilder:validation:Pattern=`^sha256:[0-9a-f]{64}$`
	// +optional
	ArtifactDigest string `json:"artifactDigest,omitempty"`
	// RunInputsDigest is the digest of the Run's inputs, which the controller puts in a Secret of
	// the Run's name for a runner (they hold the tenant's secret values); the runner refuses inputs
	// that do not match it, so that whoever may write the namespace's Secrets cannot change what
	// the runner runs.
	// +kubebuilder:validation:Pattern=`^sha256:[0-9a-f]{64}$`
	// +optional
	RunInputsDigest string `json:"runInputsDigest,omitempty"`
}

// RunPlan summarizes the plan a Run made: counts and addresses, never values.
type RunPlan struct {
	// ID identifies the plan's changes; it is what spec.approval.approvedPlan names.
	// +optional
	ID      string `json:"id,omitempty"`
	Add     int64  `json:"add"`
	Change  int64  `json:"change"`
	Destroy int64  `json:"destroy"`
	// Replace counts the objects the plan would replace (each also counted in add and destroy).
	// +optional
	Replace int64 `json:"replace,omitempty"`
	// Destructive lists the objects the plan would delete or replace, by address.
	// +optional
	Destructive []string `json:"destructive,omitempty"`
	// Summary is "+add ~change -destroy", as the printer column shows it.
	// +optional
	Summary string `json:"summary,omitempty"`
}

// RunStatus is what happened to a Run.
type RunStatus struct {
	// +optional
	Phase RunPhase `json:"phase,omitempty"`
	// Executor ran it: "process", a child of the controller, or "job", a Kubernetes Job of the
	// same name in the Run's namespace.
	// +optional
	Executor string `json:"executor,omitempty"`
	// Runner is the pod of a runner pool (--runner pool) that holds the Run, as
	// "<pod name>/<pod uid>": written once, by the controller as it hands the Run to an idle pod
	// of its pool, or else by the pod that takes it; from then on the only pod whose token may
	// write the Run's status (the chart's policy checks it).
	// +optional
	// +kubebuilder:validation:MaxLength=320
	Runner string `json:"runner,omitempty"`
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// CompletionTime is set once the Run ended (Refused, Succeeded or Failed).
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// Plan is the plan the Run made, if it made one.
	// +optional
	Plan *RunPlan `json:"plan,omitempty"`
	// StateSerial is the serial of the state the Run left.
	// +optional
	StateSerial *int64 `json:"stateSerial,omitempty"`
	// OutputsSecretRef names the instance's connection Secret when outputs were published to it.
	// +optional
	OutputsSecretRef string `json:"outputsSecretRef,omitempty"`
	// Message says why a Run failed, was refused or waits; known sensitive values are redacted.
	// Bounded (runs.MaxMessage), so that the runner account, which writes Runs' status, cannot
	// grow a Run without end.
	// +kubebuilder:validation:MaxLength=32768
	// +optional
	Message string `json:"message,omitempty"`
	// Log is what terraform did, as people read it: each command, each object's progress
	// ("terraform_data.x: Creation complete after 0s"), the counts and each error's first line;
	// never a value nor an object's id. Its last lines, bounded (terraform.MaxLogBytes).
	// +kubebuilder:validation:MaxLength=16384
	// +optional
	Log string `json:"log,omitempty"`
}

// A Run is one piece of terraform work on an instance of a generated kind: an apply, a destroy, a
// drift plan, a refresh, or the plan-only preview of a module revision. The controller records
// each Run it starts; `kubectl get runs` shows what ran, runs and waits for approval. Runs belong
// to their instance and go with it.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories=modkind,shortName=tfrun
// +kubebuilder:printcolumn:name="INSTANCE",type="string",JSONPath=".metadata.annotations.modkind\\.io/instance"
// +kubebuilder:printcolumn:name="OPERATION",type="string",JSONPath=".spec.operation"
// +kubebuilder:printcolumn:name="PHASE",type="string",JSONPath=".status.phase"
// +kubebuilder:printcolumn:name="PLAN",type="string",JSONPath=".status.plan.summary"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="MESSAGE",type="string",JSONPath=".status.message",priority=1
// +kubebuilder:selectablefield:JSONPath=".status.phase"
// +kubebuilder:selectablefield:JSONPath=".status.runner"
type Run struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   RunSpec   `json:"spec"`
	Status RunStatus `json:"status,omitempty"`
}

// RunList is a list of Runs.
// +kubebuilder:object:root=true
type RunList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Run `json:"items"`
}
