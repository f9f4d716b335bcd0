package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

func TestGenerateCommand(t *testing.T) {
	var out bytes.Buffer
	err := generate([]string{"--source", filepath.Join("..", "..", "examples", "quickstart", "module"), "--group", "platform.example.org",
		"--kind", "Greeting", "--cache-dir", t.TempDir()}, &out)
	if err != nil {
		t.Fatal(err)
	}
	c := &extv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(out.Bytes(), c); err != nil {
		t.Fatalf("generate must print one CRD as YAML: %v\n%s", err, out.String())
	}
	fp := c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["forProvider"]
	if c.Name != "greetings.platform.example.org" || fp.Properties["name"].Type != "string" || fp.Properties["nameFrom"].Type != "object" ||
		len(fp.XValidations) == 0 || fp.XValidations[0].Rule != "has(self.name) || has(self.nameFrom)" {
		t.Errorf("generate printed the wrong CRD: name %s, forProvider %+v", c.Name, fp)
	}
	if _, ok := c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"].Properties["atProvider"].Properties["token"]; ok {
		t.Errorf("the sensitive output token must not be in status")
	}
}

// A variable named like a YAML boolean becomes a field that kubectl reads as true or false unless
// quoted: generate says so on stderr, naming the field and the fix. It also says which validation
// blocks the API server checks and which are left to plan time, and why.
func TestGenerateWarnsOfYAMLBooleanFields(t *testing.T) {
	dir := t.TempDir()
	tf := "variable \"on\" {\n  type = bool\n}\nvariable \"settings\" {\n  type = object({ yes = optional(string) })\n  default = {}\n}\n" +
		"variable \"name\" {\n  type = string\n  validation {\n    condition = contains([\"a\", \"b\"], var.name)\n    error_message = \"short\"\n  }\n" +
		"  validation {\n    condition = fileexists(var.name)\n    error_message = \"a file\"\n  }\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(tf), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, diag bytes.Buffer
	diagnostics = &diag
	t.Cleanup(func() { diagnostics = os.Stderr })
	if err := generate([]string{"--source", dir, "--group", "yaml.example.org", "--kind", "Switch", "--cache-dir", t.TempDir()}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"spec.forProvider.on: YAML reads the key on as", "spec.forProvider.settings.yes:", `quote it in manifests ("on": ...)`,
		"validation blocks: 1 of 2 checked at admission", "name (main.tf:", ": at plan time: fileexists(var.name)"} {
		if !strings.Contains(diag.String(), want) {
			t.Errorf("stderr must warn %q, got:\n%s", want, diag.String())
		}
	}
	if strings.Contains(out.String(), "warning") {
		t.Errorf("warnings belong on stderr, not in the CRD printed")
	}
}

func TestRenderCommand(t *testing.T) {
	inst := filepath.Join(t.TempDir(), "instance.yaml")
	const doc = `
apiVersion: lifecycle.example.org/v1alpha1
kind: Trace
metadata: {name: one, namespace: default}
spec:
  forProvider:
    dir: /tmp/x
    files: [a]
    literal: '${file("/etc/passwd")}'
    settings: {maxSize: 3}
    passwordSecretRef: {name: s, key: k}
`
	if err := os.WriteFile(inst, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := render([]string{"--source", filepath.Join("..", "..", "reconcile", "integration", "testdata", "modules", "trace"), "--cache-dir", t.TempDir(), inst}, &out); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Vars map[string]any `json:"terraform.tfvars.json"`
		Main map[string]any `json:"main.tf.json"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("render must print JSON: %v\n%s", err, out.String())
	}
	if got.Vars["literal"] != `${file("/etc/passwd")}` {
		t.Errorf("values are rendered as literals in tfvars, got %v", got.Vars["literal"])
	}
	if s, _ := got.Vars["password"].(string); !strings.Contains(s, "redacted") {
		t.Errorf("a sensitive value must be redacted, got %v", got.Vars["password"])
	}
	if settings, _ := got.Vars["settings"].(map[string]any); settings["max_size"] != float64(3) {
		t.Errorf("nested fields get their Terraform names back, got %v", got.Vars["settings"])
	}
	if _, ok := got.Main["module"]; !ok {
		t.Errorf("render must print the root module")
	}
}

func TestVersionCommand(t *testing.T) {
	var out bytes.Buffer
	if err := version(nil, &out); err != nil || !strings.HasPrefix(out.String(), "modkind ") {
		t.Errorf("version: got %q, %v", out.String(), err)
	}
}

// For a module of the bundled corpus, each block's line says what the differential test against
// terraform found of it: eks's access_entries_for_nodes blocks are decided alike on every value.
func TestGenerateSaysWhatTheDifferentialTestFound(t *testing.T) {
	var out, diag bytes.Buffer
	diagnostics = &diag
	t.Cleanup(func() { diagnostics = os.Stderr })
	src := filepath.Join("..", "..", "crd", "validation", "testdata", "public", "aws-eks-cluster")
	if err := generate([]string{"--source", src, "--group", "eks.example.org", "--kind", "Cluster", "--cache-dir", t.TempDir()}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"access_entries_for_nodes (variables.tf:109): checked at admission (differential test against terraform: exact, "} {
		if !strings.Contains(diag.String(), want) {
			t.Errorf("stderr must say %q, got:\n%s", want, diag.String())
		}
	}
}
