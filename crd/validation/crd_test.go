package validation_test

import (
	"github.com/modkind/modkind/crd"
	"github.com/modkind/modkind/crd/validation"
)

// Package validation's tests judge rules in the schemas package crd makes, and crd imports
// validation: they cannot import crd, this external test package, built into the same test binary,
// can. It hands them crd's functions before any test runs.
func init() { validation.UseCRD(crd.TypeSchema, crd.Synthesize, crd.Established) }
