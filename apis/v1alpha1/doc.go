// Package v1alpha1 holds modkind's own API: the cluster-scoped Module that turns a Terraform module
// into a Kubernetes kind, and the ProviderConfig (namespaced) and ClusterProviderConfig that
// instances use for provider configuration and credentials, and the Run (namespaced) that records
// each piece of terraform work on an instance.
// +kubebuilder:object:generate=true
// +groupName=modkind.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// Group is the API group of modkind's own kinds.
const Group = "modkind.io"

// SchemeGroupVersion is the group and version of this package's kinds.
var SchemeGroupVersion = schema.GroupVersion{Group: Group, Version: "v1alpha1"}

var (
	// SchemeBuilder registers this package's kinds.
	SchemeBuilder = &scheme.Builder{GroupVersion: SchemeGroupVersion}
	// AddToScheme adds this package's kinds to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

var (
	// ModuleGroupVersionKind is the GVK of Module.
	ModuleGroupVersionKind = SchemeGroupVersion.WithKind("Module")
	// ProviderConfigGroupVersionKind is the GVK of ProviderConfig.
	ProviderConfigGroupVersionKind = SchemeGroupVersion.WithKind("ProviderConfig")
	// ClusterProviderConfigGroupVersionKind is the GVK of ClusterProviderConfig.
	ClusterProviderConfigGroupVersionKind = SchemeGroupVersion.WithKind("ClusterProviderConfig")
	// RunGroupVersionKind is the GVK of Run.
	RunGroupVersionKind = SchemeGroupVersion.WithKind("Run")
)

func init() {
	SchemeBuilder.Register(&Module{}, &ModuleList{}, &ModuleRevision{}, &ModuleRevisionList{}, &ProviderConfig{}, &ProviderConfigList{},
		&ClusterProviderConfig{}, &ClusterProviderConfigList{}, &Run{}, &RunList{})
}
