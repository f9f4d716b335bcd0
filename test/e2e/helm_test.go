package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
)

// envHelm names the helm CLI (make test sets it from hack/helm.sh).
const envHelm = "MODKIND_HELM"

// The README's "Installing into a cluster", as a platform engineer runs it, with the helm CLI of
// the version the chart is tested with: `helm install` into a cluster where Jobs run, modkind
// running with what helm made (the Deployment's service account and arguments), a Module whose
// source is a git repository and its instance in a runner namespace Ready in job mode; `helm
// upgrade` with a changed value changes the Deployment, and the controller restarted from it
// applies a new instance; `helm uninstall` removes what the chart made and leaves modkind's CRDs,
// the Module, the instances and their states: uninstalling destroys nothing.
func TestHelmInstallUpgradeUninstall(t *testing.T) {
	helm := os.Getenv(envHelm)
	if helm == "" {
		t.Fatalf("%s must name the helm CLI (make test sets it from hack/helm.sh)", envHelm)
	}
	g := startJobGround(t)
	ctx := context.Background()
	const (
		release, ns = "modkind", "modkind-system"
		tenant      = "team-a"
		// The README's: its helm install lists this group and this namespace.
		group = "platform.example.org"
	)
	// The README: runner namespaces must exist before the install.
	if err := g.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tenant}}); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(helm, append(args, "--kubeconfig", g.kubeconfig)...)
		cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+filepath.Join(home, "cache"), "HELM_CONFIG_HOME="+filepath.Join(home, "config"),
			"HELM_DATA_HOME="+filepath.Join(home, "data"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	repo, tag, _ := strings.Cut(runnerImage, ":")
	chart := filepath.Join("..", "..", "charts", "modkind")
	run("install", release, chart, "-n", ns, "--create-namespace",
		"--set", "image.repository="+repo, "--set", "image.tag="+tag,
		"--set", "generatedGroups={"+group+"}",
		"--set", "runner.namespaces={"+tenant+"}")

	// modkind runs as the pod of helm's Deployment would: its service account, its arguments.
	deployment := func() *appsv1.Deployment {
		t.Helper()
		list := &appsv1.DeploymentList{}
		if err := g.c.List(ctx, list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != 1 {
			t.Fatalf("helm should have made one Deployment in %s, found %d", ns, len(list.Items))
		}
		return &list.Items[0]
	}
	t.Setenv("POD_NAMESPACE", ns)
	start := func(d *appsv1.Deployment) *exec.Cmd {
		t.Helper()
		kubeconfig := serviceAccountKubeconfig(t, g, ns, d.Spec.Template.Spec.ServiceAccountName)
		return g.startJobController(t, chartArgs(t, d.Spec.Template.Spec.Containers[0].Args, kubeconfig))
	}
	controller := start(deployment())

	// examples/cluster, as the README's walkthrough applies it, its git URL pointed at a clone of
	// this repository's quickstart module on this machine (the test has no internet).
	dir := filepath.Join("..", "..", "examples", "cluster")
	mod := manifestFile(t, filepath.Join(dir, "01-module.yaml"))[0]
	url, _, _ := unstructured.NestedString(mod.Object, "spec", "source", "url")
	const published = "git::https://github.com/modkind/modkind.git//examples/quickstart/module?ref=main"
	if url != published {
		t.Fatalf("examples/cluster's Module should take the quickstart module from this repository by git, names %q", url)
	}
	_ = unstructured.SetNestedField(mod.Object, "git::file://"+quickstartRepo(t)+"//examples/quickstart/module?ref=main", "spec", "source", "url")
	poll(t, "modkind to serve Modules", 2*time.Minute, func(ctx context.Context) (bool, error) { return g.c.Create(ctx, mod) == nil, nil })
	example := manifestFile(t, filepath.Join(dir, "02-greeting.yaml"))[0]
	instance := func(u *unstructured.Unstructured) *unstructured.Unstructured {
		t.Helper()
		poll(t, "the kind Greeting to be served", 2*time.Minute, func(ctx context.Context) (bool, error) { return g.c.Create(ctx, u) == nil, nil })
		waitInstanceReady(t, g.c, u)
		if rs := runsOf(t, g.c, u); len(rs) == 0 || rs[0].Status.Executor != v1alpha1.ExecutorJob {
			t.Fatalf("%s should be applied by a Run a Job executed; its Runs: %v", u.GetName(), rs)
		}
		got := u.DeepCopy()
		if err := g.c.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
			t.Fatal(err)
		}
		if msg, _, _ := unstructured.NestedString(got.Object, "status", "atProvider", "message"); msg == "" {
			t.Errorf("%s should show the module's output message in status.atProvider, has %v", u.GetName(), got.Object["status"])
		}
		return u
	}
	first := instance(example.DeepCopy())
	// An upgrade with a changed value changes the Deployment; its new pod (modkind restarted with
	// the new arguments) goes on.
	run("upgrade", release, chart, "-n", ns, "--reuse-values", "--set", "maxConcurrentRuns=3")
	upgraded := deployment()
	if args := upgraded.Spec.Template.Spec.Containers[0].Args; !slices.Contains(args, "--max-concurrent-runs=3") {
		t.Fatalf("helm upgrade --set maxConcurrentRuns=3 should pass --max-concurrent-runs=3, the Deployment has %v", args)
	}
	_ = controller.Process.Kill()
	_ = controller.Wait()
	start(upgraded)
	again := example.DeepCopy()
	again.SetName("again")
	_ = unstructured.SetNestedField(again.Object, "greeting-again", "spec", "writeConnectionSecretToRef", "name")
	second := instance(again)

	// Uninstalled: every object of the release's manifest is gone; the CRDs (Helm never deletes
	// those of crds/), the Module, the instances and their states are left, and nothing was
	// destroyed.
	manifest := filepath.Join(t.TempDir(), "manifest.yaml")
	if err := os.WriteFile(manifest, []byte(run("get", "manifest", release, "-n", ns)), 0o600); err != nil {
		t.Fatal(err)
	}
	made := manifestFile(t, manifest)
	if len(made) < 10 {
		t.Fatalf("the release's manifest should list what the chart made, got %d objects", len(made))
	}
	run("uninstall", release, "-n", ns)
	for _, o := range made {
		if namespaced, err := g.c.IsObjectNamespaced(o); err != nil {
			t.Fatal(err)
		} else if namespaced && o.GetNamespace() == "" {
			o.SetNamespace(ns)
		}
		poll(t, o.GetKind()+" "+o.GetName()+" to be gone", time.Minute, func(ctx context.Context) (bool, error) {
			return kerrors.IsNotFound(g.c.Get(ctx, client.ObjectKeyFromObject(o), o.DeepCopy())), nil
		})
	}
	for _, o := range []client.Object{
		&apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "modules.modkind.io"}},
		&apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "greetings." + group}},
		&v1alpha1.Module{ObjectMeta: metav1.ObjectMeta{Name: mod.GetName()}},
		first, second,
	} {
		if err := g.c.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
			t.Errorf("%T %s should be left after helm uninstall: %v", o, o.GetName(), err)
		}
	}
	states := &corev1.SecretList{}
	if err := g.c.List(ctx, states, client.InNamespace(tenant), client.MatchingLabels{"modkind.io/instance": first.GetName()}); err != nil {
		t.Fatal(err)
	}
	if len(states.Items) == 0 {
		t.Error("the instance's state should be left after helm uninstall")
	}
}

// quickstartRepo makes a git repository whose main branch holds examples/quickstart/module where
// this repository holds it.
func quickstartRepo(t *testing.T) string {
	t.Helper()
	repo := t.TempDir()
	src, err := os.ReadFile(filepath.Join("..", "..", "examples", "quickstart", "module", "main.tf"))
	if err != nil {
		t.Fatal(err)
	}
	module := filepath.Join(repo, "examples", "quickstart", "module")
	if err := os.MkdirAll(module, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(module, "main.tf"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"commit", "-q", "-m", "quickstart"}} {
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.org", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.org")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return repo
}
