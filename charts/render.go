// Package charts renders modkind's Helm chart with Helm's own library, for tests that apply what
// it renders to a real API server.
package charts

import (
	"bytes"
	"io"
	"sort"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

const (
	errLoad   = "cannot load chart"
	errValues = "cannot compute the chart's values"
	errRender = "cannot render chart"
	errDecode = "rendered a document that is not YAML objects"
)

// Render renders the chart in dir as `helm install` would for release name in namespace with
// values, checked against the chart's values.schema.json first as Helm checks them, and returns what Helm would create: the CRDs of its crds/ directory first, then the
// objects of its templates in the order of their file names.
func Render(dir, name, namespace string, values map[string]any) ([]*unstructured.Unstructured, error) {
	ch, err := loader.Load(dir)
	if err != nil {
		return nil, errors.Wrap(err, errLoad)
	}
	vals, err := chartutil.ToRenderValues(ch, values, chartutil.ReleaseOptions{Name: name, Namespace: namespace, IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, errors.Wrap(err, errValues)
	}
	files, err := engine.Render(ch, vals)
	if err != nil {
		return nil, errors.Wrap(err, errRender)
	}
	var objs []*unstructured.Unstructured
	for _, f := range ch.CRDObjects() {
		o, err := decode(f.File.Data)
		if err != nil {
			return nil, errors.Wrap(err, f.Name)
		}
		objs = append(objs, o...)
	}
	names := make([]string, 0, len(files))
	for n := range files {
		if strings.HasSuffix(n, ".yaml") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		o, err := decode([]byte(files[n]))
		if err != nil {
			return nil, errors.Wrap(err, n)
		}
		objs = append(objs, o...)
	}
	return objs, nil
}

// decode splits a multi-document YAML file into objects, skipping empty documents.
func decode(doc []byte) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(doc), 4096)
	for {
		u := &unstructured.Unstructured{}
		err := d.Decode(&u.Object)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, errors.Wrap(err, errDecode)
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}
