package main

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/reconcile"
	"github.com/modkind/modkind/state"
	"github.com/modkind/modkind/test/thingstest"
)

// envControllerManager names the kube-controller-manager binary (hack/controller-manager.sh).
const envControllerManager = "MODKIND_CONTROLLER_MANAGER"

// jobGround is a cluster where Jobs run for real: an API server with service account admission,
// kube-controller-manager (Job controller, garbage collector) and a node whose pods are local
// processes (test/testnode), running modkind's binary for the image runnerImage.
type jobGround struct {
	kubeconfig string
	c          client.Client
	cfg        *rest.Config
}

const runnerImage = "modkind:test"

func startJobGround(t *testing.T) *jobGround {
	t.Helper()
	kcm := os.Getenv(envControllerManager)
	if kcm == "" {
		t.Fatalf("%s must name kube-controller-manager (make test sets it from hack/controller-manager.sh)", envControllerManager)
	}
	bin := t.TempDir()
	modkind, testnode := filepath.Join(bin, "modkind"), filepath.Join(bin, "testnode")
	for _, build := range [][]string{{"build", "-o", modkind, "."}, {"-C", "test/testnode", "build", "-o", testnode, "./cmd/testnode"}} {
		if out, err := exec.Command("go", build...).CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(build, " "), err, out)
		}
	}
	env := &envtest.Environment{}
	// envtest turns admission plugins off; service account admission gives each pod its token.
	env.ControlPlane.GetAPIServer().Configure().Disable("disable-admission-plugins")
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	dir := t.TempDir()
	kubeconfig := adminKubeconfig(t, env, dir, "modkind-test")
	ca := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(ca, env.Config.CAData, 0o600); err != nil {
		t.Fatal(err)
	}
	startProcess(t, "kube-controller-manager", kcm,
		"--kubeconfig", adminKubeconfig(t, env, dir, "system:kube-controller-manager"),
		"--controllers", "job-controller,garbage-collector-controller,ttl-after-finished-controller,serviceaccount-controller,root-ca-certificate-publisher-controller",
		"--root-ca-file", ca, "--leader-elect=false", "--secure-port=0")
	startProcess(t, "testnode", testnode, "--kubeconfig", adminKubeconfig(t, env, dir, "system:node:testnode"),
		"--root", filepath.Join(dir, "pods"), "--image", runnerImage+"="+modkind)
	s, err := reconcile.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	poll(t, "the test node to be Ready", 2*time.Minute, func(ctx context.Context) (bool, error) {
		n := &corev1.Node{}
		if err := c.Get(ctx, client.ObjectKey{Name: "testnode"}, n); err != nil {
			return false, nil
		}
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	return &jobGround{kubeconfig: kubeconfig, c: c, cfg: cfg}
}

func adminKubeconfig(t *testing.T, env *envtest.Environment, dir, name string) string {
	t.Helper()
	u, err := env.AddUser(envtest.User{Name: name, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := u.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, strings.ReplaceAll(name, ":", "-")+".kubeconfig")
	if err := os.WriteFile(p, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// startProcess runs a server process for the test's life; its log is shown when the test fails.
func startProcess(t *testing.T, name, bin string, args ...string) *exec.Cmd {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), name+".log")
	logs, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("%s log (last 4000 bytes):\n%s", name, tailBytes(b, 4000))
		}
	})
	return cmd
}

func tailBytes(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// startJobController runs modkind with --runner job against the ground, as a process of its own.
func (g *jobGround) startJobController(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	proc := startModkind(t, "--kubeconfig", g.kubeconfig, "--work-dir", filepath.Join(t.TempDir(), "work"),
		"--poll-interval", "2s", "--runner", "job", "--runner-image", runnerImage,
		"--artifacts-bind-address", addr, "--artifacts-url", "https://"+addr)
	t.Cleanup(func() {
		_ = proc.Process.Kill()
		_ = proc.Wait()
		if !t.Failed() {
			return
		}
		if f, ok := proc.Stdout.(*os.File); ok {
			b, _ := os.ReadFile(f.Name())
			t.Logf("modkind log (last 6000 bytes):\n%s", tailBytes(b, 6000))
		}
		runs := &v1alpha1.RunList{}
		if err := g.c.List(context.Background(), runs); err == nil {
			for _, r := range runs.Items {
				t.Logf("Run %s/%s: %s %s %q", r.Namespace, r.Name, r.Spec.Operation, r.Status.Phase, r.Status.Message)
			}
		}
	})
}

// tenant makes namespace ns with the runner service account, bound to the runner ClusterRole.
func (g *jobGround) tenant(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	for _, o := range []client.Object{
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "modkind-runner"}, Rules: reconcile.RunnerRules()},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: reconcile.DefaultRunnerServiceAccount}},
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "modkind-runner"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "modkind-runner"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: reconcile.DefaultRunnerServiceAccount}},
		},
	} {
		if err := g.c.Create(ctx, o); err != nil && !kerrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
}

// runsOf lists the Runs of an instance, newest first by name order of creation.
func runsOf(t *testing.T, c client.Client, u *unstructured.Unstructured) []v1alpha1.Run {
	t.Helper()
	l := &v1alpha1.RunList{}
	if err := c.List(context.Background(), l, client.InNamespace(u.GetNamespace()),
		client.MatchingLabels{v1alpha1.LabelInstanceUID: string(u.GetUID())}); err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// In job mode the quickstart module and a resource kind of the things provider are applied,
// updated and deleted by Jobs of the tenant's namespace, under the tenant's runner service account:
// outputs reach status and the connection Secret as in process mode, each Run is recorded, the
// runner gets module and providers from the controller only, and its token is bound to its
// namespace.
func TestJobRunner(t *testing.T) {
	g := startJobGround(t)
	t.Setenv("TF_CLI_CONFIG_FILE", thingstest.Install(t))
	g.startJobController(t)
	g.tenant(t, "team-a")
	g.tenant(t, "team-b")
	ctx := context.Background()
	c := g.c

	moduleDir, err := filepath.Abs(filepath.Join("examples", "quickstart", "module"))
	if err != nil {
		t.Fatal(err)
	}
	greeting := schema.GroupVersionKind{Group: "jobs.example.org", Version: "v1alpha1", Kind: "Greeting"}
	poll(t, "the Module CRD to be served", 2*time.Minute, func(ctx context.Context) (bool, error) {
		return c.Create(ctx, &v1alpha1.Module{
			ObjectMeta: metav1.ObjectMeta{Name: "greeting"},
			Spec: v1alpha1.ModuleSpec{Source: v1alpha1.ModuleSource{Path: moduleDir},
				CRD: v1alpha1.CRDNames{Group: greeting.Group, Kind: greeting.Kind}},
		}) == nil, nil
	})
	// The pod template a ProviderConfig adds to the instance's Jobs.
	if err := c.Create(ctx, &v1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "shaped"},
		Spec: v1alpha1.ProviderConfigSpec{Runner: &v1alpha1.RunnerSpec{
			Annotations: map[string]string{"example.org/workload-identity": "team-a-role"},
			Resources: &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")}},
		}},
	}); err != nil {
		t.Fatal(err)
	}
	world := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"forProvider":                map[string]any{"name": "World"},
		"providerConfigRef":          map[string]any{"name": "shaped"},
		"writeConnectionSecretToRef": map[string]any{"name": "greeting-world"},
	}}}
	world.SetGroupVersionKind(greeting)
	world.SetNamespace("team-a")
	world.SetName("world")
	poll(t, "the Greeting CRD to be served", 2*time.Minute, func(ctx context.Context) (bool, error) {
		return c.Create(ctx, world) == nil, nil
	})
	waitInstanceReady(t, c, world)
	message := func() string {
		got := world.DeepCopy()
		if err := c.Get(ctx, client.ObjectKeyFromObject(world), got); err != nil {
			t.Fatal(err)
		}
		m, _, _ := unstructured.NestedString(got.Object, "status", "atProvider", "message")
		return m
	}
	if got := message(); got != "Hello, World!" {
		t.Errorf("status.atProvider.message: got %q, want Hello, World!", got)
	}
	conn := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "greeting-world"}, conn); err != nil {
		t.Fatal(err)
	}
	if string(conn.Data["message"]) != "Hello, World!" || len(conn.Data["token"]) != 64 {
		t.Errorf("connection Secret: message %q, token of %d bytes; want the greeting and a sha256", conn.Data["message"], len(conn.Data["token"]))
	}

	t.Run("the Run was executed by a Job under the tenant's runner account, shaped by the ProviderConfig", func(t *testing.T) {
		runs := runsOf(t, c, world)
		if len(runs) != 1 {
			t.Fatalf("want 1 Run, got %d", len(runs))
		}
		r := runs[0]
		if r.Spec.Operation != v1alpha1.OperationApply || r.Status.Phase != v1alpha1.PhaseSucceeded ||
			r.Status.Executor != v1alpha1.ExecutorJob || r.Status.Plan == nil || r.Status.Plan.Summary != "+1 ~0 -0" {
			t.Errorf("Run %s: operation %s, phase %s, executor %s, plan %+v; want a Succeeded Apply by a job planning +1 ~0 -0",
				r.Name, r.Spec.Operation, r.Status.Phase, r.Status.Executor, r.Status.Plan)
		}
		job := &batchv1.Job{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: r.Name}, job); err != nil {
			t.Fatal(err)
		}
		pod := job.Spec.Template.Spec
		if pod.ServiceAccountName != reconcile.DefaultRunnerServiceAccount {
			t.Errorf("Job runs as %q, want %s", pod.ServiceAccountName, reconcile.DefaultRunnerServiceAccount)
		}
		if got := job.Spec.Template.Annotations["example.org/workload-identity"]; got != "team-a-role" {
			t.Errorf("pod template annotation from the ProviderConfig: got %q", got)
		}
		if got := pod.Containers[0].Resources.Limits[corev1.ResourceMemory]; got.String() != "512Mi" {
			t.Errorf("memory limit from the ProviderConfig: got %s", got.String())
		}
		// The inputs Secret holds the tenant's values; the runner removes it when the Run ends.
		if err := c.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: r.Name}, &corev1.Secret{}); !kerrors.IsNotFound(err) {
			t.Errorf("the Run's inputs Secret is still there after the Run ended: %v", err)
		}
	})

	t.Run("a runner's token reads its own namespace's state and no other", func(t *testing.T) {
		cs, err := kubernetes.NewForConfig(g.cfg)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := cs.CoreV1().ServiceAccounts("team-a").CreateToken(ctx, reconcile.DefaultRunnerServiceAccount,
			&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		as := rest.AnonymousClientConfig(g.cfg)
		as.BearerToken = tr.Status.Token
		runner, err := client.New(as, client.Options{Scheme: c.Scheme()})
		if err != nil {
			t.Fatal(err)
		}
		ref := reconcile.StateRef(greeting.GroupKind().String(), "team-a", "world")
		if st, err := (&state.Store{Client: runner}).Get(ctx, ref); err != nil || st == nil {
			t.Errorf("team-a's runner cannot read team-a's state: %v", err)
		}
		for what, read := range map[string]func() error{
			"a Secret of team-b": func() error {
				return runner.Get(ctx, client.ObjectKey{Namespace: "team-b", Name: "anything"}, &corev1.Secret{})
			},
			"the Modules": func() error { return runner.List(ctx, &v1alpha1.ModuleList{}) },
			"Runs of team-b": func() error {
				return runner.List(ctx, &v1alpha1.RunList{}, client.InNamespace("team-b"))
			},
			"creating a Run": func() error {
				return runner.Create(ctx, &v1alpha1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "forged"},
					Spec: v1alpha1.RunSpec{Operation: v1alpha1.OperationApply}})
			},
		} {
			if err := read(); !kerrors.IsForbidden(err) {
				t.Errorf("team-a's runner token and %s: want Forbidden, got %v", what, err)
			}
		}
	})

	t.Run("an update is applied by a second Run", func(t *testing.T) {
		patch := []byte(`{"spec":{"forProvider":{"greeting":"Hi"}}}`)
		if err := c.Patch(ctx, world, client.RawPatch("application/merge-patch+json", patch)); err != nil {
			t.Fatal(err)
		}
		poll(t, "the update to be applied", 3*time.Minute, func(context.Context) (bool, error) {
			return message() == "Hi, World!", nil
		})
		runs := runsOf(t, c, world)
		applied := 0
		for _, r := range runs {
			if r.Spec.Operation == v1alpha1.OperationApply && r.Status.Phase == v1alpha1.PhaseSucceeded {
				applied++
			}
		}
		if applied != 2 {
			t.Errorf("want 2 Succeeded Apply Runs after an update, got %d of %d Runs", applied, len(runs))
		}
	})

	t.Run("deleting the instance destroys through a Run and removes the state", func(t *testing.T) {
		if err := c.Delete(ctx, world); err != nil {
			t.Fatal(err)
		}
		poll(t, "the instance to be gone", 3*time.Minute, func(ctx context.Context) (bool, error) {
			return kerrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(world), world.DeepCopy())), nil
		})
		ref := reconcile.StateRef(greeting.GroupKind().String(), "team-a", "world")
		if st, err := (&state.Store{Client: c}).Get(ctx, ref); err != nil || st != nil {
			t.Errorf("state after delete: %v, %v; want none", st, err)
		}
	})
}
