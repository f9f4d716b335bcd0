package testnode

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// envControllerManager names the kube-controller-manager binary (hack/controller-manager.sh).
const envControllerManager = "MODKIND_CONTROLLER_MANAGER"

// startControllerManager runs the controllers a cluster needs for Jobs: the Job controller, the
// garbage collector, finished-Job expiry and the service account controllers.
func startControllerManager(t *testing.T, env *envtest.Environment) {
	t.Helper()
	bin := os.Getenv(envControllerManager)
	if bin == "" {
		t.Fatalf("%s must name kube-controller-manager (make test sets it from hack/controller-manager.sh)", envControllerManager)
	}
	admin, err := env.AddUser(envtest.User{Name: "system:kube-controller-manager", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := admin.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(ca, env.Config.CAData, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin,
		"--kubeconfig", path,
		"--controllers", "job-controller,garbage-collector-controller,ttl-after-finished-controller,serviceaccount-controller,root-ca-certificate-publisher-controller",
		"--root-ca-file", ca,
		"--leader-elect=false",
		"--secure-port=0",
		"--concurrent-job-syncs=5",
	)
	logs, err := os.Create(filepath.Join(dir, "controller-manager.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(logs.Name())
			t.Logf("kube-controller-manager log (last 3000 bytes):\n%s", tail(b, 3000))
		}
	})
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// A Job runs its pod on the test node under the service account its template names, completes,
// and deleting it deletes its pod: the Job controller and the garbage collector are real.
func TestJobRunsAndIsCollected(t *testing.T) {
	c, env := startClusterEnv(t)
	startControllerManager(t, env)
	ns := "team-j"
	c.tenant(t, ns)
	ctx := context.Background()
	p := pod(ns, "", "report")
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "run-1", Namespace: ns},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr(int32(0)),
			Template:     corev1.PodTemplateSpec{Spec: p.Spec},
		},
	}
	if _, err := c.cs.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var done *batchv1.Job
	eventually(2*time.Minute, func(ctx context.Context) bool {
		j, err := c.cs.BatchV1().Jobs(ns).Get(ctx, "run-1", metav1.GetOptions{})
		if err != nil {
			return false
		}
		for _, cond := range j.Status.Conditions {
			if cond.Status == corev1.ConditionTrue && (cond.Type == batchv1.JobComplete || cond.Type == batchv1.JobFailed) {
				done = j
			}
		}
		return done != nil
	})
	if done == nil || done.Status.Succeeded != 1 {
		t.Fatalf("the Job did not complete: %+v", done)
	}
	pods, err := c.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=run-1"})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("want the Job's one pod, got %v (%v)", pods, err)
	}
	report, err := os.ReadFile(filepath.Join(c.node.PodDir(ns, pods.Items[0].Name), "root", "report"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(report), "user=system:serviceaccount:"+ns+":runner\n") {
		t.Errorf("the Job's pod did not act as its service account:\n%s", report)
	}

	if err := c.cs.BatchV1().Jobs(ns).Delete(ctx, "run-1", metav1.DeleteOptions{PropagationPolicy: ptr(metav1.DeletePropagationBackground)}); err != nil {
		t.Fatal(err)
	}
	collected := eventually(time.Minute, func(ctx context.Context) bool {
		pods, err := c.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		return err == nil && len(pods.Items) == 0
	})
	if !collected {
		t.Error("the garbage collector left the deleted Job's pod")
	}
}
