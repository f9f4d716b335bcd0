package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// SecretKeySelector selects one key of a Secret in the ProviderConfig's namespace.
type SecretKeySelector struct {
	// Name of the Secret.
	Name string `json:"name"`
	// Key within the Secret.
	Key string `json:"key"`
}

// EnvVar is an environment variable given to Terraform and its providers.
// +kubebuilder:validation:XValidation:rule="has(self.value) != has(self.secretKeyRef)",message="exactly one of value and secretKeyRef must be set"
type EnvVar struct {
	// Name of the variable.
	// +kubebuilder:validation:Pattern=`^[A-Za-z_][A-Za-z0-9_]*$`
	Name string `json:"name"`
	// Value is a literal value.
	// +optional
	Value *string `json:"value,omitempty"`
	// SecretKeyRef takes the value from a Secret key.
	// +optional
	SecretKeyRef *SecretKeySelector `json:"secretKeyRef,omitempty"`
}

// File is a file written into the Terraform work directory before each run, e.g. a credentials
// file that a provider block or an environment variable points at.
type File struct {
	// Path relative to the work directory.
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$`
	// +kubebuilder:validation:XValidation:rule="!self.split('/').exists(p, p == '..' || p == '.')",message="path must stay inside the work directory"
	Path string `json:"path"`
	// SecretKeyRef is the Secret key holding the file's contents.
	SecretKeyRef SecretKeySelector `json:"secretKeyRef"`
}

// ProviderConfigSpec configures the Terraform providers an instance's module uses.
type ProviderConfigSpec struct {
	// Env are environment variables set for terraform and the providers it starts.
	// +kubebuilder:validation:MaxItems=256
	// +optional
	Env []EnvVar `json:"env,omitempty"`
	// Files are written into the work directory before each run.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Files []File `json:"files,omitempty"`
	// Providers is the root module's "provider" block in Terraform JSON syntax, e.g.
	// {"aws": {"region": "eu-west-1"}}. Unlike instance values, these are Terraform expressions.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	// +optional
	Providers *runtime.RawExtension `json:"providers,omitempty"`
}

// ProviderConfigStatus is the observed state of a ProviderConfig.
type ProviderConfigStatus struct {
	xpv2.ConditionedStatus `json:",inline"`
}

// A ProviderConfig supplies provider configuration and credentials to the instances of generated
// kinds in its namespace that name it in spec.providerConfigRef.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories=modkind
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
type ProviderConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ProviderConfigSpec   `json:"spec"`
	Status ProviderConfigStatus `json:"status,omitempty"`
}

// ProviderConfigList is a list of ProviderConfigs.
// +kubebuilder:object:root=true
type ProviderConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ProviderConfig `json:"items"`
}
