package job

import (
	"encoding/json"
	"maps"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/modkind/modkind/apis/v1alpha1"
)

const (
	errParsePodDefaults = "cannot read the runner pod defaults (a JSON or YAML object of resources, nodeSelector, tolerations, affinity, imagePullSecrets, labels, annotations, securityContext, priorityClassName)"
	errReservedKey      = "belongs to modkind or the Job controller and cannot be set on runner pods"
	errInvalidMetadata  = "invalid runner pod metadata"
	errResourceClaims   = "a runner cannot claim dynamic resources: remove resources.claims"
)

// PodDefaults are the operator's settings for every runner pod: the chart's runner.pod values,
// passed as --runner-pod-defaults. A ProviderConfig's spec.runner, written by a namespace admin for
// its namespace, wins where both set a field (PodDefaults.Merge). Everything else on the pod (its
// service account, modkind's labels, the runner's image, command, environment, volumes and the
// container's security context) is modkind's and cannot be set here.
type PodDefaults struct {
	// Resources of the runner container.
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
	// NodeSelector, Tolerations and Affinity place the runner pod.
	NodeSelector map[string]string   `json:"nodeSelector,omitempty"`
	Tolerations  []corev1.Toleration `json:"tolerations,omitempty"`
	Affinity     *corev1.Affinity    `json:"affinity,omitempty"`
	// ImagePullSecrets name Secrets of the instance's namespace, where the runner pod runs.
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`
	// Labels and Annotations go on the runner Job and its pod.
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	// SecurityContext is the pod's; modkind's own (the image's user 65532, non-root,
	// RuntimeDefault seccomp) when nil. The container's is always modkind's: non-root, read-only
	// root filesystem, no privilege escalation, no capabilities.
	SecurityContext   *corev1.PodSecurityContext `json:"securityContext,omitempty"`
	PriorityClassName string                     `json:"priorityClassName,omitempty"`
}

// ParsePodDefaults reads PodDefaults from JSON or YAML, refusing unknown fields (a mistyped key
// would otherwise be dropped without a word), keys modkind or the Job controller own, metadata the
// API server would refuse on every Job, and resource claims.
func ParsePodDefaults(data []byte) (PodDefaults, error) {
	var d PodDefaults
	if err := yaml.UnmarshalStrict(data, &d); err != nil {
		return PodDefaults{}, errors.Wrap(err, errParsePodDefaults)
	}
	for _, m := range []struct {
		name string
		keys map[string]string
	}{{"labels", d.Labels}, {"annotations", d.Annotations}} {
		for k := range m.keys {
			if v1alpha1.ReservedRunnerKey(k) {
				return PodDefaults{}, errors.Errorf("%s %q %s", m.name, k, errReservedKey)
			}
		}
	}
	errs := metav1validation.ValidateLabels(d.Labels, field.NewPath("labels"))
	errs = append(errs, metav1validation.ValidateLabels(d.NodeSelector, field.NewPath("nodeSelector"))...)
	errs = append(errs, apivalidation.ValidateAnnotations(d.Annotations, field.NewPath("annotations"))...)
	if len(errs) > 0 {
		return PodDefaults{}, errors.Wrap(errs.ToAggregate(), errInvalidMetadata)
	}
	if d.Resources != nil && len(d.Resources.Claims) > 0 {
		return PodDefaults{}, errors.New(errResourceClaims)
	}
	return d, nil
}

// Merge returns the runner pod settings of an instance whose ProviderConfig's runner template is
// spec (possibly nil): spec's field where it sets one, d's where it does not. Labels and
// annotations are merged key by key, spec's value winning; resources, nodeSelector and tolerations
// are taken whole from spec when it sets them, since half of one and half of another could ask for
// a node or limits neither meant. Affinity, pull Secrets, the pod's security context and priority
// class are the operator's alone.
func (d PodDefaults) Merge(spec *v1alpha1.RunnerSpec) PodDefaults {
	out := *d.DeepCopy()
	if spec == nil {
		return out
	}
	if spec.Resources != nil {
		out.Resources = spec.Resources.DeepCopy()
	}
	if len(spec.NodeSelector) > 0 {
		out.NodeSelector = maps.Clone(spec.NodeSelector)
	}
	if len(spec.Tolerations) > 0 {
		out.Tolerations = nil
		for _, t := range spec.Tolerations {
			out.Tolerations = append(out.Tolerations, *t.DeepCopy())
		}
	}
	out.Labels = mergeKeys(out.Labels, spec.Labels)
	out.Annotations = mergeKeys(out.Annotations, spec.Annotations)
	return out
}

// DeepCopy copies d, so that a Job built from it shares nothing with the controller's settings.
func (d PodDefaults) DeepCopy() *PodDefaults {
	out := PodDefaults{
		NodeSelector:      maps.Clone(d.NodeSelector),
		Labels:            maps.Clone(d.Labels),
		Annotations:       maps.Clone(d.Annotations),
		PriorityClassName: d.PriorityClassName,
	}
	if d.Resources != nil {
		out.Resources = d.Resources.DeepCopy()
	}
	for _, t := range d.Tolerations {
		out.Tolerations = append(out.Tolerations, *t.DeepCopy())
	}
	if d.Affinity != nil {
		out.Affinity = d.Affinity.DeepCopy()
	}
	if d.ImagePullSecrets != nil {
		out.ImagePullSecrets = append([]corev1.LocalObjectReference{}, d.ImagePullSecrets...)
	}
	if d.SecurityContext != nil {
		out.SecurityContext = d.SecurityContext.DeepCopy()
	}
	return &out
}

// mergeKeys is base with over's keys added, over winning; nil when both are empty.
func mergeKeys(base, over map[string]string) map[string]string {
	if len(base) == 0 && len(over) == 0 {
		return nil
	}
	out := maps.Clone(base)
	if out == nil {
		out = make(map[string]string, len(over))
	}
	maps.Copy(out, over)
	return out
}

// PodDefaultsFlag is the flag.Value of --runner-pod-defaults: a JSON or YAML object, read with
// ParsePodDefaults into the PodDefaults it points at.
type PodDefaultsFlag struct{ *PodDefaults }

// Set parses s.
func (f PodDefaultsFlag) Set(s string) error {
	d, err := ParsePodDefaults([]byte(s))
	if err != nil {
		return err
	}
	*f.PodDefaults = d
	return nil
}

// String is the settings as JSON; empty when none are set, so that the flag shows no default.
func (f PodDefaultsFlag) String() string {
	if f.PodDefaults == nil {
		return ""
	}
	b, err := json.Marshal(f.PodDefaults)
	if err != nil || string(b) == "{}" {
		return ""
	}
	return strings.TrimSpace(string(b))
}
