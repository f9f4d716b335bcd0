package crd

import (
	"strings"

	"github.com/modkind/modkind/crd/internal/fields"
)

// FieldName is the Kubernetes (camelCase) name of a Terraform (snake_case) name: instance_count
// becomes instanceCount. Names already in camelCase are kept.
func FieldName(terraformName string) string { return fields.Name(terraformName) }

// A CollisionError names Terraform names that would become the same field.
type CollisionError = fields.CollisionError

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
