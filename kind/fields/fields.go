// Package fields gives the names and values of a Terraform module their form as fields of the kind
// modkind generates: snake_case names become camelCase, and values convert between Terraform's
// shape and the kind's. The kind's schema (crd), the rules on it (crd/validation), the rendering of
// an instance's values for Terraform (terraform) and the outputs the controllers publish
// (reconcile) must all agree on that form, so it is here, below them all, as part of the
// contract of a generated kind (package kind).
package fields

import (
	"fmt"
	"sort"
	"strings"
	"unicode"
)

// Name is the Kubernetes (camelCase) name of a Terraform (snake_case) name: instance_count
// becomes instanceCount. Names already in camelCase are kept.
func Name(terraformName string) string {
	var b strings.Builder
	upper := false
	for i, r := range terraformName {
		switch {
		case r == '_' || r == '-':
			upper = b.Len() > 0
		case upper:
			b.WriteRune(unicode.ToUpper(r))
			upper = false
		case i == 0:
			b.WriteRune(unicode.ToLower(r))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// SuffixSecretRef ends the field that names the Secret key of a sensitive variable's value.
const SuffixSecretRef = "SecretRef"

// SecretRef is the field of a sensitive variable that names the Secret key holding its value:
// db_password becomes dbPasswordSecretRef.
func SecretRef(variable string) string { return Name(variable) + SuffixSecretRef }

// A CollisionError names Terraform names that would become the same field.
type CollisionError struct {
	Where string
	Field string
	Names []string
}

func (e *CollisionError) Error() string {
	return fmt.Sprintf("%s: %s all become field %q", e.Where, strings.Join(e.Names, " and "), e.Field)
}

// Names maps each Terraform name to its field name, refusing two names that would collide.
func Names(where string, terraformNames []string) (map[string]string, error) {
	return NamesBy(where, terraformNames, Name)
}

// NamesBy is Names with the field of each name given by field.
func NamesBy(where string, terraformNames []string, field func(string) string) (map[string]string, error) {
	byField := map[string][]string{}
	out := make(map[string]string, len(terraformNames))
	for _, n := range terraformNames {
		f := field(n)
		byField[f] = append(byField[f], n)
		out[n] = f
	}
	for f, ns := range byField {
		if len(ns) > 1 {
			sort.Strings(ns)
			return nil, &CollisionError{Where: where, Field: f, Names: ns}
		}
	}
	return out, nil
}

// Where names the value at path in errors: the path, or "value" for the whole value.
func Where(path string) string {
	if path == "" {
		return "value"
	}
	return path
}
