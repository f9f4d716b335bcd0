package crd

import (
	"crypto/sha256"
	"encoding/hex"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Which Module owns a generated CRD.
//
// A Module's name may be 253 characters long, a label's value only 63, and the API server refuses
// an object with a longer one: a Module with a long name could never install its CRD. The label
// stays (watches, caches and OwnedSelector select modkind's CRDs by it), holding the name when it
// fits and otherwise a value derived from it; the full name is in an annotation, which has no such
// limit.

// AnnotationModule records the full name of the Module that owns a generated CRD.
const AnnotationModule = "modkind.io/module-name"

// hashedPrefix is how much of a long name a label value keeps, so that people can still recognise
// it: with the separator and the hash the value is 63 characters long.
const (
	hashedPrefix = validation.LabelValueMaxLength - 1 - hashLength
	hashLength   = 16
)

// ModuleLabelValue is the value of LabelModule on the CRD of the named Module: the name itself
// when it is a valid label value, else its first characters, an underscore and a hash of the whole
// name. A Module's name never contains an underscore (it is a DNS subdomain), so a hashed value is
// never another Module's name.
func ModuleLabelValue(module string) string {
	if len(validation.IsValidLabelValue(module)) == 0 {
		return module
	}
	sum := sha256.Sum256([]byte(module))
	prefix := module
	if len(prefix) > hashedPrefix {
		prefix = prefix[:hashedPrefix]
	}
	return prefix + "_" + hex.EncodeToString(sum[:])[:hashLength]
}

// ModuleOf is the full name of the Module that owns o, a CRD modkind generated: its annotation,
// or for CRDs written before modkind recorded it, its label, which then held the name. It is ""
// for objects modkind did not generate.
func ModuleOf(o metav1.Object) string {
	if n := o.GetAnnotations()[AnnotationModule]; n != "" {
		return n
	}
	return o.GetLabels()[LabelModule]
}

// OwnedBy reports whether o is the CRD of the named Module: it names the Module, and carries the
// label that selects it.
func OwnedBy(o metav1.Object, module string) bool {
	return module != "" && ModuleOf(o) == module && o.GetLabels()[LabelModule] == ModuleLabelValue(module)
}
