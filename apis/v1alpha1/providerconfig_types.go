package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// SecretKeySelector selects one key of a Secret.
type SecretKeySelector struct {
	// Name of the Secret.
	Name string `json:"name"`
	// Namespace of the Secret: required in a ClusterProviderConfig, where it must be one of the
	// namespaces the controller reads cluster credentials from (--credentials-namespaces); not
	// allowed in a ProviderConfig, whose Secrets are always those of its own namespace.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Key within the Secret.
	Key string `json:"key"`
}

// EnvVar is an environment variable given to Terraform and its providers. Names that steer
// terraform, git, the shell, the dynamic loader, TLS, proxies or modkind itself are refused (see
// ReservedEnvName): a ProviderConfig configures providers, never the tools that run them.
// +kubebuilder:validation:XValidation:rule="has(self.value) != has(self.secretKeyRef)",message="exactly one of value and secretKeyRef must be set"
// +kubebuilder:validation:XValidation:rule="!(self.name.upperAscii() in ['PATH','HOME','TMPDIR','TMP','TEMP','SHELL','USER','PWD','IFS','ENV','BASH_ENV','CDPATH','PS4','SHELLOPTS','BASHOPTS','GLOBIGNORE','PROMPT_COMMAND','HTTP_PROXY','HTTPS_PROXY','NO_PROXY','ALL_PROXY','FTP_PROXY','CURL_CA_BUNDLE','REQUESTS_CA_BUNDLE','NODE_EXTRA_CA_CERTS','NODE_OPTIONS','PYTHONPATH','PYTHONHOME','PYTHONSTARTUP','PERL5LIB','PERL5OPT','RUBYLIB','RUBYOPT','GODEBUG','GOFLAGS','GOCOVERDIR','KUBECONFIG','KUBE_CONFIG_PATH','KUBE_CONFIG_PATHS','KUBERNETES_SERVICE_HOST','KUBERNETES_SERVICE_PORT','AWS_CONFIG_FILE','AWS_SHARED_CREDENTIALS_FILE','GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES','TERRAFORM_CONFIG'])",message="this environment variable steers the tools modkind runs (terraform, git, the shell, the loader, TLS, proxies) and cannot be set by a ProviderConfig"
// +kubebuilder:validation:XValidation:rule="!['TF_','TOFU_','CHECKPOINT_','GIT_','LD_','DYLD_','SSL_','SSH_','PLUGIN_','GRPC_','MODKIND_','XDG_'].exists(p, self.name.upperAscii().startsWith(p))",message="environment variables starting with TF_, TOFU_, CHECKPOINT_, GIT_, LD_, DYLD_, SSL_, SSH_, PLUGIN_, GRPC_, MODKIND_ or XDG_ steer the tools modkind runs and cannot be set by a ProviderConfig"
type EnvVar struct {
	// Name of the variable.
	// +kubebuilder:validation:Pattern=`^[A-Za-z_][A-Za-z0-9_]*$`
	// +kubebuilder:validation:MaxLength=128
	Name string `json:"name"`
	// Value is a literal value.
	// +optional
	Value *string `json:"value,omitempty"`
	// SecretKeyRef takes the value from a Secret key.
	// +optional
	SecretKeyRef *SecretKeySelector `json:"secretKeyRef,omitempty"`
}

// File is a file written before each run into the run's files directory, which modkind empties
// and owns; terraform and its providers find it as $MODKIND_FILES_DIR/<path>, or as files/<path>
// relative to the root module. Names that Terraform would read as configuration, variables, state
// or plans are refused.
type File struct {
	// Path relative to the files directory: segments of letters, digits, '_', '-' and '.', none
	// starting with a dot.
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_-][A-Za-z0-9_.-]*(/[A-Za-z0-9_-][A-Za-z0-9_.-]*)*$`
	// +kubebuilder:validation:XValidation:rule="!self.lowerAscii().matches('[.](tf|tf[.]json|tofu|tofu[.]json|tfvars|tfvars[.]json|tfstate|tfstate[.]backup|tfplan|hcl)(/|$)') && !self.lowerAscii().matches('(^|/)terraform[.]rc(/|$)')",message="a file may not be named like a Terraform configuration, variables, state, plan or CLI configuration file"
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
	// Files are written into the run's files directory before each run.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Files []File `json:"files,omitempty"`
	// Providers is the root module's "provider" block in Terraform JSON syntax, e.g.
	// {"aws": {"region": "eu-west-1"}}. In a ProviderConfig every string is a literal value, never
	// a template, and may not be an absolute path or climb out with "..": refer to files as
	// files/<path>. In a ClusterProviderConfig, written by cluster admins, strings are Terraform
	// expressions.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	// +optional
	Providers *runtime.RawExtension `json:"providers,omitempty"`
	// Runner shapes the Kubernetes Job that executes the terraform runs of the instances using
	// this configuration, when modkind runs with --runner=job. It is ignored with
	// --runner=process, where terraform runs inside the controller.
	// +optional
	Runner *RunnerSpec `json:"runner,omitempty"`
}

// RunnerSpec is what a ProviderConfig (or ClusterProviderConfig) adds to the pod of the Job that
// runs terraform for its instances. modkind writes the rest of the pod: image, command,
// environment, volumes and security context are never taken from here.
// +kubebuilder:validation:XValidation:rule="!has(self.labels) || self.labels.all(k, !(k.startsWith('modkind.io/') || k.matches('^[^/]*[.]modkind[.]io/')))",message="labels under modkind.io/ are modkind's own and cannot be set by a runner template"
// +kubebuilder:validation:XValidation:rule="!has(self.annotations) || self.annotations.all(k, !(k.startsWith('modkind.io/') || k.matches('^[^/]*[.]modkind[.]io/')))",message="annotations under modkind.io/ are modkind's own and cannot be set by a runner template"
// +kubebuilder:validation:XValidation:rule="!has(self.labels) || self.labels.all(k, !(k.startsWith('batch.kubernetes.io/') || k == 'controller-uid' || k == 'job-name'))",message="labels under batch.kubernetes.io/ and the labels controller-uid and job-name belong to the Job controller and cannot be set by a runner template"
// +kubebuilder:validation:XValidation:rule="!has(self.annotations) || self.annotations.all(k, !(k.startsWith('batch.kubernetes.io/') || k == 'controller-uid' || k == 'job-name'))",message="annotations under batch.kubernetes.io/ and the annotations controller-uid and job-name belong to the Job controller and cannot be set by a runner template"
type RunnerSpec struct {
	// ServiceAccountName is the service account, in the instance's namespace, the runner pod runs
	// as; "modkind-runner" when empty. Its identity is the one terraform and every provider run
	// with: it reads the instance's state and Secrets through RBAC, and workload identity (EKS
	// IRSA, GKE Workload Identity, Azure Workload Identity) binds cloud credentials to it, so no
	// static cloud keys are needed. The controller's own service account token is never mounted
	// in a runner pod.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
	// Resources of the runner container: terraform and the providers it starts.
	// +kubebuilder:validation:XValidation:rule="!has(self.claims)",message="a runner cannot claim dynamic resources"
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
	// NodeSelector of the runner pod.
	// +kubebuilder:validation:MaxProperties=64
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// Tolerations of the runner pod.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// Labels added to the runner Job and its pod, e.g. azure.workload.identity/use. Labels under
	// modkind.io/ and those the Job controller sets are refused; modkind's own labels always win.
	// +kubebuilder:validation:MaxProperties=64
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations added to the runner Job and its pod. Keys under modkind.io/ and those the Job
	// controller sets are refused.
	// +kubebuilder:validation:MaxProperties=64
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// ProviderConfigStatus is the observed state of a ProviderConfig.
type ProviderConfigStatus struct {
	xpv2.ConditionedStatus `json:",inline"`
}

// A ProviderConfig supplies provider configuration and credentials to the instances of generated
// kinds in its namespace that name it in spec.providerConfigRef. It decides the credentials and
// environment of every instance that names it, so it is for namespace admins, not editors.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories=modkind
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
type ProviderConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +kubebuilder:validation:XValidation:rule="!has(self.env) || self.env.all(e, !has(e.secretKeyRef) || !has(e.secretKeyRef.__namespace__))",message="a ProviderConfig reads Secrets of its own namespace only: remove secretKeyRef.namespace"
	// +kubebuilder:validation:XValidation:rule="!has(self.files) || self.files.all(f, !has(f.secretKeyRef.__namespace__))",message="a ProviderConfig reads Secrets of its own namespace only: remove secretKeyRef.namespace"
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

// A ClusterProviderConfig supplies provider configuration and credentials to instances in any
// namespace that name it in spec.providerConfigRef (kind: ClusterProviderConfig). Only cluster
// admins write it, so its provider block may hold Terraform expressions; its Secrets live in the
// namespaces the controller reads cluster credentials from.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories=modkind
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
type ClusterProviderConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ClusterProviderConfigSpec `json:"spec"`
	Status ProviderConfigStatus      `json:"status,omitempty"`
}

// ClusterProviderConfigSpec is a ProviderConfigSpec that cluster admins share with the namespaces
// they list.
// +kubebuilder:validation:XValidation:rule="!has(self.env) || self.env.all(e, !has(e.secretKeyRef) || (has(e.secretKeyRef.__namespace__) && size(e.secretKeyRef.__namespace__) > 0))",message="a ClusterProviderConfig's secretKeyRef needs a namespace"
// +kubebuilder:validation:XValidation:rule="!has(self.files) || self.files.all(f, has(f.secretKeyRef.__namespace__) && size(f.secretKeyRef.__namespace__) > 0)",message="a ClusterProviderConfig's secretKeyRef needs a namespace"
type ClusterProviderConfigSpec struct {
	ProviderConfigSpec `json:",inline"`
	// Namespaces whose instances may use this configuration, and so act with its credentials;
	// "*" for every namespace. No namespace may when empty: sharing credentials with a tenant is
	// a decision a cluster admin writes down.
	// +kubebuilder:validation:MaxItems=256
	// +optional
	Namespaces []string `json:"namespaces,omitempty"`
}

// ClusterProviderConfigList is a list of ClusterProviderConfigs.
// +kubebuilder:object:root=true
type ClusterProviderConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterProviderConfig `json:"items"`
}
