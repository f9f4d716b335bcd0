package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// These tests run the provider, built once by TestMain, under a real terraform (or the binary
// that MODKIND_TERRAFORM names, e.g. tofu), installed from an unpacked filesystem mirror.

const testVersion = "1.2.0"

var (
	terraformBin string // the terraform binary
	cliConfig    string // a CLI configuration that installs the provider from its mirror
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "thingsprovider-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if terraformBin = os.Getenv("MODKIND_TERRAFORM"); terraformBin == "" {
		terraformBin = "terraform"
	}
	if cliConfig, err = install(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// install builds the provider into an unpacked filesystem mirror under dir and returns the path
// of a CLI configuration that installs example.com/* from there.
func install(dir string) (string, error) {
	mirror := filepath.Join(dir, "mirror")
	platform := filepath.Join(mirror, Address, testVersion, runtime.GOOS+"_"+runtime.GOARCH)
	bin := filepath.Join(platform, "terraform-provider-things_v"+testVersion)
	build := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-o", bin,
		"-ldflags", "-X main.version="+testVersion, ".")
	build.Env = append(os.Environ(), "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	config := filepath.Join(dir, "terraform.rc")
	return config, os.WriteFile(config, fmt.Appendf(nil, `provider_installation {
  filesystem_mirror {
    path    = %q
    include = ["example.com/*/*"]
  }
  direct {
    exclude = ["example.com/*/*"]
  }
}
`, mirror), 0o644)
}

// workdir is a terraform working directory on a cloud.
type workdir struct {
	t     testing.TB
	dir   string
	cloud string
}

func newWorkdir(t testing.TB) *workdir {
	return &workdir{t: t, dir: t.TempDir(), cloud: t.TempDir()}
}

// write replaces main.tf with config, in which {{cloud}} is the cloud directory and each pair
// of replace an old string and its replacement.
func (w *workdir) write(config string, replace ...string) {
	w.t.Helper()
	config = strings.NewReplacer(append(replace, "{{cloud}}", w.cloud)...).Replace(config)
	if err := os.WriteFile(filepath.Join(w.dir, "main.tf"), []byte(config), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

func (w *workdir) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, terraformBin, args...)
	cmd.Dir = w.dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TF_") && !strings.HasPrefix(kv, "THINGS_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "TF_CLI_CONFIG_FILE="+cliConfig, "TF_IN_AUTOMATION=1",
		"CHECKPOINT_DISABLE=1", "THINGS_DIR="+w.cloud)
	return cmd
}

// tf runs terraform and fails the test unless it exits with one of codes (default 0).
func (w *workdir) tf(codes []int, args ...string) string {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := w.command(ctx, args...)
	out, err := cmd.CombinedOutput()
	code := cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		w.t.Fatalf("terraform %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	if codes == nil {
		codes = []int{0}
	}
	if !slices.Contains(codes, code) {
		w.t.Fatalf("terraform %s: exit code %d, want %v\n%s", strings.Join(args, " "), code, codes, out)
	}
	return string(out)
}

func (w *workdir) init() { w.t.Helper(); w.tf(nil, "init", "-input=false", "-no-color") }
func (w *workdir) apply() string {
	w.t.Helper()
	return w.tf(nil, "apply", "-auto-approve", "-input=false", "-no-color")
}
func (w *workdir) fails(args ...string) string {
	w.t.Helper()
	return w.tf([]int{1}, slices.Concat(args[:1], []string{"-input=false", "-no-color"}, args[1:])...)
}

// planChanges reports whether a plan has changes.
func (w *workdir) planChanges() bool {
	w.t.Helper()
	out := w.tf([]int{0, 2}, "plan", "-detailed-exitcode", "-input=false", "-no-color")
	return strings.Contains(out, "Plan:")
}

// outputs returns terraform's outputs, sensitive ones included.
func (w *workdir) outputs() map[string]any {
	w.t.Helper()
	var raw map[string]struct{ Value any }
	if err := json.Unmarshal([]byte(w.tf(nil, "output", "-json")), &raw); err != nil {
		w.t.Fatal(err)
	}
	out := map[string]any{}
	for k, v := range raw {
		out[k] = v.Value
	}
	return out
}

// object returns the cloud's object typ/id, nil when missing.
func (w *workdir) object(typ, id string) map[string]any {
	w.t.Helper()
	b, err := os.ReadFile(filepath.Join(w.cloud, typ, id+".json"))
	if os.IsNotExist(err) {
		return nil
	}
	var obj map[string]any
	if err == nil {
		err = json.Unmarshal(b, &obj)
	}
	if err != nil {
		w.t.Fatal(err)
	}
	return obj
}

func (w *workdir) ids(typ string) []string {
	w.t.Helper()
	files, _ := filepath.Glob(filepath.Join(w.cloud, typ, "*.json"))
	var ids []string
	for _, f := range files {
		ids = append(ids, strings.TrimSuffix(filepath.Base(f), ".json"))
	}
	return ids
}

func (w *workdir) editObject(typ, id string, edit func(map[string]any)) {
	w.t.Helper()
	obj := w.object(typ, id)
	if obj == nil {
		obj = map[string]any{}
	}
	edit(obj)
	b, _ := json.Marshal(obj)
	os.MkdirAll(filepath.Join(w.cloud, typ), 0o755)
	if err := os.WriteFile(filepath.Join(w.cloud, typ, id+".json"), b, 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// log returns the lines of a resource type's log.
func (w *workdir) log(typ string) []string {
	b, _ := os.ReadFile(filepath.Join(w.cloud, typ+".log"))
	return strings.FieldsFunc(string(b), func(r rune) bool { return r == '\n' })
}

func (w *workdir) wantLog(typ string, want ...string) {
	w.t.Helper()
	if got := w.log(typ); !slices.Equal(got, want) {
		w.t.Errorf("%s.log = %v, want %v", typ, got, want)
	}
}

const passwordConfig = `
terraform {
  required_providers {
    things = { source = "example.com/acme/things" }
  }
}
provider "things" {
  directory = "{{cloud}}"
}
resource "things_password" "p" {
  length  = {{length}}
  keepers = { k = "{{keeper}}" }
  seed    = "s"
}
output "id" {
  value = things_password.p.id
}
output "result" {
  value     = things_password.p.result
  sensitive = true
}
output "special" {
  value = things_password.p.special
}
`

func TestPasswordLifecycle(t *testing.T) {
	t.Parallel()
	w := newWorkdir(t)
	config := func(length int, keeper string) {
		w.write(passwordConfig, "{{length}}", fmt.Sprint(length), "{{keeper}}", keeper)
	}
	config(16, "a")
	w.init()
	w.apply()
	out := w.outputs()
	id, result := out["id"].(string), out["result"].(string)
	obj := w.object("things_password", id)
	if obj == nil || obj["result"] != result || len(result) != 16 || obj["special"] != true || out["special"] != true || obj["status"] != "ready" {
		t.Fatalf("outputs %v, cloud object %v", out, obj)
	}
	if w.planChanges() {
		t.Error("plan after apply has changes")
	}

	// length changes the result in place.
	config(20, "a")
	w.apply()
	out = w.outputs()
	result = out["result"].(string)
	if out["id"] != id || len(result) != 20 || w.object("things_password", id)["result"] != out["result"] {
		t.Fatalf("after update: outputs %v, cloud %v", out, w.object("things_password", id))
	}

	// keepers replace it.
	config(20, "b")
	w.apply()
	out = w.outputs()
	newID := out["id"].(string)
	if newID == id || w.object("things_password", id) != nil || w.object("things_password", newID) == nil {
		t.Fatalf("after replace: id %s → %s, cloud %v", id, newID, w.ids("things_password"))
	}
	if out["result"] != result { // the same seed, length and special
		t.Errorf("result %q, want %q as before", out["result"], result)
	}

	// Deleted out of band: the plan creates it again.
	os.Remove(filepath.Join(w.cloud, "things_password", newID+".json"))
	if !w.planChanges() {
		t.Error("plan does not notice the password is gone")
	}

	// Import.
	w.tf(nil, "state", "rm", "things_password.p")
	w.editObject("things_password", "cafe", func(o map[string]any) {
		o["length"], o["special"], o["keepers"], o["seed"], o["result"], o["status"] = 20, true, map[string]string{"k": "b"}, "s", "x", "ready"
	})
	if out := w.fails("import", "things_password.p", "nothere"); !strings.Contains(out, `"nothere" does not exist`) {
		t.Errorf("import of a missing password: %s", out)
	}
	w.tf(nil, "import", "-no-color", "-input=false", "things_password.p", "cafe")
	if w.planChanges() {
		t.Error("plan after import has changes")
	}

	w.tf(nil, "destroy", "-auto-approve", "-input=false", "-no-color")
	if ids := w.ids("things_password"); len(ids) != 0 {
		t.Errorf("after destroy the cloud holds %v", ids)
	}
	w.wantLog("things_password", "created "+id, "updated "+id, "deleted "+id, "created "+newID,
		"imported cafe", "deleted cafe")
}

const bucketConfig = `
terraform {
  required_providers {
    things = { source = "example.com/acme/things" }
  }
}
resource "things_bucket" "b" {
  name = "{{name}}"
  tags = { team = "{{team}}" }
  rule {
    prefix = "logs/"
    days   = 7
  }
  {{more}}
  versioning {
    enabled = true
  }
  owner = {
    name = "me"
  }
}
output "bucket" {
  value = things_bucket.b
  sensitive = true
}
`

func TestBucketLifecycle(t *testing.T) {
	t.Parallel()
	w := newWorkdir(t)
	config := func(name, team, more string) {
		w.write(bucketConfig, "{{name}}", name, "{{team}}", team, "{{more}}", more)
	}
	config("b1", "x", "")
	w.init()
	w.apply()
	b := w.outputs()["bucket"].(map[string]any)
	obj := w.object("things_bucket", "b1")
	if b["id"] != "b1" || b["arn"] != "arn:things:::b1" || b["region"] != "eu-west-1" || b["access_key"] == "" ||
		obj["status"] != "ready" || obj["access_key"] != b["access_key"] || obj["created_at"] != b["created_at"] {
		t.Fatalf("outputs %v, cloud %v", b, obj)
	}
	if _, err := time.Parse(time.RFC3339, b["created_at"].(string)); err != nil {
		t.Error(err)
	}
	if w.planChanges() {
		t.Error("plan after apply has changes")
	}

	// Update in place: tags and one more rule.
	config("b1", "y", `rule {
    prefix = "tmp/"
  }`)
	w.apply()
	obj = w.object("things_bucket", "b1")
	if rules := obj["rule"].([]any); len(rules) != 2 || obj["tags"].(map[string]any)["team"] != "y" || obj["created_at"] != b["created_at"] {
		t.Fatalf("after update: %v", obj)
	}
	if w.planChanges() {
		t.Error("plan after update has changes")
	}

	// Drift: the cloud's copy changes.
	w.editObject("things_bucket", "b1", func(o map[string]any) { o["tags"] = map[string]string{"team": "z"} })
	if !w.planChanges() {
		t.Error("plan does not notice drift")
	}
	w.apply()
	if tags := w.object("things_bucket", "b1")["tags"].(map[string]any); tags["team"] != "y" {
		t.Errorf("drift not corrected: %v", tags)
	}

	// At most 3 rules.
	config("b1", "y", strings.Repeat("rule {\n prefix = \"p\"\n }\n", 3))
	if out := w.fails("plan"); !strings.Contains(out, "at most 3") {
		t.Errorf("4 rules: %s", out)
	}

	// The name forces replacement.
	config("b2", "y", "")
	w.apply()
	if ids := w.ids("things_bucket"); !slices.Equal(ids, []string{"b2"}) {
		t.Fatalf("after replace the cloud holds %v", ids)
	}

	// Failures on demand.
	os.WriteFile(filepath.Join(w.cloud, "fail-create"), []byte("quota exceeded\n"), 0o644)
	config("b3", "y", "")
	if out := w.fails("apply", "-auto-approve"); !strings.Contains(out, "quota exceeded") {
		t.Errorf("apply with fail-create: %s", out)
	}
	os.Remove(filepath.Join(w.cloud, "fail-create"))
	config("b2", "y", "")
	if out := w.tf(nil, "state", "list"); out != "" { // b2 was destroyed before the failed create
		t.Fatalf("state after the failed create: %s", out)
	}

	// Import of a bucket made out of band.
	w.editObject("things_bucket", "b2", func(o map[string]any) {
		o["name"], o["tags"], o["rule"] = "b2", map[string]string{"team": "y"}, []map[string]any{{"prefix": "logs/", "days": 7}}
	})
	w.tf(nil, "import", "-no-color", "-input=false", "things_bucket.b", "b2")
	if !w.planChanges() { // versioning, owner, region and the rest are missing
		t.Error("plan after import of an incomplete bucket has no changes")
	}
	w.apply()
	obj = w.object("things_bucket", "b2")
	if obj["region"] != "eu-west-1" || obj["arn"] != "arn:things:::b2" || obj["owner"] == nil {
		t.Errorf("imported bucket after apply: %v", obj)
	}
	if w.planChanges() {
		t.Error("plan after apply has changes")
	}

	os.WriteFile(filepath.Join(w.cloud, "fail-delete"), []byte("bucket not empty"), 0o644)
	if out := w.fails("destroy", "-auto-approve"); !strings.Contains(out, "bucket not empty") {
		t.Errorf("destroy with fail-delete: %s", out)
	}
	os.Remove(filepath.Join(w.cloud, "fail-delete"))
	w.tf(nil, "destroy", "-auto-approve", "-input=false", "-no-color")
	if ids := w.ids("things_bucket"); len(ids) != 0 {
		t.Errorf("after destroy the cloud holds %v", ids)
	}
	w.wantLog("things_bucket", "created b1", "updated b1", "updated b1", "deleted b1", "created b2",
		"deleted b2", "imported b2", "updated b2", "deleted b2")
}

// SIGINT during a slow create: terraform stops the provider, whose create returns the object
// with an error; terraform records it as tainted and exits. The next apply replaces it.
func TestSlowCreateInterrupted(t *testing.T) {
	t.Parallel()
	w := newWorkdir(t)
	const config = `
terraform {
  required_providers {
    things = { source = "example.com/acme/things" }
  }
}
resource "things_bucket" "slow" {
  name           = "slow"
  create_seconds = {{seconds}}
}
`
	w.write(config, "{{seconds}}", "30")
	w.init()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := w.command(ctx, "apply", "-auto-approve", "-input=false", "-no-color")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	for w.object("things_bucket", "slow")["status"] != "creating" {
		if time.Since(begin) > 30*time.Second {
			t.Fatalf("no bucket being created\n%s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	interrupted := time.Now()
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	took := time.Since(interrupted)
	t.Logf("terraform exited %v after SIGINT in %v:\n%s", err, took, out.String())
	if cmd.ProcessState.ExitCode() != 1 || took > 10*time.Second {
		t.Errorf("terraform exited with %v %v after SIGINT", err, took)
	}
	if !strings.Contains(out.String(), "Bucket creation interrupted") {
		t.Error("terraform did not report the provider's error")
	}
	var state struct {
		Resources []struct {
			Type      string
			Instances []struct {
				Status     string
				Attributes map[string]any
			}
		}
	}
	b, err := os.ReadFile(filepath.Join(w.dir, "terraform.tfstate"))
	if err == nil {
		err = json.Unmarshal(b, &state)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(state.Resources) != 1 || len(state.Resources[0].Instances) != 1 ||
		state.Resources[0].Instances[0].Status != "tainted" || state.Resources[0].Instances[0].Attributes["id"] != "slow" {
		t.Fatalf("state:\n%s", b)
	}
	if obj := w.object("things_bucket", "slow"); obj["status"] != "creating" {
		t.Errorf("cloud object %v", obj)
	}

	// The next apply replaces the tainted bucket.
	w.write(config, "{{seconds}}", "0")
	w.apply()
	if obj := w.object("things_bucket", "slow"); obj["status"] != "ready" {
		t.Errorf("cloud object after the next apply: %v", obj)
	}
	w.wantLog("things_bucket", "created slow", "deleted slow", "created slow")
}

// Several terraform runs, each with its own provider processes, on one cloud at once.
func TestConcurrentApplies(t *testing.T) {
	t.Parallel()
	cloud := t.TempDir()
	const runs = 4
	config := `
terraform {
  required_providers {
    things = { source = "example.com/acme/things" }
  }
}
resource "things_password" "p" {
  length = 8
}
resource "things_bucket" "b" {
  count = 3
  name  = "{{run}}-${count.index}"
}
`
	t.Run("applies", func(t *testing.T) {
		for i := range runs {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				t.Parallel()
				w := newWorkdir(t)
				w.cloud = cloud
				w.write(config, "{{run}}", fmt.Sprint("r", i))
				w.init()
				w.apply()
			})
		}
	})
	w := newWorkdir(t)
	w.cloud = cloud
	if ids := w.ids("things_bucket"); len(ids) != 3*runs {
		t.Errorf("buckets %v", ids)
	}
	if ids := w.ids("things_password"); len(ids) != runs {
		t.Errorf("passwords %v", ids)
	}
	if l := w.log("things_bucket"); len(l) != 3*runs {
		t.Errorf("bucket log %v", l)
	}

	// A taken name.
	w.write(config, "{{run}}", "r0")
	w.init()
	if out := w.fails("apply", "-auto-approve"); !strings.Contains(out, `"r0-0": already exists`) {
		t.Errorf("apply of a taken name: %s", out)
	}
}
