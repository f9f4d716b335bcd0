package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ModuleSource says where the Terraform module lives: a path or a URL, with the same meaning as
// the source and version arguments of a Terraform module block; or which single resource type of
// a provider the kind manages.
// +kubebuilder:validation:XValidation:rule="[has(self.path), has(self.url), has(self.resource)].filter(x, x).size() == 1",message="set exactly one of path, url and resource"
// +kubebuilder:validation:XValidation:rule="!has(self.version) || has(self.url)",message="version goes with a registry url"
type ModuleSource struct {
	// Path is a directory on the controller's filesystem that holds the module's .tf files.
	// +optional
	Path string `json:"path,omitempty"`
	// URL is a module source address as Terraform reads it: a git repository
	// (git::https://host/repo.git//subdir?ref=v1.2.0, github.com/org/repo), a module registry
	// address (namespace/name/provider or host/namespace/name/provider), or an http(s) archive.
	// +optional
	URL string `json:"url,omitempty"`
	// Version constrains a registry module's version, e.g. "~> 1.2".
	// +optional
	Version string `json:"version,omitempty"`
	// CredentialsSecretRef names a Secret with the credentials the source needs: keys username
	// and token (git over https), bearerToken, sshPrivateKey and known_hosts (git over ssh), and
	// TF_TOKEN_<host> (a private registry, named as Terraform names it). Its namespace must be one
	// of those the controller reads cluster credentials from (--credentials-namespaces, by default
	// the controller's own). The credentials are sent only to the host of this source.
	// +optional
	CredentialsSecretRef *SecretReference `json:"credentialsSecretRef,omitempty"`
	// Resource makes the kind manage one resource of a provider, as a module holding just that
	// resource block would.
	// +optional
	Resource *ResourceSource `json:"resource,omitempty"`
}

// ResourceSource names one resource type of a Terraform provider.
type ResourceSource struct {
	// Provider is the provider's source address, e.g. hashicorp/random or example.com/acme/things.
	// It is installed as terraform init would, following the controller's CLI configuration
	// (provider_installation, mirrors, plugin cache).
	// +kubebuilder:validation:MinLength=1
	Provider string `json:"provider"`
	// Version constrains the provider's version, e.g. "1.2.0" or "~> 1.2".
	// +optional
	Version string `json:"version,omitempty"`
	// Type is the resource type, e.g. random_password. Its prefix up to the first underscore
	// must be the provider's type name, as Terraform requires.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]+_[a-z0-9_]+$`
	Type string `json:"type"`
}

// SecretReference names a Secret in a namespace.
type SecretReference struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
}

// ResolvedSource is what a Module's source resolved to when last fetched.
type ResolvedSource struct {
	// Version is the registry module version chosen.
	// +optional
	Version string `json:"version,omitempty"`
	// Commit is the git commit checked out.
	// +optional
	Commit string `json:"commit,omitempty"`
	// Provider is the provider version installed for a resource source.
	// +optional
	Provider string `json:"provider,omitempty"`
}

// CRDNames names the kind that a Module defines.
type CRDNames struct {
	// Group is the API group of the generated kind, e.g. platform.example.org.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$`
	Group string `json:"group"`
	// Kind is the generated kind, e.g. Bucket.
	// +kubebuilder:validation:Pattern=`^[A-Z][A-Za-z0-9]*$`
	Kind string `json:"kind"`
	// Version is the API version of the generated kind.
	// +kubebuilder:default=v1alpha1
	// +optional
	Version string `json:"version,omitempty"`
	// Plural is the resource name; the lower-cased kind plus "s" when unset.
	// +optional
	Plural string `json:"plural,omitempty"`
	// ShortNames are short aliases for kubectl.
	// +optional
	ShortNames []string `json:"shortNames,omitempty"`
	// Categories group the kind for `kubectl get <category>`; "modkind" is always added.
	// +optional
	Categories []string `json:"categories,omitempty"`
}

// ModuleSpec is the desired state of a Module.
// +kubebuilder:validation:XValidation:rule="self.crd.group == oldSelf.crd.group && self.crd.kind == oldSelf.crd.kind",message="crd.group and crd.kind are immutable"
type ModuleSpec struct {
	// Source locates the Terraform module.
	Source ModuleSource `json:"source"`
	// CRD names the kind to generate.
	CRD CRDNames `json:"crd"`
	// DriftInterval is how often a refreshing plan looks for changes made outside modkind to the
	// instances of this kind; the controller's --drift-interval when unset, never when 0s. An
	// instance's annotation modkind.io/drift-interval overrides it. At least the controller's
	// --min-drift-interval (1m): each refreshing plan calls every provider API the module uses.
	// +optional
	DriftInterval *metav1.Duration `json:"driftInterval,omitempty"`
	// AllowBreakingChanges lets a new version of the module change the kind's schema in ways that
	// existing instances may not survive (a field removed, a type changed, a new required field,
	// a narrowed or new validation). Without it such a change is refused and listed in the
	// Module's conditions, and the kind keeps its schema and module.
	// +optional
	AllowBreakingChanges bool `json:"allowBreakingChanges,omitempty"`
	// RevisionHistoryLimit is how many ModuleRevisions no instance uses are kept, newest first; 10
	// when unset. A revision an instance was last applied with, is pinned to, or a rollout moves
	// from or to is never removed, retired or not.
	// +kubebuilder:validation:Minimum=0
	// +optional
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty"`
	// Rollout says how instances move to a new revision of the module; Automatic when unset.
	// +optional
	Rollout *Rollout `json:"rollout,omitempty"`
	// RetiredRevisions names ModuleRevisions (kubectl get modulerevisions) no instance is
	// applied with any more, e.g. one a fixed revision replaced. An instance pinned to one by
	// spec.moduleRevisionRef is held (Synced=False, reason RevisionRetired) until its pin
	// changes; a spec.moduleRevisionSelector passes them by; an unpinned instance a rollout
	// left on one, or that an undone rollout would take back to one, is applied with the
	// Module's newest revision instead. It lives on the Module, not on the ModuleRevisions the
	// controller makes, so that it can be kept in git with the Module.
	// +listType=set
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=253
	// +optional
	RetiredRevisions []string `json:"retiredRevisions,omitempty"`
	// PublicOutputs names the outputs shown in status.atProvider of an instance that reads values
	// from Secrets (a secretKeyRef, or a sensitive variable's SecretRef). Terraform does not mark
	// every value derived from a sensitive one (a provider's computed attributes, can()), so such
	// an instance shows only the outputs listed here, and only those terraform does not mark
	// sensitive and that hold no value read from a Secret; all of them are in its connection
	// Secret. An instance that reads nothing from Secrets shows every output the module does not
	// declare sensitive.
	// +listType=set
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MinLength=1
	// +optional
	PublicOutputs []string `json:"publicOutputs,omitempty"`
}

// ModuleStatus is the observed state of a Module.
type ModuleStatus struct {
	xpv2.ConditionedStatus `json:",inline"`
	// ObservedGeneration is the generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// CRDName is the CustomResourceDefinition this Module owns.
	// +optional
	CRDName string `json:"crdName,omitempty"`
	// Source is what spec.source resolved to.
	// +optional
	Source *ResolvedSource `json:"source,omitempty"`
	// Digest identifies the module contents the kind was generated from.
	// +optional
	Digest string `json:"digest,omitempty"`
	// Variables are the module's input variable names.
	// +optional
	Variables []string `json:"variables,omitempty"`
	// Outputs are the module's output names.
	// +optional
	Outputs []string `json:"outputs,omitempty"`
	// Validations say, per variable with validation blocks, how many the API server checks when
	// an instance is written and which are left to Terraform at plan time, and why.
	// +optional
	Validations []VariableValidations `json:"validations,omitempty"`
	// Warnings are things about the generated kind its users should know, e.g. fields whose
	// names YAML reads as booleans unless they are quoted.
	// +optional
	Warnings []string `json:"warnings,omitempty"`
	// Served is the module snapshot the kind's instances are applied with: the last one that
	// installed its schema. When the source later breaks, or its change is refused, instances keep
	// being served from it, also after a controller restart.
	// +optional
	Served *ServedModule `json:"served,omitempty"`
	// Revision is the ModuleRevision of the snapshot last fetched: the newest the kind knows.
	// +optional
	Revision string `json:"revision,omitempty"`
	// Rollout is the state of the move of instances to a new revision; it survives restarts.
	// +optional
	Rollout *RolloutStatus `json:"rollout,omitempty"`
}

// VariableValidations is what becomes of one variable's validation blocks.
type VariableValidations struct {
	// Variable is the module variable's name.
	Variable string `json:"variable"`
	// Admission counts the blocks checked at admission, fully, in part, or holding for every
	// value the schema admits, as `modkind generate`'s header does.
	Admission int `json:"admission"`
	// PlanTime says, one short line per block, what is left to Terraform at plan time and why:
	// the blocks checked only at plan time, and those checked at admission in part.
	// +optional
	PlanTime []string `json:"planTime,omitempty"`
}

// ServedModule locates a module snapshot in the controller's content-addressed module cache.
type ServedModule struct {
	// Digest identifies the snapshot's contents.
	Digest string `json:"digest"`
	// Dir is the snapshot's directory on the controller's work volume.
	Dir string `json:"dir"`
}

// A Module turns a Terraform module into a namespaced Kubernetes kind whose instances modkind
// applies with Terraform.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories=modkind
// +kubebuilder:printcolumn:name="KIND",type="string",JSONPath=".spec.crd.kind"
// +kubebuilder:printcolumn:name="GROUP",type="string",JSONPath=".spec.crd.group"
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type="string",JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="REVISION",type="string",JSONPath=".status.revision"
// +kubebuilder:printcolumn:name="ROLLOUT",type="string",JSONPath=".status.rollout.phase"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
type Module struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ModuleSpec   `json:"spec"`
	Status ModuleStatus `json:"status,omitempty"`
}

// ModuleList is a list of Modules.
// +kubebuilder:object:root=true
type ModuleList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Module `json:"items"`
}
