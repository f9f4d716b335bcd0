package job

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/artifact"
	"github.com/modkind/modkind/executor"
	"github.com/modkind/modkind/module"
	"github.com/modkind/modkind/terraform"
)

// fakeInit is a terraform whose init installs one provider package, its files dated mtime, as
// terraform lays out a work directory's providers, and writes a lock file: enough for a bundle,
// without terraform or a registry.
const fakeInit = `#!/bin/sh
case "$1" in
version)
  echo '{"terraform_version":"1.11.4","platform":"linux_amd64","provider_selections":{},"terraform_outdated":false}' ;;
init)
  p=.terraform/providers/example.com/acme/things/1.2.0/linux_amd64
  mkdir -p "$p"
  printf 'provider binary' > "$p/terraform-provider-things_v1.2.0"
  chmod 755 "$p/terraform-provider-things_v1.2.0"
  printf 'license' > "$p/LICENSE"
  touch -d '%s' "$p/terraform-provider-things_v1.2.0" "$p/LICENSE" "$p"
  printf '# lock\n' > .terraform.lock.hcl ;;
esac
`

// replica is one controller's job executor, with a store and module cache of its own.
func replica(t *testing.T, src, mtime string) (*Executor, *executor.Work) {
	t.Helper()
	dir := t.TempDir()
	tf := filepath.Join(dir, "terraform")
	if err := os.WriteFile(tf, fmt.Appendf(nil, fakeInit, mtime), 0o755); err != nil {
		t.Fatal(err)
	}
	fetcher := &module.CacheFetcher{Dir: filepath.Join(dir, "modules")}
	modDir, digest, err := fetcher.Fetch(context.Background(), module.Source{Path: src})
	if err != nil {
		t.Fatal(err)
	}
	// This replica's snapshot was made at another time than the other's.
	when, err := time.Parse("2006-01-02", mtime)
	if err != nil {
		t.Fatal(err)
	}
	if err := filepath.Walk(filepath.Dir(modDir), func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, when, when)
	}); err != nil {
		t.Fatal(err)
	}
	m, err := module.Inspect(modDir)
	if err != nil {
		t.Fatal(err)
	}
	m.Digest = digest
	x := &Executor{
		Harness:   terraform.NewHarness(tf, nil, nil, 1),
		Artifacts: &artifact.Store{Dir: filepath.Join(dir, "artifacts")},
		Modules:   fetcher.Dir,
		Dir:       filepath.Join(dir, "bundles"),
		Reader:    fake.NewClientBuilder().Build(),
	}
	x.Harness.PluginCache = filepath.Join(dir, "plugins")
	w := &executor.Work{Op: v1alpha1.OperationApply, Module: m, Workspace: &terraform.Workspace{Setup: &terraform.ProviderSetup{}}}
	return x, w
}

// A new leader that prepares the bundle of a Run the old leader made gets the very digest the Run
// names: the bundle depends on the module's and the providers' files, not on when this replica
// fetched or installed them. Its runner then fetches it from the new leader.
func TestBundlesAreTheSameOnEveryReplica(t *testing.T) {
	src := t.TempDir()
	for name, content := range map[string]string{
		"main.tf":          "variable \"x\" { type = string }\nresource \"terraform_data\" \"a\" { input = var.x }\n",
		"files/script.sh":  "#!/bin/sh\necho hi\n",
		"files/notes.json": "{}\n",
	} {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(src, "files", "script.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	oldLeader, w1 := replica(t, src, "2001-01-01")
	newLeader, w2 := replica(t, src, "2020-02-02")
	ctx := context.Background()
	b1, err := oldLeader.bundleFor(ctx, w1)
	if err != nil {
		t.Fatal(err)
	}
	providers, err := oldLeader.Artifacts.Providers(b1.digest)
	if err != nil || len(providers) != 1 {
		t.Fatalf("the bundle lists providers %v, %v; want the one init installed", providers, err)
	}
	run := &v1alpha1.Run{
		Spec:   v1alpha1.RunSpec{ArtifactDigest: b1.digest, ModuleDigest: w1.Module.Digest},
		Status: v1alpha1.RunStatus{Phase: v1alpha1.PhasePending},
	}
	// The Run, made by the old leader, is active; the new leader's store lacks its bundle.
	newLeader.restoreBundle(ctx, w2, run)
	if !newLeader.Artifacts.Has(b1.digest) {
		t.Fatalf("the new leader did not prepare the bundle %s of the old leader's Run", b1.digest)
	}
	got, err := newLeader.Artifacts.Providers(b1.digest)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(providers, got); diff != "" {
		t.Errorf("the providers the new leader's bundle lists: -old leader's, +new leader's:\n%s", diff)
	}
}
