package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chart/loader"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/modkind/modkind/charts"
)

// `make chart` writes the package `helm install` takes: named and versioned after the binary's
// version, carrying the CRDs and rendering as the chart's directory does, with the image of that
// version; a version Helm would refuse is refused here first.
func TestPackageFollowsTheBinarysVersion(t *testing.T) {
	dir := filepath.Join("..", "..", "charts", "modkind")
	out := t.TempDir()
	path, err := Package(dir, "0.2.0-rc.1", out)
	if err != nil {
		t.Fatal(err)
	}
	if path != filepath.Join(out, "modkind-0.2.0-rc.1.tgz") {
		t.Errorf("want the package named after the version, got %s", path)
	}
	ch, err := loader.Load(path)
	if err != nil {
		t.Fatalf("helm cannot load the package: %v", err)
	}
	src, err := loader.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]any{"version": ch.Metadata.Version, "appVersion": ch.Metadata.AppVersion, "crds": len(ch.CRDObjects()), "templates": len(ch.Templates)}
	want := map[string]any{"version": "0.2.0-rc.1", "appVersion": "0.2.0-rc.1", "crds": len(src.CRDObjects()), "templates": len(src.Templates)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the package: -want +got:\n%s", diff)
	}
	objs, err := charts.Render(path, "modkind", "modkind-system", nil)
	if err != nil {
		t.Fatalf("the package must render: %v", err)
	}
	image := ""
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
			if len(containers) > 0 {
				image, _, _ = unstructured.NestedString(containers[0].(map[string]any), "image")
			}
		}
	}
	if !strings.HasSuffix(image, ":0.2.0-rc.1") {
		t.Errorf("the packaged chart must install the image of its version, got %q", image)
	}

	if _, err := Package(dir, "v0.2", t.TempDir()); err == nil || !strings.Contains(err.Error(), "SemVer 2") {
		t.Errorf("a version that is not SemVer 2 must be refused, got %v", err)
	}
}
