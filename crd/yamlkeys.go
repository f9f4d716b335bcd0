package crd

import (
	"encoding/json"
	"slices"
	"strings"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/modkind/modkind/kind/fields"
)

// Field names YAML reads as something else.
//
// kubectl reads manifests as YAML 1.1 (sigs.k8s.io/yaml), in which an unquoted key y, yes, on,
// true, n, no, off or false (and their capitalised and upper-case forms) is a boolean: `on: 1`
// reaches the API server as {"true": 1}, which the schema prunes or refuses, and the variable
// named on is never set. Keys that read as numbers (0x10, 1e3, 017) or null fare no better. A
// module variable or object attribute with such a name gives a field that works only when its key
// is quoted in YAML, which people need to be told.

// YAMLKeyReading is what YAML 1.1, as kubectl reads manifests, makes of key written unquoted:
// the key itself when it stays a string, "true" for on, "16" for 0x10; ok is false when the reader
// refuses the key (null). true and false read as booleans too, but the reader writes them back
// as the same words, so those fields are set all the same.
func YAMLKeyReading(key string) (reading string, ok bool) {
	if key == "" || strings.ContainsAny(key, ":#{}[],&*!|>'\"%@`\n\r\t ") {
		// Not a plain scalar, and no field has such a name.
		return key, true
	}
	raw, err := yaml.YAMLToJSON([]byte(key + ": 0"))
	if err != nil {
		return "", false
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || len(m) != 1 {
		return "", false
	}
	for k := range m {
		return k, true
	}
	return "", false
}

// yamlAmbiguous reports whether an unquoted key is not read as itself.
func yamlAmbiguous(key string) bool {
	r, ok := YAMLKeyReading(key)
	return !ok || r != key
}

// YAMLAmbiguousFields lists the fields under spec.forProvider of a generated CRD whose names YAML
// reads as something other than the name when they are not quoted (on, yes, n, off, 0x10, null), as
// paths: spec.forProvider.on, spec.forProvider.settings.yes, spec.forProvider.rules[].off,
// spec.forProvider.byName{}.n ([] the items of a list, {} the values of a map). Users must quote
// these keys in YAML manifests; YAMLKeyWarning says so.
func YAMLAmbiguousFields(c *extv1.CustomResourceDefinition) []string {
	s := specSchema(c)
	if s == nil {
		return nil
	}
	fp, ok := s.Properties[fields.ForProvider]
	if !ok {
		return nil
	}
	var out []string
	yamlAmbiguousFields("spec.forProvider", &fp, &out)
	slices.Sort(out)
	return out
}

func yamlAmbiguousFields(path string, s *extv1.JSONSchemaProps, out *[]string) {
	for name, p := range s.Properties {
		cp := path + "." + name
		if yamlAmbiguous(name) {
			*out = append(*out, cp)
		}
		yamlAmbiguousFields(cp, &p, out)
	}
	if s.Items != nil && s.Items.Schema != nil {
		yamlAmbiguousFields(path+"[]", s.Items.Schema, out)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		yamlAmbiguousFields(path+"{}", s.AdditionalProperties.Schema, out)
	}
}

// YAMLKeyWarning is the advice for a field YAMLAmbiguousFields lists, for a Module's status and
// `modkind generate`: spec.forProvider.on: YAML reads the key on as "true": quote it ("on": ...).
func YAMLKeyWarning(path string) string {
	name := path[strings.LastIndexAny(path, ".]}")+1:]
	quote := "quote it in manifests (\"" + name + "\": ...)"
	if r, ok := YAMLKeyReading(name); ok {
		return path + ": YAML reads the key " + name + " as \"" + r + "\": " + quote
	}
	return path + ": YAML cannot read the key " + name + " unquoted: " + quote
}
