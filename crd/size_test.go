package crd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/crd/internal/crdtest"
	"github.com/modkind/modkind/module"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// moduleShape says how many variables of each sort a synthetic module has. The sorts and their
// mix follow large public modules (terraform-google-kubernetes-engine's 145 variables: 55 bool,
// 47 string, 11 list(string), 8 map(string), 10 objects, 5 list(object), 5 map(map(string)), 4
// number, 3 map(list(string)), 9 validation blocks, descriptions of 125 characters on average).
type moduleShape struct {
	bools, strings, stringLists, stringMaps, objects, objectLists, mapsOfMaps, numbers, validated int
}

// gkeShaped is a module of the size and mix of GKE's; fiveHundred is one of 500 variables.
var (
	gkeShaped   = moduleShape{bools: 55, strings: 35, stringLists: 11, stringMaps: 8, objects: 10, objectLists: 5, mapsOfMaps: 8, numbers: 4, validated: 9}
	fiveHundred = moduleShape{bools: 150, strings: 150, stringLists: 40, stringMaps: 30, objects: 40, objectLists: 20, mapsOfMaps: 20, numbers: 20, validated: 30}
)

func (s moduleShape) total() int {
	return s.bools + s.strings + s.stringLists + s.stringMaps + s.objects + s.objectLists + s.mapsOfMaps + s.numbers + s.validated
}

// write writes the module into a new directory and returns it.
func (s moduleShape) write(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	desc := func(sort string, i int) string {
		return fmt.Sprintf("The %s setting number %d of the cluster: what it changes, when it applies and which value turns it off (optional).", strings.ReplaceAll(sort, "_", " "), i)
	}
	// Each sort: its count, the variable's name prefix, and its body (%[1]s is the variable's name).
	sorts := []struct {
		count      int
		name, body string
	}{
		{s.bools, "enable", "  type    = bool\n  default = false\n"},
		{s.strings, "name", "  type    = string\n  default = \"\"\n"},
		{s.stringLists, "zones", "  type    = list(string)\n  default = []\n"},
		{s.stringMaps, "labels", "  type    = map(string)\n  default = {}\n"},
		{s.objects, "autoscaling", `  type = object({
    enabled       = bool
    min_cpu_cores = optional(number, 0)
    max_cpu_cores = optional(number, 0)
    mode          = optional(string, "BALANCED")
    gpu_resources = optional(list(object({ resource_type = string, minimum = number, maximum = number })), [])
  })
  default = { enabled = false }
`},
		{s.objectLists, "exclusions", "  type    = list(object({ name = string, start_time = string, end_time = string, scope = optional(string) }))\n  default = []\n"},
		{s.mapsOfMaps, "pool_labels", "  type    = map(map(string))\n  default = { all = {} }\n"},
		{s.numbers, "priority", "  type    = number\n  default = 1000\n"},
		{s.validated, "channel", `  type    = string
  default = "REGULAR"
  validation {
    condition     = contains(["UNSPECIFIED", "RAPID", "REGULAR", "STABLE"], var.%[1]s)
    error_message = "%[1]s must be UNSPECIFIED, RAPID, REGULAR or STABLE."
  }
`},
	}
	for _, sort := range sorts {
		for i := range sort.count {
			name := fmt.Sprintf("%s_%03d", sort.name, i)
			body := strings.ReplaceAll(sort.body, "%[1]s", name)
			fmt.Fprintf(&b, "variable %q {\n  description = %q\n%s}\n\n", name, desc(sort.name, i), body)
		}
	}
	b.WriteString("output \"id\" {\n  value = var.name_000\n}\n")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func (s moduleShape) inspect(t *testing.T) *module.Module {
	t.Helper()
	m, err := module.Inspect(s.write(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Variables) != s.total() {
		t.Fatalf("the synthetic module has %d variables, want %d", len(m.Variables), s.total())
	}
	return m
}

func jsonSize(t *testing.T, v any) int {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return len(raw)
}

// TestCRDSizes checks what large modules cost in CRD bytes, as JSON (as the API server stores
// them; etcd takes 1.5 MiB by default, modkind installs up to MaxBytes) and as YAML (as kubectl
// prints them).
func TestCRDSizes(t *testing.T) {
	cases := map[string]struct {
		reason               string
		shape                moduleShape
		jsonUnder, yamlUnder int
	}{
		"GKESized": {reason: "A module of GKE's 145 variables gives a CRD under 400 KB as kubectl prints it (849 KB before).",
			shape: gkeShaped, jsonUnder: 200_000, yamlUnder: 400_000},
		"FiveHundred": {reason: "A module of 500 variables is installed with room to spare: well under a MiB (etcd takes 1.5).",
			shape: fiveHundred, jsonUnder: 600_000, yamlUnder: 1_400_000},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m := tc.shape.inspect(t)
			c, err := Synthesize("sized", v1alpha1.CRDNames{Group: "sized.example.org", Kind: "Sized"}, m)
			if err != nil {
				t.Fatalf("\n%s\nSynthesize: %v", tc.reason, err)
			}
			j := jsonSize(t, c)
			y, err := yaml.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d variables: CRD of %d bytes as JSON (%d per variable), %d as YAML", len(m.Variables), j, j/len(m.Variables), len(y))
			if j >= tc.jsonUnder || len(y) >= tc.yamlUnder {
				t.Errorf("\n%s\nCRD of %d bytes as JSON, %d as YAML; want under %d and %d", tc.reason, j, len(y), tc.jsonUnder, tc.yamlUnder)
			}
		})
	}
}

func TestCRDTooLarge(t *testing.T) {
	shape := moduleShape{strings: 1500, objects: 1}
	_, err := Synthesize("huge", v1alpha1.CRDNames{Group: "huge.example.org", Kind: "Huge"}, shape.inspect(t))
	var tooLarge *TooLargeError
	if !errors.As(err, &tooLarge) {
		t.Fatalf("\nA module whose CRD would pass MaxBytes should be refused with a TooLargeError.\nSynthesize: %v", err)
	}
	if tooLarge.Bytes <= MaxBytes || len(tooLarge.Largest) != 3 || tooLarge.Largest[0].Field != "autoscaling000" {
		t.Errorf("\nThe error should give the CRD's size and the three heaviest fields, the object first.\ngot %+v", tooLarge)
	}
	for _, want := range []string{"more than the 1024 KiB modkind installs", "nothing was installed", "autoscaling000 (", "fewer variables"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("\nThe message should say why and what to do: %q missing.\n%v", want, err)
		}
	}
}

// TestReferencesEvolveWithoutBreaks checks that a kind installed with the wordier references of
// earlier releases takes the smaller ones as a compatible change: the same fields, required the
// same way, checked by the same rules.
func TestReferencesEvolveWithoutBreaks(t *testing.T) {
	raw, err := os.ReadFile("testdata/evolution/scalars-wordy-refs.yaml")
	if err != nil {
		t.Fatal(err)
	}
	installed := &extv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(raw, installed); err != nil {
		t.Fatal(err)
	}
	m, err := module.Inspect("testdata/modules/scalars")
	if err != nil {
		t.Fatal(err)
	}
	wanted, err := Synthesize("scalars", v1alpha1.CRDNames{Group: "scalars.example.org", Kind: "Scalars"}, m)
	if err != nil {
		t.Fatal(err)
	}
	if breaks := Breaks(installed, wanted); len(breaks) > 0 {
		t.Errorf("\nSmaller references should break no instance.\nBreaks: %v", breaks)
	}
	if old, cur := jsonSize(t, installed), jsonSize(t, wanted); cur >= old {
		t.Errorf("\nThe references should have shrunk: %d bytes before, %d now", old, cur)
	}
}

// TestFiveHundredVariablesAPIServer installs the CRD of a module of 500 variables and checks that
// the API server establishes it and checks its instances: values, references and rules.
func TestFiveHundredVariablesAPIServer(t *testing.T) {
	cl := crdtest.APIServer(t)
	ctx := context.Background()
	m := fiveHundred.inspect(t)
	c, err := Synthesize("five-hundred", v1alpha1.CRDNames{Group: "fivehundred.example.org", Kind: "Wide"}, m)
	if err != nil {
		t.Fatal(err)
	}
	if err := installCRD(ctx, cl, c); err != nil {
		t.Fatalf("\nThe API server should establish the CRD of a module of 500 variables (%d bytes).\n%v", jsonSize(t, c), err)
	}
	cases := map[string]struct {
		reason string
		field  string
		value  string
		strict bool
		err    string
	}{
		"Value":      {reason: "A value of the right type is accepted.", field: "autoscaling039", value: `{"enabled": true, "maxCpuCores": 8}`},
		"Reference":  {reason: "A reference is accepted in place of a value.", field: "name149From", value: `{"configMapKeyRef": {"name": "settings", "key": "name"}}`},
		"Rule":       {reason: "A validation block is checked at admission.", field: "channel029", value: `"NIGHTLY"`, err: "channel_029 must be UNSPECIFIED, RAPID, REGULAR or STABLE."},
		"TwoSources": {reason: "A reference names one source.", field: "zones039From", value: `{"configMapKeyRef": {"name": "a", "key": "b"}, "secretKeyRef": {"name": "a", "key": "b"}}`, err: "spec.forProvider.zones039From: Too many: 2: must have at most 1 item"},
		"NoSource":   {reason: "A reference names a source.", field: "zones039From", value: `{}`, err: "spec.forProvider.zones039From: Invalid value: 0: spec.forProvider.zones039From in body should have at least 1 properties"},
		"OtherNamespace": {reason: "A reference has no namespace: kubectl's strict field validation refuses one.", strict: true, field: "enable149From",
			value: `{"instanceOutput": {"apiVersion": "a.example.org/v1", "kind": "A", "name": "a", "output": "x", "namespace": "team-b"}}`,
			err:   `unknown field "spec.forProvider.enable149From.instanceOutput.namespace"`},
		"EmptyName": {reason: "A reference's fields are not empty.", field: "priority019From", value: `{"secretKeyRef": {"name": "", "key": "b"}}`, err: "should be at least 1 chars long"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := createWide(ctx, cl, c, tc.field, tc.value, tc.strict)
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("\n%s\nCreate: %v", tc.reason, err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("\n%s\nCreate: %v, want an error with %q", tc.reason, err, tc.err)
			}
		})
	}
	// A client that does not ask for strict validation has the namespace dropped, with a warning:
	// the reference stays in the instance's namespace.
	got, err := createWide(ctx, cl, c, "enable149From", `{"instanceOutput": {"apiVersion": "a.example.org/v1", "kind": "A", "name": "a", "output": "x", "namespace": "team-b"}}`, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(got, "enable149From", "instanceOutput", "namespace"); found {
		t.Errorf("\nA namespace in a reference should never be stored.\nforProvider.enable149From: %v", got["enable149From"])
	}
}

// createWide writes (dry run) an instance of c whose forProvider holds field set to the JSON value,
// and returns the forProvider the API server would store.
func createWide(ctx context.Context, cl client.Client, c *extv1.CustomResourceDefinition, field, value string, strict bool) (map[string]any, error) {
	var v any
	if err := json.Unmarshal([]byte(value), &v); err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": c.Spec.Group + "/" + c.Spec.Versions[0].Name, "kind": c.Spec.Names.Kind,
		"metadata": map[string]any{"name": "case", "namespace": "default"},
		"spec":     map[string]any{"forProvider": map[string]any{field: v}},
	}}
	opts := []client.CreateOption{client.DryRunAll}
	if strict {
		opts = append(opts, client.FieldValidation("Strict"))
	}
	if err := cl.Create(ctx, u, opts...); err != nil {
		return nil, err
	}
	fp, _, err := unstructured.NestedMap(u.Object, "spec", "forProvider")
	return fp, err
}
