// Package fields gives the names and values of a Terraform module their form as fields of the kind
// modkind generates: snake_case names become camelCase, and values convert between Terraform's
// shape and the kind's. The schema of the kind (package crd) and the rules on it (package
// crd/validation) both need that form, and must agree on it, so it is here, below both.
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
