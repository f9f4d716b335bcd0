package layers

import (
	"bufio"
	"bytes"
	"os/exec"
	"path"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/modkind/modkind"

// layers lists modkind's packages from the bottom up. A package may import packages of lower
// layers only: never one of its own layer, never one above. Packages of one layer are siblings
// that do not know each other (the two controllers; the executors and the controllers, so that
// only the composition root names a concrete executor). A trailing "/..." takes a directory's
// subpackages too.
var layers = [][]string{
	// What everything reads: the API types, fetched modules, stored state, run slots, the
	// artifact store, printing.
	{"apis/v1alpha1", "apis/crds", "module", "state", "slots", "artifact", "printable",
		"terraform/detached", "terraform/providerhost"},
	{"apis", "kind/fields", "rollout"},
	{"kind", "crd/validation"},
	// Synthesis of CRDs, and the terraform harness.
	{"crd", "terraform"},
	// Runs, the one executor interface, and what both controllers share.
	{"runs", "executor", "reconcile/kinds"},
	// Siblings: the executors and the two controllers (the Module controller, the instance
	// controllers), so that neither controller knows the other or a concrete executor.
	{"executor/job", "executor/process", "executor/runner", "reconcile/modules", "reconcile/instance"},
	// Runner pools: the job executor's Runs, executed by pods of a pool instead of Jobs.
	{"executor/pool"},
	// The composition root of the controllers: the only package that names the executors; and
	// how every mode of the binary finds its cluster (--kubeconfig, KUBECONFIG, in-cluster,
	// ~/.kube/config).
	{"reconcile", "cmd/cluster"},
	// The binary's modes, siblings: the controller (flags, manager, leader election, probes, local
	// control plane, quickstart) and the runner pod's entry.
	{"cmd/controller", "cmd/runner", "dashboard"},
	// The command line: the command table and the commands, which start either mode.
	{"cmd/cli"},
	// main.go.
	{""},
}

// apart are imports the layers would allow but that must not be, each with why.
var apart = []struct{ from, to, why string }{
	{"cmd/runner", "reconcile/...", "a runner pod executes one Run with the terraform harness (executor/runner): it never runs a controller"},
}

// free are packages outside the product's layers: test support, tools and test programs. They
// may import anything; nothing in the layers may import them.
var free = []string{"reconcile/reconciletest", "reconcile/integration", "crd/internal/crdtest",
	"test/...", "hack/...", "charts", "internal/..."}

func matches(pattern, pkg string) bool {
	if dir, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == dir || strings.HasPrefix(pkg, dir+"/")
	}
	return pkg == pattern
}

func layerOf(pkg string) (int, bool) {
	for i, l := range layers {
		for _, p := range l {
			if matches(p, pkg) {
				return i, true
			}
		}
	}
	return 0, false
}

func isFree(pkg string) bool {
	return slices.ContainsFunc(free, func(p string) bool { return matches(p, pkg) })
}

// imports lists each package of the module with the module's packages its non-test files import.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	rel := func(p string) string { return strings.TrimPrefix(strings.TrimPrefix(p, module), "/") }
	got := map[string][]string{}
	s := bufio.NewScanner(bytes.NewReader(out))
	for s.Scan() {
		f := strings.Fields(s.Text())
		pkg := rel(f[0])
		got[pkg] = nil
		for _, imp := range f[1:] {
			if imp == module || strings.HasPrefix(imp, module+"/") {
				got[pkg] = append(got[pkg], rel(imp))
			}
		}
	}
	return got
}

func name(pkg string) string {
	if pkg == "" {
		return "the root package"
	}
	return path.Clean(pkg)
}

// TestImportDirections fails for an import that goes sideways or up the layers, and for a package
// the table does not place.
func TestImportDirections(t *testing.T) {
	for pkg, imps := range imports(t) {
		if isFree(pkg) {
			continue
		}
		from, ok := layerOf(pkg)
		if !ok {
			t.Errorf("%s is in no layer: add it to the table in internal/layers/layers_test.go, below every package it imports and above every package that imports it", name(pkg))
			continue
		}
		for _, imp := range imps {
			if isFree(imp) {
				t.Errorf("%s imports %s, which is test support or a tool", name(pkg), name(imp))
				continue
			}
			to, ok := layerOf(imp)
			if !ok || to < from {
				continue // an unplaced package is reported on its own
			}
			how := "up"
			if to == from {
				how = "sideways (same layer)"
			}
			t.Errorf("%s imports %s: %s the layers (%d to %d) in internal/layers/layers_test.go", name(pkg), name(imp), how, from, to)
		}
	}
}

// TestApart fails for an import the table of apart rules out, though the layers allow it.
func TestApart(t *testing.T) {
	got := imports(t)
	for _, a := range apart {
		for pkg, imps := range got {
			if !matches(a.from, pkg) {
				continue
			}
			for _, imp := range imps {
				if matches(a.to, imp) {
					t.Errorf("%s imports %s: %s", name(pkg), name(imp), a.why)
				}
			}
		}
	}
}

// TestTableNamesRealPackages keeps the table honest: every entry names a package that exists.
func TestTableNamesRealPackages(t *testing.T) {
	got := imports(t)
	for _, l := range layers {
		for _, p := range l {
			found := false
			for pkg := range got {
				found = found || matches(p, pkg)
			}
			if !found {
				t.Errorf("the table names %s, which is no package of the module", name(p))
			}
		}
	}
}
