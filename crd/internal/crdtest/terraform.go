package crdtest

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// Terraform finds terraform (or OpenTofu) as modkind does: MODKIND_TERRAFORM, then PATH.
// Like a missing API server, a missing terraform fails the test rather than skipping it.
func Terraform(t *testing.T) string {
	t.Helper()
	for _, name := range []string{os.Getenv("MODKIND_TERRAFORM"), "terraform", "tofu"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("these tests compare modkind with Terraform: put terraform or tofu on PATH, or name it in MODKIND_TERRAFORM")
	return ""
}

// Plan plans the module in dir as a root module with the given variables and returns the
// errors it reports, by the variable they are about ("" for others). A module without providers
// needs no terraform init.
func Plan(t *testing.T, tf, dir string, values map[string]json.RawMessage) map[string][]string {
	t.Helper()
	work := t.TempDir()
	files, err := filepath.Glob(filepath.Join(dir, "*.tf*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(work, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	vars, err := json.Marshal(values)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "terraform.tfvars.json"), vars, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(tf, "plan", "-json", "-input=false", "-lock=false", "-refresh=false", "-no-color")
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()
	errs := map[string][]string{}
	for _, line := range bytes.Split(out.Bytes(), []byte("\n")) {
		var msg struct {
			Type       string `json:"type"`
			Diagnostic struct {
				Severity string `json:"severity"`
				Summary  string `json:"summary"`
				Detail   string `json:"detail"`
				Range    struct {
					Filename string `json:"filename"`
					Start    struct {
						Line int `json:"line"`
					} `json:"start"`
				} `json:"range"`
				Snippet struct {
					Values []struct {
						Traversal string `json:"traversal"`
					} `json:"values"`
				} `json:"snippet"`
			} `json:"diagnostic"`
		}
		if json.Unmarshal(line, &msg) != nil || msg.Type != "diagnostic" || msg.Diagnostic.Severity != "error" {
			continue
		}
		about := ""
		for _, v := range msg.Diagnostic.Snippet.Values {
			if n, ok := strings.CutPrefix(v.Traversal, "var."); ok {
				// var.x.y is about x.
				about = strings.FieldsFunc(n, func(r rune) bool { return r == '.' || r == '[' })[0]
			}
		}
		if about == "" {
			// An error evaluating a condition (a null where a value is needed) names no value:
			// the variable is the one declared around it.
			about = declaredAt(t, filepath.Join(work, msg.Diagnostic.Range.Filename), msg.Diagnostic.Range.Start.Line)
		}
		errs[about] = append(errs[about], strings.Join(strings.Fields(msg.Diagnostic.Summary+": "+msg.Diagnostic.Detail), " "))
	}
	if runErr != nil && len(errs) == 0 {
		t.Fatalf("terraform plan in %s: %v\n%s", work, runErr, out.String())
	}
	return errs
}

// declaredAt is the name of the variable whose declaration in file spans line, "" if none does.
func declaredAt(t *testing.T, file string, line int) string {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil || line == 0 {
		return ""
	}
	f, diags := hclsyntax.ParseConfig(src, file, hcl.InitialPos)
	if diags.HasErrors() {
		return ""
	}
	for _, b := range f.Body.(*hclsyntax.Body).Blocks {
		if b.Type == "variable" && len(b.Labels) == 1 && b.Range().Start.Line <= line && line <= b.Range().End.Line {
			return b.Labels[0]
		}
	}
	return ""
}
