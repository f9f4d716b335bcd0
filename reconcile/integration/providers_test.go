package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/module"
	"github.com/modkind/modkind/state"
	"github.com/modkind/modkind/terraform"
	"github.com/modkind/modkind/test/thingstest"
)

// providerStarts installs the things provider behind a wrapper that records each start, with its
// pid, and returns the CLI configuration that installs it and a func reading the recorded pids.
func providerStarts(t *testing.T) (cliConfig string, starts func() []string) {
	t.Helper()
	log := filepath.Join(t.TempDir(), "starts")
	wrapper := filepath.Join(t.TempDir(), "terraform-provider-things")
	script := fmt.Sprintf("#!/bin/sh\necho $$ >> %q\nexec %q \"$@\"\n", log, thingstest.Binary(t))
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return packedMirrorOf(t, wrapper), func() []string {
		raw, err := os.ReadFile(log)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return strings.Fields(string(raw))
	}
}

// running is the pids that still run.
func running(pids []string) []string {
	var alive []string
	for _, pid := range pids {
		if _, err := os.Stat(filepath.Join("/proc", pid)); err == nil {
			if p, _ := strconv.Atoi(pid); p > 0 {
				alive = append(alive, pid)
			}
		}
	}
	return alive
}

const bucketModule = `{"terraform":{"required_providers":{"things":{"source":%q}}},
"variable":{"tag":{"type":"string"}},
"resource":{"things_bucket":{"one":{"name":%q,"tags":{"t":"${var.tag}"}}}}}`

// With a provider pool, runs of different instances with the same provider configuration and
// credentials attach to one provider process, which outlives them; runs with other credentials
// get a process of their own and their objects land where their credentials say; a process that
// served its runs is replaced, and all of them stop with the pool.
func TestSharedProviders(t *testing.T) {
	bin, err := terraform.Binary(os.Getenv("MODKIND_TERRAFORM"))
	if err != nil {
		t.Fatal(err)
	}
	cliConfig, starts := providerStarts(t)
	cloudA, cloudB := thingstest.NewCloud(t), thingstest.NewCloud(t)
	root := t.TempDir()
	runner := terraform.NewHarness(bin, &state.Store{Client: ground.client}, &state.Plans{Client: ground.client}, 4)
	runner.PluginCache = filepath.Join(root, "plugins")
	runner.Env = map[string]string{"TF_CLI_CONFIG_FILE": cliConfig}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pool := terraform.NewProviderPool(exe)
	pool.MaxRuns = 6
	runner.Providers = pool
	ns := newNamespace(t)
	run := func(name, tag string, cloud *thingstest.Cloud) *terraform.Workspace {
		return &terraform.Workspace{
			Dir:      filepath.Join(root, "work", name),
			Root:     &terraform.RootModule{Main: []byte(fmt.Sprintf(bucketModule, thingstest.Source, name)), Vars: []byte(fmt.Sprintf(`{"tag":%q}`, tag))},
			Setup:    &terraform.ProviderSetup{Env: map[string]string{"THINGS_DIR": cloud.Dir}},
			InitKey:  name,
			Inputs:   tag,
			State:    kind.StateRef("Bucket.shared.example.org", ns, name),
			Redactor: terraform.NewRedactor(),
		}
	}
	stored := map[string]*state.Stored{}
	var mu sync.Mutex
	applyAll := func(runs ...*terraform.Workspace) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make([]error, len(runs))
		for i, r := range runs {
			wg.Go(func() {
				mu.Lock()
				base := stored[r.State.Name]
				mu.Unlock()
				saved, _, err := runner.Apply(context.Background(), r, base)
				errs[i] = err
				mu.Lock()
				stored[r.State.Name] = saved
				mu.Unlock()
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("applying %s: %v", runs[i].State.Name, err)
			}
		}
	}

	// Three instances created at once: init starts no provider; every apply attaches to a single
	// shared process.
	applyAll(run("a1", "x", cloudA), run("a2", "x", cloudA), run("a3", "x", cloudA))
	if got := len(starts()); got != 1 {
		t.Errorf("three instances with one configuration: want one shared provider process, started %d", got)
	}
	if n := len(cloudA.Objects("things_bucket")); n != 3 {
		t.Errorf("want 3 buckets in the cloud the credentials name, got %d", n)
	}
	if pool.Processes() != 1 {
		t.Errorf("the pool keeps %d processes, want 1", pool.Processes())
	}

	// An update of one instance and a create with other credentials, at once: the create gets a
	// process of its own, and each object lands in its own cloud.
	applyAll(run("a1", "y", cloudA), run("b1", "x", cloudB))
	if got := len(starts()); got != 2 {
		t.Errorf("two configurations: want two shared provider processes, started %d", got)
	}
	if tags := fmt.Sprint(cloudA.Object("things_bucket", "a1")["tags"]); !strings.Contains(tags, "t:y") {
		t.Errorf("the update was not applied: tags %s", tags)
	}
	if got := cloudB.Objects("things_bucket"); len(got) != 1 || got["b1"] == nil {
		t.Errorf("the bucket made with cloud B's credentials must be in cloud B alone: %v", got)
	}
	if _, ok := cloudA.Objects("things_bucket")["b1"]; ok {
		t.Error("the bucket made with cloud B's credentials landed in cloud A")
	}

	// Cloud A's process has served 4 runs; two more reach MaxRuns (6), and the next run starts a
	// new process while the old one ends.
	applyAll(run("a2", "y", cloudA))
	applyAll(run("a3", "y", cloudA))
	before := starts()
	applyAll(run("a2", "z", cloudA))
	after := starts()
	if got := len(after) - len(before); got != 1 {
		t.Errorf("a process that served MaxRuns runs must be replaced: started %d", got)
	}
	eventually(t, "the replaced provider process to end", func(context.Context) (bool, error) {
		return !slices.Contains(running(before), before[0]), nil
	})

	pool.Close()
	eventually(t, "every provider process to end with the pool", func(context.Context) (bool, error) {
		return len(running(starts())) == 0, nil
	})
}

// A tenant can write its state Secret, and terraform init installs every provider a state names:
// a state naming a provider the module does not require installs nothing and runs nothing; the
// plan fails naming the provider.
func TestStateCannotChooseProviders(t *testing.T) {
	bin, err := terraform.Binary(os.Getenv("MODKIND_TERRAFORM"))
	if err != nil {
		t.Fatal(err)
	}
	cliConfig, starts := providerStarts(t)
	root := t.TempDir()
	runner := terraform.NewHarness(bin, &state.Store{Client: ground.client}, &state.Plans{Client: ground.client}, 1)
	runner.PluginCache = filepath.Join(root, "plugins")
	// The controller's provider installation could install the things provider.
	runner.Env = map[string]string{"TF_CLI_CONFIG_FILE": cliConfig}
	ns := newNamespace(t)
	ref := kind.StateRef("Data.shared.example.org", ns, "victim")
	forged, err := state.Parse([]byte(fmt.Sprintf(`{"version":4,"terraform_version":"1.11.4","serial":3,"lineage":"forged","outputs":{},
"resources":[{"mode":"managed","type":"things_bucket","name":"x","provider":"provider[\"%s\"]",
"instances":[{"schema_version":0,"attributes":{"id":"x","name":"x"}}]}]}`, thingstest.Source)))
	if err != nil {
		t.Fatal(err)
	}
	stored, err := runner.States.PutFrom(context.Background(), ref, nil, forged, "")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "work")
	_, _, err = runner.Apply(context.Background(), &terraform.Workspace{
		Dir:      dir,
		Root:     &terraform.RootModule{Main: []byte(`{"resource":{"terraform_data":{"a":{"input":"x"}}}}`), Vars: []byte(`{}`)},
		Setup:    &terraform.ProviderSetup{},
		InitKey:  "k",
		Inputs:   "i",
		State:    ref,
		Redactor: terraform.NewRedactor(),
	}, stored)
	if err == nil || !strings.Contains(err.Error(), "things") {
		t.Errorf("a state naming a provider the module does not require must fail the run naming it, got %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".terraform", "providers", "example.com")); !os.IsNotExist(err) {
		t.Errorf("the provider the state names was installed: %v", err)
	}
	if got := starts(); len(got) != 0 {
		t.Errorf("the provider the state names was started %d times", len(got))
	}
	after, err := runner.States.Get(context.Background(), ref)
	if err != nil || after == nil || after.Lineage != "forged" || after.Serial != 3 {
		t.Errorf("the refused run must leave the state as it was: %+v, %v", after, err)
	}
}

// greetingModule leaves the things provider to the root module (the ProviderConfig) when own is
// empty, and reads a file of its own, relative to path.module, through the provider process.
const greetingModule = `terraform {
  required_providers {
    things = { source = %q }
  }
}
%s
variable "name" {
  type = string
}

data "things_file" "greeting" {
  path = "${path.module}/greeting.txt"
}

resource "things_bucket" "one" {
  name = var.name
  tags = { greeting = data.things_file.greeting.content }
}
`

// The instances of a module kind whose module leaves its provider to the ProviderConfig share
// one provider process per namespace and configuration, which reads the module's files as each
// run would; a second namespace gets a process of its own; a module configuring the provider
// itself keeps one process per instance.
func TestModuleKindSharesProviders(t *testing.T) {
	bin, err := terraform.Binary(os.Getenv("MODKIND_TERRAFORM"))
	if err != nil {
		t.Fatal(err)
	}
	cliConfig, starts := providerStarts(t)
	cloud := thingstest.NewCloud(t)
	root := t.TempDir()
	runner := terraform.NewHarness(bin, &state.Store{Client: ground.client}, &state.Plans{Client: ground.client}, 4)
	runner.PluginCache = filepath.Join(root, "plugins")
	runner.Env = map[string]string{"TF_CLI_CONFIG_FILE": cliConfig}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pool := terraform.NewProviderPool(exe)
	pool.Dir = filepath.Join(root, "p")
	if err := os.Mkdir(pool.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	runner.Providers = pool

	// A package per module, as the module cache holds them; greeting.txt beside the module.
	pkg := func(name, own string) (string, *module.Module) {
		dir := filepath.Join(root, "modules", name)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		files := map[string]string{"main.tf": fmt.Sprintf(greetingModule, thingstest.Source, own), "greeting.txt": "hello from " + name}
		for f, content := range files {
			if err := os.WriteFile(filepath.Join(dir, f), []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		m, err := module.Inspect(dir)
		if err != nil {
			t.Fatal(err)
		}
		return dir, m
	}
	// The ProviderConfig: credentials in the environment, a provider block without expressions.
	setup := &terraform.ProviderSetup{Env: map[string]string{"THINGS_DIR": cloud.Dir}, Providers: json.RawMessage(`{"things":{}}`)}
	run := func(dir string, m *module.Module, s *terraform.ProviderSetup, ns, name string) *terraform.Workspace {
		rm, err := terraform.Render(m, terraform.Inputs{ForProvider: map[string]any{"name": name}, Providers: s.Providers})
		if err != nil {
			t.Fatal(err)
		}
		return &terraform.Workspace{
			Dir:      filepath.Join(root, "work", ns, name),
			Root:     rm,
			Setup:    s,
			Package:  dir,
			InitKey:  terraform.Digest([]byte(m.Digest), []byte(dir), []byte(s.Digest())),
			Inputs:   name,
			State:    kind.StateRef("Greeting.shared.example.org", ns, name),
			Redactor: terraform.NewRedactor(),
		}
	}
	applyAll := func(runs ...*terraform.Workspace) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make([]error, len(runs))
		for i, r := range runs {
			wg.Go(func() { _, _, errs[i] = runner.Apply(context.Background(), r, nil) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("applying %s/%s: %v", runs[i].State.Namespace, runs[i].State.Name, err)
			}
		}
	}
	greeting := func(bucket string) string {
		t.Helper()
		tags, _ := cloud.Object("things_bucket", bucket)["tags"].(map[string]any)
		s, _ := tags["greeting"].(string)
		return s
	}

	// Six instances of the kind in one namespace, four at once: one provider process.
	shared, sharedMod := pkg("shared", "")
	ns1 := newNamespace(t)
	var first []*terraform.Workspace
	for i := range 6 {
		first = append(first, run(shared, sharedMod, setup, ns1, fmt.Sprintf("a%d", i)))
	}
	applyAll(first[:4]...)
	applyAll(first[4:]...)
	if got := len(starts()); got != 1 {
		t.Errorf("six instances of a module kind whose provider comes from the ProviderConfig: want one provider process, started %d", got)
	}
	for i := range 6 {
		if got, want := greeting(fmt.Sprintf("a%d", i)), "hello from shared"; got != want {
			t.Errorf("instance a%d: the shared process read %q from path.module, want %q", i, got, want)
		}
	}
	// terraform 1.11 records a linked local module by its real, absolute directory, so
	// path.module above was absolute; a terraform passing it relative to the run's directory
	// finds the same package linked at the same place in the shared process's directory.
	if pids := starts(); len(pids) > 0 {
		cwd, err := os.Readlink(filepath.Join("/proc", pids[0], "cwd"))
		if err != nil {
			t.Fatal(err)
		}
		if link, err := os.Readlink(filepath.Join(cwd, terraform.ModuleLink)); err != nil || link != shared {
			t.Errorf("the shared process's directory must link %s to the module's package %s as a run's does: %q, %v", terraform.ModuleLink, shared, link, err)
		}
	}

	// Two instances of the same kind and ProviderConfig in another namespace: a process of its own.
	ns2 := newNamespace(t)
	applyAll(run(shared, sharedMod, setup, ns2, "b0"), run(shared, sharedMod, setup, ns2, "b1"))
	if got := len(starts()); got != 2 {
		t.Errorf("a second namespace must get a provider process of its own: want 2 started in all, got %d", got)
	}
	if pool.Processes() != 2 {
		t.Errorf("the pool keeps %d processes, want one per namespace: 2", pool.Processes())
	}

	// A module that configures the provider itself: one process per instance, as before.
	own, ownMod := pkg("own", `provider "things" {}`)
	before := len(starts())
	applyAll(run(own, ownMod, &terraform.ProviderSetup{Env: setup.Env}, ns1, "c0"), run(own, ownMod, &terraform.ProviderSetup{Env: setup.Env}, ns1, "c1"))
	if got := len(starts()) - before; got != 2 {
		t.Errorf("two instances of a module configuring its provider itself: want a process each, started %d", got)
	}
	if got, want := greeting("c1"), "hello from own"; got != want {
		t.Errorf("an instance's own process read %q from path.module, want %q", got, want)
	}
}
