package integration

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/reconcile/instance"
)

// Instances carry modkind's own, domain-qualified finalizer. One created by an older modkind,
// with crossplane-runtime's finalizer, gets modkind's in the same update that drops the old one,
// and is deleted cleanly after that: destroy runs once.
func TestFinalizerMigration(t *testing.T) {
	ctx := context.Background()
	gvk := policyModule(t, "finalized")
	ns := newNamespace(t)
	traces := t.TempDir()
	inst := newInstance(gvk, ns, "old", map[string]any{"forProvider": map[string]any{"dir": traces, "files": []any{"a"}}})
	if err := ground.client.Create(ctx, inst); err != nil {
		t.Fatal(err)
	}
	got := waitInstance(t, inst, 1)
	if f := got.GetFinalizers(); !slices.Equal(f, []string{instance.Finalizer}) {
		t.Errorf("finalizers: want only %s, got %v", instance.Finalizer, f)
	}

	// As an older modkind left it.
	old := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":["finalizer.managedresource.crossplane.io"]}}`))
	if err := ground.client.Patch(ctx, got, old); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the old finalizer replaced by modkind's", func(ctx context.Context) (bool, error) {
		u := inst.DeepCopy()
		if err := ground.client.Get(ctx, client.ObjectKeyFromObject(inst), u); err != nil {
			return false, err
		}
		return slices.Equal(u.GetFinalizers(), []string{instance.Finalizer}), nil
	})
	if err := ground.client.Delete(ctx, got); err != nil {
		t.Fatal(err)
	}
	waitGone(t, got)
	if log := readFile(t, filepath.Join(traces, "a.log")); strings.Count(log, "destroyed") != 1 {
		t.Errorf("deleting the migrated instance must destroy once: %q", log)
	}
}
