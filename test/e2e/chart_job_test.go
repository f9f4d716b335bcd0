package e2e

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/charts"
)

// Job mode as the chart installs it: the rendered chart (runner mode job, tenantNamespaces and
// runner.namespaces set) on a cluster where Jobs run, modkind running as the chart's service
// account with the Deployment's own arguments, and nothing granted by hand. An instance of a
// tenant namespace is applied by a Job under that namespace's runner account, becomes Ready, and
// is destroyed by a Job when deleted. In a tenant namespace that runner.namespaces leaves out, an
// instance gets no Run and a condition saying that the runner's service account is missing.
func TestChartJobMode(t *testing.T) {
	g := startJobGround(t)
	ctx := context.Background()
	const (
		release, ns     = "modkind", "modkind-system"
		tenant, without = "team-a", "team-b"
		group           = "chartjob.example.org"
	)
	for _, n := range []string{ns, tenant, without} {
		if err := g.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}); err != nil {
			t.Fatal(err)
		}
	}
	repo, tag, _ := strings.Cut(runnerImage, ":")
	objs, err := charts.Render(filepath.Join("..", "..", "charts", "modkind"), release, ns, map[string]any{
		"image":            map[string]any{"repository": repo, "tag": tag},
		"tenantNamespaces": []any{tenant, without},
		"generatedGroups":  []any{group},
		"runner":           map[string]any{"mode": "job", "namespaces": []any{tenant}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var deployment *appsv1.Deployment
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			deployment = &appsv1.Deployment{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, deployment); err != nil {
				t.Fatal(err)
			}
			// No Deployment controller runs here: modkind runs as a process, below.
			continue
		}
		if err := g.c.Create(ctx, o); err != nil {
			t.Fatalf("installing the chart: %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
	if deployment == nil {
		t.Fatal("the chart renders no Deployment")
	}

	t.Setenv("POD_NAMESPACE", ns)
	kubeconfig := serviceAccountKubeconfig(t, g, ns, release)
	g.startJobController(t, chartArgs(t, deployment.Spec.Template.Spec.Containers[0].Args, kubeconfig))
	watchActiveRuns(t, g.c)

	// createTraces names the kind's group <name>.example.org: the chart's generatedGroups.
	traces, insts := createTracesIn(t, g.c, strings.TrimSuffix(group, ".example.org"), tenant, 1, func(i int) []any { return []any{"i0"} }, 0)
	inst := insts[0]
	waitInstanceReady(t, g.c, inst)
	assertCreatedOnce(t, traces, 1)
	got := inst.DeepCopy()
	if err := g.c.Get(ctx, client.ObjectKeyFromObject(inst), got); err != nil {
		t.Fatal(err)
	}
	rs := runsOf(t, g.c, got)
	if len(rs) == 0 || rs[0].Status.Executor != v1alpha1.ExecutorJob || rs[0].Status.Phase != v1alpha1.PhaseSucceeded {
		t.Fatalf("the instance should be applied by a Run a Job executed; its Runs: %v", rs)
	}
	if err := g.c.Get(ctx, client.ObjectKeyFromObject(&rs[0]), &batchv1.Job{}); err != nil {
		t.Errorf("the Run's Job: %v", err)
	}

	// A tenant namespace without the runner's service account.
	other := inNamespace(inst, without, "c-without", "without")
	createAll(t, g.c, []*unstructured.Unstructured{other})
	waitCondition(t, g.c, other, "Synced", "False", "its service account modkind-runner does not exist")
	if rs := runsOf(t, g.c, other); len(rs) != 0 {
		t.Errorf("no Run should be made where no runner can start; got %d", len(rs))
	}

	// Deleted, the instance is destroyed by a Job, then goes.
	if err := g.c.Delete(ctx, inst); err != nil {
		t.Fatal(err)
	}
	poll(t, "the instance to be destroyed and gone", 3*time.Minute, func(ctx context.Context) (bool, error) {
		return kerrors.IsNotFound(g.c.Get(ctx, client.ObjectKeyFromObject(inst), inst.DeepCopy())), nil
	})
	if _, err := os.Stat(filepath.Join(traces, "i0")); !os.IsNotExist(err) {
		t.Errorf("the destroy should have removed the trace file; stat: %v", err)
	}
}

// chartArgs are the chart Deployment's arguments for modkind, but for what a process on this
// machine needs instead of a pod: its kubeconfig, its directory, and loopback addresses for its
// endpoints.
func chartArgs(t *testing.T, args []string, kubeconfig string) []string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	local := map[string]string{
		"--work-dir":                  filepath.Join(t.TempDir(), "work"),
		"--artifacts-bind-address":    addr,
		"--artifacts-url":             "https://" + addr,
		"--artifacts-hosts":           "127.0.0.1",
		"--metrics-bind-address":      "0",
		"--health-probe-bind-address": "0",
	}
	out := []string{"--kubeconfig", kubeconfig}
	for _, a := range args {
		name, _, _ := strings.Cut(a, "=")
		if v, ok := local[name]; ok {
			a = name + "=" + v
			delete(local, name)
		}
		out = append(out, a)
	}
	if len(local) > 0 {
		t.Fatalf("the chart no longer passes %v", slices.Collect(func(yield func(string) bool) {
			for k := range local {
				if !yield(k) {
					return
				}
			}
		}))
	}
	return out
}

// serviceAccountKubeconfig writes a kubeconfig that authenticates as service account ns/name with
// a token the API server issued for it.
func serviceAccountKubeconfig(t *testing.T, g *jobGround, ns, name string) string {
	t.Helper()
	token := requestToken(context.Background(), t, g.c, ns, name, nil)
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["test"] = &clientcmdapi.Cluster{Server: g.cfg.Host, CertificateAuthorityData: g.cfg.CAData}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: name}
	cfg.CurrentContext = "test"
	p := filepath.Join(t.TempDir(), name+".kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, p); err != nil {
		t.Fatal(err)
	}
	return p
}
