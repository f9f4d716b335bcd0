package reconcile_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/modkind/modkind/reconcile"
	"github.com/modkind/modkind/reconcile/terraform"
	"github.com/modkind/modkind/state"
	"github.com/modkind/modkind/test/thingstest"
)

// With shared providers, a run's terraform calls (plan, show, apply) use one provider process,
// which has the run's credentials (here the cloud's directory, from the environment only) and
// is gone when the run ends.
func TestSharedProviders(t *testing.T) {
	bin, err := terraform.Binary(os.Getenv("MODKIND_TERRAFORM"))
	if err != nil {
		t.Fatal(err)
	}
	// The provider as installed records each start, with its pid, then becomes the provider.
	starts := filepath.Join(t.TempDir(), "starts")
	wrapper := filepath.Join(t.TempDir(), "terraform-provider-things")
	script := fmt.Sprintf("#!/bin/sh\necho $$ >> %q\nexec %q \"$@\"\n", starts, thingstest.Binary(t))
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	rc := packedMirrorOf(t, wrapper)
	cloud := thingstest.NewCloud(t)
	root := t.TempDir()
	runner := terraform.NewRunner(bin, &state.Store{Client: ground.client}, 2)
	runner.PluginCache = filepath.Join(root, "plugins")
	runner.SharedProviders = true
	ns := newNamespace(t)
	main := fmt.Sprintf(`{"terraform":{"required_providers":{"things":{"source":%q}}},
"variable":{"tag":{"type":"string"}},
"resource":{"things_bucket":{"one":{"name":"shared","tags":{"t":"${var.tag}"}}}}}`, thingstest.Source)
	run := func(tag string) *terraform.Run {
		return &terraform.Run{
			Dir:      filepath.Join(root, "work"),
			Root:     &terraform.RootModule{Main: []byte(main), Vars: []byte(fmt.Sprintf(`{"tag":%q}`, tag))},
			Setup:    &terraform.ProviderSetup{Env: map[string]string{"TF_CLI_CONFIG_FILE": rc, "THINGS_DIR": cloud.Dir}},
			InitKey:  "k",
			Inputs:   tag,
			State:    reconcile.StateRef("Bucket.shared.example.org", ns, "one"),
			Redactor: terraform.NewRedactor(),
		}
	}
	readStarts := func() []string {
		raw, err := os.ReadFile(starts)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return strings.Fields(string(raw))
	}

	stored, summary, err := runner.Apply(context.Background(), run("a"), nil)
	if err != nil {
		t.Fatalf("creating: %v", err)
	}
	if summary.Add != 1 {
		t.Errorf("the plan: want one object to add, got %+v", summary)
	}
	if b := cloud.Objects("things_bucket")["shared"]; b == nil {
		t.Fatalf("the bucket was not created in the cloud the run's environment names: %v", cloud.Objects("things_bucket"))
	}
	// init installs and inspects the provider in its own process; plan, show and apply share one.
	if got := readStarts(); len(got) != 1 {
		t.Errorf("creating: want the provider started once for plan, show and apply, started %d times", len(got))
	}
	before := len(readStarts())
	_, summary, err = runner.Apply(context.Background(), run("b"), stored)
	if err != nil {
		t.Fatalf("updating: %v", err)
	}
	if summary.Change != 1 {
		t.Errorf("the update's plan: want one object to change, got %+v", summary)
	}
	if tags := fmt.Sprint(cloud.Objects("things_bucket")["shared"]["tags"]); !strings.Contains(tags, "t:b") {
		t.Errorf("the update was not applied: tags %s", tags)
	}
	pids := readStarts()
	if n := len(pids) - before; n != 1 {
		t.Errorf("updating: want the provider started once, started %d times", n)
	}
	for _, pid := range pids {
		if _, err := os.Stat(filepath.Join("/proc", pid)); err == nil {
			if p, _ := strconv.Atoi(pid); p > 0 {
				t.Errorf("provider process %s still runs after its run ended", pid)
			}
		}
	}
}
