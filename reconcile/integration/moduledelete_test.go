package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
)

// Deleting a Module stops its controller and leaves its CRD and instances (and what they made)
// in place.
func TestDeletingModuleKeepsKindAndInstances(t *testing.T) {
	ctx := context.Background()
	gvk := policyModule(t, "modgone")
	ns := newNamespace(t)
	traces := t.TempDir()
	inst := newInstance(gvk, ns, "stays", map[string]any{"forProvider": map[string]any{"dir": traces, "files": []any{"a"}}})
	if err := ground.client.Create(ctx, inst); err != nil {
		t.Fatal(err)
	}
	waitInstance(t, inst, 1)

	if err := ground.client.Delete(ctx, &v1alpha1.Module{ObjectMeta: metav1.ObjectMeta{Name: "trace-modgone"}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the Module to be gone", func(ctx context.Context) (bool, error) {
		err := ground.client.Get(ctx, types.NamespacedName{Name: "trace-modgone"}, &v1alpha1.Module{})
		return client.IgnoreNotFound(err) == nil && err != nil, nil
	})
	eventually(t, "the kind's controller to stop", func(context.Context) (bool, error) {
		for _, l := range strings.Split(ground.logs.String(), "\n") {
			if strings.Contains(l, "stopped instance controller") && strings.Contains(l, `"`+gvk.GroupKind().String()+`"`) {
				return true, nil
			}
		}
		return false, nil
	})
	// An instance created now is not reconciled: no controller runs for the kind any more. A
	// running one would have taken it (its finalizer first) within a few polls.
	late := newInstance(gvk, ns, "late", map[string]any{"forProvider": map[string]any{"dir": traces, "files": []any{"late"}}})
	if err := ground.client.Create(ctx, late); err != nil {
		t.Fatalf("the CRD must still serve the kind: %v", err)
	}
	time.Sleep(3 * ground.config.PollInterval)
	if err := ground.client.Get(ctx, client.ObjectKeyFromObject(late), late); err != nil {
		t.Fatal(err)
	}
	if conds, _, _ := unstructured.NestedSlice(late.Object, "status", "conditions"); len(conds) != 0 || len(late.GetFinalizers()) != 0 {
		t.Errorf("an instance of a deleted Module's kind must not be reconciled, got conditions %v and finalizers %v", conds, late.GetFinalizers())
	}
	if _, err := os.Stat(filepath.Join(traces, "late")); err == nil {
		t.Errorf("an instance of a deleted Module's kind must not be applied")
	}
	if err := ground.client.Get(ctx, types.NamespacedName{Name: "traces." + gvk.Group}, &extv1.CustomResourceDefinition{}); err != nil {
		t.Errorf("the CRD must stay: %v", err)
	}
	if err := ground.client.Get(ctx, client.ObjectKeyFromObject(inst), inst.DeepCopy()); err != nil {
		t.Errorf("the instance must stay: %v", err)
	}
	if got := readFile(t, traces+"/a"); got != "hello" {
		t.Errorf("what the instance made must stay, got %q", got)
	}
}
