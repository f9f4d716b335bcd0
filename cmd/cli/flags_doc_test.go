package cli

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/modkind/modkind/internal/docgen"
)

// The flags table of docs/flags.md is the controller's FlagSet as its help prints it: a flag
// added, removed or reworded without the table fails here.
func TestFlagsDoc(t *testing.T) {
	var table string
	docgen.WithoutEnvironment(func() { table = docgen.FlagsTable(ControllerFlags()) })
	current, want, err := docgen.FlagsDoc(filepath.Join("..", "..", "docs", "flags.md"), table)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(current)); diff != "" {
		t.Errorf("docs/flags.md is out of date with the controller's flags: run make docs\n-want, +got:\n%s", diff)
	}
}
