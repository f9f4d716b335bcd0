package crd

import (
	"github.com/zclconf/go-cty/cty"

	"github.com/modkind/modkind/crd/internal/fields"
)

// ToTerraform converts a field value of the generated kind into the value Terraform expects for
// type ty: object attributes get their Terraform names back; map keys, which are data, do not.
func ToTerraform(v any, ty cty.Type) (any, error) { return fields.ToTerraform(v, ty) }

// ToField converts a Terraform value of type ty into the shape of the generated kind's field.
func ToField(v any, ty cty.Type) (any, error) { return fields.FromTerraform(v, ty) }
