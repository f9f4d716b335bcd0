package job

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/modkind/modkind/apis/v1alpha1"
)

func TestPoolPod(t *testing.T) {
	o := JobOptions{Image: "modkind:1", ArtifactsURL: "https://artifacts:8443",
		Deadlines: map[v1alpha1.RunOperation]time.Duration{v1alpha1.OperationApply: time.Hour, v1alpha1.OperationRefresh: 20 * time.Minute}}
	pod, key := PoolPod("team-a", nil, o, 2*time.Minute)
	_, again := PoolPod("team-a", nil, o, 2*time.Minute)
	_, otherNamespace := PoolPod("team-b", nil, o, 2*time.Minute)
	_, otherAccount := PoolPod("team-a", &v1alpha1.RunnerSpec{ServiceAccountName: "terraform"}, o, 2*time.Minute)
	_, forged := PoolPod("team-a", &v1alpha1.RunnerSpec{Labels: map[string]string{LabelPool: "x"}}, o, 2*time.Minute)

	type shape struct {
		Keys                    []bool
		Label, ServiceAccount   string
		Args                    []string
		InfoMount, GenerateName string
	}
	got := shape{
		Keys:           []bool{key == again, key != otherNamespace, key != otherAccount, forged == key},
		Label:          pod.Labels[LabelPool],
		ServiceAccount: pod.Spec.ServiceAccountName,
		Args:           pod.Spec.Containers[0].Args,
		InfoMount:      pod.Spec.Containers[0].VolumeMounts[len(pod.Spec.Containers[0].VolumeMounts)-1].MountPath,
		GenerateName:   pod.GenerateName,
	}
	want := shape{
		Keys:           []bool{true, true, true, true},
		Label:          key,
		ServiceAccount: DefaultRunnerServiceAccount,
		Args: []string{"runner", "--pool", key, "--namespace", "team-a", "--artifacts", "https://artifacts:8443",
			"--work-dir", "var/lib/modkind", "--token-file", "var/run/secrets/modkind.io/artifacts/token",
			"--pod-info-dir", "var/run/modkind.io/pod", "--idle", "2m0s", "--deadlines", "Apply=1h0m0s,Refresh=20m0s"},
		InfoMount:    PoolPodInfoDir,
		GenerateName: PoolPodPrefix + key[:8] + "-",
	}
	// The pool's key follows from the namespace and the pod (a pod of one namespace or account
	// never takes another's Runs), and a runner template cannot set it.
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PoolPod(...): -want, +got:\n%s", diff)
	}
}
