package integration

import (
	"context"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/modkind/modkind/cmd/controller"
)

// objectsIn reads the objects of a YAML file of one or more documents, as the quickstart reads
// its manifests.
func objectsIn(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := controller.ReadManifestFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// examples/wiring works as its comments say: applied in the order written (the app first), all
// three instances become Ready, and the app runs in the subnet of the network with the
// ConfigMap's replicas.
func TestWiringExample(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "..", "examples", "wiring"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range objectsIn(t, filepath.Join(dir, "01-modules.yaml")) {
		path, _, _ := unstructured.NestedString(m.Object, "spec", "source", "path")
		_ = unstructured.SetNestedField(m.Object, filepath.Join(dir, path), "spec", "source", "path")
		create(t, m)
		t.Cleanup(func() { _ = ground.client.Delete(context.Background(), m) })
		waitModuleReady(t, m.GetName())
	}
	ns := newNamespace(t)
	objs := objectsIn(t, filepath.Join(dir, "02-instances.yaml"))
	var instances []*unstructured.Unstructured
	for _, o := range objs {
		o.SetNamespace(ns)
		if o.GetKind() != "ConfigMap" {
			instances = append(instances, o)
		}
	}
	deleteAllAtEnd(t, instances...)
	for _, o := range objs {
		create(t, o)
	}
	for _, o := range instances {
		waitInstance(t, o, 1)
	}
	if ep := atProvider(t, instances[0], "endpoint"); ep != "https://sub-net-main-ab.example.internal:3" {
		t.Errorf("the app's endpoint: want the subnet of network main with 3 replicas, got %v", ep)
	}
}
