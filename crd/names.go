package crd

import (
	"fmt"
	"sort"
	"strings"
	"unicode"
)

// FieldName is the Kubernetes (camelCase) name of a Terraform (snake_case) name: instance_count
// becomes instanceCount. Names already in camelCase are kept.
func FieldName(terraformName string) string {
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

// fieldNames maps each Terraform name to its field name, refusing two names that would collide.
func fieldNames(where string, terraformNames []string) (map[string]string, error) {
	return fieldNamesBy(where, terraformNames, FieldName)
}

// fieldNamesBy is fieldNames with the field of each name given by field.
func fieldNamesBy(where string, terraformNames []string, field func(string) string) (map[string]string, error) {
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

// Plural is the default resource name of a kind: Bucket → buckets, Policy → policies.
func Plural(kind string) string {
	k := strings.ToLower(kind)
	switch {
	case strings.HasSuffix(k, "s"), strings.HasSuffix(k, "x"), strings.HasSuffix(k, "z"),
		strings.HasSuffix(k, "ch"), strings.HasSuffix(k, "sh"):
		return k + "es"
	case strings.HasSuffix(k, "y") && len(k) > 1 && !strings.ContainsRune("aeiou", rune(k[len(k)-2])):
		return k[:len(k)-1] + "ies"
	default:
		return k + "s"
	}
}
