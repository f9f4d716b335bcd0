package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// writeSourceState writes a Terraform state file whose output "value" is v: the world outside
// Terraform that the drift module reads.
func writeSourceState(t *testing.T, path, v string) {
	t.Helper()
	raw := fmt.Sprintf(`{"version":4,"terraform_version":"1.11.4","serial":1,"lineage":"src","outputs":{"value":{"value":%q,"type":"string"}},"resources":[]}`, v)
	if err := os.WriteFile(path, []byte(raw), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A change made outside Terraform is found by the periodic refreshing plan (here every second,
// through the instance's annotation), reported as an event, and corrected by applying again.
func TestDriftDetectedAndCorrected(t *testing.T) {
	ctx := context.Background()
	createModule(t, "drift", moduleDir(t, "drift"), "drift.example.org", "Drift")
	waitModuleReady(t, "drift")
	ns := newNamespace(t)
	src := filepath.Join(t.TempDir(), "source.tfstate")
	writeSourceState(t, src, "one")
	gvk := schema.GroupVersionKind{Group: "drift.example.org", Version: "v1alpha1", Kind: "Drift"}
	inst := newInstance(gvk, ns, "drifty", map[string]any{"forProvider": map[string]any{"path": src}})
	inst.SetAnnotations(map[string]string{"modkind.io/drift-interval": "1s"})
	if err := ground.client.Create(ctx, inst); err != nil {
		t.Fatal(err)
	}
	deleteAtEnd(t, inst)
	got := waitInstance(t, inst, 1)
	if v, _, _ := unstructured.NestedFieldNoCopy(got.Object, "status", "atProvider", "value"); v != "one" {
		t.Fatalf("status.atProvider.value: want one, got %v", v)
	}

	writeSourceState(t, src, "two")
	eventually(t, "the drift to be corrected", func(ctx context.Context) (bool, error) {
		got := inst.DeepCopy()
		if err := ground.client.Get(ctx, client.ObjectKeyFromObject(inst), got); err != nil {
			return false, err
		}
		v, _, _ := unstructured.NestedFieldNoCopy(got.Object, "status", "atProvider", "value")
		return v == "two", nil
	})
	assertInstanceEvent(t, got, corev1.EventTypeNormal, "changes made outside modkind")
}
