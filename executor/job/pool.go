package job

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/terraform"
)

const (
	// LabelPool is on every pod of a runner pool and on every Run its pods may take: the pool's
	// key, a digest of the namespace and the pod it runs (service account, settings).
	LabelPool = "modkind.io/pool"
	// PoolPodPrefix starts the name of every runner pool pod.
	PoolPodPrefix = "modkind-pool-"
	// PoolPodInfoDir is where a pool's pod reads its own name and UID (files "name" and "uid",
	// from the downward API), with which it claims Runs.
	PoolPodInfoDir = "/var/run/modkind.io/pod"
	// RunnerGracePeriod is how long a runner pod has to stop terraform and record its Run once
	// told to stop (its terminationGracePeriodSeconds).
	RunnerGracePeriod = runnerGracePeriod * time.Second
)

// PoolPod is a pod of the runner pool for Runs of namespace under spec (the ProviderConfig's
// runner template, possibly nil): the pod a runner Job would run, under the same service account
// with the same settings, running `modkind runner --pool` instead of one Run, and its pool's key.
// Everything a Job's pod gets from the Run (its name, deadline) the pool pod gets per Run it takes.
// The pod stops once it has taken no Run for idle (0: never).
func PoolPod(namespace string, spec *v1alpha1.RunnerSpec, o JobOptions, idle time.Duration) (*corev1.Pod, string) {
	if spec == nil {
		spec = &v1alpha1.RunnerSpec{}
	}
	merged := o.Pod.Merge(spec)
	labels, annotations := templateKeys(merged.Labels), templateKeys(merged.Annotations)
	if len(annotations) == 0 {
		annotations = nil
	}
	podSpec := runnerPod(&v1alpha1.Run{}, spec.ServiceAccountName, merged, o)
	podSpec.Volumes = append(podSpec.Volumes, corev1.Volume{Name: "pod", VolumeSource: corev1.VolumeSource{
		DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
			{Path: "name", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}},
			{Path: "uid", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.uid"}},
		}}}})
	podSpec.Containers[0].VolumeMounts = append(podSpec.Containers[0].VolumeMounts,
		corev1.VolumeMount{Name: "pod", MountPath: PoolPodInfoDir, ReadOnly: true})
	podSpec.Containers[0].Args = poolArgs(namespace, "", o, idle)
	raw, err := json.Marshal(struct {
		Namespace           string
		Labels, Annotations map[string]string
		Spec                corev1.PodSpec
	}{namespace, labels, annotations, podSpec})
	if err != nil {
		// Every field is plain data.
		panic(err)
	}
	key := terraform.Digest(raw)[:16]
	podSpec.Containers[0].Args = poolArgs(namespace, key, o, idle)
	labels[LabelPool] = key
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: PoolPodPrefix + key[:8] + "-",
			Namespace:    namespace,
			Labels:       labels,
			Annotations:  maps.Clone(annotations),
		},
		Spec: podSpec,
	}, key
}

// poolArgs is the command line of `modkind runner --pool` for the pool key of namespace.
func poolArgs(namespace, key string, o JobOptions, idle time.Duration) []string {
	args := []string{"runner", "--pool", key, "--namespace", namespace, "--artifacts", o.ArtifactsURL,
		"--work-dir", strings.TrimPrefix(RunnerWorkDir, "/"), "--token-file", strings.TrimPrefix(RunnerTokenPath, "/"),
		"--pod-info-dir", strings.TrimPrefix(PoolPodInfoDir, "/")}
	if o.UnsharedProviders {
		args = append(args, "--shared-providers=false")
	}
	if idle > 0 {
		args = append(args, "--idle", idle.String())
	}
	var deadlines []string
	for _, op := range slices.Sorted(maps.Keys(o.Deadlines)) {
		if d := o.Deadlines[op]; d > 0 {
			deadlines = append(deadlines, fmt.Sprintf("%s=%s", op, d))
		}
	}
	if len(deadlines) > 0 {
		args = append(args, "--deadlines", strings.Join(deadlines, ","))
	}
	return args
}
