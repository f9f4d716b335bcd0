package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ModuleRevisionSpec is one module snapshot a Module resolved to. It never changes once written.
type ModuleRevisionSpec struct {
	// ModuleName is the Module this revision belongs to.
	// +kubebuilder:validation:MinLength=1
	ModuleName string `json:"moduleName"`
	// Revision numbers the Module's revisions in the order they were first seen, from 1.
	// +kubebuilder:validation:Minimum=1
	Revision int64 `json:"revision"`
	// Digest identifies the snapshot's contents in the controller's module cache.
	// +kubebuilder:validation:MinLength=1
	Digest string `json:"digest"`
	// Source is what the Module's source resolved to when this snapshot was fetched.
	// +optional
	Source *ResolvedSource `json:"source,omitempty"`
	// Dir is the snapshot's directory on the controller's work volume: it stays in the module
	// cache while this revision exists.
	Dir string `json:"dir"`
	// Variables are the snapshot's input variable names: the forProvider fields an instance
	// applied with this revision may set.
	// +optional
	Variables []string `json:"variables,omitempty"`
	// Outputs are the snapshot's output names.
	// +optional
	Outputs []string `json:"outputs,omitempty"`
}

// ModuleRevisionStatus is what modkind observes of a revision.
type ModuleRevisionStatus struct {
	// Instances counts the instances last applied with this revision.
	// +optional
	Instances int64 `json:"instances"`
	// Preview is what the instances a rollout moves to this revision would see, as the Module's
	// status.rollout.preview counts it; kept once that rollout is over.
	// +optional
	Preview *FleetPreview `json:"preview,omitempty"`
}

// A ModuleRevision records one distinct module snapshot a Module resolved to, so that instances
// can stay on it (pinned, or while a rollout has not reached them) and a rollout can be undone.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories=modkind
// +kubebuilder:printcolumn:name="MODULE",type="string",JSONPath=".spec.moduleName"
// +kubebuilder:printcolumn:name="REVISION",type="integer",JSONPath=".spec.revision"
// +kubebuilder:printcolumn:name="VERSION",type="string",JSONPath=".spec.source.version"
// +kubebuilder:printcolumn:name="COMMIT",type="string",JSONPath=".spec.source.commit"
// +kubebuilder:printcolumn:name="DIGEST",type="string",JSONPath=".spec.digest"
// +kubebuilder:printcolumn:name="INSTANCES",type="integer",JSONPath=".status.instances"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
type ModuleRevision struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="a ModuleRevision's spec is immutable"
	Spec   ModuleRevisionSpec   `json:"spec"`
	Status ModuleRevisionStatus `json:"status,omitempty"`
}

// ModuleRevisionList is a list of ModuleRevisions.
// +kubebuilder:object:root=true
type ModuleRevisionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ModuleRevision `json:"items"`
}
