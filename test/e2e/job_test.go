package e2e

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/mod/sumdb/dirhash"
	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/modkind/modkind/apis"
	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/artifact"
	jobexec "github.com/modkind/modkind/executor/job"
	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/kind/fields"
	"github.com/modkind/modkind/runs"
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
	for _, build := range [][]string{{"build", "-o", modkind, "../.."}, {"-C", "../testnode", "build", "-o", testnode, "./cmd/testnode"}} {
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
		"--controllers", "job-controller,garbage-collector-controller,ttl-after-finished-controller,serviceaccount-controller,root-ca-certificate-publisher-controller,resourcequota-controller",
		"--root-ca-file", ca, "--leader-elect=false", "--secure-port=0")
	startProcess(t, "testnode", testnode, "--kubeconfig", adminKubeconfig(t, env, dir, "system:node:testnode"),
		"--root", filepath.Join(dir, "pods"), "--image", runnerImage+"="+modkind)
	s, err := apis.Scheme()
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

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func tailBytes(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// jobControllerArgs are the arguments of a modkind with --runner job against the ground, with a
// work directory and artifact server port of its own.
func (g *jobGround) jobControllerArgs(t *testing.T) []string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return []string{"--kubeconfig", g.kubeconfig, "--work-dir", filepath.Join(t.TempDir(), "work"),
		"--poll-interval", "2s", "--lock-duration", "5s", "--min-drift-interval", "1s", "--runner", "job", "--runner-image", runnerImage,
		"--artifacts-bind-address", addr, "--artifacts-url", "https://" + addr}
}

// startJobController runs modkind with args as a process of its own until the test ends; when
// the test fails its log and every Run are shown.
func (g *jobGround) startJobController(t *testing.T, args []string) *exec.Cmd {
	t.Helper()
	proc := startModkind(t, args...)
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
		g.logRuns(t)
	})
	return proc
}

func (g *jobGround) logRuns(t *testing.T) {
	runs := &v1alpha1.RunList{}
	if err := g.c.List(context.Background(), runs); err == nil {
		for _, r := range runs.Items {
			t.Logf("Run %s/%s: %s %s %q", r.Namespace, r.Name, r.Spec.Operation, r.Status.Phase, r.Status.Message)
		}
	}
}

// watchActiveRuns samples the Runs until the test ends and fails it if one instance ever has two
// active at once.
func watchActiveRuns(t *testing.T, c client.Client) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			runs := &v1alpha1.RunList{}
			if err := c.List(ctx, runs); err != nil {
				return false, nil
			}
			byInstance := map[string][]string{}
			for _, r := range runs.Items {
				if p := r.Status.Phase; p == "" || p == v1alpha1.PhasePending || p == v1alpha1.PhaseRunning {
					byInstance[r.Spec.InstanceRef.UID] = append(byInstance[r.Spec.InstanceRef.UID], r.Name)
				}
			}
			for _, names := range byInstance {
				if len(names) > 1 {
					t.Errorf("two Runs of one instance active at once: %v", names)
					return true, nil
				}
			}
			return false, nil
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// tenant makes namespace ns with the runner service account, bound to the runner ClusterRole.
func (g *jobGround) tenant(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	for _, o := range jobexec.RunnerAccess("modkind-runner", ns) {
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

// waitLastPlanOfNewestApply waits until u's status.lastPlan shows the plan of its newest Apply Run,
// with when that plan was made.
func waitLastPlanOfNewestApply(t *testing.T, c client.Client, u *unstructured.Unstructured) {
	t.Helper()
	var shown, want map[string]any
	err := pollErr(time.Minute, func(ctx context.Context) (bool, error) {
		got := u.DeepCopy()
		if err := c.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
			return false, err
		}
		shown, _, _ = unstructured.NestedMap(got.Object, "status", "lastPlan")
		all := runsOf(t, c, u)
		runs.Sort(all) // newest first
		var newest *v1alpha1.Run
		for _, r := range all {
			if r.Spec.Operation == v1alpha1.OperationApply && r.Status.Plan != nil {
				newest = &r
				break
			}
		}
		if newest == nil {
			return false, nil
		}
		p := newest.Status.Plan
		want = map[string]any{"id": p.ID, "add": p.Add, "change": p.Change, "destroy": p.Destroy}
		for k, v := range want {
			if fmt.Sprint(shown[k]) != fmt.Sprint(v) {
				return false, nil
			}
		}
		return p.ID != "" && shown["time"] != nil, nil
	})
	if err != nil {
		t.Fatalf("status.lastPlan of %s: got %v, want the newest Apply Run's plan %v with its time: %v", u.GetName(), shown, want, err)
	}
}

// In job mode the quickstart module and a resource kind of the things provider are applied,
// updated and deleted by Jobs of the tenant's namespace, under the tenant's runner service account:
// outputs reach status and the connection Secret as in process mode, each Run is recorded, the
// runner gets module and providers from the controller only, and its token is bound to its
// namespace.
func TestJobRunner(t *testing.T) {
	g := startJobGround(t)
	t.Setenv("TF_CLI_CONFIG_FILE", thingstest.Install(t))
	args := g.jobControllerArgs(t)
	g.startJobController(t, args)
	// The controller's artifact store: the bundles and provider archives it serves runners.
	artifacts := filepath.Join(args[slices.Index(args, "--work-dir")+1], "artifacts")
	watchActiveRuns(t, g.c)
	g.tenant(t, "team-a")
	g.tenant(t, "team-b")
	ctx := context.Background()
	c := g.c

	moduleDir, err := filepath.Abs(filepath.Join("..", "..", "examples", "quickstart", "module"))
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
			Resources:   &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")}},
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
	// The plan the Job's apply made reaches status.lastPlan, as a plan of the controller's own does.
	waitLastPlanOfNewestApply(t, c, world)

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
		// The runner writes the Run's log as the controller does in process mode: what terraform
		// did, and no value (the greeting is an output's value).
		for _, w := range []string{"$ terraform apply", "terraform_data.greeting: Creation complete after ", "Apply complete! Resources: 1 added, 0 changed, 0 destroyed."} {
			if !strings.Contains(r.Status.Log, w) {
				t.Errorf("the log of Run %s says %q; it says:\n%s", r.Name, w, r.Status.Log)
			}
		}
		if strings.Contains(r.Status.Log, "Hello, World!") {
			t.Errorf("the log of Run %s holds an output's value:\n%s", r.Name, r.Status.Log)
		}
		job := &batchv1.Job{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: r.Name}, job); err != nil {
			t.Fatal(err)
		}
		pod := job.Spec.Template.Spec
		if pod.ServiceAccountName != jobexec.DefaultRunnerServiceAccount {
			t.Errorf("Job runs as %q, want %s", pod.ServiceAccountName, jobexec.DefaultRunnerServiceAccount)
		}
		if got := job.Spec.Template.Annotations["example.org/workload-identity"]; got != "team-a-role" {
			t.Errorf("pod template annotation from the ProviderConfig: got %q", got)
		}
		if got := pod.Containers[0].Resources.Limits[corev1.ResourceMemory]; got.String() != "512Mi" {
			t.Errorf("memory limit from the ProviderConfig: got %s", got.String())
		}
		// The Run's inputs hold the tenant's values: the runner fetched them from the
		// controller, and no object holds them.
		secrets := &corev1.SecretList{}
		if err := c.List(ctx, secrets, client.InNamespace("team-a")); err != nil {
			t.Fatal(err)
		}
		for _, sec := range secrets.Items {
			if sec.Name == r.Name || metav1.IsControlledBy(&sec, &r) {
				t.Errorf("Secret %s holds the inputs of Run %s", sec.Name, r.Name)
			}
		}
	})

	t.Run("a runner's token reads its own namespace's state and no other", func(t *testing.T) {
		runner := runnerAccount(t, g, "team-a")
		ref := kind.StateRef(greeting.GroupKind().String(), "team-a", "world")
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
		waitLastPlanOfNewestApply(t, c, world)
	})

	t.Run("a plan the tenant's runner account forges in a Run's status reaches status.lastPlan only within bounds", func(t *testing.T) {
		runner := runnerAccount(t, g, "team-a")
		all := runsOf(t, c, world)
		runs.Sort(all)
		forged := all[0].DeepCopy()
		big := make([]string, 2000)
		for i := range big {
			big[i] = strings.Repeat("x", 600)
		}
		forged.Status.Plan = &v1alpha1.RunPlan{ID: strings.Repeat("f", 300), Destroy: 2000, Destructive: big}
		// A message past runs.MaxMessage: the API server refuses it, whoever writes it.
		forged.Status.Message = strings.Repeat("m", runs.MaxMessage+1)
		if err := runner.Status().Update(ctx, forged.DeepCopy()); !kerrors.IsInvalid(err) || !strings.Contains(err.Error(), "status.message") {
			t.Fatalf("a Run's status.message longer than %d characters must be refused as invalid, got %v", runs.MaxMessage, err)
		}
		forged.Status.Message = ""
		if err := runner.Status().Update(ctx, forged); err != nil {
			t.Fatalf("the runner account writes its Runs' status: %v", err)
		}
		var shown map[string]any
		err = pollErr(time.Minute, func(ctx context.Context) (bool, error) {
			got := world.DeepCopy()
			if err := c.Get(ctx, client.ObjectKeyFromObject(world), got); err != nil {
				return false, err
			}
			shown, _, _ = unstructured.NestedMap(got.Object, "status", "lastPlan")
			d, _ := shown["destroy"].(int64)
			return d == 2000, nil
		})
		if err != nil {
			t.Fatalf("the forged plan never reached status.lastPlan (%v): %v", shown, err)
		}
		id, _ := shown["id"].(string)
		destructive, _ := shown["destructive"].([]any)
		if len(id) > 64+len("…") || len(destructive) != 51 || destructive[50] != "… and 1950 more" {
			t.Errorf("status.lastPlan from a forged Run: id of %d bytes, %d destructive entries (last %v); want at most 64 bytes and 50 entries and a count",
				len(id), len(destructive), destructive[len(destructive)-1])
		}
	})

	t.Run("in approval mode a Job's plan waits, and the next Run applies the approved plan", func(t *testing.T) {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
			"forProvider": map[string]any{"name": "Approval"},
			"approval":    map[string]any{"mode": fields.ApprovalManual},
		}}}
		u.SetGroupVersionKind(greeting)
		u.SetNamespace("team-a")
		u.SetName("approved")
		if err := c.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
		var id string
		poll(t, "a plan waiting for approval", 3*time.Minute, func(ctx context.Context) (bool, error) {
			got := u.DeepCopy()
			if err := c.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
				return false, nil
			}
			id = kind.WaitingPlan(got)
			return id != "", nil
		})
		runs := runsOf(t, c, u)
		if len(runs) != 1 || runs[0].Status.Phase != v1alpha1.PhaseWaitingForApproval || runs[0].Status.Plan == nil || runs[0].Status.Plan.ID != id {
			t.Fatalf("want one Run waiting for approval of plan %s, got %+v", id, runs)
		}
		ref := kind.StateRef(greeting.GroupKind().String(), "team-a", "approved")
		if st, err := (&state.Store{Client: c}).Get(ctx, ref); err != nil || st != nil {
			t.Errorf("a waiting plan applied something: state %v, %v", st, err)
		}
		if _, err := kind.Approve(ctx, c, greeting, client.ObjectKeyFromObject(u), id); err != nil {
			t.Fatal(err)
		}
		waitInstanceReady(t, c, u)
		phases := map[v1alpha1.RunPhase]int{}
		for _, r := range runsOf(t, c, u) {
			phases[r.Status.Phase]++
		}
		if diff := cmp.Diff(map[v1alpha1.RunPhase]int{v1alpha1.PhaseSucceeded: 2}, phases); diff != "" {
			t.Errorf("Runs after approval (the waiting one handed over, the next applied), -want +got:\n%s", diff)
		}
	})

	t.Run("a resource kind of the things provider is created, updated and deleted by Jobs", func(t *testing.T) {
		// The controller's CLI configuration (TF_CLI_CONFIG_FILE, set above) installs the provider
		// from the test's mirror; a runner's only allows the controller's provider mirror, so a
		// bucket made by a runner proves the provider came from there.
		cloud := thingstest.NewCloud(t)
		bucket := schema.GroupVersionKind{Group: "jobthings.example.org", Version: "v1alpha1", Kind: "Bucket"}
		if err := c.Create(ctx, &v1alpha1.Module{
			ObjectMeta: metav1.ObjectMeta{Name: "jobthings"},
			Spec: v1alpha1.ModuleSpec{
				Source: v1alpha1.ModuleSource{Resource: &v1alpha1.ResourceSource{Provider: thingstest.Source, Version: thingstest.DefaultVersion, Type: "things_bucket"}},
				CRD:    v1alpha1.CRDNames{Group: bucket.Group, Kind: bucket.Kind},
			},
		}); err != nil {
			t.Fatal(err)
		}
		env, dir, _ := strings.Cut(cloud.Env(), "=")
		if err := c.Create(ctx, &v1alpha1.ProviderConfig{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "cloud"},
			Spec:       v1alpha1.ProviderConfigSpec{Env: []v1alpha1.EnvVar{{Name: env, Value: &dir}}},
		}); err != nil {
			t.Fatal(err)
		}
		b := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
			"forProvider":                map[string]any{"name": "logs", "tags": map[string]any{"team": "a"}},
			"providerConfigRef":          map[string]any{"name": "cloud"},
			"writeConnectionSecretToRef": map[string]any{"name": "bucket-logs"},
		}}}
		b.SetGroupVersionKind(bucket)
		b.SetNamespace("team-a")
		b.SetName("logs")
		// Drift checks are Runs too: often, to see one here.
		b.SetAnnotations(map[string]string{kind.AnnotationDriftInterval: "3s"})
		poll(t, "the Bucket CRD to be served", 2*time.Minute, func(ctx context.Context) (bool, error) {
			return c.Create(ctx, b) == nil, nil
		})
		waitInstanceReady(t, c, b)
		objs := cloud.Objects("things_bucket")
		if len(objs) != 1 {
			t.Fatalf("cloud holds %d buckets, want 1: %v", len(objs), objs)
		}
		// The bundle the Run fetched carries no provider: only the list of what its init installs
		// from the controller's mirror.
		runs := runsOf(t, c, b)
		if len(runs) == 0 {
			t.Fatal("no Run of the bucket")
		}
		raw, err := os.ReadFile(filepath.Join(artifacts, strings.Replace(runs[0].Spec.ArtifactDigest, ":", "-", 1)+".tar.gz"))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{artifact.ManifestName}, bundleEntries(t, raw)); diff != "" {
			t.Errorf("the bucket's bundle, -want +got:\n%s", diff)
		}
		t.Logf("the bucket's bundle: %d bytes", len(raw))
		conn := &corev1.Secret{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "bucket-logs"}, conn); err != nil {
			t.Fatal(err)
		}
		if len(conn.Data["access_key"]) == 0 || len(conn.Data["arn"]) == 0 {
			t.Errorf("connection Secret lacks the bucket's access_key or arn: keys %v", keys(conn.Data))
		}
		patch := []byte(`{"spec":{"forProvider":{"tags":{"team":"b"}}}}`)
		if err := c.Patch(ctx, b, client.RawPatch("application/merge-patch+json", patch)); err != nil {
			t.Fatal(err)
		}
		poll(t, "the tag change to reach the cloud", 3*time.Minute, func(context.Context) (bool, error) {
			for _, o := range cloud.Objects("things_bucket") {
				tags, _ := o["tags"].(map[string]any)
				return tags["team"] == "b", nil
			}
			return false, nil
		})
		// A change made outside modkind is found by a drift plan Run and undone by an Apply Run.
		for id := range cloud.Objects("things_bucket") {
			cloud.Edit("things_bucket", id, func(o map[string]any) { o["tags"] = map[string]any{"team": "outside"} })
		}
		found := false
		poll(t, "the drift to be corrected", 3*time.Minute, func(context.Context) (bool, error) {
			// Seen while it is there: the history limit soon prunes it behind newer drift plans.
			for _, r := range runsOf(t, c, b) {
				found = found || (r.Spec.Operation == v1alpha1.OperationDriftPlan && strings.HasPrefix(r.Status.Message, "changes found"))
			}
			for _, o := range cloud.Objects("things_bucket") {
				tags, _ := o["tags"].(map[string]any)
				return tags["team"] == "b", nil
			}
			return false, nil
		})
		if !found {
			t.Errorf("no DriftPlan Run says it found changes")
		}

		// Observe-only: Refresh Runs read the bucket; its status follows the cloud, and nothing
		// in the cloud is changed back.
		setPolicies := func(policies string) {
			patch := []byte(`{"spec":{"managementPolicies":` + policies + `}}`)
			if err := c.Patch(ctx, b, client.RawPatch("application/merge-patch+json", patch)); err != nil {
				t.Fatal(err)
			}
		}
		setPolicies(`["Observe"]`)
		poll(t, "a Refresh Run to succeed", 3*time.Minute, func(context.Context) (bool, error) {
			for _, r := range runsOf(t, c, b) {
				if r.Spec.Operation == v1alpha1.OperationRefresh && r.Status.Phase == v1alpha1.PhaseSucceeded {
					return true, nil
				}
			}
			return false, nil
		})
		updated := cloud.Count("things_bucket", "updated")
		for id := range cloud.Objects("things_bucket") {
			cloud.Edit("things_bucket", id, func(o map[string]any) { o["tags"] = map[string]any{"team": "observed"} })
		}
		poll(t, "status.atProvider.tags to follow the cloud", 3*time.Minute, func(ctx context.Context) (bool, error) {
			got := b.DeepCopy()
			if err := c.Get(ctx, client.ObjectKeyFromObject(b), got); err != nil {
				return false, nil
			}
			team, _, _ := unstructured.NestedString(got.Object, "status", "atProvider", "tags", "team")
			return team == "observed", nil
		})
		for id, o := range cloud.Objects("things_bucket") {
			if tags, _ := o["tags"].(map[string]any); tags["team"] != "observed" {
				t.Errorf("bucket %s tags: %v; an Observe-only instance changed the cloud", id, tags)
			}
		}
		if n := cloud.Count("things_bucket", "updated"); n != updated {
			t.Errorf("bucket updates while Observe-only: %d, want none", n-updated)
		}
		setPolicies(`["*"]`)

		if err := c.Delete(ctx, b); err != nil {
			t.Fatal(err)
		}
		poll(t, "the bucket to be deleted", 3*time.Minute, func(ctx context.Context) (bool, error) {
			return len(cloud.Objects("things_bucket")) == 0 && kerrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(b), b.DeepCopy())), nil
		})
		if created := cloud.Count("things_bucket", "created"); created != 1 {
			t.Errorf("buckets created: %d, want 1: %v", created, cloud.Log("things_bucket"))
		}
	})

	t.Run("a mirror that serves a tampered provider archive fails init, and nothing is applied", func(t *testing.T) {
		// As a compromised controller disk would: every archive of the things provider is replaced,
		// and the mirror's lists advertise the replacement's hash. The lock file the controller
		// wrote into the Run's inputs still holds the installed package's hash.
		restore := tamperThings(t, artifacts)
		defer restore()
		cloud := thingstest.NewCloud(t)
		env, dir, _ := strings.Cut(cloud.Env(), "=")
		if err := c.Create(ctx, &v1alpha1.ProviderConfig{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "tampered"},
			Spec:       v1alpha1.ProviderConfigSpec{Env: []v1alpha1.EnvVar{{Name: env, Value: &dir}}},
		}); err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
			"forProvider":       map[string]any{"name": "tampered"},
			"providerConfigRef": map[string]any{"name": "tampered"},
		}}}
		u.SetGroupVersionKind(schema.GroupVersionKind{Group: "jobthings.example.org", Version: "v1alpha1", Kind: "Bucket"})
		u.SetNamespace("team-a")
		u.SetName("tampered")
		if err := c.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
		var failed v1alpha1.Run
		poll(t, "the Run to fail", 3*time.Minute, func(ctx context.Context) (bool, error) {
			got := u.DeepCopy()
			if err := c.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
				return false, nil
			}
			for _, r := range runsOf(t, c, got) {
				if r.Status.Phase == v1alpha1.PhaseFailed {
					failed = r
					return true, nil
				}
			}
			return false, nil
		})
		// terraform wraps its message's lines.
		if msg := strings.Join(strings.Fields(failed.Status.Message), " "); !strings.Contains(msg, "doesn't match any of the checksums previously recorded in the dependency lock file") {
			t.Errorf("Run %s failed with %q; want init to refuse the package the lock file does not vouch for", failed.Name, failed.Status.Message)
		}
		if objs := cloud.Objects("things_bucket"); len(objs) != 0 {
			t.Errorf("a tampered provider made buckets: %v", objs)
		}
		ref := kind.StateRef("Bucket.jobthings.example.org", "team-a", "tampered")
		if st, err := (&state.Store{Client: c}).Get(ctx, ref); err != nil || st != nil {
			t.Errorf("state of the instance whose init failed: %v, %v; want none", st, err)
		}
		// With the archives the controller made, the instance is applied and then deleted.
		restore()
		waitInstanceReady(t, c, u)
		if err := c.Delete(ctx, u); err != nil {
			t.Fatal(err)
		}
		poll(t, "the instance to be gone", 3*time.Minute, func(ctx context.Context) (bool, error) {
			return kerrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(u), u.DeepCopy())), nil
		})
	})

	t.Run("deleting the instance destroys through a Run and removes the state", func(t *testing.T) {
		if err := c.Delete(ctx, world); err != nil {
			t.Fatal(err)
		}
		poll(t, "the instance to be gone", 3*time.Minute, func(ctx context.Context) (bool, error) {
			return kerrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(world), world.DeepCopy())), nil
		})
		ref := kind.StateRef(greeting.GroupKind().String(), "team-a", "world")
		if st, err := (&state.Store{Client: c}).Get(ctx, ref); err != nil || st != nil {
			t.Errorf("state after delete: %v, %v; want none", st, err)
		}
	})
}

// Killing the controller with SIGKILL at random moments while 20 instances are created by Jobs
// costs nothing: the Jobs go on without it, the restarted controller adopts their Runs rather than
// starting others, and every object is created exactly once. Every kill lands while Runs are
// active, as the test checks before it kills.
func TestJobRunnerKillNine(t *testing.T) {
	g := startJobGround(t)
	g.tenant(t, "default")
	args := g.jobControllerArgs(t)
	proc := startModkind(t, args...)
	watchActiveRuns(t, g.c)
	traces, insts := createTraces(t, g.c, "jobkill", 20, func(i int) []any { return []any{fmt.Sprintf("i%d", i)} }, 3)
	proc = killNineWhileRunsActive(t, g.c, proc, 6, 3, args, insts)
	t.Cleanup(func() {
		_ = proc.Process.Kill()
		_ = proc.Wait()
		if t.Failed() {
			g.logRuns(t)
		}
	})
	for _, u := range insts {
		waitInstanceReady(t, g.c, u)
	}
	assertCreatedOnce(t, traces, len(insts))
}

// A Run left without its Job, as by a controller killed right after creating the Run, is
// completed by the controller: it makes the Job again, and the one Run applies the instance. No
// second Run. While the Run waits, its inputs are held for its runner's account: a tenant's token
// of another account or namespace gets none of them.
func TestJobRunnerAdoptsARunWithoutJob(t *testing.T) {
	g := startJobGround(t)
	g.tenant(t, "default")
	g.tenant(t, "team-b")
	g.startJobController(t, g.jobControllerArgs(t))
	watchActiveRuns(t, g.c)
	ctx := context.Background()
	// A quota of no pods: the Job's pod cannot be made, so the Run stays Pending with its Job.
	quota := noPods(t, g.c, "default")
	traces, insts := createTraces(t, g.c, "jobadopt", 1, func(i int) []any { return []any{fmt.Sprintf("i%d", i)} }, 0)
	inst := insts[0].DeepCopy()
	var run v1alpha1.Run
	poll(t, "a pending Run with its Job", 2*time.Minute, func(ctx context.Context) (bool, error) {
		if err := g.c.Get(ctx, client.ObjectKeyFromObject(inst), inst); err != nil {
			return false, nil
		}
		runs := runsOf(t, g.c, inst)
		if len(runs) != 1 || runs[0].Status.Phase != v1alpha1.PhasePending {
			return false, nil
		}
		run = runs[0]
		return g.c.Get(ctx, client.ObjectKeyFromObject(&run), &batchv1.Job{}) == nil, nil
	})
	job := &batchv1.Job{}
	if err := g.c.Get(ctx, client.ObjectKeyFromObject(&run), job); err != nil {
		t.Fatal(err)
	}
	t.Run("the Run's inputs reach its runner's account only", func(t *testing.T) {
		fetchInputsAs(t, g, job, &run)
	})
	if err := g.c.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	if err := g.c.Delete(ctx, quota); err != nil {
		t.Fatal(err)
	}
	waitInstanceReady(t, g.c, inst)
	assertCreatedOnce(t, traces, 1)
	runs := runsOf(t, g.c, inst)
	if len(runs) != 1 || runs[0].Name != run.Name || runs[0].Status.Phase != v1alpha1.PhaseSucceeded {
		for _, r := range runs {
			t.Logf("Run %s: %s %q", r.Name, r.Status.Phase, r.Status.Message)
		}
		t.Errorf("want the one Run %s Succeeded, got %d Runs", run.Name, len(runs))
	}
}

// Two controllers without leader election, both in job mode, never run two Runs of one instance
// at once, and create each object once.
func TestJobRunnerTwoControllers(t *testing.T) {
	g := startJobGround(t)
	g.tenant(t, "default")
	g.startJobController(t, g.jobControllerArgs(t))
	g.startJobController(t, g.jobControllerArgs(t))
	watchActiveRuns(t, g.c)
	traces, insts := createTraces(t, g.c, "jobtwo", 6, func(i int) []any { return []any{fmt.Sprintf("i%d", i)} }, 1)
	for _, u := range insts {
		waitInstanceReady(t, g.c, u)
	}
	assertCreatedOnce(t, traces, len(insts))
	for _, u := range insts {
		got := u.DeepCopy()
		if err := g.c.Get(context.Background(), client.ObjectKeyFromObject(u), got); err != nil {
			t.Fatal(err)
		}
		for _, r := range runsOf(t, g.c, got) {
			if r.Status.Phase == v1alpha1.PhaseFailed {
				t.Errorf("Run %s of %s failed: %s", r.Name, u.GetName(), r.Status.Message)
			}
		}
	}
}

// killNineWhileRunsActive kills the controller with SIGKILL up to rounds times, each at a random
// moment while at least one Run is active (Pending or Running, read from the API server just
// before the kill), and restarts it; it stops early once every instance of insts is Ready, and
// fails the test unless at least minKills kills landed. It returns the running process.
func killNineWhileRunsActive(t *testing.T, c client.Client, proc *exec.Cmd, rounds, minKills int, args []string, insts []*unstructured.Unstructured) *exec.Cmd {
	t.Helper()
	kills := 0
	for round := range rounds {
		time.Sleep(time.Duration(500+rand.IntN(2500)) * time.Millisecond) // A random moment.
		var active []string
		finished := false
		poll(t, fmt.Sprintf("round %d: a Run active to kill the controller under", round), 2*time.Minute, func(ctx context.Context) (bool, error) {
			list := &v1alpha1.RunList{}
			if err := c.List(ctx, list); err != nil {
				return false, nil
			}
			active = active[:0]
			for _, r := range list.Items {
				if r.Status.Phase == v1alpha1.PhasePending || r.Status.Phase == v1alpha1.PhaseRunning {
					active = append(active, r.Name)
				}
			}
			if len(active) == 0 {
				finished = allReady(ctx, c, insts)
			}
			return len(active) > 0 || finished, nil
		})
		if finished {
			break
		}
		if err := proc.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = proc.Wait()
		kills++
		t.Logf("round %d: killed modkind with SIGKILL while %d Runs were active: %v", round, len(active), active)
		proc = startModkind(t, args...)
	}
	if kills < minKills {
		t.Errorf("only %d kills landed while Runs were active, want at least %d: the instances were created too fast to test", kills, minKills)
	}
	return proc
}

// allReady reports whether every instance of insts is Ready.
func allReady(ctx context.Context, c client.Client, insts []*unstructured.Unstructured) bool {
	for _, u := range insts {
		got := u.DeepCopy()
		if err := c.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
			return false
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		ready := false
		for _, ci := range conds {
			if cm, _ := ci.(map[string]any); cm["type"] == "Ready" && cm["status"] == "True" {
				ready = true
			}
		}
		if !ready {
			return false
		}
	}
	return true
}

// noPods sets a ResourceQuota of no pods on namespace ns, as a tenant's quota that is used up
// would: runner Jobs are made there, but not their pods.
func noPods(t *testing.T, c client.Client, ns string) *corev1.ResourceQuota {
	t.Helper()
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "no-pods"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("0")}}}
	if err := c.Create(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	// Admission holds pods to the quota once kube-controller-manager has counted what it covers.
	poll(t, "the quota to be counted", time.Minute, func(ctx context.Context) (bool, error) {
		got := &corev1.ResourceQuota{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(q), got); err != nil {
			return false, nil
		}
		_, counted := got.Status.Used[corev1.ResourcePods]
		return counted, nil
	})
	return q
}

// assertCreatedOnce checks the trace module's files i0..i<n-1> in dir: each exists and was
// created exactly once.
func assertCreatedOnce(t *testing.T, dir string, n int) {
	t.Helper()
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("i%d", i))
		if b, err := os.ReadFile(p); err != nil || string(b) != "hello" {
			t.Errorf("%s: want hello, got %q, %v", p, b, err)
		}
		b, _ := os.ReadFile(p + ".log")
		if created := strings.Count(string(b), "created"); created != 1 {
			t.Errorf("%s: created %d times, want once:\n%s", p, created, b)
		}
	}
}

// bundleEntries are the names of the entries of a bundle (a tar.gz).
func bundleEntries(t *testing.T, raw []byte) []string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, hdr.Name)
	}
}

// tamperThings replaces every archive of the things provider in the controller's artifact store
// with one whose executable is another, and has the mirror advertise the replacement's hash, as a
// mirror serving a tampered package would; it returns what puts the originals back (once).
func tamperThings(t *testing.T, artifacts string) func() {
	t.Helper()
	saved := map[string][]byte{}
	manifests, err := filepath.Glob(filepath.Join(artifacts, "sha256-*.providers.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range manifests {
		raw, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		var ps []artifact.Provider
		if err := json.Unmarshal(raw, &ps); err != nil {
			t.Fatal(err)
		}
		for i, p := range ps {
			if p.Type != "things" {
				continue
			}
			path := filepath.Join(artifacts, strings.Replace(p.Archive, ":", "-", 1)+".zip")
			if _, ok := saved[path]; !ok {
				if saved[path], err = os.ReadFile(path); err != nil {
					t.Fatal(err)
				}
				var buf bytes.Buffer
				zw := zip.NewWriter(&buf)
				hdr := &zip.FileHeader{Name: "terraform-provider-things_v" + p.Version, Method: zip.Deflate}
				hdr.SetMode(0o755)
				w, err := zw.CreateHeader(hdr)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := w.Write([]byte("#!/bin/sh\nexit 1\n")); err != nil {
					t.Fatal(err)
				}
				if err := zw.Close(); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if ps[i].Hash, err = dirhash.HashZip(path, dirhash.Hash1); err != nil {
				t.Fatal(err)
			}
		}
		tampered, err := json.Marshal(ps)
		if err != nil {
			t.Fatal(err)
		}
		saved[m] = raw
		if err := os.WriteFile(m, tampered, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if len(saved) == 0 {
		t.Fatal("no archive of the things provider to tamper with")
	}
	return sync.OnceFunc(func() {
		for p, b := range saved {
			if err := os.WriteFile(p, b, 0o600); err != nil {
				t.Error(err)
			}
		}
	})
}

// fetchInputsAs asks the controller's artifact server for the inputs of run, Pending with its
// Job, with tokens the API server mints, as a tenant may (anyone with edit in a namespace runs
// pods as any of its service accounts): the Run's runner account gets the very inputs the Run
// names; another account of its namespace, another namespace's runner and a token for the API
// server get nothing.
func fetchInputsAs(t *testing.T, g *jobGround, job *batchv1.Job, run *v1alpha1.Run) {
	t.Helper()
	ctx := context.Background()
	var ca, url string
	for _, e := range job.Spec.Template.Spec.Containers[0].Env {
		if e.Name == jobexec.EnvArtifactsCA {
			ca = e.Value
		}
	}
	args := job.Spec.Template.Spec.Containers[0].Args
	if i := slices.Index(args, "--artifacts"); i >= 0 && i+1 < len(args) {
		url = args[i+1]
	}
	hc, err := artifact.NewTLSClient([]byte(ca))
	if err != nil || url == "" {
		t.Fatalf("the runner Job's artifact server: %q, %v", url, err)
	}
	cs, err := kubernetes.NewForConfig(g.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: run.Namespace, Name: "app"}}); err != nil && !kerrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	mint := func(ns, sa string, audiences ...string) string {
		tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa,
			&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{Audiences: audiences, ExpirationSeconds: ptr.To[int64](600)}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return tr.Status.Token
	}
	for _, tc := range []struct {
		who, token, refused string
	}{
		{who: "the Run's runner account", token: mint(run.Namespace, jobexec.DefaultRunnerServiceAccount, jobexec.RunnerTokenAudience)},
		{who: "another account of the Run's namespace", token: mint(run.Namespace, "app", jobexec.RunnerTokenAudience), refused: "403 Forbidden"},
		{who: "team-b's runner account", token: mint("team-b", jobexec.DefaultRunnerServiceAccount, jobexec.RunnerTokenAudience), refused: "403 Forbidden"},
		{who: "the runner account's token for the API server", token: mint(run.Namespace, jobexec.DefaultRunnerServiceAccount), refused: "401 Unauthorized"},
	} {
		raw, err := artifact.FetchInputs(ctx, hc, url, tc.token, run.Namespace, run.Name)
		switch {
		case tc.refused == "" && (err != nil || runs.InputsDigest(raw) != run.Spec.RunInputsDigest):
			t.Errorf("%s: got %d bytes (%v) whose digest is not the Run's spec.runInputsDigest", tc.who, len(raw), err)
		case tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused) || artifact.IsUnavailable(err)):
			t.Errorf("%s: got %d bytes, %v; want a final %s", tc.who, len(raw), err, tc.refused)
		}
	}
}
