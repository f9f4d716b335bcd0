package detached

import (
	"os/exec"
	"strings"
	"testing"
)

// The shim starts for every apply, and exits from this package's init: whatever this package
// imports beyond the standard library would initialize in every one of them first.
func TestImportsOnlyTheStandardLibrary(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	if got := strings.Fields(string(out)); len(got) != 1 || got[0] != "github.com/modkind/modkind/terraform/detached" {
		t.Errorf("package detached imports more than the standard library: %v", got)
	}
}
