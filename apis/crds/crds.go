// Package crds embeds the CustomResourceDefinitions of modkind's own kinds, generated from
// apis/v1alpha1 by controller-gen (make generate), so that modkind can install them itself.
package crds

import (
	"embed"
	"io/fs"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

//go:embed *.yaml
var files embed.FS

// CRDs returns modkind's own CRDs.
func CRDs() ([]*extv1.CustomResourceDefinition, error) {
	names, err := fs.Glob(files, "*.yaml")
	if err != nil {
		return nil, err
	}
	out := make([]*extv1.CustomResourceDefinition, 0, len(names))
	for _, n := range names {
		raw, err := files.ReadFile(n)
		if err != nil {
			return nil, err
		}
		c := &extv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(raw, c); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}
