package job

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/modkind/modkind/apis/v1alpha1"
)

// The pod of a runner Job from the operator's settings (the chart's runner.pod values) and the
// instance's ProviderConfig's spec.runner: each case says what it changes from the pod modkind
// builds with neither, so that the diff shows the whole effect and nothing else moves.
func TestRunnerPodFromDefaultsAndProviderConfig(t *testing.T) {
	run := &v1alpha1.Run{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web-apply-1", UID: "uid-1",
			Labels:      map[string]string{v1alpha1.LabelInstanceUID: "inst-uid"},
			Annotations: map[string]string{v1alpha1.AnnotationInstance: "Bucket/web"}},
		Spec: v1alpha1.RunSpec{Operation: v1alpha1.OperationApply},
	}
	opts := func(d PodDefaults) JobOptions {
		return JobOptions{Image: "ghcr.io/modkind/modkind:0.1.0", ArtifactsURL: "https://modkind.modkind-system.svc:8443", ArtifactsCA: []byte("PEM"), Pod: d}
	}
	quantity := resource.MustParse
	chartResources := &corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: quantity("250m"), corev1.ResourceMemory: quantity("512Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: quantity("2Gi")},
	}
	configResources := &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: quantity("8Gi")}}
	affinity := &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/arch", Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}}}}},
	}}}
	openshift := &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
	chart := PodDefaults{
		Resources:         chartResources,
		NodeSelector:      map[string]string{"pool": "runners"},
		Tolerations:       []corev1.Toleration{{Key: "runners", Operator: corev1.TolerationOpExists}},
		Affinity:          affinity,
		ImagePullSecrets:  []corev1.LocalObjectReference{{Name: "registry"}},
		Labels:            map[string]string{"team": "platform", "cost-center": "42"},
		Annotations:       map[string]string{"example.org/owner": "platform"},
		SecurityContext:   openshift,
		PriorityClassName: "batch-low",
	}
	providerConfig := &v1alpha1.RunnerSpec{
		ServiceAccountName: "terraform",
		Resources:          configResources,
		NodeSelector:       map[string]string{"pool": "gpu"},
		Tolerations:        []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}},
		Labels:             map[string]string{"team": "a", "azure.workload.identity/use": "true"},
		Annotations:        map[string]string{"example.org/team": "a"},
	}
	base := RunnerJob(run, nil, opts(PodDefaults{})).Spec.Template

	cases := map[string]struct {
		reason   string
		defaults PodDefaults
		spec     *v1alpha1.RunnerSpec
		want     func(p *corev1.PodTemplateSpec)
	}{
		"Neither": {
			reason: "Without settings the pod is modkind's alone: its labels, the default runner account, the image's user and RuntimeDefault seccomp.",
			want:   func(*corev1.PodTemplateSpec) {},
		},
		"ChartOnly": {
			reason:   "Every setting of the chart's runner.pod is carried into the pod, under modkind's labels.",
			defaults: chart,
			want: func(p *corev1.PodTemplateSpec) {
				p.Labels["team"], p.Labels["cost-center"] = "platform", "42"
				p.Annotations["example.org/owner"] = "platform"
				p.Spec.Containers[0].Resources = *chartResources
				p.Spec.NodeSelector = map[string]string{"pool": "runners"}
				p.Spec.Tolerations = []corev1.Toleration{{Key: "runners", Operator: corev1.TolerationOpExists}}
				p.Spec.Affinity = affinity
				p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "registry"}}
				p.Spec.SecurityContext = openshift
				p.Spec.PriorityClassName = "batch-low"
			},
		},
		"ProviderConfigOnly": {
			reason: "A ProviderConfig's runner template alone sets what it names, as before chart defaults existed.",
			spec:   providerConfig,
			want: func(p *corev1.PodTemplateSpec) {
				p.Labels["team"], p.Labels["azure.workload.identity/use"] = "a", "true"
				p.Annotations["example.org/team"] = "a"
				p.Spec.ServiceAccountName = "terraform"
				p.Spec.Containers[0].Resources = *configResources
				p.Spec.NodeSelector = map[string]string{"pool": "gpu"}
				p.Spec.Tolerations = []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}}
			},
		},
		"ProviderConfigWins": {
			reason:   "Where both set a field the ProviderConfig's wins: resources, nodeSelector and tolerations whole (no mix of the two), labels and annotations key by key; what only the chart sets stays.",
			defaults: chart,
			spec:     providerConfig,
			want: func(p *corev1.PodTemplateSpec) {
				p.Labels["team"], p.Labels["cost-center"], p.Labels["azure.workload.identity/use"] = "a", "42", "true"
				p.Annotations["example.org/owner"], p.Annotations["example.org/team"] = "platform", "a"
				p.Spec.ServiceAccountName = "terraform"
				p.Spec.Containers[0].Resources = *configResources
				p.Spec.NodeSelector = map[string]string{"pool": "gpu"}
				p.Spec.Tolerations = []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}}
				p.Spec.Affinity = affinity
				p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "registry"}}
				p.Spec.SecurityContext = openshift
				p.Spec.PriorityClassName = "batch-low"
			},
		},
		"EmptyProviderConfigFields": {
			reason:   "A ProviderConfig that sets only its service account leaves every chart setting in place.",
			defaults: chart,
			spec:     &v1alpha1.RunnerSpec{ServiceAccountName: "terraform"},
			want: func(p *corev1.PodTemplateSpec) {
				p.Labels["team"], p.Labels["cost-center"] = "platform", "42"
				p.Annotations["example.org/owner"] = "platform"
				p.Spec.ServiceAccountName = "terraform"
				p.Spec.Containers[0].Resources = *chartResources
				p.Spec.NodeSelector = map[string]string{"pool": "runners"}
				p.Spec.Tolerations = []corev1.Toleration{{Key: "runners", Operator: corev1.TolerationOpExists}}
				p.Spec.Affinity = affinity
				p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "registry"}}
				p.Spec.SecurityContext = openshift
				p.Spec.PriorityClassName = "batch-low"
			},
		},
		"ModkindKeysWin": {
			reason: "Settings that name modkind's or the Job controller's keys (written around ParsePodDefaults, or by a ProviderConfig stored before admission refused them) change nothing of modkind's: its labels and annotation keep their values, the rest of those keys are dropped.",
			defaults: PodDefaults{
				Labels:      map[string]string{LabelRun: "another-run", v1alpha1.LabelInstanceUID: "forged", "job-name": "x"},
				Annotations: map[string]string{v1alpha1.AnnotationInstance: "Bucket/other", "batch.kubernetes.io/job-tracking": "x"},
			},
			spec: &v1alpha1.RunnerSpec{Labels: map[string]string{LabelRun: "yet-another", "controller-uid": "x"}},
			want: func(*corev1.PodTemplateSpec) {},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			want := base.DeepCopy()
			tc.want(want)
			job := RunnerJob(run, tc.spec, opts(tc.defaults))
			got := job.Spec.Template
			if diff := cmp.Diff(*want, got); diff != "" {
				t.Errorf("\n%s\nRunnerJob(...).Spec.Template: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(want.Labels, job.Labels); diff != "" {
				t.Errorf("\n%s\nthe Job's labels must be its pod's: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}

	// The pod modkind builds with nothing set, which every case above starts from.
	wantBase := struct {
		Labels          map[string]string
		Annotations     map[string]string
		ServiceAccount  string
		SecurityContext *corev1.PodSecurityContext
	}{
		Labels:         map[string]string{LabelRun: "web-apply-1", v1alpha1.LabelInstanceUID: "inst-uid"},
		Annotations:    map[string]string{v1alpha1.AnnotationInstance: "Bucket/web"},
		ServiceAccount: DefaultRunnerServiceAccount,
		SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65532), RunAsGroup: ptr.To[int64](65532),
			FSGroup: ptr.To[int64](65532), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
	}
	gotBase := wantBase
	gotBase.Labels, gotBase.Annotations, gotBase.ServiceAccount, gotBase.SecurityContext = base.Labels, base.Annotations, base.Spec.ServiceAccountName, base.Spec.SecurityContext
	if diff := cmp.Diff(wantBase, gotBase); diff != "" {
		t.Errorf("the runner pod without settings: -want, +got:\n%s", diff)
	}
}

// The runner's settings merged for one instance never write through to the operator's: the next
// Job starts from the chart's values again.
func TestMergeLeavesDefaultsAlone(t *testing.T) {
	d := PodDefaults{Labels: map[string]string{"team": "platform"}, NodeSelector: map[string]string{"pool": "runners"}}
	m := d.Merge(&v1alpha1.RunnerSpec{Labels: map[string]string{"team": "a"}})
	m.NodeSelector["pool"] = "changed"
	want := PodDefaults{Labels: map[string]string{"team": "platform"}, NodeSelector: map[string]string{"pool": "runners"}}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("Merge must not change the operator's settings: -want, +got:\n%s", diff)
	}
}

// --runner-pod-defaults, as the chart passes runner.pod: JSON (or YAML) of the settings it may
// carry, and nothing of what modkind owns on the pod.
func TestParsePodDefaults(t *testing.T) {
	cases := map[string]struct {
		reason  string
		in      string
		want    PodDefaults
		wantErr string
	}{
		"ChartJSON": {
			reason: "The chart's runner.pod as toJson writes it.",
			in:     `{"nodeSelector":{"pool":"runners"},"tolerations":[{"key":"runners","operator":"Exists"}],"imagePullSecrets":[{"name":"registry"}],"labels":{"team":"platform"},"priorityClassName":"batch-low","securityContext":{"runAsNonRoot":true}}`,
			want: PodDefaults{
				NodeSelector:      map[string]string{"pool": "runners"},
				Tolerations:       []corev1.Toleration{{Key: "runners", Operator: corev1.TolerationOpExists}},
				ImagePullSecrets:  []corev1.LocalObjectReference{{Name: "registry"}},
				Labels:            map[string]string{"team": "platform"},
				PriorityClassName: "batch-low",
				SecurityContext:   &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)},
			},
		},
		"YAML": {
			reason: "YAML, for an operator who runs modkind without the chart.",
			in:     "resources:\n  limits: {memory: 1Gi}\n",
			want:   PodDefaults{Resources: &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}},
		},
		"Empty": {
			reason: "An empty object sets nothing.",
			in:     `{}`,
		},
		"Mistyped": {
			reason:  "A mistyped key is refused, naming it, rather than dropped without a word.",
			in:      `{"nodeSelecter":{"pool":"runners"}}`,
			wantErr: `unknown field "nodeSelecter"`,
		},
		"ServiceAccount": {
			reason:  "The service account is the ProviderConfig's to name (spec.runner.serviceAccountName), never the operator's for every namespace.",
			in:      `{"serviceAccountName":"admin"}`,
			wantErr: `unknown field "serviceAccountName"`,
		},
		"Command": {
			reason:  "The runner's container, command and environment are modkind's.",
			in:      `{"containers":[{"name":"runner","command":["sh"]}]}`,
			wantErr: `unknown field "containers"`,
		},
		"Env": {
			reason:  "No environment variable reaches the runner from here.",
			in:      `{"env":[{"name":"TF_LOG","value":"trace"}]}`,
			wantErr: `unknown field "env"`,
		},
		"Volumes": {
			reason:  "The runner's volumes (work, tmp, its token) are modkind's.",
			in:      `{"volumes":[{"name":"work","hostPath":{"path":"/"}}]}`,
			wantErr: `unknown field "volumes"`,
		},
		"ModkindLabel": {
			reason:  "modkind's labels select its Jobs and tie a pod to its Run.",
			in:      `{"labels":{"modkind.io/run":"other"}}`,
			wantErr: `labels "modkind.io/run" ` + errReservedKey,
		},
		"JobControllerAnnotation": {
			reason:  "The Job controller's keys are refused as a ProviderConfig's are.",
			in:      `{"annotations":{"batch.kubernetes.io/job-tracking":""}}`,
			wantErr: `annotations "batch.kubernetes.io/job-tracking" ` + errReservedKey,
		},
		"InvalidLabel": {
			reason:  "A label the API server would refuse on every Job is refused at start instead.",
			in:      `{"labels":{"team":"a b"}}`,
			wantErr: errInvalidMetadata,
		},
		"Claims": {
			reason:  "Resource claims name pod resourceClaims modkind does not set.",
			in:      `{"resources":{"claims":[{"name":"gpu"}]}}`,
			wantErr: errResourceClaims,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParsePodDefaults([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("\n%s\nParsePodDefaults(%s): want an error with %q, got %v", tc.reason, tc.in, tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("\n%s\nParsePodDefaults(%s): %v", tc.reason, tc.in, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("\n%s\nParsePodDefaults(%s): -want, +got:\n%s", tc.reason, tc.in, diff)
			}
		})
	}
}

// The flag shows its value back as JSON, which parses to the same settings; none set, no default
// shown.
func TestPodDefaultsFlag(t *testing.T) {
	var d PodDefaults
	f := PodDefaultsFlag{PodDefaults: &d}
	if s := f.String(); s != "" {
		t.Errorf("String() of no settings = %q, want empty", s)
	}
	if err := f.Set(`{"nodeSelector":{"pool":"runners"},"priorityClassName":"batch-low"}`); err != nil {
		t.Fatal(err)
	}
	again, err := ParsePodDefaults([]byte(f.String()))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(d, again); diff != "" {
		t.Errorf("String() must parse back to the settings: -set, +parsed:\n%s", diff)
	}
}
