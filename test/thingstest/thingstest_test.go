package thingstest_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modkind/modkind/test/thingstest"
)

// binaries are the terraform and OpenTofu executables to test with; a missing tofu is a
// reported skip, a missing terraform a failure.
func binaries(t *testing.T) map[string]string {
	bins := map[string]string{"tofu": thingstest.Tofu()}
	tf, err := exec.LookPath("terraform")
	if err != nil {
		t.Fatalf("terraform is not on PATH: %v", err)
	}
	bins["terraform"] = tf
	return bins
}

func TestInstall(t *testing.T) {
	for name, bin := range binaries(t) {
		t.Run(name, func(t *testing.T) {
			if bin == "" {
				// make test builds tofu before any test runs, so CI never gets here.
				t.Fatal("no OpenTofu: run make test, or hack/tofu.sh, or set MODKIND_TOFU")
			}
			t.Parallel()
			testInstall(t, bin)
		})
	}
}

func testInstall(t *testing.T, bin string) {
	cfg := thingstest.Install(t, "1.2.0", "1.3.0", "2.0.0")
	cloud := thingstest.NewCloud(t)
	dir := t.TempDir()
	run := func(args ...string) (string, error) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+cfg, "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1", cloud.Env())
		out, err := cmd.Output()
		if ee, ok := err.(*exec.ExitError); ok {
			out = append(out, ee.Stderr...)
		}
		return string(out), err
	}
	tf := func(args ...string) string {
		t.Helper()
		out, err := run(args...)
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", bin, strings.Join(args, " "), err, out)
		}
		return out
	}
	main := strings.Replace(thingstest.RequiredProviders, `source = "`+thingstest.Source+`"`,
		`source = "`+thingstest.Source+`", version = "~> 1.2"`, 1) + `
resource "things_password" "p" {
  length = 12
}
resource "things_bucket" "b" {
  name = "b-${things_password.p.id}"
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	tf("init", "-input=false", "-no-color")
	lock, err := os.ReadFile(filepath.Join(dir, ".terraform.lock.hcl"))
	if err != nil || !strings.Contains(string(lock), `version     = "1.3.0"`) {
		t.Errorf("lock file (want version 1.3.0, the newest matching ~> 1.2): %v\n%s", err, lock)
	}

	var schemas struct {
		ProviderSchemas map[string]struct {
			ResourceSchemas map[string]struct {
				Block struct {
					Attributes map[string]struct {
						Sensitive   bool
						Description string
					}
					BlockTypes map[string]struct {
						NestingMode string `json:"nesting_mode"`
					} `json:"block_types"`
				}
			} `json:"resource_schemas"`
		} `json:"provider_schemas"`
	}
	if err := json.Unmarshal([]byte(tf("providers", "schema", "-json")), &schemas); err != nil {
		t.Fatal(err)
	}
	things, ok := schemas.ProviderSchemas["registry.terraform.io/"+thingstest.Source]
	if !ok {
		things, ok = schemas.ProviderSchemas[thingstest.Source]
	}
	if !ok {
		t.Fatalf("no %s among the provider schemas: %v", thingstest.Source, schemas.ProviderSchemas)
	}
	var types []string
	for typ := range things.ResourceSchemas {
		types = append(types, typ)
	}
	slices.Sort(types)
	if !slices.Equal(types, []string{"things_bucket", "things_password"}) {
		t.Errorf("resource types %v", types)
	}
	bucket := things.ResourceSchemas["things_bucket"].Block
	if !bucket.Attributes["access_key"].Sensitive || bucket.Attributes["name"].Description == "" ||
		bucket.BlockTypes["rule"].NestingMode != "list" || bucket.BlockTypes["versioning"].NestingMode != "single" {
		t.Errorf("things_bucket schema: %+v", bucket)
	}
	if !things.ResourceSchemas["things_password"].Block.Attributes["seed"].Sensitive {
		t.Error("things_password.seed is not sensitive")
	}

	// The cloud helpers.
	cloud.FailCreate("no capacity")
	if out, err := run("apply", "-auto-approve", "-input=false", "-no-color"); err == nil || !strings.Contains(out, "no capacity") {
		t.Errorf("apply with FailCreate: %v\n%s", err, out)
	}
	cloud.ClearFailCreate()
	tf("apply", "-auto-approve", "-input=false", "-no-color")
	passwords, buckets := cloud.Objects("things_password"), cloud.Objects("things_bucket")
	if len(passwords) != 1 || len(buckets) != 1 {
		t.Fatalf("passwords %v, buckets %v", passwords, buckets)
	}
	var id string
	for id = range passwords {
	}
	b := cloud.Object("things_bucket", "b-"+id)
	if b == nil || b["status"] != "ready" || passwords[id]["length"] != 12.0 || passwords[id]["special"] != true {
		t.Errorf("password %v, bucket %v", passwords[id], b)
	}
	cloud.Edit("things_bucket", "b-"+id, func(o map[string]any) { o["tags"] = map[string]any{"drift": "yes"} })
	tf("apply", "-auto-approve", "-input=false", "-no-color")
	if tags := cloud.Object("things_bucket", "b-"+id)["tags"]; tags != nil {
		t.Errorf("drift not corrected: tags %v", tags)
	}
	cloud.Put("things_bucket", "other", map[string]any{"name": "other"})
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(main+`resource "things_bucket" "o" { name = "other" }`), 0o644); err != nil {
		t.Fatal(err)
	}
	tf("import", "-input=false", "-no-color", "things_bucket.o", "other")
	cloud.FailDelete("locked")
	if out, err := run("destroy", "-auto-approve", "-input=false", "-no-color"); err == nil || !strings.Contains(out, "locked") {
		t.Errorf("destroy with FailDelete: %v\n%s", err, out)
	}
	cloud.ClearFailDelete()
	tf("destroy", "-auto-approve", "-input=false", "-no-color")
	if n := len(cloud.Objects("things_bucket")) + len(cloud.Objects("things_password")); n != 0 {
		t.Errorf("%d objects left after destroy", n)
	}
	if got, want := cloud.Log("things_bucket"), []string{"created b-" + id, "updated b-" + id, "imported other"}; !slices.Equal(got[:3], want) {
		t.Errorf("bucket log %v, want %v and two deletes", got, want)
	}
	if cloud.Count("things_bucket", "deleted") != 2 || cloud.Count("things_password", "created") != 1 {
		t.Errorf("logs: %v %v", cloud.Log("things_bucket"), cloud.Log("things_password"))
	}
}
