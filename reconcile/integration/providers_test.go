package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/modkind/modkind/kind"
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
	runner := terraform.NewRunner(bin, &state.Store{Client: ground.client}, &state.Plans{Client: ground.client}, 4)
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
	runner := terraform.NewRunner(bin, &state.Store{Client: ground.client}, &state.Plans{Client: ground.client}, 1)
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
