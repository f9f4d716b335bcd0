// Package crdtest holds what the tests of package crd and of its subpackages share: a
// kube-apiserver started once per test binary, terraform, the API server's own handling of field
// values (pruning, defaulting, structural schemas), and modules written on the spot. Package crd
// imports crd/validation, so their tests cannot share test files: they share this package, which
// imports neither.
package crdtest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/zclconf/go-cty/cty"

	"github.com/modkind/modkind/module"
)

// Digest stands in for the module digest, which Inspect does not compute.
const Digest = "0123456789abcdef0123456789abcdef"

// InspectSource inspects a module of one file, main.tf, holding src.
func InspectSource(t *testing.T, src string) *module.Module {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := module.Inspect(dir)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// ParseType parses a type constraint as a module writes it, with its optional attributes'
// defaults.
func ParseType(t *testing.T, expr string) (cty.Type, *typeexpr.Defaults) {
	t.Helper()
	ty, d, err := module.ParseType(expr)
	if err != nil {
		t.Fatal(err)
	}
	return ty, d
}

// VariableOf is the variable of m with the given name, the zero Variable when m has none.
func VariableOf(m *module.Module, name string) module.Variable {
	for _, v := range m.Variables {
		if v.Name == name {
			return v
		}
	}
	return module.Variable{}
}
