package crd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	tfjson "github.com/hashicorp/terraform-json"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/crd/internal/crdtest"
	"github.com/modkind/modkind/module"
)

// The kind of one resource, from the schema the test provider reports (testdata/schemas, the
// resource_schemas of `terraform providers schema -json`).
func TestSynthesizeResourceGolden(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "schemas", "things.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schemas map[string]*tfjson.Schema
	if err := json.Unmarshal(raw, &schemas); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		reason string
	}{
		"things_bucket":   {reason: "Arguments, a list block, a single block and a nested attribute go to forProvider with their descriptions; computed attributes to atProvider; the sensitive access key nowhere."},
		"things_password": {reason: "A sensitive argument becomes a SecretRef; the sensitive result stays out of atProvider."},
	}
	for typ, tc := range cases {
		t.Run(typ, func(t *testing.T) {
			src := module.ResourceSource{Provider: "example.com/acme/things", Version: "1.2.0", Type: typ}
			m, err := module.ResourceModule(src, src.Provider, "things", schemas[typ])
			if err != nil {
				t.Fatal(err)
			}
			m.Digest = crdtest.Digest
			c, err := Synthesize("mod", v1alpha1.CRDNames{Group: "example.org", Kind: "Thing"}, m)
			if err != nil {
				t.Fatalf("\n%s\nSynthesize: %v", tc.reason, err)
			}
			assertGolden(t, "resource-"+typ, c, tc.reason)
		})
	}
}
