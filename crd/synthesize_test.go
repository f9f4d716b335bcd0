package crd

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/crd/internal/crdtest"
	"github.com/modkind/modkind/module"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

func TestSynthesizeGolden(t *testing.T) {
	cases := map[string]struct {
		reason string
	}{
		"scalars":     {reason: "Scalar variables become camelCase properties; required ones are listed, defaults kept, nullable = false honoured."},
		"nested":      {reason: "Nested optional objects keep their optional(T, d) defaults, rendered with camelCase keys."},
		"collections": {reason: "Lists, sets, maps, tuples and any each get their structural schema."},
		"outputs":     {reason: "Sensitive outputs stay out of status.atProvider."},
		"defaults":    {reason: "A module with no required variable gets a forProvider that defaults to {}."},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m, err := module.Inspect(filepath.Join("testdata", "modules", name))
			if err != nil {
				t.Fatalf("Inspect: %v", err)
			}
			m.Digest = crdtest.Digest
			c, err := Synthesize("mod", v1alpha1.CRDNames{Group: "example.org", Kind: "Thing"}, m)
			if err != nil {
				t.Fatalf("\n%s\nSynthesize: %v", tc.reason, err)
			}
			assertGolden(t, name, c, tc.reason)
		})
	}
}

// assertGolden compares the YAML of c with testdata/golden/<name>.yaml, rewriting that file
// first under -update.
func assertGolden(t *testing.T, name string, c any, reason string) {
	t.Helper()
	got, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "golden", name+".yaml")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./crd/ -run %s -update to create it)", err, t.Name())
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("\n%s\nSynthesize(%s): -%s, +got:\n%s", reason, name, golden, diff)
	}
}
