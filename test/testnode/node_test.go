package testnode

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// A container of this test is the test binary itself, run again with envChild set: it reports
// who it is to the API server and what it may read, into a file in its working directory.
const envChild = "TESTNODE_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(envChild); mode != "" {
		os.Exit(child(mode))
	}
	os.Exit(m.Run())
}

func child(mode string) int {
	switch mode {
	case "fail":
		return 3
	case "sleep":
		// Stands for a container that runs until its pod is deleted.
		select {}
	}
	var out strings.Builder
	fmt.Fprintf(&out, "greeting=%s\n", os.Getenv("GREETING"))
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authnv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		fmt.Fprintf(&out, "user=error %v\n", err)
	} else {
		fmt.Fprintf(&out, "user=%s\n", review.Status.UserInfo.Username)
	}
	ns := os.Getenv("POD_NAMESPACE")
	_, err = cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	fmt.Fprintf(&out, "configmaps=%s\n", verdict(err))
	_, err = cs.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
	fmt.Fprintf(&out, "secrets=%s\n", verdict(err))
	if err := os.WriteFile("report", []byte(out.String()), 0o600); err != nil {
		return 1
	}
	return 0
}

func verdict(err error) string {
	switch {
	case err == nil:
		return "allowed"
	case apierrors.IsForbidden(err):
		return "forbidden"
	}
	return "error " + err.Error()
}

type cluster struct {
	cs   kubernetes.Interface
	node *Node
}

func startCluster(t *testing.T) *cluster {
	t.Helper()
	c, _ := startClusterEnv(t)
	return c
}

// startClusterEnv starts an API server (with the ServiceAccount admission plugin, as a real
// cluster has) and a test node joined to it.
func startClusterEnv(t *testing.T) (*cluster, *envtest.Environment) {
	t.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS must name the directory of kube-apiserver and etcd (make test sets it)")
	}
	env := &envtest.Environment{}
	// envtest turns the ServiceAccount admission plugin off, since no controller creates default
	// service accounts there; pods here must get their token volume as in a real cluster.
	env.ControlPlane.GetAPIServer().Configure().Disable("disable-admission-plugins")
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	node, err := Start(ctx, Config{
		Name:   "testnode",
		Labels: map[string]string{"modkind.io/test": "yes"},
		REST:   cfg,
		Root:   t.TempDir(),
		Images: map[string]string{"example.org/self:v1": self},
	})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = node.Wait()
	})
	return &cluster{cs: cs, node: node}, env
}

func (c *cluster) tenant(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	objs := []func() error{
		func() error {
			_, err := c.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := c.cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "runner"}}, metav1.CreateOptions{})
			return err
		},
		// kube-controller-manager publishes this ConfigMap in every namespace; this API server
		// runs without it.
		func() error {
			_, err := c.cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kube-root-ca.crt"},
				Data: map[string]string{"ca.crt": "test"}}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := c.cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "greeting"},
				Data: map[string][]byte{"text": []byte("hello from " + ns)}}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := c.cs.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "read-configmaps"},
				Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list"}}}}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := c.cs.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "runner"},
				RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "read-configmaps"},
				Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "runner", Namespace: ns}}}, metav1.CreateOptions{})
			return err
		},
	}
	for _, create := range objs {
		if err := create(); err != nil {
			t.Fatal(err)
		}
	}
	// The authorizer learns of the binding through an informer: a pod started at once could
	// be refused what the Role grants.
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:               "system:serviceaccount:" + ns + ":runner",
		Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: "list", Resource: "configmaps"},
	}}
	if !eventually(time.Minute, func(ctx context.Context) bool {
		r, err := c.cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
		return err == nil && r.Status.Allowed
	}) {
		t.Fatalf("the runner of %s was never allowed what its Role grants", ns)
	}
}

func pod(ns, name, mode string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{
			RestartPolicy:      corev1.RestartPolicyNever,
			ServiceAccountName: "runner",
			Containers: []corev1.Container{{
				Name:  "main",
				Image: "example.org/self:v1",
				Env: []corev1.EnvVar{
					{Name: envChild, Value: mode},
					{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
					{Name: "GREETING", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
						LocalObjectReference: corev1.LocalObjectReference{Name: "greeting"}, Key: "text"}}},
				},
			}},
		},
	}
}

func (c *cluster) waitPod(t *testing.T, ns, name string, done func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	var last *corev1.Pod
	met := eventually(time.Minute, func(ctx context.Context) bool {
		p, err := c.cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		last = p
		return done(p)
	})
	if !met {
		t.Fatalf("pod %s/%s: condition not met within a minute; last status: %+v", ns, name, last)
	}
	return last
}

// eventually reports whether cond held within timeout, checking it every 100 ms.
func eventually(timeout time.Duration, cond func(context.Context) bool) bool {
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, timeout, true,
		func(ctx context.Context) (bool, error) { return cond(ctx), nil })
	return err == nil
}

func ended(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// A pod runs as a process with its environment resolved and its service account's token as its
// only credential: it is who RBAC says and may read only what its Role grants.
func TestPodRunsWithItsOwnIdentity(t *testing.T) {
	c := startCluster(t)
	c.tenant(t, "team-a")
	if _, err := c.cs.CoreV1().Pods("team-a").Create(context.Background(), pod("team-a", "report", "report"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := c.waitPod(t, "team-a", "report", ended)
	if p.Status.Phase != corev1.PodSucceeded {
		t.Fatalf("phase %s, want Succeeded: %+v", p.Status.Phase, p.Status)
	}
	if p.Spec.NodeName != "testnode" {
		t.Errorf("pod ran on node %q, want testnode", p.Spec.NodeName)
	}
	report, err := os.ReadFile(filepath.Join(c.node.PodDir("team-a", "report"), "root", "report"))
	if err != nil {
		t.Fatal(err)
	}
	want := "greeting=hello from team-a\nuser=system:serviceaccount:team-a:runner\nconfigmaps=allowed\nsecrets=forbidden\n"
	if string(report) != want {
		t.Errorf("the pod's report:\n%s\nwant:\n%s", report, want)
	}
}

// A pod that does not mount a token reaches the API server as nobody.
func TestPodWithoutTokenIsAnonymous(t *testing.T) {
	c := startCluster(t)
	c.tenant(t, "team-b")
	p := pod("team-b", "anonymous", "report")
	p.Spec.AutomountServiceAccountToken = ptr(false)
	if _, err := c.cs.CoreV1().Pods("team-b").Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.waitPod(t, "team-b", "anonymous", ended)
	report, err := os.ReadFile(filepath.Join(c.node.PodDir("team-b", "anonymous"), "root", "report"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(report), "user=system:anonymous") && !strings.Contains(string(report), "user=error") {
		t.Errorf("a pod without a token acted as someone:\n%s", report)
	}
	if !strings.Contains(string(report), "secrets=forbidden") || !strings.Contains(string(report), "configmaps=forbidden") {
		t.Errorf("a pod without a token could read:\n%s", report)
	}
}

// A container's exit code is the pod's outcome, and deleting a running pod stops its process.
func TestExitCodesAndDeletion(t *testing.T) {
	c := startCluster(t)
	c.tenant(t, "team-c")
	ctx := context.Background()
	if _, err := c.cs.CoreV1().Pods("team-c").Create(ctx, pod("team-c", "fails", "fail"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := c.waitPod(t, "team-c", "fails", ended)
	term := p.Status.ContainerStatuses[0].State.Terminated
	if p.Status.Phase != corev1.PodFailed || term == nil || term.ExitCode != 3 {
		t.Errorf("phase %s, terminated %+v; want Failed with exit code 3", p.Status.Phase, term)
	}

	if _, err := c.cs.CoreV1().Pods("team-c").Create(ctx, pod("team-c", "sleeps", "sleep"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.waitPod(t, "team-c", "sleeps", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	c.node.pods.mu.Lock()
	r := c.node.pods.pods[key("team-c", "sleeps")]
	c.node.pods.mu.Unlock()
	if r == nil {
		t.Fatal("the node does not run the pod")
	}
	r.mu.Lock()
	pid := r.running["main"].Process.Pid
	r.mu.Unlock()
	if err := c.cs.CoreV1().Pods("team-c").Delete(ctx, "sleeps", metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(1))}); err != nil {
		t.Fatal(err)
	}
	gone := eventually(30*time.Second, func(context.Context) bool {
		return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
	})
	if !gone {
		t.Errorf("the deleted pod's process %d still runs", pid)
	}
}
