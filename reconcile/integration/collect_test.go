package integration

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/artifact"
	jobexec "github.com/modkind/modkind/executor/job"
	"github.com/modkind/modkind/reconcile"
)

// The collector prunes the runner bundles that no Run in the cluster names, once they are older
// than its grace period; a bundle a Run names stays until that Run is gone.
func TestCollectorPrunesArtifacts(t *testing.T) {
	ctx := context.Background()
	store := &artifact.Store{Dir: t.TempDir()}
	put := func(body string) string {
		src := filepath.Join(t.TempDir(), "main.tf")
		if err := os.WriteFile(src, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		d, err := store.Put([]artifact.Entry{{Name: "module/main.tf", Source: src}})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	named, unnamed := put(`# named by a Run`), put(`# named by none`)
	old := time.Now().Add(-2 * time.Hour)
	entries, err := os.ReadDir(store.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.Chtimes(filepath.Join(store.Dir, e.Name()), old, old); err != nil {
			t.Fatal(err)
		}
	}
	ns := newNamespace(t)
	run := &v1alpha1.Run{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db-apply-x7k2p"},
		Spec: v1alpha1.RunSpec{Operation: v1alpha1.OperationApply, ArtifactDigest: named,
			InstanceRef: v1alpha1.InstanceReference{APIVersion: "example.org/v1alpha1", Kind: "Database", Name: "db", UID: "inst-uid"}},
	}
	if err := ground.client.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	// A directory a controller stopped in while it installed a bundle's providers.
	prepared := t.TempDir()
	if err := os.MkdirAll(filepath.Join(prepared, "0123abcd", ".terraform"), 0o700); err != nil {
		t.Fatal(err)
	}
	jobs := &jobexec.Executor{Client: ground.client, Reader: ground.client, Artifacts: store, Dir: prepared}
	c := &reconcile.Collector{Client: ground.client, WorkRoot: t.TempDir(), Artifacts: jobs, Grace: time.Hour, Log: logr.Discard()}

	c.Collect(ctx)
	if !store.Has(named) {
		t.Errorf("the bundle Run %s/%s names was pruned", ns, run.Name)
	}
	if store.Has(unnamed) {
		t.Errorf("the bundle no Run names outlived the grace period")
	}
	if left, _ := os.ReadDir(prepared); len(left) != 0 {
		t.Errorf("a directory left while preparing a bundle must go, found %d entries", len(left))
	}

	if err := ground.client.Delete(ctx, run); err != nil {
		t.Fatal(err)
	}
	c.Collect(ctx)
	if store.Has(named) {
		t.Errorf("the bundle of a Run that is gone was kept")
	}
}
