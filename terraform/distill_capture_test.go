package terraform

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-exec/tfexec"
)

// TestCaptureRunErrors records, with MODKIND_CAPTURE_ERRORS=<binary> set (terraform 1.11 or
// OpenTofu 1.10), the errors modkind's own terraform calls return for small modules of
// terraform_data whose postconditions fail, into testdata/errors/<terraform|tofu>/: the inputs
// of TestDistill. Terraform runs as in a cluster whose CLI configuration file is missing, which
// adds its warning to every error.
//
//	MODKIND_CAPTURE_ERRORS=/usr/local/bin/terraform go test ./terraform/ -run TestCaptureRunErrors
//	MODKIND_CAPTURE_ERRORS=$HOME/.cache/modkind/tofu/1.10.7/tofu go test ./terraform/ -run TestCaptureRunErrors
func TestCaptureRunErrors(t *testing.T) {
	bin := os.Getenv("MODKIND_CAPTURE_ERRORS")
	if bin == "" {
		t.Skip("set MODKIND_CAPTURE_ERRORS to a terraform or tofu binary to record its errors")
	}
	name := "terraform"
	if strings.Contains(filepath.Base(bin), "tofu") {
		name = "tofu"
	}
	out := filepath.Join("testdata", "errors", name)
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TF_CLI_CONFIG_FILE", "/nonexistent/terraform.rc")
	ctx := context.Background()
	// postcondition fails at apply (the id is unknown when planning) or at plan (input known).
	const module = `
variable "input" { type = string }
variable "second" {
  type    = bool
  default = false
}
resource "terraform_data" "checked" {
  input = var.input
  lifecycle {
    postcondition {
      condition     = self.id == "never" || self.input == "ok"
      error_message = "The input must be ok, got ${self.input}."
    }
  }
}
resource "terraform_data" "also" {
  count = var.second ? 1 : 0
  input = var.input
  lifecycle {
    postcondition {
      condition     = self.input == "ok"
      error_message = "The second object's input must be ok too."
    }
  }
}
output "echo" { value = terraform_data.checked.output }
`
	newSession := func(t *testing.T, main string) *session {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(main), 0o600); err != nil {
			t.Fatal(err)
		}
		tf, err := tfexec.NewTerraform(dir, bin)
		if err != nil {
			t.Fatal(err)
		}
		if err := tf.Init(ctx); err != nil {
			t.Fatal(err)
		}
		return &session{Terraform: tf, changing: tf}
	}
	save := func(t *testing.T, file string, err error) {
		if err == nil {
			t.Fatalf("%s: want an error, got none", file)
		}
		if werr := os.WriteFile(filepath.Join(out, file), []byte(err.Error()), 0o644); werr != nil {
			t.Fatal(werr)
		}
	}
	vars := func(input string, second bool) []string {
		v := []string{"input=" + input}
		if second {
			v = append(v, "second=true")
		}
		return v
	}
	t.Run("FreshApply", func(t *testing.T) {
		// applyFresh: one apply -json of a module that tracks nothing; the check fails at apply.
		s := newSession(t, module)
		var opts []tfexec.ApplyOption
		for _, v := range vars("bad", false) {
			opts = append(opts, tfexec.Var(v))
		}
		_, err := s.applyJSON(ctx, opts...)
		save(t, "apply-json-postcondition.txt", err)
		// The retry: the object is in the state now, and its check fails when planning.
		var popts []tfexec.PlanOption
		for _, v := range vars("bad", false) {
			popts = append(popts, tfexec.Var(v))
		}
		_, _, err = s.planJSON(ctx, popts...)
		save(t, "plan-json-postcondition.txt", err)
		// Two objects fail: two error blocks.
		popts = append(popts, tfexec.Var("second=true"))
		_, _, err = s.planJSON(ctx, popts...)
		save(t, "plan-json-two-errors.txt", err)
		// A saved plan applied without -json, as the saved-plan path does: terraform prints the
		// errors in boxes.
		err = s.Apply(ctx, tfexec.Var("input=bad"), tfexec.Var("second=true"), tfexec.Refresh(true))
		save(t, "apply-postcondition.txt", err)
	})
	t.Run("Invalid", func(t *testing.T) {
		// A module terraform refuses before planning anything.
		s := newSession(t, `resource "terraform_data" "x" { input = var.missing }`)
		_, _, err := s.planJSON(ctx)
		save(t, "plan-json-undeclared.txt", err)
	})
}
