package charts_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/charts"
	"github.com/modkind/modkind/executor/job"
)

// values.schema.json refuses, when the chart renders (helm install, helm upgrade, helm template), a
// value of the wrong type and a key the chart does not know, naming them; values.yaml's defaults
// pass.
func TestChartValuesSchema(t *testing.T) {
	cases := map[string]struct {
		reason string
		values map[string]any
		// wantErr are the parts of the error a user reads to find the mistake; none: it renders.
		wantErr []string
	}{
		"Defaults": {
			reason: "values.yaml's own defaults pass the schema.",
		},
		"DayOne": {
			reason: "What an operator sets on day one passes.",
			values: dayOneValues(),
		},
		"UnknownTopLevel": {
			reason:  "A mistyped key would otherwise be ignored without a word.",
			values:  map[string]any{"replicsa": 2},
			wantErr: []string{"additional properties 'replicsa' not allowed"},
		},
		"UnknownNested": {
			reason:  "Keys are checked inside the chart's blocks too: runner.pod's nodeSelecter is not its nodeSelector.",
			values:  map[string]any{"runner": map[string]any{"pod": map[string]any{"nodeSelecter": map[string]any{"pool": "runners"}}}},
			wantErr: []string{"/runner/pod", "'nodeSelecter' not allowed"},
		},
		"WrongType": {
			reason:  "A count given as a string is refused, naming the value's path.",
			values:  map[string]any{"replicas": "2"},
			wantErr: []string{"/replicas", "want integer"},
		},
		"NotADuration": {
			reason:  "Intervals are Go durations; '10 minutes' would stop the controller at start.",
			values:  map[string]any{"pollInterval": "10 minutes"},
			wantErr: []string{"/pollInterval", "10 minutes"},
		},
		"UnknownRunnerMode": {
			reason:  "runner.mode is job or process.",
			values:  map[string]any{"runner": map[string]any{"mode": "jobs"}},
			wantErr: []string{"/runner/mode"},
		},
		"ExtraArgNotAFlag": {
			reason:  "extraArgs are flags, each --name=value: a bare word would stop the controller.",
			values:  map[string]any{"extraArgs": []any{"zap-log-level=debug"}},
			wantErr: []string{"/extraArgs/0"},
		},
		"TolerationTypo": {
			reason:  "A toleration's fields are checked: a misspelt operator would match nothing.",
			values:  map[string]any{"tolerations": []any{map[string]any{"key": "x", "operator": "exists"}}},
			wantErr: []string{"/tolerations/0/operator"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := charts.Render("modkind", "modkind", "modkind-system", tc.values)
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("\n%s\nthe chart must render: %v", tc.reason, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("\n%s\nthe chart rendered; want an error naming %q", tc.reason, tc.wantErr)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("\n%s\nthe error must name %q, got: %v", tc.reason, w, err)
				}
			}
		})
	}
}

// Every value of values.yaml is typed in values.schema.json: a value added to one without the
// other fails here, so that the schema cannot fall behind and refuse (or fail to check) it.
func TestChartSchemaTypesEveryValue(t *testing.T) {
	var values map[string]any
	data, err := os.ReadFile("modkind/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &values); err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	data, err = os.ReadFile("modkind/values.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatal(err)
	}
	resolve := func(node map[string]any) map[string]any {
		if ref, ok := node["$ref"].(string); ok {
			return schema["definitions"].(map[string]any)[strings.TrimPrefix(ref, "#/definitions/")].(map[string]any)
		}
		return node
	}
	var walk func(path string, values map[string]any, node map[string]any)
	walk = func(path string, values map[string]any, node map[string]any) {
		props, _ := node["properties"].(map[string]any)
		for k, v := range values {
			p, ok := props[k].(map[string]any)
			if !ok {
				t.Errorf("values.yaml's %s%s has no type in values.schema.json", path, k)
				continue
			}
			p = resolve(p)
			_, typed := p["type"]
			_, enum := p["enum"]
			_, anyOf := p["anyOf"]
			if !typed && !enum && !anyOf {
				t.Errorf("values.schema.json gives %s%s no type", path, k)
			}
			if m, ok := v.(map[string]any); ok {
				if _, hasProps := p["properties"]; hasProps {
					walk(path+k+".", m, p)
				}
			}
		}
	}
	if schema["additionalProperties"] != false {
		t.Errorf("values.schema.json must refuse unknown top-level keys (additionalProperties: false)")
	}
	walk("", values, schema)
}

// dayOneValues are what a platform team sets on its first install: flags the chart has no value
// for, where the controller and the runners run, pull Secrets, labels and annotations.
func dayOneValues() map[string]any {
	return map[string]any{
		"extraArgs":         []any{"--zap-log-level=debug", "--shared-providers=false", "--run-history=20", "--max-state-bytes=67108864", "--module-recheck-interval=5m"},
		"podAnnotations":    map[string]any{"example.org/scrape": "true"},
		"podLabels":         map[string]any{"team": "platform", "app.kubernetes.io/name": "not-modkind"},
		"nodeSelector":      map[string]any{"pool": "system"},
		"tolerations":       []any{map[string]any{"key": "system", "operator": "Exists", "effect": "NoSchedule"}},
		"affinity":          map[string]any{"nodeAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{"nodeSelectorTerms": []any{map[string]any{"matchExpressions": []any{map[string]any{"key": "kubernetes.io/arch", "operator": "In", "values": []any{"amd64"}}}}}}}},
		"imagePullSecrets":  []any{map[string]any{"name": "registry"}},
		"priorityClassName": "system-cluster-critical",
		"runner": map[string]any{"pod": map[string]any{
			"resources":         map[string]any{"requests": map[string]any{"cpu": "250m", "memory": "512Mi"}, "limits": map[string]any{"memory": "2Gi"}},
			"nodeSelector":      map[string]any{"pool": "runners"},
			"tolerations":       []any{map[string]any{"key": "runners", "operator": "Exists"}},
			"affinity":          map[string]any{"nodeAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{"nodeSelectorTerms": []any{map[string]any{"matchExpressions": []any{map[string]any{"key": "kubernetes.io/arch", "operator": "In", "values": []any{"amd64"}}}}}}}},
			"imagePullSecrets":  []any{map[string]any{"name": "runner-registry"}},
			"labels":            map[string]any{"team": "platform"},
			"annotations":       map[string]any{"example.org/owner": "platform"},
			"priorityClassName": "batch-low",
		}},
	}
}

// deployment is the chart's Deployment rendered with values.
func deployment(t *testing.T, values map[string]any) *appsv1.Deployment {
	t.Helper()
	d := &appsv1.Deployment{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(find(t, renderChart(t, "rel", "ops", values), "Deployment", "rel").Object, d); err != nil {
		t.Fatal(err)
	}
	return d
}

// The controller's pod takes the operator's scheduling, pull Secrets, labels and annotations; the
// chart's own labels, which the Deployment and the Services select on, stay the chart's; extraArgs
// come after the chart's own flags, in order.
func TestChartControllerPodSettings(t *testing.T) {
	d := deployment(t, dayOneValues())
	pod := d.Spec.Template
	affinity := &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/arch", Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}}}}},
	}}}
	type settings struct {
		Labels, Annotations map[string]string
		NodeSelector        map[string]string
		Tolerations         []corev1.Toleration
		Affinity            *corev1.Affinity
		PullSecrets         []corev1.LocalObjectReference
		PriorityClassName   string
		SecurityContext     *corev1.PodSecurityContext
		ExtraArgs           []string
	}
	args := pod.Spec.Containers[0].Args
	want := settings{
		Labels:            map[string]string{"app.kubernetes.io/name": "modkind", "app.kubernetes.io/instance": "rel", "app.kubernetes.io/version": d.Labels["app.kubernetes.io/version"], "team": "platform"},
		Annotations:       map[string]string{"example.org/scrape": "true"},
		NodeSelector:      map[string]string{"pool": "system"},
		Tolerations:       []corev1.Toleration{{Key: "system", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
		Affinity:          affinity,
		PullSecrets:       []corev1.LocalObjectReference{{Name: "registry"}},
		PriorityClassName: "system-cluster-critical",
		// The security context's defaults are kept when other pod settings are set.
		SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65532), RunAsGroup: ptr.To[int64](65532),
			FSGroup: ptr.To[int64](65532), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
		ExtraArgs: []string{"--zap-log-level=debug", "--shared-providers=false", "--run-history=20", "--max-state-bytes=67108864", "--module-recheck-interval=5m"},
	}
	got := settings{pod.Labels, pod.Annotations, pod.Spec.NodeSelector, pod.Spec.Tolerations, pod.Spec.Affinity,
		pod.Spec.ImagePullSecrets, pod.Spec.PriorityClassName, pod.Spec.SecurityContext, args[max(0, len(args)-5):]}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the controller's pod: -want, +got:\n%s", diff)
	}
	if sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector); err != nil || !sel.Matches(labels.Set(pod.Labels)) {
		t.Errorf("the Deployment's selector %v must still select its pods %v (podLabels may not change the chart's labels)", d.Spec.Selector, pod.Labels)
	}

	// OpenShift's restricted SCC assigns the user: null removes the chart's.
	d = deployment(t, map[string]any{"podSecurityContext": map[string]any{"runAsUser": nil, "runAsGroup": nil, "fsGroup": nil}})
	wantSC := &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
	if diff := cmp.Diff(wantSC, d.Spec.Template.Spec.SecurityContext); diff != "" {
		t.Errorf("podSecurityContext's fields set to null must go: -want, +got:\n%s", diff)
	}
}

// extraArgs may not pass again a flag the chart sets from a value: the controller would take the
// later one and the value would be ignored without a word. Each is refused naming the flag.
func TestChartExtraArgsCannotRepeatChartFlags(t *testing.T) {
	for _, arg := range []string{"--run-timeout=1h", "--runner=process", "--leader-elect=false", "--runner-pod-defaults={}", "--max-concurrent-runs"} {
		t.Run(arg, func(t *testing.T) {
			_, err := charts.Render("modkind", "rel", "ops", map[string]any{"extraArgs": []any{arg}})
			name, _, _ := strings.Cut(arg, "=")
			if err == nil || !strings.Contains(err.Error(), "extraArgs: "+name+" is set by the chart") {
				t.Errorf("extraArgs %s must be refused naming %s, got %v", arg, name, err)
			}
		})
	}
}

// runner.pod reaches every runner pod: the chart passes it as --runner-pod-defaults, which the
// controller reads (job.ParsePodDefaults, as its flag does), and the Job it builds for an instance
// carries it under the ProviderConfig's spec.runner. Without runner.pod the runner pod is the one
// modkind builds itself: the chart's default security context is modkind's own.
func TestChartRunnerPodSettings(t *testing.T) {
	run := &v1alpha1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web-apply-1"}, Spec: v1alpha1.RunSpec{Operation: v1alpha1.OperationApply}}
	podOf := func(values map[string]any, spec *v1alpha1.RunnerSpec) corev1.PodTemplateSpec {
		t.Helper()
		var flag string
		for _, a := range deployment(t, values).Spec.Template.Spec.Containers[0].Args {
			if v, ok := strings.CutPrefix(a, "--runner-pod-defaults="); ok {
				flag = v
			}
		}
		if flag == "" {
			t.Fatalf("the chart must pass --runner-pod-defaults in job mode")
		}
		d, err := job.ParsePodDefaults([]byte(flag))
		if err != nil {
			t.Fatalf("the controller must accept the chart's --runner-pod-defaults: %v", err)
		}
		return job.RunnerJob(run, spec, job.JobOptions{Pod: d}).Spec.Template
	}

	if diff := cmp.Diff(job.RunnerJob(run, nil, job.JobOptions{}).Spec.Template, podOf(nil, nil)); diff != "" {
		t.Errorf("with the chart's defaults the runner pod must be modkind's own: -modkind, +chart:\n%s", diff)
	}

	pod := podOf(dayOneValues(), &v1alpha1.RunnerSpec{NodeSelector: map[string]string{"pool": "gpu"}, Labels: map[string]string{"team": "a"}})
	type settings struct {
		Labels, Annotations map[string]string
		NodeSelector        map[string]string
		Tolerations         []corev1.Toleration
		PullSecrets         []corev1.LocalObjectReference
		PriorityClassName   string
		Resources           corev1.ResourceRequirements
		HasAffinity         bool
	}
	want := settings{
		Labels:            map[string]string{job.LabelRun: "web-apply-1", "team": "a"},
		Annotations:       map[string]string{"example.org/owner": "platform"},
		NodeSelector:      map[string]string{"pool": "gpu"},
		Tolerations:       []corev1.Toleration{{Key: "runners", Operator: corev1.TolerationOpExists}},
		PullSecrets:       []corev1.LocalObjectReference{{Name: "runner-registry"}},
		PriorityClassName: "batch-low",
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("512Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")},
		},
		HasAffinity: true,
	}
	got := settings{pod.Labels, pod.Annotations, pod.Spec.NodeSelector, pod.Spec.Tolerations, pod.Spec.ImagePullSecrets,
		pod.Spec.PriorityClassName, pod.Spec.Containers[0].Resources, pod.Spec.Affinity != nil}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
		t.Errorf("runner.pod under a ProviderConfig that sets nodeSelector and a label: -want, +got:\n%s", diff)
	}

	// In process mode no runner pod exists and the flag is not passed.
	for _, a := range deployment(t, map[string]any{"runner": map[string]any{"mode": "process"}}).Spec.Template.Spec.Containers[0].Args {
		if strings.HasPrefix(a, "--runner-pod-defaults") {
			t.Errorf("process mode must not pass %s", a)
		}
	}
}
