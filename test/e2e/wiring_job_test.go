package e2e

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/cmd/controller"
)

// manifestFile reads the objects of a YAML file of one or more documents.
func manifestFile(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := controller.ReadManifestFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// In job mode the controller resolves references and runner pods apply what it rendered
// (issue 26): examples/wiring, applied app first, becomes Ready, and a new ConfigMap value
// reaches the app through a new Run.
func TestJobRunnerWiring(t *testing.T) {
	g := startJobGround(t)
	const ns = "wired"
	if err := g.c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	g.tenant(t, ns)
	g.startJobController(t, g.jobControllerArgs(t))
	ctx := context.Background()
	dir, err := filepath.Abs(filepath.Join("..", "..", "examples", "wiring"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range manifestFile(t, filepath.Join(dir, "01-modules.yaml")) {
		path, _, _ := unstructured.NestedString(m.Object, "spec", "source", "path")
		_ = unstructured.SetNestedField(m.Object, filepath.Join(dir, path), "spec", "source", "path")
		poll(t, "the Module CRD to be served", 2*time.Minute, func(ctx context.Context) (bool, error) {
			return g.c.Create(ctx, m) == nil, nil
		})
	}
	objs := manifestFile(t, filepath.Join(dir, "02-instances.yaml"))
	for _, o := range objs {
		o.SetNamespace(ns)
		poll(t, "the kind "+o.GetKind()+" to be served", 2*time.Minute, func(ctx context.Context) (bool, error) {
			return g.c.Create(ctx, o) == nil, nil
		})
	}
	var app *unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() != "ConfigMap" {
			waitInstanceReady(t, g.c, o)
		}
		if o.GetKind() == "App" {
			app = o
		}
	}
	endpoint := func() string {
		got := app.DeepCopy()
		if err := g.c.Get(ctx, client.ObjectKeyFromObject(app), got); err != nil {
			t.Fatal(err)
		}
		ep, _, _ := unstructured.NestedString(got.Object, "status", "atProvider", "endpoint")
		return ep
	}
	if ep := endpoint(); ep != "https://sub-net-main-ab.example.internal:3" {
		t.Errorf("the app's endpoint: want the subnet of network main with 3 replicas, got %q", ep)
	}
	cm := &corev1.ConfigMap{}
	if err := g.c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "shop-settings"}, cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["replicas"] = "5"
	if err := g.c.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	poll(t, "the app with 5 replicas", 2*time.Minute, func(context.Context) (bool, error) {
		return endpoint() == "https://sub-net-main-ab.example.internal:5", nil
	})
}
