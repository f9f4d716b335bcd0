package crd

import (
	"github.com/modkind/modkind/crd/validation"
	"github.com/modkind/modkind/module"
)

// What package validation makes of a module's validation blocks, under the names callers of this
// package know it by. ForProviderSchema puts the translations into the schema.

// A ValidationReport says, for each validation block of a module, what the API server checks of it.
type ValidationReport = validation.Report

// Validations reports what becomes of the validation blocks of m's variables in the CRD that
// Synthesize makes of it.
func Validations(m *module.Module) ValidationReport { return validation.NewReport(m) }

// Translation says what became of one validation block.
type Translation = validation.Translation

// An Outcome says how much of a validation block the API server checks when an instance is
// written; Terraform checks all of it at plan time in any case.
type Outcome = validation.Outcome

// The outcomes of a validation block; see package validation.
const (
	Enforced = validation.Enforced
	Partly   = validation.Partly
	Implied  = validation.Implied
	PlanTime = validation.PlanTime
)
