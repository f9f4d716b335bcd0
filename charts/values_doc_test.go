package charts_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/modkind/modkind/internal/docgen"
)

// TestValuesDoc keeps the chart's values table in docs/chart.md what the generator writes from
// values.yaml, so that the documented values and defaults cannot drift from the chart's.
func TestValuesDoc(t *testing.T) {
	current, want, err := docgen.ValuesDoc("modkind/values.yaml", "../docs/chart.md")
	if err != nil {
		t.Fatalf("the values table must be generated: %v", err)
	}
	if diff := cmp.Diff(string(want), string(current)); diff != "" {
		t.Errorf("docs/chart.md is out of date with charts/modkind/values.yaml: run make docs (-generated, +file):\n%s", diff)
	}
}
