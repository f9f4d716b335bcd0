// Package charts_test renders modkind's Helm chart with Helm's own library and applies what it
// renders to a real API server.
package charts_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

func renderChart(t *testing.T, values map[string]any) []*unstructured.Unstructured {
	t.Helper()
	ch, err := loader.Load("modkind")
	if err != nil {
		t.Fatal(err)
	}
	vals, err := chartutil.ToRenderValues(ch, values, chartutil.ReleaseOptions{Name: "modkind", Namespace: "modkind-system", IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatal(err)
	}
	files, err := engine.Render(ch, vals)
	if err != nil {
		t.Fatalf("the chart must render: %v", err)
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var objs []*unstructured.Unstructured
	for _, n := range names {
		if !strings.HasSuffix(n, ".yaml") {
			continue
		}
		objs = append(objs, decode(t, n, files[n])...)
	}
	for _, f := range ch.CRDObjects() {
		objs = append(objs, decode(t, f.Name, string(f.File.Data))...)
	}
	return objs
}

func decode(t *testing.T, name, doc string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader([]byte(doc)), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := d.Decode(&u.Object); err != nil {
			break
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
	if len(out) == 0 && strings.TrimSpace(doc) != "" && !strings.HasPrefix(strings.TrimSpace(doc), "#") {
		t.Fatalf("%s rendered to something that is not YAML objects", name)
	}
	return out
}

// Everything the chart renders is accepted by a real API server: CRDs first, then the rest.
func TestChartIsAcceptedByAPIServer(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run the tests with `make test`")
	}
	objs := renderChart(t, map[string]any{"generatedGroups": []any{"platform.example.org"}})
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "modkind-system"}}); err != nil {
		t.Fatal(err)
	}
	sort.SliceStable(objs, func(i, j int) bool {
		return objs[i].GetKind() == "CustomResourceDefinition" && objs[j].GetKind() != "CustomResourceDefinition"
	})
	kinds := map[string]int{}
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			t.Errorf("the API server refused %s %s: %v", o.GetKind(), o.GetName(), err)
		}
		kinds[o.GetKind()]++
	}
	for kind, want := range map[string]int{"Deployment": 1, "ServiceAccount": 1, "ClusterRoleBinding": 1, "Service": 1, "CustomResourceDefinition": 2, "ClusterRole": 4} {
		if kinds[kind] != want {
			t.Errorf("want %d %s, the chart rendered %d", want, kind, kinds[kind])
		}
	}
}

func TestChartDeploymentIsLockedDown(t *testing.T) {
	for _, o := range renderChart(t, map[string]any{"terraformBinary": "tofu", "metrics": map[string]any{"serviceMonitor": map[string]any{"enabled": true}}}) {
		switch o.GetKind() {
		case "Deployment":
			c, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
			ctr := c[0].(map[string]any)
			if ro, _, _ := unstructured.NestedBool(ctr, "securityContext", "readOnlyRootFilesystem"); !ro {
				t.Errorf("the root filesystem must be read-only")
			}
			if nonRoot, _, _ := unstructured.NestedBool(o.Object, "spec", "template", "spec", "securityContext", "runAsNonRoot"); !nonRoot {
				t.Errorf("modkind must run as non-root")
			}
			args, _, _ := unstructured.NestedStringSlice(ctr, "args")
			if !contains(args, "--leader-elect=true") || !contains(args, "--terraform-binary=tofu") {
				t.Errorf("args must elect a leader and honour terraformBinary, got %v", args)
			}
		case "ServiceMonitor":
			return
		}
	}
	t.Errorf("metrics.serviceMonitor.enabled must render a ServiceMonitor")
}

// The chart ships exactly modkind's own CRDs.
func TestChartCRDsMatchModkind(t *testing.T) {
	for _, name := range []string{"modkind.io_modules.yaml", "modkind.io_providerconfigs.yaml"} {
		want, err := os.ReadFile(filepath.Join("..", "apis", "crds", name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join("modkind", "crds", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("charts/modkind/crds/%s differs from apis/crds/%s: copy it after make generate", name, name)
		}
	}
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
