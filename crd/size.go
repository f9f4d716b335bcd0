package crd

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// MaxBytes is the largest CRD, as JSON, that modkind installs. etcd refuses objects over 1.5 MiB
// by default (--max-request-bytes), and the API server stores a CRD with its status and managed
// fields besides: a third is left for them, and for the OpenAPI document every client reads.
const MaxBytes = 1 << 20

const errMarshalSize = "cannot measure the CRD"

// A TooLargeError says that a module's CRD would be larger than MaxBytes, and which fields of
// forProvider weigh most: the Module's condition shows it, and nothing is installed.
type TooLargeError struct {
	// Bytes is the CRD's size as JSON.
	Bytes int
	// Largest are forProvider's heaviest fields with their references, heaviest first.
	Largest []FieldSize
}

// A FieldSize is the size of a variable's schema in a CRD: its value and its reference.
type FieldSize struct {
	Field string
	Bytes int
}

func (e *TooLargeError) Error() string {
	largest := make([]string, len(e.Largest))
	for i, f := range e.Largest {
		largest[i] = fmt.Sprintf("%s (%d KiB)", f.Field, (f.Bytes+1023)/1024)
	}
	return fmt.Sprintf("the kind's CRD would be %d KiB, more than the %d KiB modkind installs (etcd refuses objects over 1.5 MiB "+
		"by default), so nothing was installed; its largest fields are %s. Give the kind fewer variables: wrap the module in "+
		"one that takes related settings as one object variable (each variable costs its schema and its reference's), or "+
		"split it into modules of their own", (e.Bytes+1023)/1024, MaxBytes/1024, strings.Join(largest, ", "))
}

// checkSize returns a *TooLargeError when c is larger than MaxBytes.
func checkSize(c *extv1.CustomResourceDefinition) error {
	raw, err := json.Marshal(c)
	if err != nil {
		return errors.Wrap(err, errMarshalSize)
	}
	if len(raw) <= MaxBytes {
		return nil
	}
	return &TooLargeError{Bytes: len(raw), Largest: heaviestFields(c, 3)}
}

// heaviestFields are the n fields of forProvider whose schemas, with their <field>From, are largest.
func heaviestFields(c *extv1.CustomResourceDefinition, n int) []FieldSize {
	fp := c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["forProvider"]
	sizes := map[string]int{}
	for name, p := range fp.Properties {
		raw, _ := json.Marshal(p)
		field := name
		if value := strings.TrimSuffix(name, "From"); value != name {
			if _, ok := fp.Properties[value]; ok {
				field = value
			}
		}
		sizes[field] += len(raw)
	}
	out := make([]FieldSize, 0, len(sizes))
	for f, b := range sizes {
		out = append(out, FieldSize{Field: f, Bytes: b})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Bytes != out[j].Bytes {
			return out[i].Bytes > out[j].Bytes
		}
		return out[i].Field < out[j].Field
	})
	return out[:min(n, len(out))]
}
