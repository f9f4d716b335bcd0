package terraform

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/terraform-exec/tfexec"
)

// updateErrors rewrites testdata/errors/<terraform|tofu>/ from what the terraform under test
// returns: `go test ./terraform/ -run TestRunErrorsAsTerraformSaysThem -update-errors`, once with
// MODKIND_TERRAFORM naming OpenTofu; then TestDistill says whether modkind still reads them.
// anyID is a terraform_data id, a random UUID, which the errors quote where they show self.id.
var anyID = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// comparable is an error's lines, sorted, its ids replaced: terraform checks objects in parallel,
// so two errors come in either order; what they say is what is compared.
func comparable(msg string) []string {
	lines := strings.Split(anyID.ReplaceAllString(msg, "<id>"), "\n")
	sort.Strings(lines)
	return lines
}

var updateErrors = flag.Bool("update-errors", false, "rewrite testdata/errors from the terraform under test")

// The errors modkind's own terraform calls return for small modules of terraform_data whose
// postconditions fail are the ones TestDistill distills (testdata/errors/<terraform|tofu>/), for
// the terraform under test (MODKIND_TERRAFORM; make test runs this with terraform and OpenTofu):
// a release that says its errors otherwise fails here, before a user reads a message Distill no
// longer makes sense of. Terraform runs as in a cluster whose CLI configuration file is missing,
// which adds its warning to every error.
func TestRunErrorsAsTerraformSaysThem(t *testing.T) {
	bin, err := Binary(os.Getenv("MODKIND_TERRAFORM"))
	if err != nil {
		t.Fatal(err)
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
		if *updateErrors {
			if werr := os.WriteFile(filepath.Join(out, file), []byte(err.Error()), 0o644); werr != nil {
				t.Fatal(werr)
			}
			return
		}
		want, rerr := os.ReadFile(filepath.Join(out, file))
		if rerr != nil {
			t.Fatal(rerr)
		}
		if diff := cmp.Diff(comparable(string(want)), comparable(err.Error())); diff != "" {
			t.Errorf("%s: %s says this error otherwise than testdata holds (-update-errors rewrites it; then check TestDistill): -want +got:\n%s", file, bin, diff)
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
