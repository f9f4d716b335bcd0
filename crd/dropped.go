package crd

import (
	"encoding/json"
	"reflect"
	"sort"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/modkind/modkind/kind/fields"
)

// DroppedFields are the spec.forProvider fields of installed that wanted no longer has, sorted.
// The API server drops a field its schema lacks from every instance it reads or writes.
func DroppedFields(installed, wanted *extv1.CustomResourceDefinition) []string {
	old, ok := forProviderSchema(installed)
	if !ok {
		return nil
	}
	cur, _ := forProviderSchema(wanted)
	var out []string
	for name := range old.Properties {
		if _, ok := cur.Properties[name]; !ok {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// NotDefault reports whether value, an instance's spec.forProvider.field, is not the default that
// installed's schema gives the field: the API server fills defaults in, so a default value is
// one the instance may never have asked for. A field without a default has none to be.
func NotDefault(installed *extv1.CustomResourceDefinition, field string, value any) bool {
	fp, ok := forProviderSchema(installed)
	if !ok {
		return true
	}
	p, ok := fp.Properties[field]
	if !ok || p.Default == nil {
		return true
	}
	var d any
	if err := json.Unmarshal(p.Default.Raw, &d); err != nil {
		return true
	}
	raw, err := json.Marshal(value)
	if err != nil {
		return true
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return true
	}
	return !reflect.DeepEqual(d, v)
}

// ForProviderFields are the spec.forProvider fields of c, nil when it has no such schema.
func ForProviderFields(c *extv1.CustomResourceDefinition) map[string]bool {
	fp, ok := forProviderSchema(c)
	if !ok {
		return nil
	}
	out := make(map[string]bool, len(fp.Properties))
	for name := range fp.Properties {
		out[name] = true
	}
	return out
}

// forProviderSchema is the schema of spec.forProvider in c, and whether c has one.
func forProviderSchema(c *extv1.CustomResourceDefinition) (extv1.JSONSchemaProps, bool) {
	s := specSchema(c)
	if s == nil {
		return extv1.JSONSchemaProps{}, false
	}
	fp, ok := s.Properties[fields.ForProvider]
	return fp, ok
}
